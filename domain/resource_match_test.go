package domain_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
)

// TestMatchTemplateRefusesUnsafeValues: a value that decodes to something
// that leaves one path segment does not match, whatever its spelling; a
// legitimate encoding still does.
func TestMatchTemplateRefusesUnsafeValues(t *testing.T) {
	const tmpl = "file:///{path}"
	refused := []string{
		"file:///..%2Fsecret.txt", "file:///%2E%2E%2Fsecret.txt", "file:///%2e%2e", "file:///..", "file:///.",
		"file:///%2E", "file:///a%2Fb", "file:///a%2fb", "file:///..%5Csecret.txt", "file:///a%5Cb",
		"file:///a%00b", "file:///%00", "file:///a%0Ab", "file:///a%0Db", "file:///a%09b", "file:///a%7Fb",
		"file:///a%C2%85b",             // NEL, a C1 control character
		"file:///a%FFb",                // not UTF-8
		"file:///a%zzb", "file:///a%2", // bad escapes
		"file:///a\x00b", "file:///a\\b", // unencoded
		"file:///../secret.txt", "file:///a/b", // '/' never matches a variable
	}
	for _, uri := range refused {
		if vars, ok := domain.MatchTemplate(tmpl, uri); ok {
			t.Errorf("MatchTemplate(%q, %q) = %q, want no match", tmpl, uri, vars)
		}
	}
	accepted := map[string]string{
		"file:///a%20b.txt":     "a b.txt",
		"file:///%C3%A9t%C3%A9": "été",
		"file:///...":           "...",
		"file:///a..b":          "a..b",
		"file:///.hidden":       ".hidden",
		"file:///100%25":        "100%",
		"file:///a+b":           "a+b",
		"file:///%2E%2E%2E":     "...",
	}
	for uri, want := range accepted {
		vars, ok := domain.MatchTemplate(tmpl, uri)
		if !ok || vars["path"] != want {
			t.Errorf("MatchTemplate(%q, %q) = %q, %v; want path %q", tmpl, uri, vars, ok, want)
		}
	}
	// Each variable is checked, not only the first.
	if vars, ok := domain.MatchTemplate("db://{table}/{row}", "db://users/..%2F"); ok {
		t.Errorf("second variable not checked: %q", vars)
	}
}

func TestMatchTemplateRaw(t *testing.T) {
	for uri, want := range map[string]string{
		"file:///..%2Fsecret.txt": "..%2Fsecret.txt",
		"file:///a%00b":           "a%00b",
		"file:///..":              "..",
		"file:///a%20b":           "a%20b",
		"file:///%zz":             "%zz",
	} {
		vars, ok := domain.MatchTemplateRaw("file:///{path}", uri)
		if !ok || vars["path"] != want {
			t.Errorf("MatchTemplateRaw(%q) = %q, %v; want %q", uri, vars, ok, want)
		}
	}
	if _, ok := domain.MatchTemplateRaw("file:///{path}", "file:///a/b"); ok {
		t.Error("a raw value holds a '/'")
	}
	safe := &domain.ResourceTemplate{URITemplate: "file:///{path}"}
	raw := &domain.ResourceTemplate{URITemplate: "file:///{path}", RawValues: true}
	if _, ok := safe.Match("file:///..%2Fx"); ok {
		t.Error("ResourceTemplate.Match without RawValues matched ..%2F")
	}
	if vars, ok := raw.Match("file:///..%2Fx"); !ok || vars["path"] != "..%2Fx" {
		t.Errorf("ResourceTemplate.Match with RawValues = %q, %v", vars, ok)
	}
	if vars, ok := safe.Match("file:///a%20b"); !ok || vars["path"] != "a b" {
		t.Errorf("ResourceTemplate.Match = %q, %v", vars, ok)
	}
	// RawValues is not on the wire.
	b, err := raw.MarshalJSON()
	if err != nil || strings.Contains(strings.ToLower(string(b)), "raw") {
		t.Errorf("wire form = %s, %v", b, err)
	}
}

