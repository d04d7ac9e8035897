package porttest

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

// keyedRegistry is what the tool, prompt and resource registries have in
// common: items of type T stored under a key (a name, a URI).
type keyedRegistry[T any] interface {
	Add(item T) error
	Remove(key string) bool
	Get(key string) (T, bool)
	List() []T
}

// registryContract describes one registry port to [testRegistry]: how to
// make an item, read its key, and check that its handler was kept.
type registryContract[T any, R keyedRegistry[T]] struct {
	noun      string // "tool", in messages
	keyName   string // "Name": the subtest ListIsSortedByName
	one       string // the key of the item AddGetRemove stores
	duplicate error  // what Add of a key already present wraps
	// unsorted are keys in the order ListIsSorted… adds them, unsorted[1]
	// the one it removes; sorted is how List must order them.
	unsorted []string
	sorted   string
	prefix   string // of the keys Concurrent makes
	item     func(key string) T
	key      func(T) string
	// noHandler reports that got, read back, has no handler; handles,
	// that its handler answers as the one item gave it for key does.
	noHandler func(got T) bool
	handles   func(got T, key string) bool
	// alsoKept, optional, checks whatever else item gave got.
	alsoKept func(t *testing.T, got T, key string)

	// Optional, for a registry that holds more than one kind of item:
	// alsoDuplicate runs after the duplicate Add was refused, before the
	// count is checked; alsoConcurrent runs in each round of each
	// goroutine of Concurrent, and afterConcurrent once they all ended.
	alsoDuplicate   func(t *testing.T, r R)
	alsoConcurrent  func(r R, i, j int)
	afterConcurrent func(t *testing.T, r R)
}

// testRegistry runs the subtests every registry port shares on registries
// made fresh by newRegistry.
func testRegistry[T any, R keyedRegistry[T]](t *testing.T, newRegistry func(t *testing.T) R, c registryContract[T, R]) {
	t.Run("AddGetRemove", func(t *testing.T) { registryAddGetRemove(t, newRegistry(t), c) })
	t.Run("DuplicateIsAnError", func(t *testing.T) { registryDuplicate(t, newRegistry(t), c) })
	t.Run("ListIsSortedBy"+c.keyName, func(t *testing.T) { registrySorted(t, newRegistry(t), c) })
	t.Run("Concurrent", func(t *testing.T) { registryConcurrent(t, newRegistry(t), c) })
}

func registryAddGetRemove[T any, R keyedRegistry[T]](t *testing.T, r R, c registryContract[T, R]) {
	if _, ok := r.Get(c.one); ok {
		t.Fatalf("empty registry found a %s", c.noun)
	}
	if err := r.Add(c.item(c.one)); err != nil {
		t.Fatal(err)
	}
	got, ok := r.Get(c.one)
	if !ok || c.key(got) != c.one {
		t.Fatalf("Get = %+v, %v", got, ok)
	}
	if c.noHandler(got) {
		t.Fatalf("Get = %+v: no handler", got)
	}
	if !c.handles(got, c.one) {
		t.Fatal("handler not kept")
	}
	if c.alsoKept != nil {
		c.alsoKept(t, got, c.one)
	}
	if !r.Remove(c.one) {
		t.Fatalf("Remove of a present %s returned false", c.noun)
	}
	if r.Remove(c.one) {
		t.Fatalf("Remove of an absent %s returned true", c.noun)
	}
	if _, ok := r.Get(c.one); ok {
		t.Fatalf("removed %s still found", c.noun)
	}
}

func registryDuplicate[T any, R keyedRegistry[T]](t *testing.T, r R, c registryContract[T, R]) {
	if err := r.Add(c.item(c.one)); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(c.item(c.one)); !errors.Is(err, c.duplicate) {
		t.Fatalf("duplicate Add = %v, want an error wrapping %q", err, c.duplicate)
	}
	if c.alsoDuplicate != nil {
		c.alsoDuplicate(t, r)
	}
	if len(r.List()) != 1 {
		t.Fatal("duplicate was stored")
	}
}

