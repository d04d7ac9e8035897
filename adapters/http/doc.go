// Package mcphttp is the Streamable HTTP transport: an http.Handler that
// serves the protocol engine on one URL (conventionally "/mcp") to clients
// of every revision at once.
//
//   - Stateless era (2026-07-28): every request is a POST whose body names
//     its protocol version in _meta. No session: an Mcp-Session-Id header is
//     ignored. The request metadata headers (MCP-Protocol-Version,
//     Mcp-Method, Mcp-Name, Mcp-Param-*) must match the body. Closing the
//     response stream cancels the call.
//   - Handshake era (2025-03-26 to 2025-11-25): initialize creates a session
//     whose id travels in Mcp-Session-Id; GET opens the session's standalone
//     SSE stream for server-initiated messages (list changes); DELETE ends
//     the session; SSE streams are resumable with Last-Event-ID. A session
//     belongs to the principal that initialized it (see [RequireBearer]):
//     every instance refuses it to anyone else, as if it did not exist.
//     When a session ends (DELETE, or an expiry that a request or a GET
//     stream's keep-alive finds), the events of its streams are deleted
//     from the event store.
//   - Sessions are bounded by the session store: with the in-memory one,
//     a session whose client never sends notifications/initialized
//     expires after 30 s of inactivity, one
//     client (the authenticated principal, else the remote IP; IPv6 by
//     /64) holds at most 100, and at either
//     limit a session idle long enough is evicted (at a client's limit,
//     one of its own) before a new one is refused. A store that reports
//     removals (ports.SessionRemovalNotifier) also has the handler drop
//     its copy of an expired or evicted session at once.
//
// A request is answered with application/json, or with an SSE stream when
// the call sends related notifications (progress) before its response, or
// when the client accepts only text/event-stream.
//
// The adapter holds no protocol logic: the engine decides what each
// revision allows, and the adapter only translates between HTTP and the
// engine's exchange port (what [github.com/hexmcp/hexmcp/app.Engine]
// offers a transport that frames each exchange itself, as stdio and
// WebSocket reach it through [github.com/hexmcp/hexmcp/ports.ConnHandler]):
// the engine reads each message, serves it and tells what it answered
// (HTTP picks its status from that), and keeps each session's state and
// what the session store holds of it. The adapter keeps what is HTTP's:
// the session ids (and which sessions it holds in memory), the SSE streams
// and their event ids, the budgets of bodies and requests in flight, and
// the headers.
//
// # Status codes
//
// Error bodies are JSON-RPC error responses (with the request's id when it
// is known), except for the authentication middleware's OAuth-style bodies.
//
//	200  a response (application/json or text/event-stream), including
//	     JSON-RPC errors not listed below
//	202  a notification or a client response was accepted (no body); also a
//	     request that ends without a response (cancelled with
//	     notifications/cancelled)
//	204  DELETE ended the session
//	400  invalid JSON (-32700) or an invalid JSON-RPC message (-32600);
//	     a handshake-era request without Mcp-Session-Id (-32600); an
//	     MCP-Protocol-Version the server does not support (-32022, with the
//	     supported list; in a session, any supported value is accepted and
//	     the session is served at its negotiated revision); a stateless
//	     request whose headers are missing, malformed or do not match the
//	     body (-32020 HeaderMismatch); a request whose MCP-Protocol-Version
//	     names a stateless revision but whose body lacks
//	     _meta["io.modelcontextprotocol/protocolVersion"], and a stateless
//	     request without _meta["io.modelcontextprotocol/clientCapabilities"]
//	     (-32602: a required field is missing); a stateless request the
//	     engine refuses with -32022 or -32021; a batch outside a 2025-03-26
//	     session; an unknown or expired Last-Event-ID; RequireBearer: a
//	     token in the query string (access_token; error="invalid_request")
//	401  RequireBearer: no valid bearer token (WWW-Authenticate: Bearer,
//	     with scope and resource_metadata when configured)
//	403  on a loopback listener, a Host that is neither a loopback name
//	     (localhost, *.localhost, 127.0.0.0/8, ::1) nor in
//	     Options.AllowedHosts (DNS rebinding); an Origin that is not in
//	     Options.AllowedOrigins and is not an http(s) origin of the
//	     request's own host and port (loopback names count as one host;
//	     "null", file: and other schemes only when listed); RequireBearer:
//	     missing scope. The WebSocket adapter applies the same two rules.
//	404  an unknown, expired or deleted session, or one that belongs to
//	     another principal (also a call whose session is deleted while it
//	     runs); a stateless request for a method the server does not
//	     implement (-32601)
//	405  GET or DELETE without Mcp-Session-Id (Allow: POST); any other
//	     method (Allow: GET, POST, DELETE)
//	406  a POST whose Accept allows neither application/json nor
//	     text/event-stream; a GET whose Accept does not allow
//	     text/event-stream (a missing Accept allows both)
//	408  a POST whose body does not arrive within Options.BodyTimeout
//	     (-32600; the connection is closed)
//	409  a GET while the session's standalone stream is already open
//	413  a body over Options.MaxBodyBytes
//	415  a POST whose Content-Type is not application/json
//	429  more than Options.MaxInFlightPerSession requests in flight in one
//	     session (Retry-After: 1); an initialize whose client (see
//	     Options.ClientKey) holds as many sessions as the store allows one
//	     client, none of them idle long enough to be evicted (-32600,
//	     Retry-After: 30); a subscriptions/listen past the engine's
//	     MaxListeners or its client's MaxListenersPerClient
//	     (app.CodeListenLimit, Retry-After: 5); a POST whose client's
//	     bodies being read take its share of the budget of bodies in
//	     flight (Options.MaxInFlightBytesPerClient; -32600, Retry-After:
//	     1), and a request whose client's calls in progress keep that
//	     share of their requests (-32600 with the request's id,
//	     Retry-After: 1)
//	503  the session store refuses a new session because it is full and
//	     no session is idle long enough to be evicted (-32603,
//	     Retry-After: 10), or fails; a POST whose body, counted as it
//	     arrives, finds no room in Options.MaxInFlightBytes within 2 s
//	     (-32603 "the server is busy", Retry-After: 1); a GET after
//	     CloseStreams or while the server shuts down; any request after
//	     Abort
//
// [Server] also bounds connections before any request is read: past
// ServerOptions.MaxConnsPerClient from one address a connection is answered
// 429, past ServerOptions.MaxConns 503 (both with Retry-After), and closed.
//
// An error whose request id cannot be read has no "id" member (the
// 2025-11-25 and 2026-07-28 schemas make it optional for that case).
package mcphttp
