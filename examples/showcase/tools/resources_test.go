package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
)

// TestUserTemplateIsSafe: showcase://users/{id} answers valid JSON holding
// the id for any id that matches, decoded or raw; a traversal attempt does
// not match the template at all.
func TestUserTemplateIsSafe(t *testing.T) {
	engine, err := app.NewEngine(app.Options{Validator: jsonschema.New(), ToolRegistry: memory.NewRegistry(), ResourceRegistry: memory.NewResourceRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.AddResources(Resources()...); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	read := func(uri string) (text string, code int) {
		t.Helper()
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": map[string]any{
			"uri": uri, "_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}})
		var resp struct {
			Result struct{ Contents []struct{ Text string } }
			Error  *struct{ Code int }
		}
		raw := engine.HandleMessage(ctx, nil, req, nil)
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if resp.Error != nil {
			return "", resp.Error.Code
		}
		if len(resp.Result.Contents) != 1 {
			t.Fatalf("%s", raw)
		}
		return resp.Result.Contents[0].Text, 0
	}
	for uri, id := range map[string]string{
		"showcase://users/42":                 "42",
		"showcase://users/a%20b":              "a b",
		"showcase://users/%22%7D%2C%22x":      `"},"x`,
		"showcase://users/%F3%A0%80%81":       "\U000E0001", // %q would write \U000e0001, which is not JSON
		"showcase://users/%E2%80%A8caf%C3%A9": "\u2028café",
	} {
		text, code := read(uri)
		var got struct{ ID string }
		if code != 0 || json.Unmarshal([]byte(text), &got) != nil || got.ID != id {
			t.Errorf("%s: %q (error %d), want id %q", uri, text, code, id)
		}
	}
	for _, uri := range []string{"showcase://users/..%2Fx", "showcase://users/%00", "showcase://users/a/b"} {
		if _, code := read(uri); code != -32602 { // 2026-07-28: resource not found is -32602
			t.Errorf("%s: error %d, want resource not found", uri, code)
		}
	}
	// The handler itself, given any raw value, still writes valid JSON.
	for _, id := range []string{"..%2Fx", "\x00", "\xff", `"\`} {
		c, err := readUser(ctx, "showcase://users/x", map[string]string{"id": id})
		var got struct{ ID string }
		if err != nil || len(c) != 1 || json.Unmarshal([]byte(c[0].Text), &got) != nil {
			t.Errorf("readUser(%q) = %+v, %v", id, c, err)
		}
	}
}
