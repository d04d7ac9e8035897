package porttest

import (
	"slices"
	"testing"
	"time"
)

func TestFakeClock(t *testing.T) {
	c := NewFakeClock(Start)
	if !c.Now().Equal(Start) {
		t.Fatalf("Now = %v, want %v", c.Now(), Start)
	}
	c.Advance(90 * time.Second)
	if want := Start.Add(90 * time.Second); !c.Now().Equal(want) {
		t.Fatalf("Now after Advance = %v, want %v", c.Now(), want)
	}
}

// recordingSuite records which of its methods runSuite ran.
type recordingSuite struct{ ran *[]string }

func (s recordingSuite) Second(*testing.T)   { *s.ran = append(*s.ran, "Second") }
func (s recordingSuite) First(*testing.T)    { *s.ran = append(*s.ran, "First") }
func (s recordingSuite) NotASubtest() string { return "not run" }

func TestRunSuiteRunsEachSubtestMethod(t *testing.T) {
	var ran []string
	runSuite(t, recordingSuite{&ran})
	if want := []string{"First", "Second"}; !slices.Equal(ran, want) {
		t.Fatalf("runSuite ran %v, want %v", ran, want)
	}
}
