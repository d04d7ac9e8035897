package app

import (
	"strconv"
	"testing"
)

// TestPlainIntegerShortcutTaken checks the other half of the shortcut of
// canonicalID (TestCanonicalIDPlainIntegers checks that what it keeps
// prints back the same): every integer of at most 6 digits without a
// leading zero, the common request id, is kept as it is, without a parse
// and a print per request; anything else is not.
func TestPlainIntegerShortcutTaken(t *testing.T) {
	for _, id := range []string{"0", "-0", "1", "-1", "9", "10", "42", "100", "-100", "12345", "123456", "-999999", "999999", "100000"} {
		if !plainInteger([]byte(id)) {
			t.Errorf("plainInteger(%q) = false: the shortcut is not taken", id)
		}
		if f, err := strconv.ParseFloat(id, 64); err != nil || strconv.FormatFloat(f, 'g', -1, 64) != id {
			t.Fatalf("test case %q does not print back unchanged", id)
		}
	}
	for _, id := range []string{"", "-", "1234567", "-1234567", "1000000", "01", "-01", "00", "1.0", "1e2", "1a", "a", `"1"`, "--1", "+1"} {
		if plainInteger([]byte(id)) {
			t.Errorf("plainInteger(%q) = true", id)
		}
	}
}
