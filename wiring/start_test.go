package wiring_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/fx"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/wiring"
)

// hangGuard bounds a wait for something that must happen (a deadline for
// a bug, not a measure of speed).
const hangGuard = 30 * time.Second

// gateBus holds every Publish until open is closed (a bus that hangs), and
// counts them.
type gateBus struct {
	ports.NotificationBus
	open  chan struct{}
	calls atomic.Int64
}

func (g *gateBus) Publish(ctx context.Context, n ports.Notice) error {
	g.calls.Add(1)
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.NotificationBus.Publish(ctx, n)
}

// A server whose bus does not answer (Redis down, and a bus that holds
// every publish) starts at once and serves: registering tools, resources
// and prompts, at start or later, never waits on the bus; the notices they
// raise are published later, a few of them (list changes coalesce), and a
// bus that keeps failing is logged about a few times, not once per
// registration. The hang guard is a deadline for a start that never ends,
// not a measure of speed.
func TestStartDoesNotWaitForTheBus(t *testing.T) {
	srv := redistest.Start(t)
	addr := srv.Addr
	srv.Stop() // Redis down
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	shared := mcpredis.Share(rdb, mcpredis.ShareOptions{})
	t.Cleanup(func() { mcpredis.CloseShared(shared) })
	gate := &gateBus{NotificationBus: shared.Bus, open: make(chan struct{})}
	var openOnce sync.Once
	release := func() { openOnce.Do(func() { close(gate.open) }) }
	t.Cleanup(release)
	shared.Bus = gate
	// returns waits for the error of ch (hangGuard at most) and fails t on
	// one; on a hang it lets the bus go and calls hung, which fails t.
	returns := func(ch <-chan error, hung func()) {
		t.Helper()
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(hangGuard):
			release()
			hung()
		}
	}
	var tools []hexmcp.Tool
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		tools = append(tools, hexmcp.NewTool(hello, hexmcp.WithName("hello_"+name)))
	}
	var resources []hexmcp.Resource
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		resources = append(resources, hexmcp.TextResource("test://"+name, name, "text"))
	}
	logs := &testtools.LockedBuffer{}
	var h *mcphttp.Handler
	var e *app.Engine
	var fxApp *fx.App
	started := make(chan error, 1)
	go func() {
		// fx.New builds the engine (and registers): it may not wait either
		fxApp = fx.New(wiring.Core, wiring.HTTP, wiring.Tools(tools...), wiring.Resources(resources...),
			fx.Provide(func() ports.SharedState { return shared }),
			fx.Supply(slog.New(slog.NewTextHandler(logs, nil))),
			fx.Invoke(func(e *app.Engine) error { return e.AddTool(hexmcp.NewTool(hello, hexmcp.WithName("hello_later"))) }),
			fx.Populate(&h, &e), fx.NopLogger, fx.StartTimeout(time.Hour))
		started <- fxApp.Start(context.Background())
	}()
	returns(started, func() {
		t.Fatalf("the server did not start while its bus held the first publish (%d publishes waiting)", gate.calls.Load())
	})
	t.Cleanup(func() { fxApp.Stop(context.Background()) })
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "hello_later") {
		t.Fatalf("tools/list while the bus hangs: %d %s", resp.StatusCode, body)
	}
	// Later registrations do not wait either.
	added := make(chan error, 1)
	go func() { added <- e.AddTool(hexmcp.NewTool(hello, hexmcp.WithName("hello_running"))) }()
	returns(added, func() { t.Fatal("AddTool waited for the bus") })
	release()
	if err := fxApp.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 17 registrations: a few publishes, and a few warnings about a bus
	// that fails.
	if n := gate.calls.Load(); n > 8 {
		t.Fatalf("%d publishes for 17 registrations", n)
	}
	if n := strings.Count(logs.String(), "publishing"); n > 4 {
		t.Fatalf("%d warnings about publishing:\n%s", n, logs.String())
	}
}
