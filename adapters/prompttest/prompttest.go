// Package prompttest is the contract suite of the [ports.PromptRegistry]
// port: every prompt registry adapter (the in-memory one, or one a host app
// writes on a shared store) must pass Run.
package prompttest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

func prompt(name string) ports.RegisteredPrompt {
	return ports.RegisteredPrompt{
		Prompt: &domain.Prompt{Name: name, Arguments: []domain.PromptArgument{{Name: "a"}}},
		Handler: func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
			return &domain.GetPromptResult{Messages: []domain.PromptMessage{domain.UserMessage(domain.Text(name))}}, nil
		},
		Completers: map[string]ports.Completer{"a": func(context.Context, string, map[string]string) ([]string, error) {
			return []string{name}, nil
		}},
	}
}

// Run checks a registry made fresh by newRegistry for each subtest.
func Run(t *testing.T, newRegistry func(t *testing.T) ports.PromptRegistry) {
	t.Run("AddGetRemove", func(t *testing.T) {
		r := newRegistry(t)
		if _, ok := r.Get("a"); ok {
			t.Fatal("empty registry found a prompt")
		}
		if err := r.Add(prompt("a")); err != nil {
			t.Fatal(err)
		}
		got, ok := r.Get("a")
		if !ok || got.Prompt.Name != "a" || got.Handler == nil {
			t.Fatalf("Get = %+v, %v", got, ok)
		}
		if res, _ := got.Handler(context.Background(), nil); len(res.Messages) != 1 {
			t.Fatal("handler not kept")
		}
		if v, _ := got.Completers["a"](context.Background(), "", nil); fmt.Sprint(v) != "[a]" {
			t.Fatal("completers not kept")
		}
		if !r.Remove("a") {
			t.Fatal("Remove of a present prompt returned false")
		}
		if r.Remove("a") {
			t.Fatal("Remove of an absent prompt returned true")
		}
		if _, ok := r.Get("a"); ok {
			t.Fatal("removed prompt still found")
		}
	})
	t.Run("DuplicateIsAnError", func(t *testing.T) {
		r := newRegistry(t)
		if err := r.Add(prompt("a")); err != nil {
			t.Fatal(err)
		}
		if err := r.Add(prompt("a")); !errors.Is(err, domain.ErrDuplicatePrompt) {
			t.Fatalf("duplicate Add = %v, want domain.ErrDuplicatePrompt", err)
		}
		if len(r.List()) != 1 {
			t.Fatal("duplicate was stored")
		}
	})
	t.Run("ListIsSortedByName", func(t *testing.T) {
		r := newRegistry(t)
		for _, n := range []string{"m", "b", "z", "A", "B"} {
			if err := r.Add(prompt(n)); err != nil {
				t.Fatal(err)
			}
		}
		var names []string
		for _, p := range r.List() {
			names = append(names, p.Prompt.Name)
		}
		if fmt.Sprint(names) != "[A B b m z]" {
			t.Fatalf("List order = %v", names)
		}
		r.Remove("b")
		if n := len(r.List()); n != 4 {
			t.Fatalf("after Remove, List has %d prompts", n)
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
					name := fmt.Sprintf("p%d-%d", i, j)
					if err := r.Add(prompt(name)); err != nil {
						t.Error(err)
						return
					}
					r.List()
					r.Get(name)
					if j%2 == 0 {
						r.Remove(name)
					}
				}
			}(i)
		}
		wg.Wait()
		if n := len(r.List()); n != 8*25 {
			t.Fatalf("List has %d prompts, want %d", n, 8*25)
		}
	})
}
