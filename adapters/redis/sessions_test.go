package mcpredis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

// The Redis session store passes the contract of every session store,
// against a real redis-server; each subtest gets a prefix of its own.
func TestSessionStoreContract(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	n := 0
	newStore := func(opts mcpredis.SessionStoreOptions) func(t *testing.T, clock ports.Clock) ports.SessionStore {
		return func(t *testing.T, clock ports.Clock) ports.SessionStore {
			n++
			opts.Prefix = "t" + time.Now().Format("150405.000000") + "-" + string(rune('a'+n%26)) + ":"
			opts.Clock = clock
			return mcpredis.NewSessionStore(c, opts)
		}
	}
	porttest.TestSessionStore(t, newStore(mcpredis.SessionStoreOptions{}))
	porttest.TestSessionExpiry(t, 10*time.Minute, newStore(mcpredis.SessionStoreOptions{IdleTimeout: 10 * time.Minute, PendingTimeout: 10 * time.Minute}))
	porttest.TestSessionPending(t, 30*time.Second, 10*time.Minute, newStore(mcpredis.SessionStoreOptions{IdleTimeout: 10 * time.Minute, PendingTimeout: 30 * time.Second}))
	porttest.TestSessionPerClientLimit(t, 5, newStore(mcpredis.SessionStoreOptions{MaxSessionsPerClient: 5}))
	porttest.TestSessionByteLimits(t, 64<<10, 512<<10, newStore(mcpredis.SessionStoreOptions{MaxSessionBytesPerClient: 64 << 10, MaxSessionBytes: 512 << 10}))
}

// The named settings that turn a bound off mean no bound, never "refuse
// every session": UnlimitedSessionsPerClient lets one client hold up to
// MaxSessions, UnlimitedSessionBytes removes the byte budgets.
func TestSessionStoreUnlimitedSettings(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	store := mcpredis.NewSessionStore(client(t, srv), mcpredis.SessionStoreOptions{
		MaxSessions: 5, MaxSessionsPerClient: ports.UnlimitedSessionsPerClient,
		MaxSessionBytes: ports.UnlimitedSessionBytes, MaxSessionBytesPerClient: ports.UnlimitedSessionBytes,
	})
	for i := range 5 {
		st := ports.SessionState{ID: fmt.Sprintf("s%d", i), Peer: "ip:192.0.2.1", Capabilities: json.RawMessage(`{"x":"` + strings.Repeat("c", 300<<10) + `"}`)}
		if err := store.Create(ctx, st); err != nil {
			t.Fatalf("session %d of one client: %v", i, err)
		}
	}
	err := store.Create(ctx, ports.SessionState{ID: "s5", Peer: "ip:192.0.2.1"})
	if !errors.Is(err, ports.ErrTooManySessions) || errors.Is(err, ports.ErrTooManySessionsForClient) {
		t.Fatalf("past MaxSessions: %v, want ErrTooManySessions (the store's bound, not the client's)", err)
	}
}
