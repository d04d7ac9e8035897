package domain

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAppendJSONStringMatchesReference checks the word-at-a-time encoder
// against the byte-by-byte one (jsonstr_ref_test.go) on strings of every
// length up to 40 with special bytes at every position, and on random ones.
func TestAppendJSONStringMatchesReference(t *testing.T) {
	specials := []string{"\"", "\\", "\n", "\x00", "\x1f", "\x7f", "\x80", "\xff", "é", "\u2028", "\u2029", "€", "\xe2\x80", " ", "~"}
	check := func(s string) {
		t.Helper()
		got, want := string(appendJSONString([]byte("x"), s)), string(refAppendJSONString([]byte("x"), s))
		if got != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	}
	for n := range 41 {
		plain := strings.Repeat("a", n)
		check(plain)
		for i := 0; i <= n; i++ {
			for _, sp := range specials {
				check(plain[:i] + sp + plain[i:])
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := append(specials, "a", "b", "0", "<", "&")
	for range 20000 {
		var b strings.Builder
		for range r.IntN(64) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		check(b.String())
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain text of some length", "q\"b\\", "\u2028\xff\x01", strings.Repeat("ab\n", 20)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendJSONString(nil, s)
		if want := refAppendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("%q: invalid JSON %s", s, got)
		}
	})
}

func BenchmarkAppendJSONString(b *testing.B) {
	text := strings.Repeat(strings.Repeat("lorem ipsum dolor sit amet ", 2)+"\n", 1<<20/55)
	for _, c := range []struct {
		name string
		f    func([]byte, string) []byte
	}{{"words", appendJSONString}, {"bytes", refAppendJSONString}} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 2*len(text))
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				buf = c.f(buf[:0], text)
			}
		})
	}
}
