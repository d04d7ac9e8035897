package portlimits

import (
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// TaskTransitionAllowed reports whether a task of status from may be given
// status to: a live task (working, input_required) may take any status,
// its own included (to change its message or its input requests); a
// terminal one none, not even its own. So a cancelled task never becomes
// completed, whichever instance finishes the work.
func TaskTransitionAllowed(from, to ports.TaskStatus) bool {
	return (from == ports.TaskWorking || from == ports.TaskInputRequired) && to.Valid()
}

// ExpiresAt is when a store may drop t: its CreatedAt + TTL.
func ExpiresAt(t ports.Task) time.Time { return t.CreatedAt.Add(t.TTL) }

// MinTaskBytes is the least a task counts against a store's byte bounds,
// whatever its payloads: what keeping any task costs. An update that
// leaves a task this small is never refused for those bounds, so that a
// task can always be failed with a short error.
const MinTaskBytes = 1 << 10

// TaskBytes is what a task with these payloads and state counts against
// a store's byte bounds: their lengths together, at least MinTaskBytes.
// The status message, bounded apart, does not count.
func TaskBytes(inputRequests, result, rpcError, state []byte) int {
	return max(len(inputRequests)+len(result)+len(rpcError)+len(state), MinTaskBytes)
}

// Bytes is what t counts against a store's byte bounds ([TaskBytes]).
func Bytes(t ports.Task) int { return TaskBytes(t.InputRequests, t.Result, t.Error, t.State) }
