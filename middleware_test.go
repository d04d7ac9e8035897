package hexmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/internal/wiretest"
)

type echoIn struct {
	S string `json:"s"`
}

// recorder is method middleware that remembers what it saw, and refuses
// tools/call of the tool "forbidden" itself.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) middleware(next app.MethodHandler) app.MethodHandler {
	return func(ctx context.Context, req *app.Request) (json.RawMessage, error) {
		if req.Method == "tools/call" && req.Name == "forbidden" {
			return nil, domain.NewProtocolError(-32001, "Forbidden by policy", map[string]any{"tool": req.Name})
		}
		res, err := next(ctx, req)
		r.mu.Lock()
		r.seen = append(r.seen, fmt.Sprintf("%s name=%s era=%d rev=%s result=%v err=%v", req.Method, req.Name, req.Era, req.Revision, res != nil, err != nil))
		r.mu.Unlock()
		return res, err
	}
}

func (r *recorder) saw(want string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.seen {
		if strings.Contains(s, want) {
			return true
		}
	}
	return false
}

type lockedBuffer = testtools.LockedBuffer

func newServer(t *testing.T, rec *recorder, audit io.Writer) *hexmcp.Server {
	t.Helper()
	srv, err := hexmcp.New(hexmcp.Options{
		Tools: []hexmcp.Tool{
			hexmcp.Func(func(_ context.Context, in echoIn) (string, error) { return "echo " + in.S, nil }, hexmcp.WithName("echo")),
			hexmcp.Func(func(_ context.Context, in echoIn) (string, error) { return "never", nil }, hexmcp.WithName("forbidden")),
			hexmcp.Func(func(_ context.Context, in echoIn) (string, error) {
				time.Sleep(3 * time.Second) // ignores its ctx on purpose
				return "too late", nil
			}, hexmcp.WithName("slow")),
		},
		Middleware: []app.Middleware{
			hexmcp.Audit(slog.New(slog.NewJSONHandler(audit, &slog.HandlerOptions{Level: slog.LevelDebug}))),
			rec.middleware,
			hexmcp.RateLimit(hexmcp.RateLimitOptions{Rate: 0.001, Burst: 6}),
		},
		ToolMiddleware: []hexmcp.ToolMiddleware{hexmcp.ToolTimeout(0, map[string]time.Duration{"slow": 100 * time.Millisecond})},
		Logger:         nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// call builds a tools/call of era ("handshake" or "stateless").
func call(era string, id int, tool string) string {
	meta := ""
	if era == "stateless" {
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"s":"x"}%s}}`, id, tool, meta)
}

func text(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	isErr, _ := res["isError"].(bool)
	return res["content"].([]any)[0].(map[string]any)["text"].(string), isErr
}

func rpcError(t *testing.T, m map[string]any, id int) map[string]any {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok || m["id"] != float64(id) {
		t.Fatalf("want an error with id %d, got %v", id, m)
	}
	return e
}

// The same middleware acts the same over stdio, Streamable HTTP and
// WebSocket, in both eras: it sees the method, the tool, the era and the
// revision and the outcome; it can answer itself; the rate limit answers a
// JSON-RPC error with the id and the connection goes on; the tool timeout
// answers in time with a tool error.
func TestMiddlewareOnEveryTransportAndEra(t *testing.T) {
	for _, tr := range wiretest.Transports {
		for _, era := range []string{"handshake", "stateless"} {
			t.Run(tr.Name+"/"+era, func(t *testing.T) {
				rec := &recorder{}
				var audit lockedBuffer
				c := tr.Dial(t, newServer(t, rec, &audit))
				wantEra, wantRev := "era=2", "rev=2026-07-28"
				if era == "handshake" {
					c.Send(t, `{"jsonrpc":"2.0","id":100,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
					c.Notify(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
					wantEra, wantRev = "era=1", "rev=2025-11-25"
				}
				if got, isErr := text(t, c.Send(t, call(era, 1, "echo"))); got != "echo x" || isErr {
					t.Fatalf("echo: %q %v", got, isErr)
				}
				if !rec.saw("tools/call name=echo " + wantEra + " " + wantRev + " result=true err=false") {
					t.Fatalf("the middleware saw %q", rec.seen)
				}
				e := rpcError(t, c.Send(t, call(era, 2, "forbidden")), 2)
				if e["code"] != float64(-32001) || e["message"] != "Forbidden by policy" {
					t.Fatalf("forbidden: %v", e)
				}
				start := time.Now()
				got, isErr := text(t, c.Send(t, call(era, 3, "slow")))
				if !isErr || got != "tool slow timed out after 100ms" {
					t.Fatalf("slow: %q %v", got, isErr)
				}
				if d := time.Since(start); d > 2500*time.Millisecond {
					t.Fatalf("the timeout answered after %v, the tool takes 3s", d)
				}
				// Burst 6: initialize (handshake only), echo and slow took
				// 3 or 2 tokens (the recorder refused "forbidden" before
				// the limiter saw it); the rest until the limit pass,
				// then the limit answers with the id.
				id, limited := 4, false
				for ; id < 12 && !limited; id++ {
					m := c.Send(t, call(era, id, "echo"))
					if _, ok := m["error"]; ok {
						e := rpcError(t, m, id)
						if e["code"] != float64(hexmcp.CodeRateLimited) {
							t.Fatalf("over the limit: %v", e)
						}
						limited = true
					}
				}
				if !limited {
					t.Fatal("the rate limit never answered")
				}
				wantLimited := 8
				if era == "handshake" {
					wantLimited = 7
				}
				if id-1 != wantLimited {
					t.Fatalf("the limit answered request %d, want %d (burst 6)", id-1, wantLimited)
				}
				for _, want := range []string{`"method":"tools/call"`, `"name":"echo"`, `"code":-32001`, `"code":-32051`, `"duration"`, `"revision":"` + strings.TrimPrefix(wantRev, "rev=") + `"`} {
					if !strings.Contains(audit.String(), want) {
						t.Errorf("the audit log lacks %s:\n%s", want, audit.String())
					}
				}
				// The client is named where the transport knows it (the
				// peer's address over HTTP and WebSocket; stdio has one
				// client, unnamed), never as an empty string.
				if named := tr.Name != "stdio"; strings.Contains(audit.String(), `"client":"`) != named || strings.Contains(audit.String(), `"client":""`) {
					t.Errorf("the audit log names the client: %v, want %v:\n%s", !named, named, audit.String())
				}
				// The session is named where the transport names one: a
				// handshake-era session of Streamable HTTP (Mcp-Session-Id).
				if named := tr.Name == "http" && era == "handshake"; strings.Contains(audit.String(), `"session":"`) != named {
					t.Errorf("the audit log names a session: %v, want %v:\n%s", !named, named, audit.String())
				}
			})
		}
	}
}

// Notifications pass through method middleware too (and are never rate
// limited), also over HTTP without a session.
func TestNotificationsReachMiddleware(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv, err := hexmcp.New(hexmcp.Options{Middleware: []app.Middleware{
		hexmcp.RateLimit(hexmcp.RateLimitOptions{Rate: 0.001, Burst: 1}),
		func(next app.MethodHandler) app.MethodHandler {
			return func(ctx context.Context, req *app.Request) (json.RawMessage, error) {
				if req.IsNotification() {
					mu.Lock()
					seen = append(seen, req.Method)
					mu.Unlock()
				}
				return next(ctx, req)
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := wiretest.HTTP(t, srv)
	for range 3 {
		c.Notify(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || seen[0] != "notifications/cancelled" {
		t.Fatalf("middleware saw %v", seen)
	}
}
