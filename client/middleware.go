package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hexmcp/hexmcp/domain"
)

// Request is one outgoing request as client middleware sees it.
type Request struct {
	// Method is the JSON-RPC method.
	Method string
	// Params holds the params to send (a JSON object, _meta included, or
	// nil for none). A middleware may replace them before calling next.
	Params json.RawMessage
	// Revision and Era are the session's when the request is made (in the
	// stateless era, also named in Params' _meta).
	Revision domain.Revision
	Era      domain.Era
}

// MethodHandler sends a request and returns its result, or its error (an
// [*RPCError] when the server refused it).
type MethodHandler func(ctx context.Context, req *Request) (json.RawMessage, error)

// Middleware wraps every request the client sends, as the server's method
// middleware (app.Middleware) wraps the requests it serves: it may look at
// the request, call next (or not, and answer itself), and look at or
// replace what next returned. It sees every request on the wire:
// initialize or server/discover, each round of a stateless-era request
// that asks for input, each poll of a task. [Options.Middleware] lists
// them, the first outermost.
type Middleware func(next MethodHandler) MethodHandler

// handler returns the chain of the client's middleware around send.
func (s *Session) handler(send MethodHandler) MethodHandler {
	mws := s.c.opts.Middleware
	h := send
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// encodeParams returns params as JSON (nil for none).
func encodeParams(method string, params map[string]any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: encoding %s: %w", method, err)
	}
	return b, nil
}
