// Package hexmcptest tests the tools, prompts and resources of a hexmcp
// server through a real engine and a real client, under every protocol
// revision, in a few lines:
//
//	func add(ctx context.Context, in struct{ A, B float64 }) (float64, error) { return in.A + in.B, nil }
//
//	func TestAdd(t *testing.T) {
//		srv := hexmcptest.NewServer(t, hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(add)}})
//		hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
//			res, err := c.CallTool(t.Context(), "add", map[string]any{"A": 2, "B": 3})
//			if err != nil || res.Text() != "5" {
//				t.Fatalf("add = %v, %v", res, err)
//			}
//		})
//	}
//
// [ForEachRevision] runs the test once per revision the server supports
// (2024-11-05 to 2025-11-25 open a session with initialize; 2026-07-28
// carries the revision in the _meta of every request), each as a subtest
// with a client of its own; [Connect] makes one client of a chosen
// revision. Clients reach the server in memory (the engine serves the
// connection as it serves stdio) or, with [StreamableHTTP], over the
// server's Streamable HTTP handler on an httptest server.
//
// The client is a [*client.Session] of package client
// ([github.com/hexmcp/hexmcp/client]), its revision pinned, each request
// bounded by [ClientOptions.Timeout]. It decodes what the server answers:
// [client.CallToolResult] (content blocks, structuredContent, isError),
// prompts, resources (the lists are iterators: [client.Collect] makes
// them slices), and a [*client.RPCError] (code, message, data) when a
// request fails. Handlers of
// [ClientOptions] answer the questions a tool asks the client
// (elicitation, sampling, roots), and declare the matching capabilities;
// the same handler serves both eras, whether the server sends its
// question as a request on the session or as an input_required result to
// be answered on a retry.
//
// The server under test is a [*hexmcp.Server]: from [NewServer] (which
// builds it from [hexmcp.Options]), from [hexmcp.New], or the one an fx
// application's wiring.Core provides.
// One server serves any number of clients at once, each on a connection
// (or HTTP endpoint) of its own.
package hexmcptest
