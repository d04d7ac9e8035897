package hexmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

// A server that logs every request, limits each client to 5 requests a
// second (10 at once) and gives every tool call 30 seconds.
func Example_middleware() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv, err := hexmcp.New(hexmcp.Options{
		Tools: []hexmcp.Tool{hexmcp.Func(func(_ context.Context, in echoIn) (string, error) { return in.S, nil }, hexmcp.WithName("echo"))},
		Middleware: []hexmcp.Middleware{
			hexmcp.Audit(logger),
			hexmcp.RateLimit(hexmcp.RateLimitOptions{Rate: 5, Burst: 10}),
		},
		ToolMiddleware: []hexmcp.ToolMiddleware{hexmcp.ToolTimeout(30*time.Second, nil)},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = srv.ServeStdio(context.Background())
}

// Middleware of your own: refuse every tool call of a client that is not
// authenticated, over every transport.
func Example_authorizationMiddleware() {
	requireAuth := func(next hexmcp.MethodHandler) hexmcp.MethodHandler {
		return func(ctx context.Context, req *hexmcp.Request) (json.RawMessage, error) {
			if req.Method == "tools/call" && req.Transport.Principal == nil {
				return nil, hexmcp.NewProtocolError(-32001, "Unauthorized: sign in first", nil)
			}
			return next(ctx, req)
		}
	}
	_, _ = hexmcp.New(hexmcp.Options{Middleware: []hexmcp.Middleware{requireAuth}})
}

// A destructive tool that runs only when the user confirms it: here the
// user (a test client's elicitation handler) declines, and the tool does
// not run.
func ExampleConfirmDestructive() {
	srv, err := hexmcp.New(hexmcp.Options{
		Tools: []hexmcp.Tool{hexmcp.Func(func(_ context.Context, in echoIn) (string, error) { return "dropped " + in.S, nil },
			hexmcp.WithName("dropTable"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{DestructiveHint: hexmcp.Bool(true)}))},
		ToolMiddleware: []hexmcp.ToolMiddleware{hexmcp.ConfirmDestructive(hexmcp.ConfirmOptions{})},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := hexmcptest.NewClient(ctx, srv, hexmcptest.ClientOptions{
		Elicitation: func(_ context.Context, p hexmcp.ElicitParams) (*hexmcp.ElicitResult, error) {
			fmt.Println("asked:", p.Message)
			return &hexmcp.ElicitResult{Action: hexmcp.ElicitDecline}, nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "dropTable", map[string]any{"s": "users"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.IsError, res.Text())
	// Output:
	// asked: dropTable is marked destructive: it may delete or overwrite data. Run it with the arguments {"s":"users"}?
	// true The user declined running the destructive tool "dropTable". Nothing was done.
}
