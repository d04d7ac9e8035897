// Package registrytest is the contract suite of the [ports.ToolRegistry]
// port: every registry adapter (the in-memory one, or one a host app writes
// on a shared store) must pass Run.
package registrytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

func tool(name string) ports.RegisteredTool {
	return ports.RegisteredTool{
		Tool:    &domain.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		Handler: func(context.Context, json.RawMessage) (any, error) { return name, nil },
	}
}

// Run checks a registry made fresh by newRegistry for each subtest.
func Run(t *testing.T, newRegistry func(t *testing.T) ports.ToolRegistry) {
	t.Run("AddGetRemove", func(t *testing.T) {
		r := newRegistry(t)
		if _, ok := r.Get("a"); ok {
			t.Fatal("empty registry found a tool")
		}
		if err := r.Add(tool("a")); err != nil {
			t.Fatal(err)
		}
		got, ok := r.Get("a")
		if !ok || got.Tool.Name != "a" || got.Handler == nil {
			t.Fatalf("Get = %+v, %v", got, ok)
		}
		if v, _ := got.Handler(context.Background(), nil); v != "a" {
			t.Fatal("handler not kept")
		}
		if !r.Remove("a") {
			t.Fatal("Remove of a present tool returned false")
		}
		if r.Remove("a") {
			t.Fatal("Remove of an absent tool returned true")
		}
		if _, ok := r.Get("a"); ok {
			t.Fatal("removed tool still found")
		}
	})
	t.Run("DuplicateIsAnError", func(t *testing.T) {
		r := newRegistry(t)
		if err := r.Add(tool("a")); err != nil {
			t.Fatal(err)
		}
		err := r.Add(tool("a"))
		if !errors.Is(err, domain.ErrDuplicateTool) {
			t.Fatalf("duplicate Add = %v, want domain.ErrDuplicateTool", err)
		}
		if len(r.List()) != 1 {
			t.Fatal("duplicate was stored")
		}
	})
	t.Run("ListIsSortedByName", func(t *testing.T) {
		r := newRegistry(t)
		for _, n := range []string{"m", "b", "z", "a", "B"} {
			if err := r.Add(tool(n)); err != nil {
				t.Fatal(err)
			}
		}
		var names []string
		for _, rt := range r.List() {
			names = append(names, rt.Tool.Name)
		}
		if fmt.Sprint(names) != "[B a b m z]" {
			t.Fatalf("List order = %v", names)
		}
		r.Remove("b")
		if n := len(r.List()); n != 4 {
			t.Fatalf("after Remove, List has %d tools", n)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		r := newRegistry(t)
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				for j := 0; j < 50; j++ {
					name := fmt.Sprintf("t%d_%d", i, j)
					_ = r.Add(tool(name))
					r.Get(name)
					r.List()
					if j%2 == 0 {
						r.Remove(name)
					}
				}
			}(i)
		}
		wg.Wait()
		if n := len(r.List()); n != 8*25 {
			t.Fatalf("List has %d tools, want %d", n, 8*25)
		}
	})
}
