package wiring

import (
	"github.com/redis/go-redis/v9"
	"go.uber.org/fx"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/ports"
)

// Redis shares what the instances of the server behind a load balancer
// must share through one Redis (or Valkey), with the defaults of
// [mcpredis.Share]: the Streamable HTTP sessions, the SSE events (a stream
// resumes at any instance), the requestState keys, and the notification
// bus (list changes, resource updates, client responses and cancellations
// reach every instance). The client stays the application's to close.
//
//	wiring.New(wiring.HTTP, wiring.HTTPServer, wiring.Redis(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})), …)
func Redis(c redis.UniversalClient) fx.Option {
	return fx.Provide(func(lc fx.Lifecycle) ports.SharedState {
		s := mcpredis.Share(c, mcpredis.ShareOptions{})
		lc.Append(fx.StopHook(func() error { return mcpredis.CloseShared(s) }))
		return s
	})
}
