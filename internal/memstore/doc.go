// Package memstore implements the stateful ports in memory: the
// notification bus ([Bus]) and the session, event and task stores
// ([SessionStore], [EventStore], [TaskStore]) of a server that runs as one
// instance (or as several in one process).
//
// Users reach these through adapters/memory, which names them (memory.Bus,
// memory.NewSessionStore, …: aliases of what is here). The package sits
// below the adapters so that the others can use an in-memory store as
// their default, or build on one, without importing an adapter: the
// Streamable HTTP handler's default session and event stores, the tasks
// extension's default task store, and the local delivery of mcpredis.Bus.
//
// The limits these share with the other implementations of their ports
// (mcpredis's) are in internal/portlimits.
package memstore
