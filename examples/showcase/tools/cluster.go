package tools

import (
	"context"

	"github.com/hexmcp/hexmcp"
)

// ClusterTools are the tools the showcase adds when it runs as one of
// several instances (-redis): toggleGreeting adds the tool greet to the
// instance that serves the call, or removes it, and so raises
// notifications/tools/list_changed, which the other instances deliver to
// the sessions they hold too. (Each instance's tool list is its own: in a
// real deployment every instance changes its list, by a deploy or a
// configuration it watches.)
func ClusterTools(s *hexmcp.Server) []hexmcp.Tool {
	return []hexmcp.Tool{hexmcp.NewTool(func(context.Context, struct{}) (string, error) {
		if s.RemoveTool("greet") {
			return "Removed greet from this instance", nil
		}
		if err := s.AddTool(hexmcp.Func(func(_ context.Context, in struct {
			Name string `json:"name"`
		}) (string, error) {
			return "Hello, " + in.Name, nil
		}, hexmcp.WithName("greet"), hexmcp.WithDescription("Greets someone."))); err != nil {
			return "", err
		}
		return "Added greet to this instance", nil
	}, hexmcp.WithName("toggleGreeting"), hexmcp.WithDescription("Adds the tool greet to the instance that serves the call, or removes it: every session, on every instance, is told that the tool list changed."))}
}
