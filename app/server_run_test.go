package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
)

// Run serves until the transport ends and then returns; Run (or Start) of
// a server already started returns ErrAlreadyStarted at once.
func TestServerRunUntilTheTransportEnds(t *testing.T) {
	e := newEngine(t, app.Options{Validator: jsonschema.New()}, addTool())
	tr, cl := memory.NewTransport()
	srv := app.NewServer(e, tr)
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(context.Background()) }()
	c := &client{t: t, pipe: cl}
	c.initialize("2025-11-25")
	equalJSON(t, c.roundTrip(ping), pingResp)
	select {
	case err := <-ran:
		t.Fatalf("Run returned %v while its transport was open", err)
	default:
	}

	again := make(chan error, 1)
	go func() { again <- srv.Run(context.Background()) }()
	select {
	case err := <-again:
		if !errors.Is(err, app.ErrAlreadyStarted) {
			t.Fatalf("a second Run = %v, want ErrAlreadyStarted", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a second Run did not return")
	}
	if err := srv.Start(context.Background()); !errors.Is(err, app.ErrAlreadyStarted) {
		t.Fatalf("Start of a running server = %v, want ErrAlreadyStarted", err)
	}

	cl.Close()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run = %v after the client closed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its transport ended")
	}
	select {
	case <-srv.Done():
	default:
		t.Fatal("Done is not closed after Run returned")
	}
}
