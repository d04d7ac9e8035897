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
