package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/ports"
)

const abortMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func callMsg(id int, tool string) []byte {
	b, _ := json.Marshal(id)
	return []byte(`{"jsonrpc":"2.0","id":` + string(b) + `,"method":"tools/call","params":{"name":"` + tool + `",` + abortMeta + `}}`)
}

// readText reads one response and returns its first text block, or the
// JSON-RPC error message.
func readText(t *testing.T, c ports.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.ReadMessage(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var r struct {
		Result *struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	switch {
	case r.Error != nil:
		return "error: " + r.Error.Message
	case r.Result == nil || len(r.Result.Content) == 0:
		return "empty: " + string(raw)
	case r.Result.IsError:
		return "isError: " + r.Result.Content[0].Text
	}
	return r.Result.Content[0].Text
}

// A Shutdown of one server that runs out of time cancels that server's
// calls only: a call of another server of the same engine keeps its
// context and answers, and the engine serves new connections and servers.
func TestServerShutdownTimeoutCancelsOnlyItsOwnCalls(t *testing.T) {
	stuckStarted := make(chan struct{})
	stuckCancelled := make(chan struct{})
	gateStarted := make(chan struct{}, 1)
	release := make(chan struct{})

	engine, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	err = engine.AddTools(
		app.NewTool(func(ctx context.Context) (string, error) {
			close(stuckStarted)
			<-ctx.Done() // ignores everything but its context
			close(stuckCancelled)
			return "", ctx.Err()
		}, app.WithName("stuck")),
		app.NewTool(func(ctx context.Context) (string, error) {
			gateStarted <- struct{}{}
			select {
			case <-release:
				return "released", nil
			case <-ctx.Done():
				return "cancelled", nil
			}
		}, app.WithName("gate")),
		app.NewTool(func(ctx context.Context) (string, error) {
			if ctx.Err() != nil {
				return "cancelled", nil
			}
			return "alive", nil
		}, app.WithName("alive")),
	)
	if err != nil {
		t.Fatal(err)
	}

	ta, ca := memory.NewTransport()
	tb, cb := memory.NewTransport()
	srvA, srvB := app.NewServer(engine, ta), app.NewServer(engine, tb)
	ctx := context.Background()
	for _, s := range []*app.Server{srvA, srvB} {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	defer ca.Close()
	defer cb.Close()

	if err := ca.WriteMessage(ctx, callMsg(1, "stuck")); err != nil {
		t.Fatal(err)
	}
	if err := cb.WriteMessage(ctx, callMsg(1, "gate")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, stuckStarted, "the stuck call to start")
	waitFor(t, gateStarted, "the gate call to start")

	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err = srvA.Shutdown(sctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown of A = %v, want context.DeadlineExceeded", err)
	}
	waitFor(t, stuckCancelled, "A's stuck call to be cancelled")
	waitFor(t, srvA.Done(), "server A to stop")

	// B's call in flight kept its context.
	close(release)
	if got := readText(t, cb); got != "released" {
		t.Fatalf("B's call in flight answered %q, want %q (cancelled by A's shutdown?)", got, "released")
	}
	// B still serves new calls.
	if err := cb.WriteMessage(ctx, callMsg(2, "alive")); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, cb); got != "alive" {
		t.Fatalf("B's new call answered %q, want alive", got)
	}

	// New connections and new servers on the engine are served.
	client, server := memory.NewPipe()
	defer client.Close()
	go engine.ServeConn(ctx, server)
	if err := client.WriteMessage(ctx, callMsg(3, "alive")); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, client); got != "alive" {
		t.Fatalf("a new connection answered %q, want alive", got)
	}
	tc, cc := memory.NewTransport()
	defer cc.Close()
	srvC := app.NewServer(engine, tc)
	if err := srvC.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cc.WriteMessage(ctx, callMsg(4, "alive")); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, cc); got != "alive" {
		t.Fatalf("a new server answered %q, want alive", got)
	}

	for _, s := range []*app.Server{srvB, srvC} {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := s.Shutdown(sctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		cancel()
	}
}

// Engine.Abort stays the engine-wide hard stop: it cancels the calls of
// every server.
func TestEngineAbortCancelsEveryServer(t *testing.T) {
	started, cancelled := make(chan struct{}, 2), make(chan struct{}, 2)
	engine, err := app.NewEngine(app.Options{ToolRegistry: memory.NewRegistry(), Validator: jsonschema.New()})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	if err := engine.AddTool(app.NewTool(func(ctx context.Context) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
		return "cancelled", nil
	}, app.WithName("wait"))); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		tr, c := memory.NewTransport()
		defer c.Close()
		if err := app.NewServer(engine, tr).Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteMessage(ctx, callMsg(1, "wait")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, started, "the first call")
	waitFor(t, started, "the second call")
	engine.Abort()
	// The aborted calls' answers are not written (the connections' output is
	// cancelled too); their handlers see their contexts end.
	waitFor(t, cancelled, "the first call to be cancelled")
	waitFor(t, cancelled, "the second call to be cancelled")
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
