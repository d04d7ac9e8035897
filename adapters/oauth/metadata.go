package mcpoauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// wellKnownPath is where OAuth 2.0 Protected Resource Metadata is served
// (RFC 9728 section 3): at the root of the host, and with the resource's
// path appended (/.well-known/oauth-protected-resource/mcp for
// https://host/mcp).
const wellKnownPath = "/.well-known/oauth-protected-resource"

// metadataMaxAge is how long clients and caches may keep the metadata
// document (its Cache-Control: public, max-age): 1 hour.
const metadataMaxAge = time.Hour

// Metadata is an MCP server's OAuth 2.0 Protected Resource Metadata
// (RFC 9728 section 2), which tells clients which authorization servers
// issue tokens for it. Resource and at least one of AuthorizationServers
// are required (the MCP authorization spec asks for one); see
// [Metadata.Validate].
type Metadata struct {
	// Resource is the server's resource identifier: the canonical URL of
	// its MCP endpoint (https://mcp.example.com/mcp), which clients send
	// as the RFC 8707 resource parameter and tokens name in "aud". An
	// absolute https URL (http only on a loopback host), without query or
	// fragment.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuer identifiers of the
	// authorization servers whose tokens the server accepts.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	// ScopesSupported are the scopes the server understands (the ones a
	// client asks for when a challenge names none).
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported are the ways a token may be sent. Default
	// (and the only value allowed, since the SDK reads no other):
	// ["header"].
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// ResourceName is a name for people to read.
	ResourceName string `json:"resource_name,omitempty"`
	// ResourceDocumentation, ResourcePolicyURI and ResourceTOSURI are URLs
	// of pages for people: documentation, the data policy and the terms
	// of service.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
	ResourcePolicyURI     string `json:"resource_policy_uri,omitempty"`
	ResourceTOSURI        string `json:"resource_tos_uri,omitempty"`
}

// Validate reports what is wrong with m: a Resource that is not an
// absolute https URL (http only on a loopback host) or has a query or a
// fragment; no authorization server, or one that is not an issuer
// identifier (the same rule); a scope that is not an RFC 6749 scope token
// (printable ASCII without space, '"' or '\'); a bearer method other than
// "header"; a page URL that is not absolute https (or loopback http).
func (m Metadata) Validate() error {
	if _, err := parseSecureURL("resource", m.Resource, false); err != nil {
		return err
	}
	if len(m.AuthorizationServers) == 0 {
		return errors.New("hexmcp: Metadata.AuthorizationServers is empty (the MCP authorization spec asks for at least one)")
	}
	for _, as := range m.AuthorizationServers {
		if _, err := parseSecureURL("authorization server", as, false); err != nil {
			return err
		}
	}
	for _, s := range m.ScopesSupported {
		if !validScope(s) {
			return fmt.Errorf("hexmcp: %q is not a scope token (RFC 6749 section 3.3)", s)
		}
	}
	for _, b := range m.BearerMethodsSupported {
		if b != "header" {
			return fmt.Errorf("hexmcp: the bearer method %q is not supported (only \"header\": a token in the query is refused)", b)
		}
	}
	for _, page := range []struct{ what, url string }{
		{"resource_documentation", m.ResourceDocumentation},
		{"resource_policy_uri", m.ResourcePolicyURI},
		{"resource_tos_uri", m.ResourceTOSURI},
	} {
		if page.url == "" {
			continue
		}
		if _, err := parseSecureURL(page.what, page.url, true); err != nil {
			return err
		}
	}
	return nil
}

// validScope reports whether s is a scope token: 1*( %x21 / %x23-5B /
// %x5D-7E ).
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// MetadataHandler returns an http.Handler serving m (validated, with its
// defaults) as JSON: GET and HEAD answer 200 application/json, with
// Cache-Control "public, max-age=3600" (metadataMaxAge) and
// Access-Control-Allow-Origin "*" (browser-based clients fetch it from
// another origin); OPTIONS answers a CORS preflight (204, allowing GET and
// HEAD and the MCP-Protocol-Version header that MCP clients send); any
// other method 405. It serves every path it is mounted at: see [Mount].
func MetadataHandler(m Metadata) (http.Handler, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if len(m.BearerMethodsSupported) == 0 {
		m.BearerMethodsSupported = []string{"header"}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: encoding the metadata: %w", err)
	}
	return metadataHandler{body: body, length: strconv.Itoa(len(body))}, nil
}

type metadataHandler struct {
	body   []byte
	length string
}

func (h metadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		hd.Set("Content-Type", "application/json")
		hd.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(metadataMaxAge/time.Second)))
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Content-Length", h.length)
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(h.body)
		}
	case http.MethodOptions:
		hd.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		hd.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
		hd.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
	default:
		hd.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// MetadataPaths returns the paths where the metadata of resource is
// served: the path-suffixed form of RFC 9728 section 3.1
// (/.well-known/oauth-protected-resource/mcp for https://host/mcp), which
// MCP clients try first, then the root form (wellKnownPath), which they
// try next; only the root form for a resource without a path.
//
// RFC 9728 asks that the document at a well-known URL name the resource it
// was derived from; the root form serving the same document (whose
// resource is https://host/mcp) is what the MCP authorization spec's
// fallback expects of a server with a single MCP endpoint.
func MetadataPaths(resource string) ([]string, error) {
	u, err := parseSecureURL("resource", resource, false)
	if err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{wellKnownPath}, nil
	}
	return []string{wellKnownPath + path, wellKnownPath}, nil
}

// MetadataURL returns the URL of resource's metadata that a 401 challenge
// names (resource_metadata, RFC 9728 section 5.1): the path-suffixed
// well-known URL on the resource's host. Give it to mcphttp.AuthOptions
// as ResourceMetadataURL.
func MetadataURL(resource string) (string, error) {
	u, err := parseSecureURL("resource", resource, false)
	if err != nil {
		return "", err
	}
	paths, err := MetadataPaths(resource)
	if err != nil {
		return "", err
	}
	return strings.ToLower(u.Scheme) + "://" + u.Host + paths[0], nil
}

// Mount serves m on mux at each of [MetadataPaths] of m.Resource and
// returns the resource_metadata URL of the challenges ([MetadataURL]). It
// refuses invalid metadata ([Metadata.Validate]) and a resource path with
// '{' or '}' (which http.ServeMux would read as a wildcard); like
// http.ServeMux.Handle, it panics when a path is already registered.
//
//	metaURL, err := mcpoauth.Mount(mux, mcpoauth.Metadata{
//		Resource:             "https://mcp.example.com/mcp",
//		AuthorizationServers: []string{"https://auth.example.com"},
//	})
//	mux.Handle("/mcp", mcphttp.RequireBearer(verifier, mcphttp.AuthOptions{ResourceMetadataURL: metaURL})(srv.HTTPHandler(mcphttp.Options{})))
func Mount(mux *http.ServeMux, m Metadata) (string, error) {
	h, err := MetadataHandler(m)
	if err != nil {
		return "", err
	}
	paths, err := MetadataPaths(m.Resource)
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(paths, func(p string) bool { return strings.ContainsAny(p, "{}") }) {
		return "", fmt.Errorf("hexmcp: the resource path of %q has '{' or '}'", m.Resource)
	}
	for _, p := range paths {
		mux.Handle(p, h)
	}
	return MetadataURL(m.Resource)
}
