package mcpoauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwk"

	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
)

// checkMetadataDocument checks a Protected Resource Metadata document
// against RFC 9728 section 2, member by member, and that it holds exactly
// want.
func checkMetadataDocument(t *testing.T, raw []byte, want map[string]any) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("not a JSON object: %s: %v", raw, err)
	}
	// resource: REQUIRED, an https URL (http on loopback here) without
	// fragment.
	res, ok := doc["resource"].(string)
	if !ok {
		t.Fatalf("resource missing or not a string: %s", raw)
	}
	u, err := url.Parse(res)
	if err != nil || !u.IsAbs() || u.Fragment != "" || u.RawQuery != "" {
		t.Fatalf("resource %q is not an absolute URL without query and fragment", res)
	}
	// authorization_servers: OPTIONAL in RFC 9728, REQUIRED by MCP: a
	// non-empty array of issuer identifiers.
	as, ok := doc["authorization_servers"].([]any)
	if !ok || len(as) == 0 {
		t.Fatalf("authorization_servers: %s", raw)
	}
	for _, a := range as {
		s, ok := a.(string)
		if !ok {
			t.Fatalf("authorization server %v is not a string", a)
		}
		if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("authorization server %q is not an issuer identifier", s)
		}
	}
	// bearer_methods_supported: values among header, body, query.
	eachListed(t, doc, "bearer_methods_supported", func(m any) bool { return m == "header" || m == "body" || m == "query" })
	// scopes_supported: an array of scope tokens.
	eachListed(t, doc, "scopes_supported", func(s any) bool {
		str, ok := s.(string)
		return ok && str != "" && !strings.ContainsAny(str, ` "\`)
	})
	// Human-readable and page members are strings.
	for _, k := range []string{"resource_name", "resource_documentation", "resource_policy_uri", "resource_tos_uri"} {
		if v, ok := doc[k]; ok {
			if _, ok := v.(string); !ok {
				t.Fatalf("%s: %v", k, v)
			}
		}
	}
	if !reflect.DeepEqual(doc, want) {
		t.Fatalf("document %s, want %v", raw, want)
	}
}

// eachListed fails t unless doc's member key, when present, is an array
// whose every value is valid.
func eachListed(t *testing.T, doc map[string]any, key string, valid func(any) bool) {
	t.Helper()
	v, ok := doc[key]
	if !ok {
		return
	}
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: %v", key, v)
	}
	for _, e := range list {
		if !valid(e) {
			t.Fatalf("%s: value %v", key, e)
		}
	}
}

func TestMetadataHandler(t *testing.T) {
	m := mcpoauth.Metadata{
		Resource:              "https://mcp.example.com/tenant/mcp",
		AuthorizationServers:  []string{"https://auth.example.com/realms/a", "http://127.0.0.1:9000"},
		ScopesSupported:       []string{"files:read", "files:write"},
		ResourceName:          "Files",
		ResourceDocumentation: "https://mcp.example.com/docs",
		ResourcePolicyURI:     "https://mcp.example.com/policy",
		ResourceTOSURI:        "https://mcp.example.com/tos?lang=en",
	}
	mux := http.NewServeMux()
	metaURL, err := mcpoauth.Mount(mux, m)
	if err != nil {
		t.Fatal(err)
	}
	if metaURL != "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp" {
		t.Fatalf("metadata URL %q", metaURL)
	}
	want := map[string]any{
		"resource":                 m.Resource,
		"authorization_servers":    []any{"https://auth.example.com/realms/a", "http://127.0.0.1:9000"},
		"scopes_supported":         []any{"files:read", "files:write"},
		"bearer_methods_supported": []any{"header"},
		"resource_name":            "Files",
		"resource_documentation":   "https://mcp.example.com/docs",
		"resource_policy_uri":      "https://mcp.example.com/policy",
		"resource_tos_uri":         "https://mcp.example.com/tos?lang=en",
	}
	serve := func(method, path string, h http.Header) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "https://mcp.example.com"+path, nil)
		for k, v := range h {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/tenant/mcp", "/.well-known/oauth-protected-resource"} {
		rec := serve(http.MethodGet, path, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}})
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d", path, rec.Code)
		}
		for k, v := range map[string]string{
			"Content-Type": "application/json", "Cache-Control": "public, max-age=3600",
			"Access-Control-Allow-Origin": "*", "X-Content-Type-Options": "nosniff",
		} {
			if got := rec.Header().Get(k); got != v {
				t.Fatalf("%s: %s %q, want %q", path, k, got, v)
			}
		}
		checkMetadataDocument(t, rec.Body.Bytes(), want)

		head := serve(http.MethodHead, path, nil)
		if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Length") != rec.Header().Get("Content-Length") {
			t.Fatalf("HEAD %s: %d %q %v", path, head.Code, head.Body, head.Header())
		}
		pre := serve(http.MethodOptions, path, http.Header{"Origin": {"https://app.example"}, "Access-Control-Request-Method": {"GET"},
			"Access-Control-Request-Headers": {"mcp-protocol-version"}})
		if pre.Code != http.StatusNoContent || pre.Header().Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(pre.Header().Get("Access-Control-Allow-Methods"), "GET") ||
			!strings.EqualFold(pre.Header().Get("Access-Control-Allow-Headers"), "MCP-Protocol-Version") {
			t.Fatalf("OPTIONS %s: %d %v", path, pre.Code, pre.Header())
		}
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			if rec := serve(method, path, nil); rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
				t.Fatalf("%s %s: %d %v", method, path, rec.Code, rec.Header())
			}
		}
	}
	// The path-suffixed document names the resource its URL was derived
	// from (RFC 9728 section 3.3).
	if got := strings.Replace(metaURL, "/.well-known/oauth-protected-resource", "", 1); got != m.Resource {
		t.Fatalf("derived resource %q, want %q", got, m.Resource)
	}
	// Other paths are not served.
	if rec := serve(http.MethodGet, "/.well-known/oauth-protected-resource/other", nil); rec.Code != http.StatusNotFound {
		t.Fatalf("other path: %d", rec.Code)
	}
}

func TestMetadataPaths(t *testing.T) {
	for resource, want := range map[string][]string{
		"https://mcp.example.com":          {"/.well-known/oauth-protected-resource"},
		"https://mcp.example.com/":         {"/.well-known/oauth-protected-resource"},
		"https://mcp.example.com/mcp":      {"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"},
		"https://mcp.example.com/a/mcp/":   {"/.well-known/oauth-protected-resource/a/mcp", "/.well-known/oauth-protected-resource"},
		"http://localhost:8080/mcp":        {"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"},
		"https://mcp.example.com:8443/mcp": {"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"},
	} {
		got, err := mcpoauth.MetadataPaths(resource)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %q %v, want %q", resource, got, err, want)
		}
	}
	for resource, want := range map[string]string{
		"https://mcp.example.com":          "https://mcp.example.com/.well-known/oauth-protected-resource",
		"https://mcp.example.com:8443/mcp": "https://mcp.example.com:8443/.well-known/oauth-protected-resource/mcp",
		"HTTPS://mcp.example.com/mcp":      "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"http://[::1]:8080/mcp":            "http://[::1]:8080/.well-known/oauth-protected-resource/mcp",
	} {
		if got, err := mcpoauth.MetadataURL(resource); err != nil || got != want {
			t.Fatalf("%s: %q %v, want %q", resource, got, err, want)
		}
	}
}

func TestMetadataValidate(t *testing.T) {
	ok := mcpoauth.Metadata{Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://auth.example.com"}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*mcpoauth.Metadata){
		"no resource":           func(m *mcpoauth.Metadata) { m.Resource = "" },
		"relative resource":     func(m *mcpoauth.Metadata) { m.Resource = "/mcp" },
		"no scheme":             func(m *mcpoauth.Metadata) { m.Resource = "mcp.example.com" },
		"fragment":              func(m *mcpoauth.Metadata) { m.Resource = "https://mcp.example.com/mcp#x" },
		"empty fragment":        func(m *mcpoauth.Metadata) { m.Resource = "https://mcp.example.com/mcp#" },
		"query":                 func(m *mcpoauth.Metadata) { m.Resource = "https://mcp.example.com/mcp?a=b" },
		"http off loopback":     func(m *mcpoauth.Metadata) { m.Resource = "http://mcp.example.com/mcp" },
		"http on a private net": func(m *mcpoauth.Metadata) { m.Resource = "http://10.0.0.1/mcp" },
		"ftp":                   func(m *mcpoauth.Metadata) { m.Resource = "ftp://mcp.example.com/mcp" },
		"user info":             func(m *mcpoauth.Metadata) { m.Resource = "https://u:p@mcp.example.com/mcp" },
		"no server":             func(m *mcpoauth.Metadata) { m.AuthorizationServers = nil },
		"server over http":      func(m *mcpoauth.Metadata) { m.AuthorizationServers = []string{"http://auth.example.com"} },
		"server with query":     func(m *mcpoauth.Metadata) { m.AuthorizationServers = []string{"https://auth.example.com?x"} },
		"scope with space":      func(m *mcpoauth.Metadata) { m.ScopesSupported = []string{"a b"} },
		"scope with quote":      func(m *mcpoauth.Metadata) { m.ScopesSupported = []string{`a"`} },
		"empty scope":           func(m *mcpoauth.Metadata) { m.ScopesSupported = []string{""} },
		"query bearer":          func(m *mcpoauth.Metadata) { m.BearerMethodsSupported = []string{"query"} },
		"body bearer":           func(m *mcpoauth.Metadata) { m.BearerMethodsSupported = []string{"header", "body"} },
		"documentation":         func(m *mcpoauth.Metadata) { m.ResourceDocumentation = "docs" },
	} {
		m := ok
		change(&m)
		if err := m.Validate(); err == nil {
			t.Fatalf("%s: valid: %+v", name, m)
		}
		if _, err := mcpoauth.MetadataHandler(m); err == nil {
			t.Fatalf("%s: a handler", name)
		}
		if _, err := mcpoauth.Mount(http.NewServeMux(), m); err == nil {
			t.Fatalf("%s: mounted", name)
		}
	}
	for _, loop := range []string{"http://localhost:3000/mcp", "http://127.0.0.1/mcp", "http://127.5.6.7:1/mcp", "http://[::1]/mcp", "http://app.localhost/mcp"} {
		m := ok
		m.Resource = loop
		if err := m.Validate(); err != nil {
			t.Fatalf("%s: %v", loop, err)
		}
	}
}

// signerFromJWK returns the public key of a JWK.
func signerFromJWK(t *testing.T, b []byte) any {
	t.Helper()
	k, err := jwk.ParseKey(b)
	if err != nil {
		t.Fatal(err)
	}
	var raw any
	if err := jwk.Export(k, &raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

// metadataServer serves an authorization server's metadata at one path,
// 404 elsewhere (or status everywhere when set), and records the paths
// asked for.
type metadataServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	at     string            // the path the metadata is at
	doc    map[string]string // the document; "issuer" "{self}" is the server's URL + issuerPath
	status int
	asked  []string
	jwks   *jwksServer
}

func newMetadataServer(t *testing.T, at, issuerPath string) *metadataServer {
	t.Helper()
	m := &metadataServer{at: at, jwks: &jwksServer{}}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/jwks" {
			m.jwks.ServeHTTP(w, r)
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.asked = append(m.asked, r.URL.Path)
		if m.status != 0 {
			w.WriteHeader(m.status)
			return
		}
		if r.URL.Path != m.at {
			http.NotFound(w, r)
			return
		}
		doc := map[string]string{}
		for k, v := range m.doc {
			doc[k] = strings.ReplaceAll(v, "{self}", "http://"+r.Host)
		}
		_ = json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(m.srv.Close)
	m.doc = map[string]string{"issuer": "{self}" + issuerPath, "jwks_uri": "{self}/jwks"}
	return m
}

// update changes the server under its lock.
func (m *metadataServer) update(fn func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fn()
}

func (m *metadataServer) paths() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.asked...)
}

