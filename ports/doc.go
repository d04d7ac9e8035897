// Package ports holds the interfaces the protocol engine needs from the
// world, and the small value types they exchange. Each interface is small;
// optional abilities are separate interfaces that an implementation may also
// satisfy, found with a type assertion (as database/sql/driver does).
//
// Adapters in adapters/ implement these ports; wiring/ plugs them together.
// Mocks of every port live in ports/mocks, generated with go.uber.org/mock:
//
//go:generate go tool mockgen -typed -destination mocks/mocks.go -package mocks . Logger,SchemaValidator,Schema,ToolRegistry,ToolRegistryWatcher,ResourceRegistry,PromptRegistry,Conn,MessageWriter,Transport,ConnHandler,Clock,SessionStore,SessionRemovalNotifier,EventStore,Authenticator,StateKeys,PeerAddr,PeerPrincipal,NotificationBus,AddressedBus,KeyedMessageWriter,EventWatcher,OnceAppender,TaskStore
package ports
