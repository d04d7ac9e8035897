package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/serving"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

const abortMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func callMsg(id int, tool string) []byte {
	b, _ := json.Marshal(id)
	return []byte(`{"jsonrpc":"2.0","id":` + string(b) + `,"method":"tools/call","params":{"name":"` + tool + `",` + abortMeta + `}}`)
}

// sendCall writes a call of tool, with id, to p.
func sendCall(t *testing.T, ctx context.Context, p ports.Conn, id int, tool string) {
	t.Helper()
	if err := p.WriteMessage(ctx, callMsg(id, tool)); err != nil {
		t.Fatal(err)
	}
}

// readText reads one response and returns its first text block, or the
// JSON-RPC error message.
func readText(t *testing.T, c ports.Conn) string {
	t.Helper()
	raw := readNote(t, c)
	var r struct {
		Result *struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	switch {
	case r.Error != nil:
		return "error: " + r.Error.Message
	case r.Result == nil || len(r.Result.Content) == 0:
		return "empty: " + raw
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
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			close(stuckStarted)
			<-ctx.Done() // ignores everything but its context
			close(stuckCancelled)
			return "", ctx.Err()
		}, hexmcp.WithName("stuck")),
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			gateStarted <- struct{}{}
			select {
			case <-release:
				return "released", nil
			case <-ctx.Done():
				return "cancelled", nil
			}
		}, hexmcp.WithName("gate")),
		hexmcp.NewTool(func(ctx context.Context) (string, error) {
			if ctx.Err() != nil {
				return "cancelled", nil
			}
			return "alive", nil
		}, hexmcp.WithName("alive")),
	)
	if err != nil {
		t.Fatal(err)
	}

	ta, ca := memory.NewTransport()
	tb, cb := memory.NewTransport()
	srvA, srvB := serving.New(engine, ta), serving.New(engine, tb)
	ctx := context.Background()
	for _, s := range []*serving.Server{srvA, srvB} {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	defer ca.Close()
	defer cb.Close()

	sendCall(t, ctx, ca, 1, "stuck")
	sendCall(t, ctx, cb, 1, "gate")
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
	sendCall(t, ctx, cb, 2, "alive")
	if got := readText(t, cb); got != "alive" {
		t.Fatalf("B's new call answered %q, want alive", got)
	}

	// New connections and new servers on the engine are served.
	client, server := memory.NewPipe()
	defer client.Close()
	go engine.ServeConn(ctx, server)
	sendCall(t, ctx, client, 3, "alive")
	if got := readText(t, client); got != "alive" {
		t.Fatalf("a new connection answered %q, want alive", got)
	}
	tc, cc := memory.NewTransport()
	defer cc.Close()
	srvC := serving.New(engine, tc)
	if err := srvC.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sendCall(t, ctx, cc, 4, "alive")
	if got := readText(t, cc); got != "alive" {
		t.Fatalf("a new server answered %q, want alive", got)
	}

	for _, s := range []*serving.Server{srvB, srvC} {
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
	if err := engine.AddTool(hexmcp.NewTool(func(ctx context.Context) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
		return "cancelled", nil
	}, hexmcp.WithName("wait"))); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		tr, c := memory.NewTransport()
		defer c.Close()
		if err := serving.New(engine, tr).Start(ctx); err != nil {
			t.Fatal(err)
		}
		sendCall(t, ctx, c, 1, "wait")
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
	testtools.Recv(t, ch, 10*time.Second, "timed out waiting for "+what)
}
