package portlimits_test

import (
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/portlimits"
)

// The stores' defaults are promises: the options' docs of both stores and
// the README's Limits table state these values. The stores' own tests
// check that a store keeps to whatever the constants say; this one holds
// the constants to what is promised, so that a default changes only on
// purpose (and with the docs and the CHANGELOG).
func TestDefaultsAreTheDocumentedOnes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"DefaultSessionIdleTimeout", int64(portlimits.DefaultSessionIdleTimeout), int64(30 * time.Minute)},
		{"DefaultSessionPendingTimeout", int64(portlimits.DefaultSessionPendingTimeout), int64(30 * time.Second)},
		{"DefaultMaxSessions", portlimits.DefaultMaxSessions, 10_000},
		{"DefaultMaxSessionsPerClient", portlimits.DefaultMaxSessionsPerClient, 100},
		{"DefaultMaxSessionBytes", portlimits.DefaultMaxSessionBytes, 64 << 20},
		{"DefaultMaxSessionBytesPerClient", portlimits.DefaultMaxSessionBytesPerClient, 1 << 20},
		{"DefaultMaxEventsPerStream", portlimits.DefaultMaxEventsPerStream, 1_000},
		{"DefaultMaxEventStreams", portlimits.DefaultMaxEventStreams, 10_000},
		{"DefaultEventTTL", int64(portlimits.DefaultEventTTL), int64(10 * time.Minute)},
		{"DefaultMaxEventBytesPerGroup", portlimits.DefaultMaxEventBytesPerGroup, 16 << 20},
		{"DefaultMaxEventBytesPerStream", portlimits.DefaultMaxEventBytesPerStream, 8 << 20},
		{"DefaultMaxNoticeBytes", portlimits.DefaultMaxNoticeBytes, 4 << 20},
		{"DefaultMaxQueuedNotices", portlimits.DefaultMaxQueuedNotices, 1_024},
		{"DefaultMaxQueuedNoticeBytes", portlimits.DefaultMaxQueuedNoticeBytes, 16 << 20},
		{"DefaultMaxTasks", portlimits.DefaultMaxTasks, 10_000},
		{"DefaultMaxTasksPerClient", portlimits.DefaultMaxTasksPerClient, 1_000},
		{"DefaultMaxTaskBytes", portlimits.DefaultMaxTaskBytes, 4 << 20},
		{"DefaultMaxTaskBytesPerClient", portlimits.DefaultMaxTaskBytesPerClient, 16 << 20},
		{"DefaultMaxTaskStoreBytes", portlimits.DefaultMaxTaskStoreBytes, 128 << 20},
		{"DefaultMaxTaskStatusMessageBytes", portlimits.DefaultMaxTaskStatusMessageBytes, 4 << 10},
		{"DefaultTaskTTL", int64(portlimits.DefaultTaskTTL), int64(time.Hour)},
		{"DefaultMaxTaskTTL", int64(portlimits.DefaultMaxTaskTTL), int64(24 * time.Hour)},
		{"DefaultMaxTaskPage", portlimits.DefaultMaxTaskPage, 100},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, promised %d", c.name, c.got, c.want)
		}
	}
}
