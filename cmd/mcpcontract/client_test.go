package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted is an HTTP endpoint that answers every POST that carries an id
// with answer, and records the bodies of the others (notifications and
// mcpcontract's answers to the server's requests).
type scripted struct {
	answer func(w http.ResponseWriter)
	mu     sync.Mutex
	others []string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m message
	_ = json.Unmarshal(b, &m)
	if m.ID == nil || m.Method == "" {
		s.mu.Lock()
		s.others = append(s.others, string(b))
		s.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.answer(w)
}

func (s *scripted) posted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.others...)
}

func sse(events ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = io.WriteString(w, "data: "+e+"\n\n")
		}
	}
}

func plain(status int, contentType, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// The HTTP exchange reads the answer to its request whatever comes first
// on the stream, refuses the server's requests, and returns the server's
// errors as JSON-RPC errors and the others with what the server said.
func TestHTTPExchange(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  func(http.ResponseWriter)
		result  string // "" when an error is expected
		rpcCode int    // the JSON-RPC error's code, when there is one
		says    string // what a non-JSON-RPC error says
		refused string // the id of a server request that must have been refused
	}{
		{name: "a notification and a server request before the response",
			answer: sse(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
				`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`,
				`{"jsonrpc":"2.0","id":7,"result":{"other":true}}`,
				`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`),
			result: `{"tools":[]}`, refused: `"srv-1"`},
		{name: "an error on the stream", answer: sse(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`), rpcCode: -32602},
		{name: "an error as JSON", answer: plain(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`), rpcCode: -32601},
		{name: "an error as JSON with an HTTP error status", answer: plain(http.StatusBadRequest, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"bad request"}}`), rpcCode: -32600},
		{name: "an HTTP error as text", answer: plain(http.StatusInternalServerError, "text/plain", "the database is down"), says: "the database is down"},
		{name: "another content type", answer: plain(http.StatusOK, "text/html", "<p>hi</p>"), says: `unexpected Content-Type "text/html"`},
		{name: "a stream that ends first", answer: sse(`{"jsonrpc":"2.0","id":2,"result":{}}`), says: "ended before the response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scripted{answer: tc.answer}
			hs := httptest.NewServer(s)
			defer hs.Close()
			h := &httpExchange{url: hs.URL, hc: hs.Client()}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := h.call(ctx, 1, "tools/list", nil)
			var rpc *rpcError
			switch {
			case tc.result != "":
				if err != nil || string(got) != tc.result {
					t.Fatalf("call = %s, %v; want %s", got, err, tc.result)
				}
			case tc.rpcCode != 0:
				if !errors.As(err, &rpc) || rpc.Code != tc.rpcCode {
					t.Fatalf("call = %s, %v; want the JSON-RPC error %d", got, err, tc.rpcCode)
				}
			default:
				if err == nil || errors.As(err, &rpc) || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("call = %s, %v; want an error saying %q", got, err, tc.says)
				}
			}
			if tc.refused != "" {
				posted := s.posted()
				if len(posted) != 1 || !strings.Contains(posted[0], `"id":`+tc.refused) || !strings.Contains(posted[0], `"code":-32601`) {
					t.Fatalf("posted besides the request: %q, want one -32601 refusal of %s", posted, tc.refused)
				}
			}
		})
	}
}

// A request that cannot be made is an error, not a panic.
func TestHTTPExchangeBadRequest(t *testing.T) {
	h := &httpExchange{url: "http://bad host/mcp", hc: http.DefaultClient}
	if _, err := h.call(context.Background(), 1, "tools/list", nil); err == nil {
		t.Error("a call to a URL that does not parse succeeded")
	}
	s := &scripted{}
	hs := httptest.NewServer(s)
	defer hs.Close()
	h = &httpExchange{url: hs.URL, hc: hs.Client()}
	if err := h.notify(context.Background(), "notifications/initialized", make(chan int)); err == nil || len(s.posted()) != 0 {
		t.Errorf("a notification whose params do not encode: %v, %q posted; want an error and nothing sent", err, s.posted())
	}
}

// An initialize the server refuses fails connect with the server's error.
func TestConnectRefused(t *testing.T) {
	s := &scripted{answer: plain(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unsupported"}}`)}
	hs := httptest.NewServer(s)
	defer hs.Close()
	_, err := connect(context.Background(), &httpExchange{url: hs.URL, hc: hs.Client()}, newestHandshake, 10*time.Second)
	var rpc *rpcError
	if !errors.As(err, &rpc) || rpc.Code != -32602 || !strings.HasPrefix(err.Error(), "initialize: ") {
		t.Fatalf("connect = %v, want initialize's JSON-RPC error -32602", err)
	}
	if len(s.posted()) != 0 {
		t.Errorf("after a refused initialize, mcpcontract sent %q", s.posted())
	}
}
