package mcphttp

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// originAllowed applies the Origin rule (every revision's "Security
// Warning": servers MUST validate Origin, and answer 403 to an invalid
// one): no Origin (a non-browser client) is allowed; otherwise the origin
// must be listed in Options.AllowedOrigins (or the list holds "*"), or name
// the request's own host.
func (h *Handler) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || h.anyOrigin {
		return true
	}
	if _, ok := h.origins[strings.ToLower(origin)]; ok {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // includes "null"
	}
	return strings.EqualFold(u.Host, r.Host)
}

// hostAllowed is the DNS-rebinding guard. Comparing Origin with Host does
// not stop DNS rebinding (the attacker's page and the Host header then both
// name the attacker's domain), so when the request came in on a loopback
// address, the Host header must name a loopback host too (localhost,
// 127.0.0.0/8, ::1) or be listed in Options.AllowedHosts.
func (h *Handler) hostAllowed(r *http.Request) bool {
	if h.anyHost {
		return true
	}
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true // not served by net/http's server: no local address to judge
	}
	tcp, ok := la.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return true
	}
	host := r.Host
	if hn, _, err := net.SplitHostPort(host); err == nil {
		host = hn
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	_, ok = h.hosts[host]
	return ok
}
