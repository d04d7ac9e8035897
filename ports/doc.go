// Package ports holds the interfaces the protocol engine needs from the
// world, and the small value types they exchange. Each interface is small;
// optional abilities are separate interfaces that an implementation may also
// satisfy, found with a type assertion (as database/sql/driver does).
//
// Adapters in adapters/ implement these ports; wiring/ plugs them together.
//
// Each interface's documentation says what bounds an implementation keeps;
// the values the SDK's implementations (the in-memory ones and mcpredis's)
// take by default are documented on their options.
//
// Errors: the sentinel errors here (ErrSessionNotFound, ErrTaskTooLarge,
// …) are causes, as fs.ErrNotExist is: an implementation wraps one in the
// error it returns, which starts with "hexmcp:" and says where it arose,
// as every error the SDK returns does (so do those of the functions and
// methods here, such as [TaskUpdate.Check]). Test for them with
// errors.Is.
//
// Mocks of every port (MockToolRegistry, MockSessionStore, …) live in
// ports/porttest, with the contract suites and the fake clock, generated
// with go.uber.org/mock:
//
//go:generate go tool mockgen -typed -write_package_comment=false -destination porttest/mocks.go -package porttest . Logger,SchemaValidator,Schema,ToolRegistry,ToolRegistryWatcher,ResourceRegistry,PromptRegistry,Conn,MessageWriter,Transport,ConnHandler,Clock,SessionStore,SessionRemovalNotifier,EventStore,Authenticator,StateKeys,PeerAddr,PeerPrincipal,NotificationBus,AddressedBus,KeyedMessageWriter,EventWatcher,OnceAppender,TaskStore
package ports
