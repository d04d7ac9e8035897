package wiring_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/wiring"
)

// sseApp starts an application serving HTTP with cfg and a tool that
// waits for release.
func sseApp(t *testing.T, cfg *wiring.HTTPConfig, started chan<- struct{}, release <-chan struct{}) (*fx.App, string) {
	t.Helper()
	slow := hexmcp.NewTool(func(ctx context.Context) (string, error) {
		started <- struct{}{}
		select {
		case <-release:
			return "finished", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, hexmcp.WithName("slow"))
	var srv *mcphttp.Server
	cfg.Addr = "127.0.0.1:0"
	a := fx.New(wiring.Core, wiring.HTTP, wiring.HTTPServer, fx.Supply(cfg), wiring.Tools(slow),
		fx.Populate(&srv), fx.NopLogger, fx.StopTimeout(20*time.Second))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a, "http://" + srv.Addr()
}

// HTTPServer serves the HTTP+SSE transport at /sse and /message behind the
// config's Middleware, and its stop lets a call on a stream answer before
// the stream ends.
func TestHTTPServerServesSSE(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	a, base := sseApp(t, &wiring.HTTPConfig{Middleware: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Wrapped", "yes")
			next.ServeHTTP(w, r)
		})
	}}, started, release)

	resp, err := http.Get(base + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Wrapped") != "yes" {
		t.Fatalf("/sse: %d, X-Wrapped %q", resp.StatusCode, resp.Header.Get("X-Wrapped"))
	}
	br := bufio.NewReader(resp.Body)
	next := func() string {
		t.Helper()
		var data string
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			line = strings.TrimRight(line, "\n")
			if line == "" && data != "" {
				return data
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = d
			}
		}
	}
	endpoint := next()
	post := func(body string) {
		t.Helper()
		resp, err := http.Post(base+endpoint, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || resp.Header.Get("X-Wrapped") != "yes" {
			t.Fatalf("POST %s: %d, X-Wrapped %q", body, resp.StatusCode, resp.Header.Get("X-Wrapped"))
		}
	}
	post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
	if got := next(); !strings.Contains(got, `"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize: %s", got)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not start")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(context.Background()) }()
	time.Sleep(50 * time.Millisecond) // let the stop begin; the answer comes either way
	close(release)
	if got := next(); !strings.Contains(got, "finished") {
		t.Fatalf("the call's answer: %s", got)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("the stream ended with %v", err)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stop did not return")
	}
}

func TestHTTPServerDisableSSE(t *testing.T) {
	a, base := sseApp(t, &wiring.HTTPConfig{DisableSSE: true}, make(chan struct{}, 1), nil)
	defer func() { _ = a.Stop(context.Background()) }()
	resp, err := http.Get(base + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/sse: %d, want 404", resp.StatusCode)
	}
}

// /sse takes the allowed hosts of the graph's *mcphttp.Options when
// HTTPConfig.SSE lists none.
func TestHTTPServerSSEAllowedHosts(t *testing.T) {
	var srv *mcphttp.Server
	a := fx.New(wiring.Core, wiring.HTTP, wiring.HTTPServer, wiring.Listen("127.0.0.1:0"),
		fx.Supply(&mcphttp.Options{AllowedHosts: []string{"mcp.example"}}), fx.Populate(&srv), fx.NopLogger)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Stop(context.Background()) }()
	testtools.WantStatusByHost(t, "http://"+srv.Addr()+"/sse", map[string]int{"mcp.example": http.StatusOK, "evil.example": http.StatusForbidden})
}
