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
