package tasks

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A progress report becomes a status message of at most 1,024 bytes of
// UTF-8: the message and the progress, cut between runes, with a byte
// that is not UTF-8 turned into U+FFFD rather than taking what follows it
// with it.
func TestProgressMessage(t *testing.T) {
	long := strings.Repeat("a", 2000)
	for _, c := range []struct {
		name, message  string
		progress, tot  float64
		want, wantHead string
		wantLen        int
	}{
		{name: "message and progress", message: "section 3 written", progress: 3, tot: 8, want: "section 3 written (3/8)"},
		{name: "progress alone", progress: 0.5, want: "0.5"},
		{name: "cut at the bound", message: long, progress: 1, wantHead: "aaa", wantLen: maxStatusMessage},
		// é is 2 bytes: 1,023 bytes of a, then é across the bound.
		{name: "cut between runes", message: strings.Repeat("a", maxStatusMessage-1) + "é" + long, progress: 1, wantHead: "aaa", wantLen: maxStatusMessage - 1},
		{name: "a bad byte first", message: "\xff" + long, progress: 1, wantHead: "\uFFFDaaa", wantLen: maxStatusMessage},
		{name: "a bad byte inside", message: long[:500] + "\xff" + long, progress: 1, wantHead: long[:500] + "\uFFFDa", wantLen: maxStatusMessage},
	} {
		got := progressMessage(c.progress, c.tot, c.message)
		if !utf8.ValidString(got) || len(got) > maxStatusMessage {
			t.Errorf("%s: %d bytes, valid UTF-8 %v", c.name, len(got), utf8.ValidString(got))
		}
		if c.want != "" && got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if c.wantHead != "" && (!strings.HasPrefix(got, c.wantHead) || len(got) != c.wantLen) {
			t.Errorf("%s: %d bytes beginning %.20q, want %d beginning %.20q", c.name, len(got), got, c.wantLen, c.wantHead)
		}
	}
}
