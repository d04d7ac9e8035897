package xmcpheader

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestHeaderParams(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"b":{"type":"string","x-mcp-header":"B"},
		"a":{"type":"integer","x-mcp-header":"A"},
		"bad":{"type":"string","x-mcp-header":"has space"},
		"empty":{"type":"string","x-mcp-header":""},
		"obj":{"type":"object","properties":{"deep":{"type":"boolean","x-mcp-header":"Deep"}}},
		"arr":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"X"}}}},
		"alt":{"anyOf":[{"type":"string","x-mcp-header":"Alt"}]}}}`)
	got := Params(schema)
	want := []Param{{"A", []string{"a"}}, {"B", []string{"b"}}, {"Deep", []string{"obj", "deep"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if Params(json.RawMessage(`{"type":"object"}`)) != nil || Params(nil) != nil {
		t.Fatal("params from nothing")
	}
}

func TestCheck(t *testing.T) {
	for schema, valid := range map[string]bool{
		`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"},"p":{"type":"integer","x-mcp-header":"P"},"v":{"type":"boolean","x-mcp-header":"V"},"n":{"type":"number"}}}`: true,
		`{"type":"object","properties":{"o":{"type":"object","properties":{"d":{"type":"string","x-mcp-header":"D"}}}}}`:                                                                           true,
		`{"type":"object"}`: true,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}`:                                             false,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":3}}}`:                                              false,
		`{"type":"object","properties":{"v":{"type":"object","x-mcp-header":"D"}}}`:                                            false,
		`{"type":"object","properties":{"v":{"type":"array","x-mcp-header":"D"}}}`:                                             false,
		`{"type":"object","properties":{"v":{"type":"null","x-mcp-header":"D"}}}`:                                              false,
		`{"type":"object","properties":{"v":{"type":"number","x-mcp-header":"D"}}}`:                                            false,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"My"},"b":{"type":"string","x-mcp-header":"my"}}}`: false,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"A B"}}}`:                                          false,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"A:B"}}}`:                                          false,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`:                                       false,
		`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"A\tB"}}}`:                                         false,
		`{"type":"object","properties":{"o":{"type":"object","properties":{"d":{"type":"object","x-mcp-header":"D"}}}}}`:       false,
	} {
		if err := Check(json.RawMessage(schema)); (err == nil) != valid {
			t.Errorf("Check(%s) = %v, want valid %v", schema, err, valid)
		}
	}
}

func TestIsToken(t *testing.T) {
	for s, want := range map[string]bool{
		"azAZ09":          true, // the ends of each range
		"Region-1":        true,
		"!#$%&'*+-.^_`|~": true,
		"":                false,
		"a b":             false,
		"a:b":             false,
		"a/b":             false,
		"é":               false,
		"a\x7f":           false,
	} {
		if got := IsToken(s); got != want {
			t.Errorf("IsToken(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestArgumentAt(t *testing.T) {
	args := map[string]any{"a": map[string]any{"b": "x"}, "s": "y"}
	for _, c := range []struct {
		path []string
		want any
		ok   bool
	}{
		{[]string{"a", "b"}, "x", true},
		{[]string{"s"}, "y", true},
		{[]string{"a", "c"}, nil, false},
		{[]string{"s", "b"}, nil, false}, // through a value that is no object
		{[]string{"z"}, nil, false},
	} {
		got, ok := ArgumentAt(args, c.path)
		if ok != c.ok || got != c.want {
			t.Errorf("ArgumentAt(%v) = %v, %v; want %v, %v", c.path, got, ok, c.want, c.ok)
		}
	}
}
