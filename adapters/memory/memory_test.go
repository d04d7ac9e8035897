package memory_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

func TestRegistryContract(t *testing.T) {
	porttest.TestToolRegistry(t, func(*testing.T) ports.ToolRegistry { return memory.NewRegistry() })
}

func TestResourceRegistryContract(t *testing.T) {
	porttest.TestResourceRegistry(t, func(*testing.T) ports.ResourceRegistry { return memory.NewResourceRegistry() })
}

func TestPromptRegistryContract(t *testing.T) {
	porttest.TestPromptRegistry(t, func(*testing.T) ports.PromptRegistry { return memory.NewPromptRegistry() })
}

func TestPipe(t *testing.T) {
	c, s := memory.NewPipe()
	ctx := context.Background()
	buf := []byte("hello")
	if err := c.WriteMessage(ctx, buf); err != nil {
		t.Fatal(err)
	}
	buf[0] = 'j' // the pipe copied the message
	got, err := s.ReadMessage(ctx)
	if err != nil || string(got) != "hello" {
		t.Fatalf("got %q, %v", got, err)
	}
	_ = c.WriteMessage(ctx, []byte("last"))
	c.Close()
	if got, err := s.ReadMessage(ctx); err != nil || string(got) != "last" {
		t.Fatalf("queued message lost on close: %q, %v", got, err)
	}
	if _, err := s.ReadMessage(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF after close, got %v", err)
	}
	if err := s.WriteMessage(ctx, []byte("x")); !errors.Is(err, memory.ErrClosed) {
		t.Fatalf("write after close = %v", err)
	}
	c2, _ := memory.NewPipe()
	tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := c2.ReadMessage(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadMessage ignores ctx: %v", err)
	}
}
