package mcphttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
)

// A Server's http.Server has the ServerOptions' timeouts and header
// bound: the documented defaults for zero fields (read header 10 s, read
// 60 s, write none, idle 120 s), none for negative ones.
func TestServerOptionsReachTheHTTPServer(t *testing.T) {
	report := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := r.Context().Value(http.ServerContextKey).(*http.Server)
		fmt.Fprintf(w, "%v %v %v %v %d", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout, s.MaxHeaderBytes)
	})
	for _, tc := range []struct {
		opts mcphttp.ServerOptions
		want string
	}{
		{mcphttp.ServerOptions{}, "10s 1m0s 0s 2m0s 0"},
		{mcphttp.ServerOptions{ReadHeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second, IdleTimeout: 4 * time.Second, MaxHeaderBytes: 5 << 10},
			"1s 2s 3s 4s 5120"},
		{mcphttp.ServerOptions{ReadHeaderTimeout: -1, ReadTimeout: -1, WriteTimeout: -1, IdleTimeout: -1}, "0s 0s 0s 0s 0"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			srv := mcphttp.NewServer("127.0.0.1:0", report, tc.opts)
			if err := srv.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := srv.Shutdown(context.Background()); err != nil {
					t.Error(err)
				}
			}()
			resp, err := http.Get("http://" + srv.Addr() + "/")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != tc.want {
				t.Fatalf("http.Server: %s, want %s", b, tc.want)
			}
		})
	}
}
