// Package ports holds the interfaces the protocol engine needs from the
// world, and the small value types they exchange. Each interface is small;
// optional abilities are separate interfaces that an implementation may also
// satisfy, found with a type assertion (as database/sql/driver does).
//
// Adapters in adapters/ implement these ports; wiring/ plugs them together.
//
// The limits and defaults every implementation of a port shares are part
// of its contract and live here beside it: [DefaultMaxSessions] and its
// kin for a [SessionStore], [DefaultMaxEventsPerStream] and its kin for an
// [EventStore], [TaskLimits] for a [TaskStore], [DefaultMaxNoticeBytes]
// and [Notice.Size] for a [NotificationBus].
//
// Errors: the sentinel errors here (ErrSessionNotFound, ErrTaskTooLarge,
// …) are causes, as fs.ErrNotExist is: an implementation wraps one in the
// error it returns, which starts with "hexmcp:" and says where it arose,
// as every error the SDK returns does (so do those of the functions and
// methods here, such as [TaskUpdate.Check]). Test for them with
// errors.Is.
// Mocks of every port live in ports/mocks, generated with go.uber.org/mock:
//
//go:generate go tool mockgen -typed -destination mocks/mocks.go -package mocks . Logger,SchemaValidator,Schema,ToolRegistry,ToolRegistryWatcher,ResourceRegistry,PromptRegistry,Conn,MessageWriter,Transport,ConnHandler,Clock,SessionStore,SessionRemovalNotifier,EventStore,Authenticator,StateKeys,PeerAddr,PeerPrincipal,NotificationBus,AddressedBus,KeyedMessageWriter,EventWatcher,OnceAppender,TaskStore
package ports
