package wiring

import (
	"log/slog"

	"github.com/redis/go-redis/v9"
	"go.uber.org/fx"
	"go.uber.org/zap"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/ports"
)

// redisParams are what [Redis] takes from the graph: the logger of the
// notification bus, chosen as the engine's is.
type redisParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Logger    ports.Logger `optional:"true"`
	Slog      *slog.Logger `optional:"true"`
	Zap       *zap.Logger  `optional:"true"`
}

// Redis shares what the instances of the server behind a load balancer
// must share through one Redis (or Valkey), with the defaults of
// [mcpredis.Share]: the Streamable HTTP sessions, the SSE events (a stream
// resumes at any instance), the requestState keys, and the notification
// bus (list changes, resource updates, client responses and cancellations
// reach the instances they concern), whose warnings (a subscription Redis
// did not confirm, a link re-established, messages that are no notice) go
// to the logger of the graph, as the engine's. The client stays the
// application's to close.
//
// Nothing waits on Redis at start: the engine publishes from a queue of
// its own (app.Options.MaxBusQueue), and the bus does not wait for a
// subscription Redis refuses; with Redis down, the server starts at once
// and answers what needs a session 503 until Redis is back.
//
//	wiring.New(wiring.HTTP, wiring.HTTPServer, wiring.Redis(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})), …)
//
// c is any go-redis client: one node as above, a Redis Cluster
// (redis.NewClusterClient with its seed nodes) or a Sentinel's master
// (redis.NewFailoverClient); see the package doc of adapters/redis for
// how the parts keep their keys on a cluster.
func Redis(c redis.UniversalClient) fx.Option {
	return fx.Provide(func(p redisParams) ports.SharedState {
		s := mcpredis.Share(c, mcpredis.ShareOptions{Notification: mcpredis.BusOptions{Logger: chooseLogger(p.Logger, p.Slog, p.Zap)}})
		p.Lifecycle.Append(fx.StopHook(func() error { return mcpredis.CloseShared(s) }))
		return s
	})
}
