package testtools

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// MCPHeaders sets on req the Content-Type and the Accept of a Streamable
// HTTP POST (JSON, answered as JSON or an event stream), then the headers
// of each of hdrs in turn, so that a later one wins; it returns req.
func MCPHeaders(req *http.Request, hdrs ...map[string]string) *http.Request {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, hdr := range hdrs {
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
	}
	return req
}

// Do sends req with c (http.DefaultClient when nil) and fails t when no
// response comes.
func Do(t testing.TB, c *http.Client, req *http.Request) *http.Response {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// DoRead sends req as [Do] does and returns the response with its whole
// body, read and closed.
func DoRead(t testing.TB, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp := Do(t, c, req)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return resp, string(b)
}

// FreePort returns a loopback port free at the time of the call (a server
// started on it later may find it taken: retry).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WantStatusByHost sends a GET for url once with each Host of want and fails
// t where the status differs from the one want gives that Host.
func WantStatusByHost(t testing.TB, url string, want map[string]int) {
	t.Helper()
	for host, status := range want {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Host = host
		resp := Do(t, nil, req)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("GET %s with Host %s: %d, want %d", req.URL.Path, host, resp.StatusCode, status)
		}
	}
}
