package wiring

import (
	"github.com/redis/go-redis/v9"
	"go.uber.org/fx"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/ports"
)

// Redis shares what instances of the server behind a load balancer must
// share through one Redis (or Valkey): the Streamable HTTP sessions
// (mcpredis.SessionStore) and the requestState keys (mcpredis.StateKeys),
// with their defaults. The client stays the application's to close.
//
//	wiring.New(wiring.HTTP, wiring.HTTPServer, wiring.Redis(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})), …)
func Redis(c redis.UniversalClient) fx.Option {
	return fx.Options(
		fx.Provide(func() ports.SessionStore { return mcpredis.NewSessionStore(c, mcpredis.SessionStoreOptions{}) }),
		fx.Provide(func() ports.StateKeys { return mcpredis.NewStateKeys(c, mcpredis.StateKeysOptions{}) }),
	)
}
