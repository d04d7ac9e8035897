package mcpredis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
)

// Share's Prefix is every part's: the sessions, events, state keys and
// tasks of a shared state keep all their keys under it (or under the hash
// tag that begins with it), none under the default "hexmcp:", so that two
// servers with two prefixes share one Redis without meeting.
func TestSharePrefixReachesEveryPart(t *testing.T) {
	srv := redistest.Start(t)
	rc := client(t, srv)
	shared := mcpredis.Share(client(t, srv), mcpredis.ShareOptions{Prefix: "sh:"})
	t.Cleanup(func() { mcpredis.CloseShared(shared) })
	ctx := context.Background()
	if err := shared.SessionStore.Create(ctx, ports.SessionState{ID: "s1", Initialized: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := shared.EventStore.Append(ctx, "stream", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := shared.StateKeys.Keys(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := shared.Tasks.Create(ctx, ports.Task{ID: "t1", Owner: "o", Status: ports.TaskWorking, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]bool{}
	for _, k := range keys {
		if !strings.HasPrefix(strings.TrimPrefix(k, "{"), "sh:") {
			t.Errorf("key %q is not under the shared prefix sh:", k)
		}
		for _, part := range []string{"sess", "ev", "tasks", "keys"} {
			if strings.Contains(k, part) {
				parts[part] = true
			}
		}
	}
	if len(parts) < 3 {
		t.Errorf("keys %q: want the sessions', the events' and the tasks' at least", keys)
	}
}
