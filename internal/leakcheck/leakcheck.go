// Package leakcheck finds goroutines left running by a test: those whose
// stacks name a mark (a package path, a function). It is shared by the
// contract suites (porttest.NoGoroutines) and the TestMains of the SDK's
// own packages (testtools.RunWithLeakCheck).
package leakcheck

import (
	"runtime"
	"strings"
	"time"
)

// Wait returns "" as soon as no goroutine but the caller's names one of
// marks, or, after d, the stacks of those that still do.
func Wait(d time.Duration, marks []string) string {
	deadline := time.Now().Add(d)
	for {
		left := Naming(marks)
		if left == "" || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Naming returns the stacks of the goroutines, the caller's aside, that
// name one of marks, separated by blank lines ("" when there are none).
func Naming(marks []string) string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	first := true
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if first { // runtime.Stack puts the caller's goroutine first
			first = false
			continue
		}
		for _, mark := range marks {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}
