package mcpoauth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// fakeClock is the real time shifted by an offset the test advances, so
// that rate limits and key set ages can pass without waiting, while the
// tokens the authorization server signs (with its real clock) stay valid.
type fakeClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// countingClient counts the requests whose path ends with each suffix
// asked about.
type countingClient struct {
	paths testtools.Collector[string]
}

func (c *countingClient) RoundTrip(r *http.Request) (*http.Response, error) {
	c.paths.Add(r.URL.Path)
	return http.DefaultTransport.RoundTrip(r)
}

func (c *countingClient) count(suffix string) int {
	return c.paths.Count(func(p string) bool { return strings.HasSuffix(p, suffix) })
}

func (c *countingClient) client() *http.Client {
	return &http.Client{Transport: c, Timeout: 10 * time.Second}
}

// whoami answers with the principal the tool sees.
func whoami(ctx context.Context, _ struct{}) (string, error) {
	p := hexmcp.RequestFrom(ctx).Transport().Principal
	if p == nil {
		return "nobody", nil
	}
	return fmt.Sprintf("%s|%s|%v", p.Subject, strings.Join(p.Scopes, ","), p.Claims["client_id"]), nil
}

// mcpCall posts a stateless tools/call of whoami to url with the
// Authorization header auth ("" for none).
func mcpCall(t *testing.T, url, auth string) (*http.Response, string) {
	t.Helper()
	return mcpCallTool(t, url, "whoami", auth)
}

// mcpCallTool posts a stateless tools/call of tool.
func mcpCallTool(t *testing.T, url, tool, auth string) (*http.Response, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	testtools.MCPHeaders(req)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp := testtools.Do(t, nil, req)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// signer is a key of the test's own, outside any authorization server.
type signer struct {
	kid string
	alg jwa.SignatureAlgorithm
	key crypto.Signer
}

func newRSA(t *testing.T, kid string, bits int) signer {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, alg: jwa.RS256(), key: k}
}

func newEC(t *testing.T, kid string, curve elliptic.Curve, alg jwa.SignatureAlgorithm) signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, alg: alg, key: k}
}

// jwk returns the public JWK of s, with extra members.
func (s signer) jwk(t *testing.T, extra map[string]any) map[string]any {
	t.Helper()
	k, err := jwk.Import(s.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if s.kid != "" {
		m["kid"] = s.kid
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// sign signs claims with s; header members are added to the protected
// header (kid and alg are s's unless header sets them).
func (s signer) sign(t *testing.T, claims map[string]any, header map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	hdr := jws.NewHeaders()
	if s.kid != "" {
		_ = hdr.Set("kid", s.kid)
	}
	for k, v := range header {
		_ = hdr.Set(k, v)
	}
	b, err := jws.Sign(payload, jws.WithKey(s.alg, s.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rawJWS assembles a compact JWS from a header, a payload and a signature
// (none signs nothing).
func rawJWS(header, payload string, sig []byte) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(sig)
}

// jwksServer serves a JWK set the test changes, and counts its fetches.
type jwksServer struct {
	mu      sync.Mutex
	keys    []map[string]any
	body    string // served instead of keys when set
	status  int
	fetches atomic.Int32
}

func (j *jwksServer) set(keys ...map[string]any) {
	j.mu.Lock()
	j.keys, j.body, j.status = keys, "", 0
	j.mu.Unlock()
}

func (j *jwksServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	j.fetches.Add(1)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.status != 0 {
		w.WriteHeader(j.status)
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	if j.body != "" {
		_, _ = io.WriteString(w, j.body)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"keys": j.keys})
}

// signRaw signs a payload given as text with s.
func (s signer) signRaw(t *testing.T, payload string) string {
	t.Helper()
	hdr := jws.NewHeaders()
	_ = hdr.Set("kid", s.kid)
	b, err := jws.Sign([]byte(payload), jws.WithKey(s.alg, s.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// signHMAC signs claims with an HMAC secret under s's kid and alg.
func (s signer) signHMAC(t *testing.T, secret []byte, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	hdr := jws.NewHeaders()
	_ = hdr.Set("kid", s.kid)
	b, err := jws.Sign(payload, jws.WithKey(s.alg, secret, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// overlay is claims changed by over: a nil value removes a claim.
func overlay(claims, over map[string]any) map[string]any {
	for k, v := range over {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	return claims
}
