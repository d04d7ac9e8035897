package wiring_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/wiring"
)

// serverName starts an application of opts on an in-memory transport and
// returns the serverInfo name its engine answers with.
func serverName(t *testing.T, opts ...fx.Option) (string, error) {
	t.Helper()
	var client ports.Conn
	a := fx.New(append(opts, wiring.Core, wiring.Tools(hexmcp.NewTool(hello)), memoryModule(&client), fx.NopLogger)...)
	if err := a.Err(); err != nil {
		return "", err
	}
	if err := a.Start(context.Background()); err != nil {
		return "", err
	}
	defer a.Stop(context.Background())
	got := roundTrip(t, client, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	const key = `"io.modelcontextprotocol/serverInfo":{"name":"`
	i := strings.Index(got, key)
	if i < 0 {
		t.Fatalf("no serverInfo: %s", got)
	}
	rest := got[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')], nil
}

// A Config supplied as a value takes effect, as one supplied as a pointer
// does; both at once fail the start rather than one being ignored.
func TestConfigValueOrPointer(t *testing.T) {
	cfg := wiring.Config{Info: domain.Implementation{Name: "by-value", Version: "1"}}
	if name, err := serverName(t, fx.Supply(cfg)); err != nil || name != "by-value" {
		t.Fatalf("value: %q, %v", name, err)
	}
	if name, err := serverName(t, fx.Supply(&wiring.Config{Info: domain.Implementation{Name: "by-pointer", Version: "1"}})); err != nil || name != "by-pointer" {
		t.Fatalf("pointer: %q, %v", name, err)
	}
	if name, err := serverName(t); err != nil || name != "hexmcp-server" {
		t.Fatalf("none: %q, %v", name, err)
	}
	_, err := serverName(t, fx.Supply(cfg), fx.Supply(&cfg))
	if !errors.Is(err, wiring.ErrConfigTwice) {
		t.Fatalf("both: %v, want ErrConfigTwice", err)
	}
}

// The Config's own tools are served with those of the group, and a Config
// cannot turn validation off by leaving the validator empty.
func TestConfigToolsAndValidation(t *testing.T) {
	type in struct {
		N int `json:"n" minimum:"1"`
	}
	var client ports.Conn
	a := fx.New(
		fx.Supply(wiring.Config{Tools: []hexmcp.Tool{hexmcp.Func(func(_ context.Context, v in) (int, error) { return v.N, nil }, hexmcp.WithName("n"))}}),
		wiring.Core, wiring.Tools(hexmcp.NewTool(hello)), memoryModule(&client), fx.NopLogger,
	)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if got := roundTrip(t, client, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":{"n":0},`+meta+`}}`); !strings.Contains(got, `"isError":true`) {
		t.Fatalf("n=0 passed validation: %s", got)
	}
	if got := roundTrip(t, client, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello",`+meta+`}}`); !strings.Contains(got, `"text":"hello"`) {
		t.Fatalf("group tool: %s", got)
	}
}

// captureStderr runs f with os.Stderr sent to a pipe and returns what was
// written.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = saved }()
	f()
	w.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

// wiring.New starts and stops without a word of fx's on standard error,
// and still says why a start fails.
func TestNewIsQuietButTellsFailures(t *testing.T) {
	out := captureStderr(t, func() {
		var client ports.Conn
		a := wiring.New(wiring.Tools(hexmcp.NewTool(hello)), memoryModule(&client))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.Start(ctx); err != nil {
			t.Error(err)
		}
		if err := a.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	if out != "" {
		t.Fatalf("a good start printed %q", out)
	}
	out = captureStderr(t, func() {
		a := wiring.New(wiring.Tools(hexmcp.NewTool(hello, hexmcp.WithName("bad name"))), fx.Invoke(func(*app.Engine) {}))
		if a.Err() == nil {
			t.Error("a bad tool did not fail the application")
		}
	})
	if !strings.Contains(out, "bad name") {
		t.Fatalf("a failed start printed %q, want the error", out)
	}
}
