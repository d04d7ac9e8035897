package mcpoauth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ErrUnavailable is wrapped by an authenticator's error when it cannot
// judge a token because the authorization server (its metadata, its key
// set, its introspection endpoint) cannot be reached or answers something
// unusable. It does not wrap ports.ErrUnauthenticated: the client's token
// is not known to be at fault, and mcphttp.RequireBearer answers 503.
var ErrUnavailable = errors.New("hexmcp: authorization server unavailable")

// isLoopbackHost reports whether host (without port) names the local
// machine: localhost (and names under .localhost), 127.0.0.0/8 or ::1.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// parseSecureURL parses an absolute URL the package talks to or names:
// https, or http on a loopback host; no user info, no fragment, and no
// query unless query is true.
func parseSecureURL(what, raw string, query bool) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("hexmcp: %s is empty", what)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: %s %q: %w", what, raw, err)
	}
	if !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("hexmcp: %s %q is not an absolute URL", what, raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return nil, fmt.Errorf("hexmcp: %s %q must be https (http only on a loopback host)", what, raw)
		}
	default:
		return nil, fmt.Errorf("hexmcp: %s %q must be https (http only on a loopback host)", what, raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("hexmcp: %s %q has user information", what, raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, fmt.Errorf("hexmcp: %s %q has a fragment", what, raw)
	}
	if !query && (u.RawQuery != "" || u.ForceQuery) {
		return nil, fmt.Errorf("hexmcp: %s %q has a query", what, raw)
	}
	return u, nil
}

// canonicalResource is a resource identifier (RFC 8707) in the form two
// spellings of one resource share: scheme and host in lower case, no
// default port, no lone trailing slash. The MCP authorization spec asks
// servers to accept upper-case schemes and hosts; a value that is not an
// absolute http(s) URL (an audience such as "api://mcp") is kept as it is.
func canonicalResource(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return s
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return s
	}
	u.Scheme = scheme
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	if u.Path == "/" && u.RawQuery == "" {
		u.Path = ""
	}
	u.RawPath = ""
	return u.String()
}
