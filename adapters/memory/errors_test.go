package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/ports"
)

// The errors of the in-memory adapters start with "hexmcp:", as every
// error of the SDK does, and keep wrapping the ports' sentinels.
func TestErrorsStartWithHexmcp(t *testing.T) {
	ctx := context.Background()
	sessions := memory.NewSessionStore(memory.SessionStoreOptions{MaxSessions: 1, MaxSessionsPerClient: 1,
		MinIdleForEviction: memory.NeverEvict, MinPendingIdleForEviction: memory.NeverEvict})
	if err := sessions.Create(ctx, ports.SessionState{ID: "a", Peer: "p"}); err != nil {
		t.Fatal(err)
	}
	tasks := memory.NewTaskStore(memory.TaskStoreOptions{MaxStatusMessageBytes: 4})
	_, errNoSession := sessions.Get(ctx, "none")
	_, errNoTask := tasks.Get(ctx, "none", "o")
	_, errBigTask := tasks.Create(ctx, ports.Task{Owner: "o", Status: ports.TaskWorking, StatusMessage: "12345"})
	_, errBadTask := tasks.Create(ctx, ports.Task{Owner: "o", Status: "unknown"})
	_, errNoEvent := memory.NewEventStore(memory.EventStoreOptions{}).Replay(ctx, "none", func(ports.Event) error { return nil })
	_, errBadKeys := memory.NewStateKeys([]byte("short"))
	noKeys, errNoKeys := memory.NewStateKeys()
	if noKeys != nil {
		t.Errorf("NewStateKeys() = %v, want no key ring", noKeys)
	}
	for _, c := range []struct {
		err, want error
	}{
		{sessions.Create(ctx, ports.SessionState{ID: "a"}), memory.ErrDuplicateSession},
		{sessions.Create(ctx, ports.SessionState{ID: "b", Peer: "p"}), ports.ErrTooManySessionsForClient},
		{sessions.Create(ctx, ports.SessionState{ID: "c"}), ports.ErrTooManySessions},
		{errNoSession, ports.ErrSessionNotFound},
		{errNoTask, ports.ErrTaskNotFound},
		{errBigTask, ports.ErrTaskTooLarge},
		{errBadTask, ports.ErrInvalidTaskUpdate},
		{errNoEvent, ports.ErrEventNotFound},
		{memory.NewBus(memory.BusOptions{MaxNoticeBytes: 1}).Publish(ctx, ports.Notice{ID: "12"}), ports.ErrNoticeTooLarge},
		{errBadKeys, nil},
		{errNoKeys, ports.ErrNoStateKey},
		{memory.NewRegistry().Add(ports.RegisteredTool{}), nil},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), "hexmcp: ") || c.want != nil && !errors.Is(c.err, c.want) {
			t.Errorf("error %v, want one that starts with hexmcp: and wraps %v", c.err, c.want)
		}
	}
}
