// Package httpguard holds the two request checks that every HTTP-borne
// transport of the module applies before it serves anything: the Host rule
// (the DNS-rebinding guard) and the Origin rule. The Streamable HTTP
// adapter and the WebSocket adapter both use this one implementation, so
// that the same request is accepted or refused by both.
//
// # Host rule
//
// When the request came in on a loopback address (the local address that
// net/http records in the request's context), its Host header must name a
// loopback host: localhost, a name under .localhost, an address of
// 127.0.0.0/8 or ::1 (in any spelling: upper case, a trailing dot, the
// IPv4-mapped form), or a name listed in the allowed hosts; "*" there
// accepts any Host. A DNS-rebinding page reaches a loopback listener under
// the attacker's own name, so its Host header names that name and it is
// refused. On any other listener the rule does not apply: a server exposed
// to the network needs authentication anyway.
//
// # Origin rule
//
// A request without Origin (not from a browser) passes. Otherwise every
// Origin value must be
//
//   - listed in the allowed origins: compared case-insensitively, without a
//     trailing slash, and with the scheme's default port made implicit
//     ("http://a:80" is "http://a"); a value that is not an http(s) origin,
//     such as "null" or "file://", matches only its own literal entry; or
//     "*" is listed, which accepts any Origin; or
//   - the request's own host: an http or https origin (no user, path, query
//     or fragment) whose host is the Host header's host and whose port is the
//     Host header's port (the scheme's default port when either leaves it
//     out). Loopback names are one host here: a page of http://localhost:8080
//     may call a server reached as 127.0.0.1:8080. The port must still match,
//     since another port is another server.
package httpguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrHost is wrapped by the error of a request refused by the Host rule.
var ErrHost = errors.New("the Host header names a host this server does not serve")

// ErrOrigin is wrapped by the error of a request refused by the Origin
// rule.
var ErrOrigin = errors.New("origin not allowed")

// Guard applies the Host rule and the Origin rule of one handler. Its zero
// value is not usable; build it with [New]. It is safe for concurrent use.
type Guard struct {
	anyOrigin bool
	origins   map[string]struct{}
	anyHost   bool
	hosts     map[string]struct{}
}

// New returns the guard of a handler configured with allowedOrigins (exact
// origins, or "*" for any) and allowedHosts (host names without port, or
// "*" for any; a port given anyway is ignored). Empty entries are ignored.
func New(allowedOrigins, allowedHosts []string) *Guard {
	g := &Guard{origins: make(map[string]struct{}), hosts: make(map[string]struct{})}
	g.anyOrigin = allowList(allowedOrigins, func(o string) { g.origins[originKey(o)] = struct{}{} })
	g.anyHost = allowList(allowedHosts, func(h string) {
		name, _ := splitHostPort(h)
		g.hosts[canonicalHost(name)] = struct{}{}
	})
	return g
}

// allowList reads a list of allowed values: it reports whether "*" (any)
// is among them, and calls add with each other one, trimmed; empty entries
// are ignored.
func allowList(list []string, add func(string)) (wildcard bool) {
	for _, v := range list {
		switch v = strings.TrimSpace(v); v {
		case "":
		case "*":
			wildcard = true
		default:
			add(v)
		}
	}
	return wildcard
}

// Check applies the Host rule, then the Origin rule; the error wraps
// [ErrHost] or [ErrOrigin].
func (g *Guard) Check(r *http.Request) error {
	if err := g.CheckHost(r); err != nil {
		return err
	}
	return g.CheckOrigin(r)
}

// CheckHost applies the Host rule; the error wraps [ErrHost].
func (g *Guard) CheckHost(r *http.Request) error {
	if g.anyHost || !onLoopback(r) {
		return nil
	}
	name, _ := splitHostPort(r.Host)
	host := canonicalHost(name)
	if isLoopbackName(host) {
		return nil
	}
	if _, ok := g.hosts[host]; ok && host != "" {
		return nil
	}
	return fmt.Errorf("%w (Host %q on a loopback listener)", ErrHost, r.Host)
}

// CheckOrigin applies the Origin rule to every Origin value of r; the
// error wraps [ErrOrigin]. An empty value counts as none.
func (g *Guard) CheckOrigin(r *http.Request) error {
	for _, origin := range r.Header.Values("Origin") {
		if origin == "" || g.originAllowed(origin, r.Host) {
			continue
		}
		return fmt.Errorf("%w: %q", ErrOrigin, origin)
	}
	return nil
}

func (g *Guard) originAllowed(origin, requestHost string) bool {
	if g.anyOrigin {
		return true
	}
	if _, ok := g.origins[originKey(origin)]; ok {
		return true
	}
	u, ok := parseWebOrigin(origin)
	if !ok {
		return false // "null", file:, ws:, a path, ...
	}
	oName, oPort := splitHostPort(u.Host)
	if oPort == "" {
		oPort = defaultPort(u.Scheme)
	}
	hName, hPort := splitHostPort(requestHost)
	if hPort == "" {
		// The Host header leaves the port out when it is the default of the
		// scheme the client used; the origin's scheme stands for it.
		hPort = defaultPort(u.Scheme)
	}
	if oPort != hPort {
		return false
	}
	a, b := canonicalHost(oName), canonicalHost(hName)
	if a == "" || b == "" {
		return false
	}
	return a == b || (isLoopbackName(a) && isLoopbackName(b))
}

// parseWebOrigin parses an http or https origin: scheme and host, with an
// optional port and nothing else (a trailing slash is tolerated).
func parseWebOrigin(origin string) (*url.URL, bool) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, false
	}
	if u.Host == "" || u.Opaque != "" || u.User != nil || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, false
	}
	return u, true
}

// originKey is the form in which origins are compared with the allowed
// ones: lower case, no trailing slash, no default port.
func originKey(origin string) string {
	origin = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(origin), "/"))
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" || u.User != nil || u.Path != "" ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return origin
	}
	host := u.Host
	if name, port := splitHostPort(host); port != "" && port == defaultPort(u.Scheme) {
		host = name
		if strings.Contains(name, ":") {
			host = "[" + name + "]"
		}
	}
	return u.Scheme + "://" + host
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// splitHostPort splits "host:port", "[v6]:port", "[v6]" or "host" into the
// host (without brackets) and the port ("" when there is none).
func splitHostPort(hostport string) (string, string) {
	if host, port, err := net.SplitHostPort(hostport); err == nil {
		return host, port
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

// canonicalHost lowers a host name and drops its trailing dot; an IP
// address takes its canonical form (IPv4-mapped IPv6 as IPv4).
func canonicalHost(name string) string {
	name = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
	if ip := net.ParseIP(name); ip != nil {
		return ip.String()
	}
	return name
}

// isLoopbackName reports whether a canonical host names this machine's
// loopback interface whatever DNS says: localhost and its subdomains
// (RFC 6761, which browsers resolve themselves), 127.0.0.0/8 and ::1.
func isLoopbackName(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackAddr reports whether addr ("host:port", as a listener reports
// it) names this machine's loopback interface only (isLoopbackName): an
// unspecified address (0.0.0.0, ::) listens on every interface.
func LoopbackAddr(addr string) bool {
	host, _ := splitHostPort(addr)
	return isLoopbackName(canonicalHost(host))
}

// onLoopback reports whether r came in on a loopback address. A request
// not served by net/http's server has no local address to judge and is
// treated as not on loopback.
func onLoopback(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	tcp, ok := la.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
