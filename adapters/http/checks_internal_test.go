package mcphttp

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestIsCanonicalInteger(t *testing.T) {
	for _, s := range []string{"0", "7", "-7", "42", "9007199254740991", "-9007199254740991"} {
		if !isCanonicalInteger(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{
		"", "-", "-0", "00", "042", "+42", "42.0", "4.2e1", "42e0", "0x2a", "0X2A", "0b101010", "0o52", "84/2",
		" 42", "42 ", "4_2", "١٢", "9007199254740992", "-9007199254740992", "99999999999999999",
		"1e999999", strings.Repeat("1", 1000),
	} {
		if isCanonicalInteger(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestCanonicalInteger(t *testing.T) {
	ints := map[string]string{
		"42": "42", "-7": "-7", "0": "0", "-0": "0", "0.0": "0", "-0.0e5": "0", "0e-99999999999999999999": "0",
		"42.0": "42", "42.000": "42", "4.2e1": "42", "4.2E+1": "42", "420e-1": "42", "0.42e2": "42",
		"1e15": "1000000000000000", "10e-1": "1", "-1.0": "-1",
		"9007199254740991": "9007199254740991", "9.007199254740991e15": "9007199254740991",
	}
	for in, want := range ints {
		if got, ok := canonicalInteger(in); !ok || got != want {
			t.Errorf("canonicalInteger(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"42.5", "0.1", "1e-1", "1e16", "12345678901234567", "1e999999", "1e99999999999999999999", "1e-99999999999999999999",
		"", "-", "01", "1.", ".5", "1e", "1e+", "0x2a", "42 ", "+1",
	} {
		if got, ok := canonicalInteger(in); ok {
			t.Errorf("canonicalInteger(%q) = %q, want no integer", in, got)
		}
	}
	// Every safe integer round-trips, however the body writes it.
	for _, n := range []int64{0, 1, -1, 42, 1 << 40, -(1 << 52), maxSafeInteger, -maxSafeInteger} {
		s := strconv.FormatInt(n, 10)
		for _, form := range []string{s, s + ".0", s + "e0", s + ".000e+0"} {
			if !sameInteger(s, json.Number(form)) {
				t.Errorf("%s does not match header %s", form, s)
			}
		}
	}
}
