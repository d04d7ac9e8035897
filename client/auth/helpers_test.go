package auth_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

// mcpServer is this SDK's MCP server (Streamable HTTP) behind
// mcphttp.RequireBearer, its protected resource metadata mounted beside it.
type mcpServer struct {
	url     string // the MCP endpoint: the resource
	metaURL string
	mux     *http.ServeMux
}

type serverOpts struct {
	authn ports.Authenticator
	// issuer is the authorization server the metadata names.
	issuer string
	// noChallengeURL leaves resource_metadata out of the challenges: the
	// client must find the metadata at the well-known URLs.
	noChallengeURL bool
	// metadataResource, when set, is the resource the metadata names (a
	// wrong one), served at /wrong-prm and named in the challenges.
	metadataResource string
	// customIssuer, when set, is the authorization server the metadata
	// names instead (one mcpoauth.Mount refuses), served at /wrong-prm.
	customIssuer string
	// issuerFunc, when set, tells the authorization server the metadata
	// names at each request (served at /wrong-prm).
	issuerFunc func() string
}

func whoami(ctx context.Context, _ struct{}) (string, error) {
	p := hexmcp.RequestFrom(ctx).Transport().Principal
	if p == nil {
		return "nobody", nil
	}
	return fmt.Sprintf("%s|%s", p.Subject, strings.Join(p.Scopes, ",")), nil
}

func newMCPServer(t *testing.T, o serverOpts) *mcpServer {
	t.Helper()
	m := &mcpServer{mux: http.NewServeMux()}
	srv := httptest.NewServer(m.mux)
	t.Cleanup(srv.Close)
	m.url = srv.URL + "/mcp"
	var err error
	m.metaURL, err = mcpoauth.Mount(m.mux, mcpoauth.Metadata{
		Resource:             m.url,
		AuthorizationServers: []string{o.issuer},
		ScopesSupported:      []string{"mcp:tools"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.metadataResource != "" || o.customIssuer != "" || o.issuerFunc != nil {
		res, issuer := o.metadataResource, o.customIssuer
		if res == "" {
			res = m.url
		}
		if issuer == "" {
			issuer = o.issuer
		}
		m.mux.HandleFunc("/wrong-prm", func(w http.ResponseWriter, _ *http.Request) {
			if o.issuerFunc != nil {
				issuer = o.issuerFunc()
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, res, issuer)
		})
		m.metaURL = srv.URL + "/wrong-prm"
	}
	s, err := hexmcp.New(hexmcp.Options{
		Info: hexmcp.Implementation{Name: "whoami", Version: "1"},
		Tools: []hexmcp.Tool{
			hexmcp.Func(whoami, hexmcp.WithName("whoami")),
			hexmcp.Func(whoami, hexmcp.WithName("admin"), hexmcp.WithScopes("mcp:tools", "mcp:admin")),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ao := mcphttp.AuthOptions{
		ResourceMetadataURL: m.metaURL,
		RequiredScopes:      []string{"mcp:tools"},
		Logger:              slog.New(slog.DiscardHandler),
	}
	if o.noChallengeURL {
		ao.ResourceMetadataURL = ""
	}
	m.mux.Handle("/mcp", mcphttp.RequireBearer(o.authn, ao)(s.HTTPHandler(mcphttp.Options{})))
	return m
}

// callTool posts a stateless tools/call of tool with c; its body has no
// GetBody, so the transport must buffer it to send it again.
func callTool(c *http.Client, url, tool string) (int, string, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, url, io.MultiReader(strings.NewReader(body)))
	if err != nil {
		return 0, "", err
	}
	testtools.MCPHeaders(req)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// wantTool calls tool and wants a 200 whose text contains want.
func wantTool(t *testing.T, c *http.Client, url, tool, want string) {
	t.Helper()
	status, body, err := callTool(c, url, tool)
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK || !strings.Contains(body, want) {
		t.Fatalf("status %d, body %s; want 200 with %q", status, body, want)
	}
}

// recorder is a RoundTripper that records every request it sends:
// "METHOD path status", and for a form POST "grant_type=…".
type recorder struct {
	log lineLog
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	line := req.Method + " " + req.URL.Path
	if req.Header.Get("Content-Type") == "application/x-www-form-urlencoded" && req.GetBody != nil {
		b, _ := req.GetBody()
		body, _ := io.ReadAll(b)
		for _, kv := range strings.Split(string(body), "&") {
			if strings.HasPrefix(kv, "grant_type=") {
				line += " " + kv
			}
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		line += fmt.Sprintf(" %d", resp.StatusCode)
	}
	r.log.add(line)
	return resp, err
}

// lines returns the lines recorded since the last call.
func (r *recorder) lines() []string { return r.log.take() }

// lineLog keeps the lines added to it, from any goroutine, until taken.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

// take returns the lines added since the last take.
func (l *lineLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.lines
	l.lines = nil
	return lines
}

// count returns how many of lines contain s.
func count(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// newServer starts an HTTP server with h for t and returns its URL.
func newServer(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}
