package app_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// A middleware answers a tools/call itself and runs the call through next
// on a detached copy in the background: the client gets the middleware's
// answer, and the background run gets the engine's own (the tool ran).
func TestRequestDetached(t *testing.T) {
	background := make(chan string, 1)
	mw := func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, r *app.Request) (json.RawMessage, error) {
			if r.Method != "tools/call" {
				return next(ctx, r)
			}
			d := r.Detached()
			go func() {
				res, err := next(context.WithoutCancel(ctx), d)
				if err != nil {
					background <- "error: " + err.Error()
					return
				}
				background <- string(res)
			}()
			return json.RawMessage(`{"started":true}`), nil
		}
	}
	tool := hexmcp.Func(func(context.Context, struct{}) (string, error) { return "ran", nil }, hexmcp.WithName("work"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{mw}}, tool))
	c.initialize("2025-11-25")
	got := c.roundTrip(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"work","arguments":{}}}`)
	equalJSON(t, got, `{"jsonrpc":"2.0","id":7,"result":{"started":true}}`)
	if res := <-background; !strings.Contains(res, `"text":"ran"`) {
		t.Fatalf("the background run answered %s", res)
	}
}

// A request Derive makes shares no bytes with the message it comes from:
// kept by a background run (a task), it does not keep that message (its
// _meta, however large) alive.
func TestDeriveKeepsNoMessageBytes(t *testing.T) {
	var derived *app.Request
	mw := func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, r *app.Request) (json.RawMessage, error) {
			if r.Method == "tools/call" {
				d, err := r.Derive("tools/call", json.RawMessage(`{"name":"work","arguments":{}}`))
				if err != nil {
					return nil, err
				}
				derived = d
			}
			return next(ctx, r)
		}
	}
	tool := hexmcp.Func(func(context.Context, struct{}) (string, error) { return "ran", nil }, hexmcp.WithName("work"))
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{mw}}, tool)
	raw := []byte(`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"work","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"pad":"` + strings.Repeat("x", 1<<20) + `"}}}`)
	alive := weak.Make(&raw[0])
	if out := e.HandleMessage(context.Background(), nil, raw, nil); !strings.Contains(string(out), `"text":"ran"`) {
		t.Fatalf("tools/call: %s", out)
	}
	raw = nil
	for range 3 {
		runtime.GC()
	}
	if alive.Value() != nil {
		t.Fatal("the derived request keeps the message it comes from alive")
	}
	if derived == nil || string(derived.ID) != `"call-1"` || string(derived.ClientCapabilities) != `{"elicitation":{}}` {
		t.Fatalf("derived %+v", derived)
	}
	runtime.KeepAlive(derived)
}

// WithProgress and WithLog send a detached request's progress and log to
// the functions given, and change nothing on a request that is not
// detached: its progress still reaches the client that asked for it.
func TestProgressAndLogSinksOnlyWhenDetached(t *testing.T) {
	sunk := make(chan string, 4)
	detach := false
	mw := func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, r *app.Request) (json.RawMessage, error) {
			if r.Method != "tools/call" {
				return next(ctx, r)
			}
			if detach {
				r = r.Detached()
			}
			r = r.WithProgress(func(_ context.Context, p, _ float64, _ string) { sunk <- "progress" }).
				WithLog(func(context.Context, hexmcp.LogLevel, string, any) { sunk <- "log" })
			return next(ctx, r)
		}
	}
	tool := hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
		if err := rc.ReportProgress(ctx, 1, 2, "half"); err != nil {
			return "", err
		}
		if err := rc.Log(ctx, hexmcp.LogInfo, "work", "hello"); err != nil {
			return "", err
		}
		return "ran", nil
	}, hexmcp.WithName("work"))
	c := serve(t, newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{mw}}, tool))
	c.initialize("2025-11-25")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{},"_meta":{"progressToken":"p"}}}`
	c.send(call)
	if got := c.recv(); !strings.Contains(got, `"method":"notifications/progress"`) || !strings.Contains(got, `"progressToken":"p"`) {
		t.Fatalf("not detached: the client got %s, want its progress", got)
	}
	if got := c.recv(); !strings.Contains(got, `"text":"ran"`) {
		t.Fatalf("not detached: %s", got)
	}
	select {
	case s := <-sunk:
		t.Fatalf("not detached: the %s went to the sink", s)
	default:
	}
	detach = true
	if got := c.roundTrip(strings.Replace(call, `"id":1`, `"id":2`, 1)); !strings.Contains(got, `"text":"ran"`) {
		t.Fatalf("detached: the client got %s, want the result alone", got)
	}
	a := testtools.Recv(t, sunk, 10*time.Second, "detached: the progress did not reach its sink")
	b := testtools.Recv(t, sunk, 10*time.Second, "detached: the log did not reach its sink")
	if a != "progress" || b != "log" {
		t.Fatalf("detached: the sinks got %s, %s", a, b)
	}
}
