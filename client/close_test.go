package client_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
)

// answerHolder is an http.RoundTripper that holds the client's answers to
// the server's requests (POSTs of a JSON-RPC response) until their context
// ends, and returns them only a while later, as net/http does while it
// closes the connection of a cancelled request; it records whether a
// DELETE started while such a POST had not returned.
type answerHolder struct {
	base http.RoundTripper

	mu       sync.Mutex
	inFlight int
	held     chan struct{} // closed when the first answer is held
	deletes  int
	early    int // DELETEs that started while an answer was in flight
}

func (h *answerHolder) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.Method {
	case http.MethodDelete:
		h.mu.Lock()
		h.deletes++
		if h.inFlight > 0 {
			h.early++
		}
		h.mu.Unlock()
	case http.MethodPost:
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"result"`)) && !bytes.Contains(body, []byte(`"method"`)) {
			h.mu.Lock()
			h.inFlight++
			select {
			case <-h.held:
			default:
				close(h.held)
			}
			h.mu.Unlock()
			<-r.Context().Done()
			time.Sleep(100 * time.Millisecond) // the transport closing the connection
			h.mu.Lock()
			h.inFlight--
			h.mu.Unlock()
			return nil, context.Cause(r.Context())
		}
	}
	return h.base.RoundTrip(r)
}

// Closing a handshake-era session over Streamable HTTP ends it with a
// DELETE only once the POSTs that closing cancels have returned: the
// cancelled request's connection could otherwise be handed to the DELETE
// from net/http's idle pool as it is being closed, and the DELETE fail
// with the other request's "context canceled" (a CI run saw it, in
// hexmcptest's TestHandlerErrors).
func TestCloseDeletesAfterCancelledPosts(t *testing.T) {
	roots := hexmcp.NewTool(func(ctx context.Context, rc *hexmcp.RequestContext) (string, error) {
		_, err := rc.ListRoots(ctx, "r")
		return "", err
	}, hexmcp.WithName("roots"))
	srv, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{roots}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ts := serveHTTP(t, srv)
	h := &answerHolder{base: ts.Client().Transport, held: make(chan struct{})}
	tr := client.HTTPTransport(ts.URL, client.HTTPOptions{Client: &http.Client{Transport: h}})
	c := client.New(client.Options{Revision: domain.Revision20251125,
		Roots: func(context.Context) ([]domain.Root, error) { return []domain.Root{{URI: "file:///r"}}, nil }})
	s, err := c.Connect(t.Context(), tr)
	if err != nil {
		t.Fatal(err)
	}
	called := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), "roots", nil)
		called <- err
	}()
	select {
	case <-h.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the client never answered roots/list")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	<-called
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deletes != 1 || h.early != 0 {
		t.Fatalf("%d DELETEs, %d of them while the cancelled answer was in flight; want 1, 0", h.deletes, h.early)
	}
}
