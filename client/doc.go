// Package client is an MCP client: it connects to a server over stdio
// ([CommandTransport]), Streamable HTTP ([HTTPTransport]), the HTTP+SSE
// transport of 2024-11-05 ([SSETransport]) or WebSocket
// ([WebSocketTransport]), speaks every revision this SDK knows
// (2024-11-05 to 2026-07-28) in both eras, and answers the server's
// questions (elicitation, sampling, roots) with the handlers of its
// [Options].
//
//	c := client.New(client.Options{})
//	s, err := c.Connect(ctx, client.HTTPTransport("http://127.0.0.1:8080/mcp", client.HTTPOptions{}))
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//	for tool, err := range s.ListTools(ctx) {
//		...
//	}
//	res, err := s.CallTool(ctx, "add", map[string]any{"A": 2, "B": 3})
//
// # Eras
//
// Without [Options.Revision], Connect asks server/discover with the
// stateless revision 2026-07-28 in _meta. A server that answers it is
// spoken to statelessly: every request carries the revision, the client's
// capabilities and info in _meta (and, over HTTP, the MCP-Protocol-Version,
// Mcp-Method, Mcp-Name and Mcp-Param-* headers). A server that answers
// anything else (an unknown method, an HTTP 400 without a modern error, or
// silence on stdio for [Options.ProbeTimeout]) is of the handshake era:
// the client sends initialize for 2025-11-25 and takes the older revision
// the server may answer with. An HTTP 401 or 403 tells no era: Connect
// returns it, an [*HTTPError], without trying initialize. An UnsupportedProtocolVersion error (-32022)
// that lists handshake revisions leads to initialize with the newest of
// them. Options.Revision pins one revision: the session speaks it or
// Connect fails.
//
// # Errors
//
// A request the server refuses is an [*RPCError] (errors.As); an HTTP
// answer that is no JSON-RPC message is an [*HTTPError]; a call on a
// session whose connection ended is [ErrClosed]; a cancelled context is
// the context's error. A tool that fails is a result ([CallToolResult]
// with IsError), not an error, except for [CallToolAs], whose error is
// then a [*ToolError].
//
// # Typed calls
//
// [CallToolAs] decodes a tool's structured result into a Go value, after
// checking it against the output schema the tool was listed with (when
// the session listed it: [Session.ListTools]).
//
// # Notifications
//
// The callbacks of [Options] get the server's log records, list changes
// and resource updates. In the handshake era they come on the session
// (over Streamable HTTP, on the GET stream the client opens after
// initialize, resumed with Last-Event-ID when it is cut), and
// [Session.SubscribeResource] asks for a resource's updates; in the
// stateless era they come on a subscriptions/listen stream that
// [Session.Subscribe] opens.
//
// # Tasks
//
// With [Options.Tasks] the client declares the tasks extension: a server
// may run a task-supporting tool's call as a task, which
// [Session.CallTool] awaits and [Session.StartTool] returns
// ([Session.AwaitTask], [Session.GetTask], [Session.UpdateTask],
// [Session.CancelTask]).
//
// # Middleware
//
// [Options.Middleware] wraps every request the client sends, in the shape
// of the server's method middleware: func(next MethodHandler)
// MethodHandler.
//
// # Cancellation and progress
//
// Every method honours its context. A call whose context ends is
// cancelled on the server: with notifications/cancelled, except over
// Streamable HTTP in the stateless era, where closing the request's
// stream says it. [WithProgress] asks for progress notifications of the
// calls made with the context it returns.
//
// # Bounds
//
// A server cannot make the client hold more than [Options.MaxMessageBytes]
// per message (a longer one ends the session), follow more than
// [Options.MaxPages] pages of a list, run more than
// [Options.MaxInputRounds] input rounds for one request, have more than
// 64 of its requests answered at once, or have a cut stream reconnected
// more than [HTTPOptions.MaxReconnects] times in a row for nothing new.
package client
