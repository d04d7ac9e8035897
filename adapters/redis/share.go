package mcpredis

import (
	"errors"
	"io"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp/ports"
)

// ShareOptions configure [Share]: the options of each part. A part's
// empty Prefix takes Prefix (default "hexmcp:").
type ShareOptions struct {
	// Prefix begins every Redis key and channel of every part, unless the
	// part's own options name one.
	Prefix       string
	Sessions     SessionStoreOptions
	Events       EventStoreOptions
	StateKeys    StateKeysOptions
	Notification BusOptions
	Tasks        TaskStoreOptions
}

// Share returns everything the instances of one server share through one
// Redis (or Valkey), for app.Options.Shared (hexmcp.Options.Shared):
// the Streamable HTTP sessions ([NewSessionStore]), the SSE events for
// resumption at any instance ([EventStore]), the requestState keys
// ([StateKeys]), the notification bus ([Bus]) and the tasks of the tasks
// extension ([NewTaskStore]). One line:
//
//	srv, err := hexmcp.New(hexmcp.Options{Shared: mcpredis.Share(rdb, mcpredis.ShareOptions{}), Tools: tools})
//
// The client stays the application's to close (after the server).
func Share(c redis.UniversalClient, opts ShareOptions) ports.SharedState {
	p := opts.Prefix
	if opts.Sessions.Prefix == "" {
		opts.Sessions.Prefix = p
	}
	if opts.Events.Prefix == "" {
		opts.Events.Prefix = p
	}
	if opts.StateKeys.Prefix == "" {
		opts.StateKeys.Prefix = p
	}
	if opts.Notification.Prefix == "" {
		opts.Notification.Prefix = p
	}
	if opts.Tasks.Prefix == "" {
		opts.Tasks.Prefix = p
	}
	return ports.SharedState{
		SessionStore: NewSessionStore(c, opts.Sessions),
		EventStore:   NewEventStore(c, opts.Events),
		StateKeys:    NewStateKeys(c, opts.StateKeys),
		Bus:          NewBus(c, opts.Notification),
		Tasks:        NewTaskStore(c, opts.Tasks),
	}
}

// CloseShared releases the Pub/Sub connections that the parts of s made by
// [Share] hold (the event store's watchers, the bus's subscribers), after
// the server that used them stopped. The Redis client stays open.
func CloseShared(s ports.SharedState) error {
	var errs []error
	for _, p := range []any{s.EventStore, s.Bus} {
		if c, ok := p.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
