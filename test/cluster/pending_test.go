package cluster

import (
	"os"
	"testing"
)

// pending lists what instances do not share yet, each with why: a test of
// a pending feature skips, saying so (awaiting). When a feature lands,
// delete its entry: its tests then run, here and in CI.
//
// The scenarios of a pending feature run now with the two instances the
// same (the control: one instance serving everything must pass), which
// checks the scenario itself; only the cross-instance variant waits.
var pending = map[string]string{
	// TestClusterClientResponseElsewhere, and bookTable of the v1
	// TypeScript client in TestClusterTSClients.
	featureClientResponses: "a client's response to a server request (elicitation/create during a 2025-11-25 tools/call) posted to another instance than the one waiting for it is not delivered: the engine carries it on Options.Bus (NoticeClientResponse), but the showcase's -redis (wiring.Redis) wires no NotificationBus yet",
	// TestClusterResumeElsewhere.
	featureSharedEvents: "a stream cut at one instance cannot be resumed with Last-Event-ID at another: the showcase's -redis (wiring.Redis) wires no shared EventStore (with EventWatcher) yet, so SSE events stay in the memory of the instance that wrote them",
	// TestClusterListChangedElsewhere.
	featureNotifications: "a list change at one instance (toggleGreeting) does not reach the sessions listening at another: the showcase's -redis (wiring.Redis) wires no NotificationBus (NoticeToolsChanged) yet",
	// TestClusterCancelElsewhere.
	featureCancelElsewhere: "notifications/cancelled posted to another instance than the one running the request does not reach it: ports.Notice has no kind for a cancellation",
}

// The features of pending.
const (
	featureClientResponses = "client-responses"
	featureSharedEvents    = "shared-events"
	featureNotifications   = "notifications"
	featureCancelElsewhere = "cancel-elsewhere"
)

// isPending reports whether feature is not shared yet. CLUSTER_RUN_PENDING=1
// runs the tests of pending features anyway, to see where one stands.
func isPending(feature string) bool {
	_, ok := pending[feature]
	return ok && os.Getenv("CLUSTER_RUN_PENDING") != "1"
}

// awaiting skips t while feature is pending.
func awaiting(t *testing.T, feature string) {
	t.Helper()
	if why := pending[feature]; isPending(feature) {
		t.Skipf("pending %q: %s (test/cluster/pending_test.go)", feature, why)
	}
}