func TestDiscovery(t *testing.T) {
	ctx := context.Background()
	key := newRSA(t, "k1", 2048)
	verify := func(t *testing.T, m *metadataServer, issuer string) error {
		t.Helper()
		m.jwks.set(key.jwk(t, nil))
		_, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: issuer, Audience: "https://mcp.example.com/mcp"})
		return err
	}
	// The order the MCP authorization spec gives, for issuers with and
	// without a path: each URL is tried until the metadata is found.
	for _, c := range []struct {
		name, issuerPath, at string
		tried                []string
	}{
		{"root, RFC 8414", "", "/.well-known/oauth-authorization-server", []string{"/.well-known/oauth-authorization-server"}},
		{"root, OpenID", "", "/.well-known/openid-configuration", []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}},
		{"path, RFC 8414 inserted", "/tenant1", "/.well-known/oauth-authorization-server/tenant1", []string{"/.well-known/oauth-authorization-server/tenant1"}},
		{"path, OpenID inserted", "/tenant1", "/.well-known/openid-configuration/tenant1",
			[]string{"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1"}},
		{"path, OpenID appended", "/realms/a", "/realms/a/.well-known/openid-configuration",
			[]string{"/.well-known/oauth-authorization-server/realms/a", "/.well-known/openid-configuration/realms/a", "/realms/a/.well-known/openid-configuration"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMetadataServer(t, c.at, c.issuerPath)
			if err := verify(t, m, m.srv.URL+c.issuerPath); err != nil {
				t.Fatal(err)
			}
			if got := m.paths(); !reflect.DeepEqual(got, c.tried) {
				t.Fatalf("tried %q, want %q", got, c.tried)
			}
		})
	}
	// An issuer written with a trailing slash is that issuer: the metadata
	// must say so, and it is found without a doubled slash.
	m := newMetadataServer(t, "/.well-known/oauth-authorization-server/t", "/t/")
	if err := verify(t, m, m.srv.URL+"/t/"); err != nil {
		t.Fatal(err)
	}

	// The metadata names another issuer: refused (RFC 8414 section 3.3),
	// without trying further.
	m = newMetadataServer(t, "/.well-known/oauth-authorization-server", "")
	m.update(func() { m.doc["issuer"] = "https://evil.example" })
	if err := verify(t, m, m.srv.URL); err == nil || errors.Is(err, mcpoauth.ErrUnavailable) || !strings.Contains(err.Error(), "evil") {
		t.Fatalf("error %v", err)
	}
	m.update(func() { m.doc["issuer"] = "{self}/" }) // not character for character
	if err := verify(t, m, m.srv.URL); err == nil {
		t.Fatal("accepted an issuer with a trailing slash added")
	}
	// No jwks_uri, a jwks_uri over http off loopback.
	m.update(func() { m.doc = map[string]string{"issuer": "{self}"} })
	if err := verify(t, m, m.srv.URL); err == nil || !strings.Contains(err.Error(), "jwks_uri") {
		t.Fatalf("error %v", err)
	}
	m.update(func() { m.doc = map[string]string{"issuer": "{self}", "jwks_uri": "http://keys.example/jwks"} })
	if err := verify(t, m, m.srv.URL); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("error %v", err)
	}
	// Nowhere: not found (a configuration error), vs failing: unavailable.
	m = newMetadataServer(t, "/elsewhere", "")
	if err := verify(t, m, m.srv.URL); err == nil || errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
	m.update(func() { m.status = http.StatusBadGateway })
	if err := verify(t, m, m.srv.URL); !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
	m.update(func() { m.status, m.at = 0, "/.well-known/oauth-authorization-server" })
	m.jwks.mu.Lock()
	m.jwks.status = http.StatusInternalServerError
	m.jwks.mu.Unlock()
	if _, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: m.srv.URL, Audience: "x"}); !errors.Is(err, mcpoauth.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}

	// Issuers that are refused before anything is fetched.
	for _, issuer := range []string{"", "auth.example.com", "http://auth.example.com", "http://192.168.1.1", "https://auth.example.com?x=1",
		"https://auth.example.com#f", "ftp://auth.example.com", "https://u@auth.example.com"} {
		if _, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: issuer, Audience: "x"}); err == nil || errors.Is(err, mcpoauth.ErrUnavailable) {
			t.Fatalf("%q: %v", issuer, err)
		}
	}
}
