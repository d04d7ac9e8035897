package leakcheck

import (
	"strings"
	"testing"
	"time"
)

func parkedInLeakcheckTest(started, stop chan struct{}) {
	close(started)
	<-stop
}

func TestNamingAndWait(t *testing.T) {
	// The caller's goroutine, the only one running Naming, is never
	// reported.
	if left := Naming([]string{"leakcheck.Naming"}); left != "" {
		t.Fatalf("Naming reported the caller:\n%s", left)
	}
	const mark = "leakcheck.parkedInLeakcheckTest"
	started, stop := make(chan struct{}), make(chan struct{})
	go parkedInLeakcheckTest(started, stop)
	<-started
	left := Naming([]string{"no such mark", mark})
	close(stop)
	if !strings.Contains(left, mark) {
		t.Fatalf("Naming = %q, want the parked goroutine's stack", left)
	}
	if left := Wait(5*time.Second, []string{mark}); left != "" {
		t.Fatalf("Wait after the goroutine ended = %q, want \"\"", left)
	}
}
