// Package mcpredis holds the adapters of the SDK's ports on Redis (or
// Valkey), through github.com/redis/go-redis/v9, so that several instances
// of a server behind a load balancer share what one instance alone would
// keep in memory.
//
// So far: [SessionStore], the handshake-era sessions of Streamable HTTP
// (a session initialized through one instance is served by any other, no
// sticky sessions needed for plain calls), and [StateKeys], a key ring
// shared by every instance for the requestState of multi round-trip
// requests (2026-07-28), with rotation. Not yet shared: SSE events
// (resumption), notifications between instances, and server-to-client
// requests (elicitation, sampling, roots) answered through another
// instance.
package mcpredis