func registrySorted[T any, R keyedRegistry[T]](t *testing.T, r R, c registryContract[T, R]) {
	for _, k := range c.unsorted {
		if err := r.Add(c.item(k)); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	for _, it := range r.List() {
		keys = append(keys, c.key(it))
	}
	if fmt.Sprint(keys) != c.sorted {
		t.Fatalf("List order = %v", keys)
	}
	r.Remove(c.unsorted[1])
	if n := len(r.List()); n != len(c.unsorted)-1 {
		t.Fatalf("after Remove, List has %d %ss", n, c.noun)
	}
}

func registryConcurrent[T any, R keyedRegistry[T]](t *testing.T, r R, c registryContract[T, R]) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				key := fmt.Sprintf("%s%d_%d", c.prefix, i, j)
				if err := r.Add(c.item(key)); err != nil {
					t.Error(err)
					return
				}
				r.Get(key)
				r.List()
				if c.alsoConcurrent != nil {
					c.alsoConcurrent(r, i, j)
				}
				if j%2 == 0 {
					r.Remove(key)
				}
			}
		})
	}
	wg.Wait()
	if n := len(r.List()); n != 8*25 {
		t.Fatalf("List has %d %ss, want %d", n, c.noun, 8*25)
	}
	if c.afterConcurrent != nil {
		c.afterConcurrent(t, r)
	}
}

// TestToolRegistry checks registries made fresh by newRegistry for each
// subtest against the contract of [ports.ToolRegistry].
func TestToolRegistry(t *testing.T, newRegistry func(t *testing.T) ports.ToolRegistry) {
	testRegistry(t, newRegistry, registryContract[ports.RegisteredTool, ports.ToolRegistry]{
		noun: "tool", keyName: "Name", one: "a", duplicate: domain.ErrDuplicateTool,
		unsorted: []string{"m", "b", "z", "a", "B"}, sorted: "[B a b m z]", prefix: "t",
		item:      tool,
		key:       func(rt ports.RegisteredTool) string { return rt.Tool.Name },
		noHandler: func(rt ports.RegisteredTool) bool { return rt.Handler == nil },
		handles: func(rt ports.RegisteredTool, name string) bool {
			v, _ := rt.Handler(ctx, nil)
			return v == name
		},
	})
}

func tool(name string) ports.RegisteredTool {
	return ports.RegisteredTool{
		Tool:    &domain.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		Handler: func(context.Context, json.RawMessage) (any, error) { return name, nil },
	}
}

// TestPromptRegistry checks registries made fresh by newRegistry for each
// subtest against the contract of [ports.PromptRegistry].
func TestPromptRegistry(t *testing.T, newRegistry func(t *testing.T) ports.PromptRegistry) {
	testRegistry(t, newRegistry, registryContract[ports.RegisteredPrompt, ports.PromptRegistry]{
		noun: "prompt", keyName: "Name", one: "a", duplicate: domain.ErrDuplicatePrompt,
		unsorted: []string{"m", "b", "z", "A", "B"}, sorted: "[A B b m z]", prefix: "p",
		item:      prompt,
		key:       func(p ports.RegisteredPrompt) string { return p.Prompt.Name },
		noHandler: func(p ports.RegisteredPrompt) bool { return p.Handler == nil },
		handles: func(p ports.RegisteredPrompt, _ string) bool {
			res, _ := p.Handler(ctx, nil)
			return res != nil && len(res.Messages) == 1
		},
		alsoKept: func(t *testing.T, got ports.RegisteredPrompt, name string) {
			t.Helper()
			if c := got.Completers["a"]; c == nil {
				t.Fatal("completers not kept")
			} else if v, _ := c(ctx, "", nil); fmt.Sprint(v) != "["+name+"]" {
				t.Fatal("completers not kept")
			}
		},
	})
}

func prompt(name string) ports.RegisteredPrompt {
	return ports.RegisteredPrompt{
		Prompt: &domain.Prompt{Name: name, Arguments: []domain.PromptArgument{{Name: "a"}}},
		Handler: func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
			return &domain.GetPromptResult{Messages: []domain.PromptMessage{{Role: domain.RoleUser, Content: &domain.TextContent{Text: name}}}}, nil
		},
		Completers: map[string]ports.Completer{"a": func(context.Context, string, map[string]string) ([]string, error) {
			return []string{name}, nil
		}},
	}
}
