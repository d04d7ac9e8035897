package tools

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

// TestUserTemplateIsSafe: showcase://users/{id} answers valid JSON holding
// the id for any id that matches, decoded or raw, under every revision; a
// traversal attempt does not match the template at all (resource not
// found: -32002 up to 2025-11-25, -32602 since).
func TestUserTemplateIsSafe(t *testing.T) {
	srv := hexmcptest.NewServer(t, hexmcp.Options{Resources: Resources()})
	hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
		for uri, id := range map[string]string{
			"showcase://users/42":                 "42",
			"showcase://users/a%20b":              "a b",
			"showcase://users/%22%7D%2C%22x":      `"},"x`,
			"showcase://users/%F3%A0%80%81":       "\U000E0001", // %q would write \U000e0001, which is not JSON
			"showcase://users/%E2%80%A8caf%C3%A9": "\u2028café",
		} {
			read, err := c.ReadResource(t.Context(), uri)
			var got struct{ ID string }
			if err != nil || len(read.Contents) != 1 || json.Unmarshal([]byte(read.Contents[0].Text), &got) != nil || got.ID != id {
				t.Errorf("%s: %+v (%v), want id %q", uri, read, err, id)
			}
		}
		notFound := srv.Engine().Policy().ResourceNotFoundCode(c.Revision())
		for _, uri := range []string{"showcase://users/..%2Fx", "showcase://users/%00", "showcase://users/a/b"} {
			_, err := c.ReadResource(t.Context(), uri)
			var rpcErr *client.RPCError
			if !errors.As(err, &rpcErr) || rpcErr.Code != notFound {
				t.Errorf("%s: %v, want resource not found (%d)", uri, err, notFound)
			}
		}
	})
	// The handler itself, given any raw value, still writes valid JSON.
	for _, id := range []string{"..%2Fx", "\x00", "\xff", `"\`} {
		c, err := readUser(t.Context(), "showcase://users/x", map[string]string{"id": id})
		var got struct{ ID string }
		if err != nil || len(c) != 1 || json.Unmarshal([]byte(c[0].Text), &got) != nil {
			t.Errorf("readUser(%q) = %+v, %v", id, c, err)
		}
	}
}

func TestSkills(t *testing.T) {
	ext, err := Skills()
	if err != nil {
		t.Fatal(err)
	}
	if ext.ID != "io.modelcontextprotocol/skills" || len(ext.Methods) == 0 || len(ext.Resources) != 2 {
		t.Errorf("Skills() = %s with %d methods, %d resources", ext.ID, len(ext.Methods), len(ext.Resources))
	}
}
