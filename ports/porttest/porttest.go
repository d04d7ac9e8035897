// Package porttest holds the contract suites of the ports: every adapter of
// a port (the in-memory one, the Redis one, or one a host app writes on its
// own store or broker) runs the port's suite from its own tests, as a file
// system runs [testing/fstest.TestFS]:
//
//	func TestToolRegistry(t *testing.T) {
//		porttest.TestToolRegistry(t, func(*testing.T) ports.ToolRegistry { return mypkg.NewRegistry() })
//	}
//
// There is one function per port, and one per optional ability or limit,
// which an adapter that has it runs too:
//
//   - [ports.ToolRegistry], [ports.PromptRegistry], [ports.ResourceRegistry]:
//     [TestToolRegistry], [TestPromptRegistry], [TestResourceRegistry];
//   - [ports.SchemaValidator]: [TestSchemaValidator];
//   - [ports.SessionStore]: [TestSessionStore], and for the limits the store
//     has (a store exposed to untrusted clients should have them all)
//     [TestSessionExpiry] (idle expiry), [TestSessionPending] (the sooner
//     expiry of sessions whose client never completed the handshake),
//     [TestSessionPerClientLimit] (the bound on one client's sessions) and
//     [TestSessionByteLimits] (the bytes the sessions hold, per client and
//     in total);
//   - [ports.EventStore]: [TestEventStore], and [TestEventStoreShared] for a
//     store that several instances share;
//   - [ports.NotificationBus]: [TestBus], [TestAddressedBus] for a
//     [ports.AddressedBus], and [TestBusSizeLimit] with the bus's size
//     bound;
//   - [ports.StateKeys]: [TestStateKeys];
//   - [ports.TaskStore]: [TestTaskStore], [TestTaskLimits] with the store's
//     limits set small ([TaskLimits]), and [TestTaskStoreShared] for a store
//     that several instances share.
//
// [FakeClock] is a [ports.Clock] that tests move by hand: the suites hand
// one, starting at [Start], to the stores that tell the time, so that
// expiry is tested without sleeping.
//
// Mocks of every port, generated with go.uber.org/mock (mockgen -typed),
// are here too: [NewMockToolRegistry], [NewMockSessionStore], … one
// Mock… type per interface of ports, for a unit test of code that depends
// on a port (mocks.go; go generate ./ports/... writes it again).
//
// The package imports only the standard library, domain, ports and
// go.uber.org/mock's gomock (and, of its own, internal/jsontest's JSON
// helpers and internal/portlimits's task sizes).
package porttest

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// ctx is the context of the suites' calls: none is cancelled.
var ctx = context.Background()

// waitFor bounds every wait of the suites for what an adapter does in the
// background (a delivery, a wake): a deadline so that an adapter that never
// does it fails the test rather than hanging it, not a measure of its speed.
const waitFor = 30 * time.Second

// runSuite runs each exported method of suite of the form func(*testing.T)
// as a subtest of its name (in the order of the names): a suite's subtests
// are the methods of its type.
func runSuite(t *testing.T, suite any) {
	v := reflect.ValueOf(suite)
	for i := range v.NumMethod() {
		if m, ok := v.Method(i).Interface().(func(*testing.T)); ok {
			t.Run(v.Type().Method(i).Name, m)
		}
	}
}
