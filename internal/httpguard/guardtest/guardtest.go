// Package guardtest holds the one table of Host/Origin pairs that the
// module's tests run against every HTTP-borne endpoint (the Streamable HTTP
// handler and the WebSocket handler) and against the guard itself, so that
// both transports are held to the same rows.
package guardtest

import (
	"slices"
	"strings"
)

// Config is the Host/Origin configuration of the handlers a [Case] runs
// against.
type Config struct {
	// Name identifies the configuration in [Case.Config].
	Name string
	// AllowedOrigins is passed as the handlers' AllowedOrigins.
	AllowedOrigins []string
	// AllowedHosts is passed as the handlers' AllowedHosts.
	AllowedHosts []string
}

// Case is one request: its Host header and Origin header against handlers
// of one configuration, served on a loopback listener, and whether it must
// be served. "{port}" in Host and Origin stands for the listener's port,
// "{otherport}" for another one.
type Case struct {
	// Name describes the row.
	Name string
	// Config names the [Config] of the handlers.
	Config string
	// Host is the Host header.
	Host string
	// Origin is the Origin header; empty: none.
	Origin string
	// Allowed tells whether the request must be served (else refused with
	// 403 before anything is served).
	Allowed bool
}

// Configuration names used by [Cases].
const (
	Default     = "default"
	HostListed  = "allowed-hosts"
	OriginList  = "allowed-origins"
	AnyOrigin   = "any-origin"
	AnyHost     = "any-host"
	ListedName  = "mcp.internal"
	ListedWebUI = "http://app.example:8443"
)

// Configs returns the configurations the [Cases] refer to.
func Configs() []Config {
	return []Config{
		{Name: Default},
		{Name: HostListed, AllowedHosts: []string{ListedName}},
		{Name: OriginList, AllowedOrigins: []string{ListedWebUI + "/", "null", "FILE://"}},
		{Name: AnyOrigin, AllowedOrigins: []string{"*"}},
		{Name: AnyHost, AllowedHosts: []string{"*"}},
	}
}

