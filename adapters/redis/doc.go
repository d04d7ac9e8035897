// Package mcpredis holds the adapters of the SDK's ports on Redis (or
// Valkey), through github.com/redis/go-redis/v9, so that several instances
// of a server behind a load balancer share what one instance alone would
// keep in memory. No sticky sessions are needed.
//
// [Share] makes all of them at once, for app.Options.Shared
// (hexmcp.Options.Shared) or, with fx, wiring.Redis:
//   - [NewSessionStore]: the handshake-era sessions of Streamable HTTP, one
//     round trip per session request;
//   - [EventStore]: the SSE events of every stream, so that a stream is
//     resumed (Last-Event-ID) at any instance, and the session's own
//     stream is followed by whichever instance holds the client's GET
//     ([ports.EventWatcher], over one Pub/Sub connection);
//   - [StateKeys]: a key ring for the requestState of multi round-trip
//     requests (2026-07-28), with rotation;
//   - [Bus]: the notification bus ([ports.NotificationBus], on Pub/Sub):
//     list changes, resource updates, and the client's responses and
//     cancellations that reach another instance than the one that waits
//     for them.
//
// Every part is bounded (see each one's options), bounds each Redis call
// by a timeout, and answers a Redis that is down or slow with an error
// (the HTTP transport turns it into a 503 with Retry-After); service
// resumes when Redis is back, without a restart. The timeout (each part's
// Timeout, 1 second) holds whatever the client's options, for a
// Redis that hangs too: go-redis applies a context's deadline to a
// command only with ContextTimeoutEnabled, so without it a call past its
// Timeout returns at once with an error wrapping
// context.DeadlineExceeded while its command finishes in the background,
// until go-redis's own ReadTimeout ends it (at most one such command per
// connection of the client's pool: a command waiting for a connection
// gives up at the deadline).
//
// The client is any [redis.UniversalClient]: one node ([redis.Client]), a
// Sentinel's master ([redis.NewFailoverClient]) or a Redis Cluster
// ([redis.ClusterClient]). On a cluster each part keeps its keys under a
// hash tag of its own ("{<Prefix>sess}", "{<Prefix>ev}",
// "{<Prefix>tasks}"), so that its Lua scripts, which compute the keys
// they touch, run on one node, and its bounds (per client, in total) stay
// exact, for every instance together; the parts spread over the masters
// by their tags, and each part's load is its master's. The bus and the
// event store's watchers use sharded Pub/Sub there (Redis 7 or later).
// On one node the keys are those of earlier releases (Prefix, no tag).
// A [redis.Ring] (client-side sharding) is not supported: the scripts
// compute keys that a ring would place on other shards.
package mcpredis
