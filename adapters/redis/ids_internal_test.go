package mcpredis

import "testing"

// canonical takes exactly the positive decimal numbers below 2^53, the
// largest that the Lua scripts count without rounding, written without
// leading zeros, so that an event id names one event only.
func TestCanonicalNumbers(t *testing.T) {
	for s, want := range map[string]bool{
		"1":                true,
		"42":               true,
		"9007199254740991": true,  // 2^53 - 1
		"9007199254740992": false, // 2^53: a Lua number no longer tells it from 2^53 + 1
		"9007199254740993": false,
		"0":                false,
		"01":               false,
		"+1":               false,
		"-1":               false,
		"1.0":              false,
		"":                 false,
	} {
		if got := canonical(s); got != want {
			t.Errorf("canonical(%q) = %v, want %v", s, got, want)
		}
	}
}
