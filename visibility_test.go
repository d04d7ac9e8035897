package hexmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/internal/wiretest"
)

type noInput struct{}

func constTool(name, answer string) hexmcp.Tool {
	return hexmcp.Func(func(context.Context, noInput) (string, error) { return answer, nil }, hexmcp.WithName(name))
}

// adminOnly shows tools whose name starts with "admin" only to the client
// named "admin-client".
func adminOnly(_ context.Context, v *hexmcp.Viewer, t *hexmcp.ToolDefinition) bool {
	return !strings.HasPrefix(t.Name, "admin") || v.Client.Name == "admin-client"
}

func visibilityServer(t *testing.T) *hexmcp.Server {
	t.Helper()
	secret := constTool("secret", "the secret")
	unlock := hexmcp.Func(func(ctx context.Context, _ noInput) (string, error) {
		if err := hexmcp.RequestFrom(ctx).AddSessionTool(secret); err != nil {
			return "", err
		}
		return "unlocked", nil
	}, hexmcp.WithName("unlock"))
	srv, err := hexmcp.New(hexmcp.Options{
		Tools:      []hexmcp.Tool{constTool("public", "p"), constTool("admin_reset", "reset"), unlock},
		Visibility: hexmcp.Visibility{Tool: adminOnly},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// msg builds a request of era for client.
func msg(era, client string, id int, method, params string) string {
	if era == "stateless" {
		meta := fmt.Sprintf(`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":%q,"version":"1"}}`, client)
		if params == "" {
			params = "{" + meta + "}"
		} else {
			params = params[:len(params)-1] + "," + meta + "}"
		}
	}
	if params == "" {
		params = "{}"
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

func toolNames(t *testing.T, m map[string]any) string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	var names []string
	for _, x := range res["tools"].([]any) {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	return strings.Join(names, ",")
}

func initialize(t *testing.T, c wiretest.Client, client string) {
	t.Helper()
	c.Send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":100,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, client))
	c.Notify(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// A hidden tool is absent from tools/list and answers tools/call exactly
// as an unknown tool, on every transport and in both eras; stateless
// results of a filtered list are private.
func TestVisibilityFiltersPerRequest(t *testing.T) {
	for _, tr := range wiretest.Transports {
		for _, era := range []string{"handshake", "stateless"} {
			t.Run(tr.Name+"/"+era, func(t *testing.T) {
				srv := visibilityServer(t)
				user, admin := tr.Dial(t, srv), tr.Dial(t, srv)
				if era == "handshake" {
					initialize(t, user, "user-client")
					initialize(t, admin, "admin-client")
				}
				if got := toolNames(t, user.Send(t, msg(era, "user-client", 1, "tools/list", ""))); got != "public,unlock" {
					t.Errorf("user sees %s", got)
				}
				adminList := admin.Send(t, msg(era, "admin-client", 1, "tools/list", ""))
				if got := toolNames(t, adminList); got != "admin_reset,public,unlock" {
					t.Errorf("admin sees %s", got)
				}
				if era == "stateless" {
					if scope := adminList["result"].(map[string]any)["cacheScope"]; scope != "private" {
						t.Errorf("cacheScope %v, want private", scope)
					}
				}
				hidden := user.Send(t, msg(era, "user-client", 2, "tools/call", `{"name":"admin_reset"}`))
				unknown := user.Send(t, msg(era, "user-client", 2, "tools/call", `{"name":"nothing_here"}`))
				h, _ := json.Marshal(hidden)
				u, _ := json.Marshal(unknown)
				if strings.ReplaceAll(string(h), "admin_reset", "X") != strings.ReplaceAll(string(u), "nothing_here", "X") {
					t.Errorf("a hidden tool answers\n%s\nan unknown one\n%s", h, u)
				}
				res := admin.Send(t, msg(era, "admin-client", 3, "tools/call", `{"name":"admin_reset"}`))
				if !strings.Contains(fmt.Sprint(res), "reset") {
					t.Errorf("admin call: %v", res)
				}
			})
		}
	}
}

// list_changed reaches a session only when its own visible list changed,
// and a tool added for one session is that session's alone.
func TestVisibilityListChangedAndSessionTools(t *testing.T) {
	for _, tr := range wiretest.Transports {
		t.Run(tr.Name, func(t *testing.T) {
			srv := visibilityServer(t)
			user, admin := tr.Dial(t, srv), tr.Dial(t, srv)
			initialize(t, user, "user-client")
			initialize(t, admin, "admin-client")
			const ping = `{"jsonrpc":"2.0","id":9,"method":"ping"}`
			user.Send(t, ping)
			admin.Send(t, ping)
			user.Notifications()
			admin.Notifications()

			if err := srv.AddTool(constTool("admin_audit", "a")); err != nil {
				t.Fatal(err)
			}
			user.Send(t, ping)
			admin.Send(t, ping)
			if n := user.Notifications(); len(n) != 0 {
				t.Errorf("the user got %v for a tool it cannot see", n)
			}
			if n := admin.Notifications(); len(n) != 1 || !strings.Contains(n[0], "notifications/tools/list_changed") {
				t.Errorf("the admin got %v", n)
			}

			if got := fmt.Sprint(user.Send(t, msg("handshake", "", 4, "tools/call", `{"name":"unlock"}`))); !strings.Contains(got, "unlocked") {
				t.Fatalf("unlock: %s", got)
			}
			if n := user.Notifications(); len(n) != 1 || !strings.Contains(n[0], "list_changed") {
				t.Errorf("after its own tool was added the user got %v", n)
			}
			if got := toolNames(t, user.Send(t, msg("handshake", "", 5, "tools/list", ""))); got != "public,secret,unlock" {
				t.Errorf("the user sees %s", got)
			}
			if got := toolNames(t, admin.Send(t, msg("handshake", "", 5, "tools/list", ""))); got != "admin_audit,admin_reset,public,unlock" {
				t.Errorf("the admin sees %s", got)
			}
			if got := fmt.Sprint(user.Send(t, msg("handshake", "", 6, "tools/call", `{"name":"secret"}`))); !strings.Contains(got, "the secret") {
				t.Errorf("the user's own tool: %s", got)
			}
			if got := fmt.Sprint(admin.Send(t, msg("handshake", "", 6, "tools/call", `{"name":"secret"}`))); !strings.Contains(got, "Unknown tool") {
				t.Errorf("another session called the user's tool: %s", got)
			}
		})
	}
}
