package client_test

// Tests written against the survivors of a mutation round
// (go run ./internal/mutate -pkg client -n 25 -seed 17): behaviour the
// other tests of the package left unchecked.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Accept refuses content that does not encode as JSON: no answer is made
// of it.
func TestAcceptUnencodable(t *testing.T) {
	res, err := client.Accept(map[string]any{"f": func() {}})
	if err == nil || res != nil || !strings.Contains(err.Error(), "encoding the form's content") {
		t.Fatalf("Accept(a func) = %+v, %v; want an error and no answer", res, err)
	}
}

// By default a message of the server over 4 MiB ends the session with
// ErrMessageTooLarge; one just under it is read.
func TestDefaultMaxMessageBytes(t *testing.T) {
	type SizeInput struct {
		N int `json:"n"`
	}
	srv := testServer(t, nil, func(o *hexmcp.Options) {
		o.Tools = append(o.Tools, hexmcp.Func(func(_ context.Context, in SizeInput) (string, error) {
			return strings.Repeat("a", in.N), nil
		}, hexmcp.WithName("sized")))
	})
	s := connect(t, client.New(client.Options{Revision: domain.Revision20241105}), pipeTransport(t, srv))
	ctx := t.Context()
	under := 4<<20 - 1<<10
	if res, err := s.CallTool(ctx, "sized", SizeInput{N: under}); err != nil || len(res.Text()) != under {
		t.Fatalf("a result just under 4 MiB: %v", err)
	}
	_, err := s.CallTool(ctx, "sized", SizeInput{N: 4<<20 + 1<<10})
	if !errors.Is(err, ports.ErrMessageTooLarge) || !errors.Is(err, client.ErrClosed) {
		t.Fatalf("a result over 4 MiB: %v, want ErrMessageTooLarge", err)
	}
}

// A pinned stateless revision that the server's first server/discover
// refuses, though it lists it, is asked for once more; a refusal that
// lists only other revisions is final.
func TestPinnedDiscoverRetried(t *testing.T) {
	for _, tc := range []struct {
		supported string
		connects  bool
	}{
		{`["2025-11-25","2026-07-28"]`, true},
		{`["2025-11-25","2025-06-18"]`, false},
	} {
		discovers := 0
		tr := fake(t, func(m rpc) []string {
			if m.Method != "server/discover" {
				return []string{result(m, `{"resultType":"complete"}`)}
			}
			if discovers++; discovers == 1 {
				return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":%s,"requested":"2026-07-28"}}}`, m.ID, tc.supported)}
			}
			return stateless(nil)(m)
		})
		s, err := client.New(client.Options{Revision: domain.Revision20260728}).Connect(t.Context(), tr)
		if tc.connects {
			if err != nil || s.Revision() != domain.Revision20260728 || discovers != 2 {
				t.Fatalf("supported %s: %v after %d discovers, want a session at 2026-07-28", tc.supported, err, discovers)
			}
			s.Close()
		} else if err == nil || discovers != 1 {
			if s != nil {
				s.Close()
			}
			t.Fatalf("supported %s: connected after %d discovers, want a refusal", tc.supported, discovers)
		}
	}
}

// A subscriptions/listen the server refuses is that refusal (an
// *RPCError), and a subscription whose session ends under it ends with an
// error: only Close, or the server's graceful end, is a nil Wait.
func TestSubscribeErrors(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			srv := testServer(t, nil, func(o *hexmcp.Options) { o.MaxListeners = 1 })
			s, err := client.New(client.Options{}).Connect(t.Context(), tr.dial(t, srv))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			sub, err := s.Subscribe(t.Context(), client.Subscriptions{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Subscribe(t.Context(), client.Subscriptions{ToolsListChanged: true})
			var re *client.RPCError
			if !errors.As(err, &re) || re.Code != app.CodeListenLimit {
				t.Errorf("a listen stream past MaxListeners: %v, want the server's refusal (%d)", err, app.CodeListenLimit)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := sub.Wait(); err == nil {
				t.Errorf("a subscription whose session closed: Wait = nil, want why it ended")
			}
		})
	}
}

// A server of the HTTP+SSE transport that takes a message with 200 OK
// (rather than 202 Accepted) has taken it.
func TestSSEPostAnswered200(t *testing.T) {
	srv := testServer(t, nil)
	h := srv.SSEHandler(mcphttp.SSEOptions{})
	mux := http.NewServeMux()
	mux.Handle(mcphttp.DefaultSSEPath, h)
	mux.Handle(mcphttp.DefaultSSEMessagePath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(status200{w}, r)
	}))
	ts := serveShutDown(t, mux, h.Shutdown)
	s := connect(t, client.New(client.Options{}), client.SSETransport(ts.URL+mcphttp.DefaultSSEPath, client.SSEOptions{Client: ts.Client()}))
	if res, err := s.CallTool(t.Context(), "add", AddInput{A: 1, B: 2}); err != nil || res.Text() != "3" {
		t.Fatalf("add = %+v, %v", res, err)
	}
}

// status200 is a ResponseWriter that turns 202 Accepted into 200 OK.
type status200 struct{ http.ResponseWriter }

func (w status200) WriteHeader(code int) {
	if code == http.StatusAccepted {
		code = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(code)
}