// refMatch is the obvious backtracking matcher (each variable the shortest
// non-empty run without '/' that lets the rest match), on raw values.
func refMatch(parts []string, s string, vars map[string]string) bool {
	if len(parts) == 0 {
		return s == ""
	}
	p := parts[0]
	if !strings.HasPrefix(p, "{") {
		rest, ok := strings.CutPrefix(s, p)
		return ok && refMatch(parts[1:], rest, vars)
	}
	for n := 1; n <= len(s) && s[n-1] != '/'; n++ {
		if refMatch(parts[1:], s[n:], vars) {
			vars[p] = s[:n]
			return true
		}
	}
	return false
}

// TestMatchTemplateAgreesWithBacktracking: the linear matcher finds the same
// split as the backtracking one on many small random URIs.
func TestMatchTemplateAgreesWithBacktracking(t *testing.T) {
	templates := [][]string{
		{"x://", "{a}"},
		{"x://", "{a}", ".", "{b}"},
		{"x://", "{a}", "-", "{b}", "/", "{c}"},
		{"x://", "{a}", "..", "{b}", ".x"},
		{"x://", "{a}", "/", "{b}", "/d"},
		{"x://a", "{a}", "a", "{b}", "aa"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "a.-/x"
	for _, parts := range templates {
		tmpl := strings.Join(parts, "")
		for range 3000 {
			var b strings.Builder
			b.WriteString("x://")
			for range rng.IntN(10) {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
			uri := b.String()
			want := map[string]string{}
			wantOK := refMatch(parts, uri, want)
			got, ok := domain.MatchTemplateRaw(tmpl, uri)
			if ok != wantOK {
				t.Fatalf("MatchTemplateRaw(%q, %q) ok = %v, want %v", tmpl, uri, ok, wantOK)
			}
			if !ok {
				continue
			}
			for _, p := range parts {
				if name, isVar := strings.CutPrefix(p, "{"); isVar {
					if name = strings.TrimSuffix(name, "}"); got[name] != want[p] {
						t.Fatalf("MatchTemplateRaw(%q, %q) = %q, want %q", tmpl, uri, got, want)
					}
				}
			}
		}
	}
}

// TestMatchTemplateNoBacktrackingBlowUp: a URI that almost matches a
// template of many variables is refused without trying every split (the
// backtracking matcher would try about len^5/120 of them here, which does
// not finish).
func TestMatchTemplateNoBacktrackingBlowUp(t *testing.T) {
	tmpl := "x://{a}.{b}.{c}.{d}.{e}.{f}.txt"
	uri := "x://" + strings.Repeat(".", 4000) + "!"
	if _, ok := domain.MatchTemplate(tmpl, uri); ok {
		t.Fatal("matched")
	}
	uri = "x://" + strings.Repeat("a.", 4000) + "txt"
	vars, ok := domain.MatchTemplate(tmpl, uri)
	if !ok || vars["a"] != "a" || vars["f"] != strings.TrimSuffix(strings.Repeat("a.", 3995), ".") {
		t.Fatalf("MatchTemplate = %v, %v", fmt.Sprint(len(vars)), ok)
	}
}

// FuzzMatchTemplate: matching never panics, a decoded value is never
// unsafe, and a match's values put back into the template give the URI.
func FuzzMatchTemplate(f *testing.F) {
	f.Add("file:///{path}", "file:///..%2Fsecret")
	f.Add("x://{a}.{b}/{c}", "x://1.2.3/%00")
	f.Add("db://{table}/{row}", "db://users/42")
	f.Fuzz(func(t *testing.T, tmpl, uri string) {
		if vars, ok := domain.MatchTemplate(tmpl, uri); ok {
			for _, v := range vars {
				if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/\\\x00\n\r\x7f") {
					t.Fatalf("MatchTemplate(%q, %q) gave the unsafe value %q", tmpl, uri, v)
				}
			}
		}
		vars, ok := domain.MatchTemplateRaw(tmpl, uri)
		if !ok {
			return
		}
		back := tmpl
		for name, v := range vars {
			back = strings.Replace(back, "{"+name+"}", v, 1)
		}
		if back != uri {
			t.Fatalf("MatchTemplateRaw(%q, %q) = %q, which expands to %q", tmpl, uri, vars, back)
		}
	})
}
