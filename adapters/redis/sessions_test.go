package mcpredis_test

import (
	"testing"
	"time"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/adapters/sessiontest"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
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
	sessiontest.Run(t, newStore(mcpredis.SessionStoreOptions{}))
	sessiontest.RunExpiry(t, 10*time.Minute, newStore(mcpredis.SessionStoreOptions{IdleTimeout: 10 * time.Minute, PendingTimeout: 10 * time.Minute}))
	sessiontest.RunPending(t, 30*time.Second, 10*time.Minute, newStore(mcpredis.SessionStoreOptions{IdleTimeout: 10 * time.Minute, PendingTimeout: 30 * time.Second}))
	sessiontest.RunPerClientLimit(t, 5, newStore(mcpredis.SessionStoreOptions{MaxSessionsPerClient: 5}))
	sessiontest.RunByteLimits(t, 64<<10, 512<<10, newStore(mcpredis.SessionStoreOptions{MaxSessionBytesPerClient: 64 << 10, MaxSessionBytes: 512 << 10}))
}
