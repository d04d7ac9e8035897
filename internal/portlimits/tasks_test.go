package portlimits_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

func TestTaskLimitsWithDefaults(t *testing.T) {
	want := portlimits.TaskLimits{
		MaxTasks: portlimits.DefaultMaxTasks, MaxTasksPerClient: portlimits.DefaultMaxTasksPerClient,
		MaxTaskBytes: portlimits.DefaultMaxTaskBytes, MaxBytesPerClient: portlimits.DefaultMaxTaskBytesPerClient,
		MaxBytes: portlimits.DefaultMaxTaskStoreBytes, MaxStatusMessageBytes: portlimits.DefaultMaxTaskStatusMessageBytes,
		DefaultTTL: portlimits.DefaultTaskTTL, MaxTTL: portlimits.DefaultMaxTaskTTL, MaxPage: portlimits.DefaultMaxTaskPage,
	}
	for _, l := range []portlimits.TaskLimits{{}, {MaxTasks: -1, MaxTasksPerClient: -1, MaxTaskBytes: -1, MaxBytesPerClient: -1,
		MaxBytes: -1, MaxStatusMessageBytes: -1, DefaultTTL: -1, MaxTTL: -1, MaxPage: -1}} {
		if got := l.WithDefaults(); got != want {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", l, got, want)
		}
	}
	// The bounds are made consistent.
	got := portlimits.TaskLimits{MaxTasks: 5, MaxTasksPerClient: 10, MaxTaskBytes: 100, MaxBytesPerClient: 50, MaxBytes: 80,
		DefaultTTL: 2 * time.Hour, MaxTTL: time.Hour}.WithDefaults()
	if got.MaxTasksPerClient != 5 || got.MaxTaskBytes != 80 || got.MaxBytesPerClient != 80 || got.DefaultTTL != time.Hour {
		t.Errorf("inconsistent bounds made %+v", got)
	}
	got = portlimits.TaskLimits{MaxTaskBytes: 100, MaxBytesPerClient: 50, MaxBytes: 1000}.WithDefaults()
	if got.MaxBytesPerClient != 100 {
		t.Errorf("MaxBytesPerClient below MaxTaskBytes: %d, want 100", got.MaxBytesPerClient)
	}
}

func TestTaskLimitsTTLAndPage(t *testing.T) {
	l := portlimits.TaskLimits{DefaultTTL: time.Minute, MaxTTL: time.Hour, MaxPage: 10}.WithDefaults()
	for ttl, want := range map[time.Duration]time.Duration{
		0: time.Minute, -time.Second: time.Minute, 2 * time.Hour: time.Hour,
		1500 * time.Microsecond: time.Millisecond, time.Microsecond: time.Millisecond, 5 * time.Second: 5 * time.Second,
	} {
		if got := l.TTL(ttl); got != want {
			t.Errorf("TTL(%v) = %v, want %v", ttl, got, want)
		}
	}
	for limit, want := range map[int]int{0: 10, -1: 10, 11: 10, 10: 10, 3: 3} {
		if got := l.Page(limit); got != want {
			t.Errorf("Page(%d) = %d, want %d", limit, got, want)
		}
	}
}

func TestTaskLimitsCheckSizes(t *testing.T) {
	l := portlimits.TaskLimits{MaxStatusMessageBytes: 4, MaxTaskBytes: 6}.WithDefaults()
	if err := l.CheckSizes("1234", []byte("123"), nil, []byte("456")); err != nil {
		t.Fatalf("at the bounds: %v", err)
	}
	for _, err := range []error{l.CheckSizes("12345"), l.CheckSizes("", []byte("1234"), []byte("567"))} {
		if !errors.Is(err, ports.ErrTaskTooLarge) || !strings.HasPrefix(err.Error(), "hexmcp: ") {
			t.Errorf("past a bound: %v, want an error wrapping ErrTaskTooLarge that starts with hexmcp:", err)
		}
	}
}

func TestTaskLimitsCheckNew(t *testing.T) {
	l := portlimits.TaskLimits{MaxStatusMessageBytes: 4, MaxTaskBytes: 6}.WithDefaults()
	if err := l.CheckNew("store", ports.Task{Status: ports.TaskWorking, StatusMessage: "1234", State: []byte("123456")}); err != nil {
		t.Fatalf("a working task at the bounds: %v", err)
	}
	err := l.CheckNew("hexmcp: store", ports.Task{Status: ports.TaskCompleted, Result: []byte(`{}`)})
	if !errors.Is(err, ports.ErrInvalidTaskUpdate) || err.Error() != "hexmcp: store: "+ports.ErrInvalidTaskUpdate.Error()+": a new task cannot be completed" {
		t.Errorf("a completed task: %v, want an error wrapping ErrInvalidTaskUpdate that starts with the prefix", err)
	}
	if err := l.CheckNew("store", ports.Task{Status: ports.TaskWorking, Result: []byte(`{}`)}); !errors.Is(err, ports.ErrInvalidTaskUpdate) {
		t.Errorf("a working task with a result: %v, want an error wrapping ErrInvalidTaskUpdate", err)
	}
	if err := l.CheckNew("store", ports.Task{Status: ports.TaskWorking, StatusMessage: "12345"}); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Errorf("past MaxStatusMessageBytes: %v, want an error wrapping ErrTaskTooLarge", err)
	}
	if err := l.CheckNew("store", ports.Task{Status: ports.TaskInputRequired, InputRequests: []byte("1234"), State: []byte("567")}); !errors.Is(err, ports.ErrTaskTooLarge) {
		t.Errorf("past MaxTaskBytes: %v, want an error wrapping ErrTaskTooLarge", err)
	}
}

func TestNoticeSize(t *testing.T) {
	n := ports.Notice{Kind: "k", ID: "id", Origin: "ori", To: "to", URI: "u", Session: "sess", Data: []byte("data")}
	if got := portlimits.NoticeSize(n); got != 1+2+3+2+1+4+4 {
		t.Fatalf("Size() = %d, want 17", got)
	}
}
