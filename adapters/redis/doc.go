// Package mcpredis holds the adapters of the SDK's ports on Redis (or
// Valkey), through github.com/redis/go-redis/v9, so that several instances
// of a server behind a load balancer share what one instance alone would
// keep in memory.
//
// So far: [StateKeys], a key ring shared by every instance for the
// requestState of multi round-trip requests (2026-07-28), with rotation.
package mcpredis