// Cases returns the rows. Every configuration has refused and allowed rows.
func Cases() []Case {
	ok, no := true, false
	return []Case{
		// DNS rebinding: the attacker's name in Host, with or without a
		// matching Origin, in every spelling.
		{"evil host, matching origin", Default, "evil.example:{port}", "http://evil.example:{port}", no},
		{"evil host, no origin", Default, "evil.example:{port}", "", no},
		{"evil host, trailing dot", Default, "evil.example.:{port}", "http://evil.example.:{port}", no},
		{"evil host, upper case", Default, "EVIL.EXAMPLE:{port}", "http://EVIL.EXAMPLE:{port}", no},
		{"evil host without port", Default, "evil.example", "", no},
		{"localhost as a label of an evil host", Default, "localhost.evil.example:{port}", "http://localhost.evil.example:{port}", no},
		{"loopback address as a label of an evil host", Default, "127.0.0.1.nip.io:{port}", "http://127.0.0.1.nip.io:{port}", no},
		{"0.0.0.0 is not loopback", Default, "0.0.0.0:{port}", "http://0.0.0.0:{port}", no},
		{"IPv6 link-local is not loopback", Default, "[fe80::1]:{port}", "", no},
		// Foreign origins on a good Host.
		{"foreign origin", Default, "127.0.0.1:{port}", "http://evil.example:{port}", no},
		{"foreign origin ending in localhost label", Default, "127.0.0.1:{port}", "http://localhost.evil.example:{port}", no},
		{"origin on another port", Default, "127.0.0.1:{port}", "http://127.0.0.1:{otherport}", no},
		{"localhost origin on another port", Default, "127.0.0.1:{port}", "http://localhost:{otherport}", no},
		{"origin without port (80)", Default, "localhost:{port}", "http://localhost", no},
		{"null origin", Default, "127.0.0.1:{port}", "null", no},
		{"file origin", Default, "127.0.0.1:{port}", "file://", no},
		{"file origin with path", Default, "127.0.0.1:{port}", "file:///etc/passwd", no},
		{"ws scheme origin", Default, "127.0.0.1:{port}", "ws://127.0.0.1:{port}", no},
		{"ftp scheme origin", Default, "127.0.0.1:{port}", "ftp://127.0.0.1:{port}", no},
		{"origin with user info", Default, "127.0.0.1:{port}", "http://evil.example@127.0.0.1:{port}", no},
		{"origin with a path", Default, "127.0.0.1:{port}", "http://127.0.0.1:{port}/evil", no},
		{"unparsable origin", Default, "127.0.0.1:{port}", "http://%zz", no},
		// What a local client and a local page send.
		{"no origin", Default, "127.0.0.1:{port}", "", ok},
		{"own origin", Default, "127.0.0.1:{port}", "http://127.0.0.1:{port}", ok},
		{"own origin, https", Default, "127.0.0.1:{port}", "https://127.0.0.1:{port}", ok},
		{"own origin, trailing slash", Default, "127.0.0.1:{port}", "http://127.0.0.1:{port}/", ok},
		{"localhost", Default, "localhost:{port}", "http://localhost:{port}", ok},
		{"localhost origin, 127.0.0.1 host", Default, "127.0.0.1:{port}", "http://localhost:{port}", ok},
		{"127.0.0.1 origin, localhost host", Default, "localhost:{port}", "http://127.0.0.1:{port}", ok},
		{"IPv6 loopback", Default, "[::1]:{port}", "http://[::1]:{port}", ok},
		{"IPv6 loopback origin, 127.0.0.1 host", Default, "127.0.0.1:{port}", "http://[::1]:{port}", ok},
		{"IPv6 loopback, long form", Default, "[0:0:0:0:0:0:0:1]:{port}", "", ok},
		{"other 127/8 address", Default, "127.0.0.2:{port}", "http://127.0.0.2:{port}", ok},
		{"localhost, upper case", Default, "LOCALHOST:{port}", "http://LocalHost:{port}", ok},
		{"localhost, trailing dot", Default, "localhost.:{port}", "http://localhost.:{port}", ok},
		{"subdomain of localhost", Default, "app.localhost:{port}", "http://app.localhost:{port}", ok},
		// AllowedHosts names a host (a proxy's or a local DNS name).
		{"listed host", HostListed, ListedName + ":{port}", "", ok},
		{"listed host with its origin", HostListed, ListedName + ":{port}", "http://" + ListedName + ":{port}", ok},
		{"listed host, upper case and trailing dot", HostListed, "MCP.Internal.:{port}", "http://mcp.internal:{port}", ok},
		{"listed host, origin on another port", HostListed, ListedName + ":{port}", "http://" + ListedName + ":{otherport}", no},
		{"unlisted host", HostListed, "other.internal:{port}", "", no},
		{"listed host as a label", HostListed, ListedName + ".evil.example:{port}", "", no},
		{"evil host, listed hosts", HostListed, "evil.example:{port}", "http://evil.example:{port}", no},
		// AllowedOrigins names origins, literally for non-web ones.
		{"listed origin", OriginList, "127.0.0.1:{port}", ListedWebUI, ok},
		{"listed origin, explicit trailing slash and case", OriginList, "127.0.0.1:{port}", "HTTP://App.Example:8443/", ok},
		{"listed null", OriginList, "127.0.0.1:{port}", "null", ok},
		{"listed file", OriginList, "127.0.0.1:{port}", "file://", ok},
		{"own origin besides the list", OriginList, "localhost:{port}", "http://localhost:{port}", ok},
		{"listed origin, other port", OriginList, "127.0.0.1:{port}", "http://app.example:8444", no},
		{"listed origin, other scheme", OriginList, "127.0.0.1:{port}", "https://app.example:8443", no},
		{"listed origin, other host", OriginList, "127.0.0.1:{port}", "http://app.example.evil:8443", no},
		{"listed origin does not open the Host rule", OriginList, "app.example:{port}", ListedWebUI, no},
		// "*" turns a rule off, and only that rule.
		{"any origin", AnyOrigin, "127.0.0.1:{port}", "http://evil.example", ok},
		{"any origin, null", AnyOrigin, "127.0.0.1:{port}", "null", ok},
		{"any origin keeps the Host rule", AnyOrigin, "evil.example:{port}", "http://evil.example:{port}", no},
		{"any host", AnyHost, "evil.example:{port}", "", ok},
		{"any host, own origin", AnyHost, "evil.example:{port}", "http://evil.example:{port}", ok},
		{"any host keeps the Origin rule", AnyHost, "evil.example:{port}", "http://other.example:{port}", no},
	}
}

// Expand replaces "{port}" and "{otherport}" in s.
func Expand(s, port, otherPort string) string {
	return strings.NewReplacer("{port}", port, "{otherport}", otherPort).Replace(s)
}

// ConfigNamed returns the configuration named name.
func ConfigNamed(name string) (Config, bool) {
	i := slices.IndexFunc(Configs(), func(c Config) bool { return c.Name == name })
	if i < 0 {
		return Config{}, false
	}
	return Configs()[i], true
}
