package portlimits_test

import (
	"testing"

	"github.com/hexmcp/hexmcp/internal/portlimits"
)

// Cut keeps what fits whole and cuts a longer text at a rune's start.
func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"aéé", 3, "aé"}, // 1+2 bytes fit
		{"aéé", 4, "aé"}, // the second é would be cut in half
		{"ééé", 1, ""},   // nothing whole fits
		{"", 0, ""},
		{"\x80\x80\x80", 2, ""}, // not UTF-8, no rune start at all: nothing, and no panic
	} {
		if got := portlimits.Cut(tc.s, tc.max); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}
