package hexmcp_test

import (
	"bufio"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// sseStream is a minimal client of the HTTP+SSE transport: the stream and
// the URL its endpoint event names.
type sseStream struct {
	t     *testing.T
	br    *bufio.Reader
	post  string
	token string
}

// openSSE opens a stream at base+"/sse" with a bearer token ("" for none);
// a refusal returns the response instead.
func openSSE(t *testing.T, base, token string) (*sseStream, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/sse", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, resp
	}
	t.Cleanup(func() { resp.Body.Close() })
	s := &sseStream{t: t, br: bufio.NewReader(resp.Body), token: token}
	event, data := s.next()
	if event != "endpoint" || !strings.HasPrefix(data, "/message?sessionId=") {
		t.Fatalf("first event %q %q", event, data)
	}
	s.post = base + data
	return s, resp
}

func (s *sseStream) next() (event, data string) {
	s.t.Helper()
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading the stream: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && event != "":
			return event, data
		case strings.HasPrefix(line, "event: "):
			event = line[7:]
		case strings.HasPrefix(line, "data: "):
			data += line[6:]
		}
	}
}

// call POSTs body and returns the next message of the stream.
func (s *sseStream) call(body string) string {
	s.t.Helper()
	resp, text := postAs(s.t, s.post, s.token, body, nil)
	if resp.StatusCode != http.StatusAccepted {
		s.t.Fatalf("POST %s: %d %s", body, resp.StatusCode, text)
	}
	if strings.Contains(body, `"id"`) {
		_, data := s.next()
		return data
	}
	return ""
}

const sseInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`

// ListenAndServe serves the HTTP+SSE transport by default at /sse and
// /message, behind the same bearer check and scopes as /mcp.
func TestListenAndServeSSE(t *testing.T) {
	srv := scopedServer(t, hexmcp.Visibility{})
	addr := listen(t, srv, hexmcp.HTTPOptions{
		Authenticator: tokens,
		Auth:          mcphttp.AuthOptions{ResourceMetadataURL: prm, Logger: slog.New(slog.DiscardHandler)},
	})
	base := "http://" + addr
	if _, resp := openSSE(t, base, ""); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), prm) {
		t.Fatalf("/sse without a token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	reader, _ := openSSE(t, base, "reader")
	if got := reader.call(sseInitialize); !strings.Contains(got, `"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize: %s", got)
	}
	reader.call(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{}}}`
	if got := reader.call(write); !strings.Contains(got, `"code":-32052`) {
		t.Fatalf("write as reader: %s", got)
	}
	// Another principal's POST to the stream: as if it did not exist.
	if resp, body := postAs(t, reader.post, "writer", write, nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the writer posting to the reader's stream: %d %s", resp.StatusCode, body)
	}
	writer, _ := openSSE(t, base, "writer")
	writer.call(sseInitialize)
	writer.call(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := writer.call(write); !strings.Contains(got, "written") {
		t.Fatalf("write as writer: %s", got)
	}
}

// DisableSSE leaves /sse and /message unserved.
func TestListenAndServeDisableSSE(t *testing.T) {
	srv := scopedServer(t, hexmcp.Visibility{})
	addr := listen(t, srv, hexmcp.HTTPOptions{DisableSSE: true})
	if _, resp := openSSE(t, "http://"+addr, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/sse: %d, want 404", resp.StatusCode)
	}
}

// /sse takes the allowed hosts of /mcp when its options list none.
func TestListenAndServeSSEAllowedHosts(t *testing.T) {
	srv := scopedServer(t, hexmcp.Visibility{})
	addr := listen(t, srv, hexmcp.HTTPOptions{Endpoint: mcphttp.Options{AllowedHosts: []string{"mcp.example"}}})
	testtools.WantStatusByHost(t, "http://"+addr+"/sse", map[string]int{"mcp.example": http.StatusOK, "evil.example": http.StatusForbidden})
}
