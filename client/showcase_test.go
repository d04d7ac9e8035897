package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/showcasebin"
)

// showcaseHTTP runs the showcase binary over HTTP on a free loopback port
// and returns its base URL ("http://127.0.0.1:PORT"), which serves
// Streamable HTTP at /mcp and HTTP+SSE at /sse.
func showcaseHTTP(t *testing.T) string {
	t.Helper()
	return strings.TrimSuffix(showcasebin.Serve(t.Context(), t, showcasebin.Build(t, showcasebin.Options{}), "http", nil), "/mcp")
}

// checkCountDownAndLog calls the showcase's countDown (2 steps) with a
// progress callback and checks its answer and progress, then logWork;
// logs are the log records the session received (its Logging appends
// them), of which there must be one at least.
func checkCountDownAndLog(ctx context.Context, t *testing.T, s *client.Session, logs *[]string) {
	t.Helper()
	var steps int
	pctx := client.WithProgress(ctx, func(client.Progress) { steps++ })
	if res, err := s.CallTool(pctx, "countDown", map[string]any{"steps": 2}); err != nil || res.Text() != "Counted down 2 steps" || steps != 2 {
		t.Errorf("countDown = %+v, %v, %d progress notifications", res, err, steps)
	}
	if _, err := s.CallTool(ctx, "logWork", nil); err != nil {
		t.Fatal(err)
	}
	if len(*logs) == 0 {
		t.Errorf("no log record reached the client")
	}
}

// The showcase over HTTP+SSE, over Streamable HTTP's GET stream and over
// WebSocket: calls with progress and logging, and a resource subscription
// in the handshake era, and the tasks extension (buildReport).
func TestHTTPShowcase(t *testing.T) {
	base := showcaseHTTP(t)
	transports := map[string]client.Transport{
		"sse":  client.SSETransport(base+"/sse", client.SSEOptions{}),
		"http": client.HTTPTransport(base+"/mcp", client.HTTPOptions{}),
		"ws":   client.WebSocketTransport(showcasebin.Serve(t.Context(), t, showcasebin.Build(t, showcasebin.Options{}), "ws", nil), client.WebSocketOptions{}),
	}
	for name, tr := range transports {
		for _, rev := range revisions {
			label := string(rev)
			if label == "" {
				label = "auto"
			}
			t.Run(name+"/"+label, func(t *testing.T) {
				ctx := t.Context()
				var logs []string
				s := connect(t, client.New(client.Options{
					Revision: rev,
					Tasks:    true,
					LogLevel: domain.LogInfo,
					Logging:  func(m client.LogMessage) { logs = append(logs, string(m.Level)) },
				}), tr)
				checkCountDownAndLog(ctx, t, s, &logs)
				res, err := s.ReadResource(ctx, "showcase://readme")
				if err != nil || len(res.Contents) != 1 {
					t.Fatalf("readme: %+v, %v", res, err)
				}
				if rev == "" || rev == domain.Revision20251125 {
					// The tasks extension: buildReport runs as a task.
					task, err := s.StartTool(ctx, "buildReport", map[string]any{"sections": 2, "stepMs": 1})
					if err != nil || task.ID == "" {
						t.Fatalf("buildReport: %+v, %v; want a task", task, err)
					}
					if res, err := s.AwaitTask(ctx, task.ID); err != nil || res.Text() != "Report ready: 2 sections" {
						t.Errorf("the task's result: %+v, %v", res, err)
					}
				}
				if s.Features().Era == domain.EraHandshake {
					if err := s.SubscribeResource(ctx, "showcase://readme"); err != nil {
						t.Fatal(err)
					}
					if err := s.UnsubscribeResource(ctx, "showcase://readme"); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}
