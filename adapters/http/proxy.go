package mcphttp

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustProxies serves h behind the reverse proxies (load balancers) whose
// addresses are in trusted: a request that comes from one of them has its
// RemoteAddr replaced by the client's address as the proxies recorded it in
// X-Forwarded-For (the right-most address not itself a trusted proxy, so
// that a client cannot choose its own by sending the header), with port 0.
// Everything that counts per client then counts the real one: the session
// store's per-client bound ([DefaultClientKey]), the listen streams per
// client, hexmcp.RateLimit. A request from any other address, or
// without a usable X-Forwarded-For, is served as it came.
//
// Pair it with [ServerOptions.TrustedProxies], which exempts the proxies'
// connections from the per-address connection bound.
func TrustProxies(h http.Handler, trusted ...netip.Prefix) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if client, ok := forwardedClient(r, trusted); ok {
			r2 := *r
			r2.RemoteAddr = net.JoinHostPort(client.String(), "0")
			r = &r2
		}
		h.ServeHTTP(w, r)
	})
}

// forwardedClient returns the client a trusted proxy forwarded r for.
func forwardedClient(r *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	peer, ok := remoteIP(r.RemoteAddr)
	if !ok || !inPrefixes(peer, trusted) {
		return netip.Addr{}, false
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return netip.Addr{}, false // a hop we cannot read: trust nothing before it
			}
			a = a.Unmap()
			if !inPrefixes(a, trusted) {
				return a, true
			}
		}
	}
	return netip.Addr{}, false
}

func remoteIP(addr string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return ap.Addr().Unmap(), true
	}
	a, err := netip.ParseAddr(addr)
	return a.Unmap(), err == nil
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
