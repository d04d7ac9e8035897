package bench

import (
	"syscall"
	"testing"
	"time"
)

// cpuClock measures the CPU time (user and system, every thread of the
// process, the garbage collector's included) a benchmark's timed region
// takes, and reports it per op as "cpu-ns/op": unlike ns/op it does not
// count the time the process waits (for a wake-up, or for a core another
// process holds), so it resolves the cost of the work itself on a shared
// machine.
type cpuClock struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{start: processCPU()} }

// report reports the CPU time since startCPU per op.
func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-c.start)/float64(b.N), "cpu-ns/op")
}
