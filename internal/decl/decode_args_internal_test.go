package decl

import (
	"reflect"
	"strings"
	"testing"
)

type namedString string

type oneCopyIn struct {
	Text  string            `json:"text"`
	N     int               `json:"n,omitempty"`
	M     map[string]string `json:"m"`
	L     []string          `json:"l"`
	P     *string           `json:"p"`
	Any   any               `json:"any"`
	Named namedString       `json:"named"`
	Inner struct {
		S string `json:"s"`
	} `json:"inner"`
}

// TestOneCopyStringsDecodesAsDefault decodes large arguments with and
// without oneCopyStrings: the same values, the same errors.
func TestOneCopyStringsDecodesAsDefault(t *testing.T) {
	pad := strings.Repeat(`lorem \"ipsum\"\n\u00e9\ud83d\ude00 `, 4000) // > largeArguments, escapes of every kind
	for _, args := range []string{
		`{"text":"` + pad + `","m":{"k\n":"v\t` + pad + `"},"l":["a","` + pad + `",""],"p":"` + pad + `","any":"x\ny","named":"a\nb","inner":{"s":"\"q\""}}`,
		`{"text":"plain ` + strings.Repeat("x", 70000) + `","p":null,"l":null}`,
		`{"text":null,"inner":{"s":"` + pad + `"}}`,
		`{"text":5,"l":["` + pad + `"]}`,
		`{"text":"` + pad + `","l":[1]}`,
		`{"text":"` + pad + `","inner":{"s":{}}}`,
		`{"text":"` + pad + `","Text":"x"}`,
	} {
		if len(args) < largeArguments {
			t.Fatalf("arguments of %d bytes: not large", len(args))
		}
		var got, want oneCopyIn
		gerr := decodeArguments([]byte(args), &got, true)
		werr := decodeArguments([]byte(args), &want, false)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Errorf("%.60s: error %v, want %v", args, gerr, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%.60s: decoded otherwise", args)
		}
	}
}

func TestOneCopySafe(t *testing.T) {
	type tagged struct {
		S string `json:"s,string"`
	}
	type formatted struct {
		S string `json:"s,format:x"`
	}
	type nested struct {
		Inner []map[string]*tagged `json:"inner"`
	}
	type recursive struct {
		Next *recursive `json:"next"`
		S    string     `json:"s,omitempty"`
	}
	for _, c := range []struct {
		v    any
		want bool
	}{
		{oneCopyIn{}, true}, {recursive{}, true}, {map[string]string{}, true},
		{tagged{}, false}, {formatted{}, false}, {nested{}, false},
	} {
		if got := oneCopySafe(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("%T: %v, want %v", c.v, got, c.want)
		}
	}
}
