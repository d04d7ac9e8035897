package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// WithSessionCommit runs once initialize is accepted, inside middleware:
// its error is the answer, middleware sees it, and the session stays
// uninitialized; without an error (or without a commit) nothing changes.
func TestSessionCommit(t *testing.T) {
	var seen []error
	e := newEngine(t, app.Options{Validator: jsonschema.New(), Middleware: []app.Middleware{func(next app.MethodHandler) app.MethodHandler {
		return func(ctx context.Context, r *app.Request) (json.RawMessage, error) {
			res, err := next(ctx, r)
			if r.Method == "initialize" {
				seen = append(seen, err)
			}
			return res, err
		}
	}}})
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	for _, c := range []struct {
		name   string
		commit func(context.Context) error
		want   string // in the answer
		code   int    // the error middleware saw (0: none)
		ready  bool   // the session is initialized after
	}{
		{"Refused", func(context.Context) error {
			return domain.NewProtocolError(domain.CodeInternalError, "Service unavailable: the store is down", nil)
		}, `"error":{"code":-32603,"message":"Service unavailable: the store is down"}`, domain.CodeInternalError, false},
		{"Failed", func(context.Context) error { return errors.New("disk on fire") }, `"error":{"code":-32603,"message":"Internal error"}`, domain.CodeInternalError, false},
		{"Kept", func(context.Context) error { return nil }, `"protocolVersion":"2025-11-25"`, 0, true},
		{"NoCommit", nil, `"protocolVersion":"2025-11-25"`, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			seen = nil
			sess := e.NewSession(context.Background(), "s-"+c.name, nil)
			t.Cleanup(sess.Close)
			ctx := context.Background()
			if c.commit != nil {
				ctx = app.WithSessionCommit(ctx, c.commit)
			}
			out := string(e.HandleMessage(ctx, sess, []byte(initialize), nil))
			if !strings.Contains(out, c.want) {
				t.Fatalf("initialize answered %s, want %s", out, c.want)
			}
			var pe *domain.ProtocolError
			switch {
			case len(seen) != 1:
				t.Fatalf("middleware saw %d initialize", len(seen))
			case c.code == 0 && seen[0] != nil, c.code != 0 && (!errors.As(seen[0], &pe) || pe.Code != c.code):
				t.Fatalf("middleware saw %v, want code %d", seen[0], c.code)
			}
			if got := sess.State().Initialized; got != c.ready {
				t.Fatalf("initialized: %v, want %v", got, c.ready)
			}
		})
	}
}
