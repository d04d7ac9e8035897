package mcpredis_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp"
	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/ports"
)

// publishes returns how many PUBLISH commands Redis has served
// (INFO commandstats).
func publishes(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_publish:calls=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return 0
}

// busWatch follows every channel of a bus prefix (PSUBSCRIBE), to see
// when a marker notice has gone through Redis.
type busWatch struct {
	t  *testing.T
	ps *redis.PubSub
	ch <-chan *redis.Message
}

func watchBus(t *testing.T, c *redis.Client, prefix string) *busWatch {
	t.Helper()
	ps := c.PSubscribe(context.Background(), prefix+"bus*")
	if _, err := ps.Receive(context.Background()); err != nil { // the confirmation
		t.Fatal(err)
	}
	t.Cleanup(func() { ps.Close() })
	return &busWatch{t: t, ps: ps, ch: ps.Channel(redis.WithChannelSize(1 << 16))}
}

// mark makes s publish a resource update of a URI of its own and waits
// until it went through Redis: everything s published before it has,
// whether it publishes at once or from a queue in order.
func (w *busWatch) mark(s *hexmcp.Server, uri string) {
	w.t.Helper()
	s.NotifyResourceUpdated(uri)
	deadline := time.After(hangGuard)
	for {
		select {
		case m := <-w.ch:
			n, err := mcpredis.DecodeNotice(m.Payload, 4<<20)
			if err == nil && n.Kind == ports.NoticeResourceUpdated && n.URI == uri {
				return
			}
		case <-deadline:
			w.t.Fatalf("the marker %s never went through Redis", uri)
		}
	}
}

// Responses to server requests that were never sent, and cancellations of
// requests that run nowhere, posted in 2025-03-26 batches to one
// instance, are not amplified onto the bus: the instance forwards only
// what can match elsewhere, and a bounded number of those per batch and
// per client (each of them once was a PUBLISH that every instance read).
func TestUnmatchedResponsesAndCancelsAreNotAmplified(t *testing.T) {
	srv := redistest.Start(t)
	const prefix = "fwd:"
	var servers []*hexmcp.Server
	var urls []string
	for range 2 {
		shared := mcpredis.Share(client(t, srv), mcpredis.ShareOptions{Prefix: prefix})
		t.Cleanup(func() { mcpredis.CloseShared(shared) })
		s, err := hexmcp.New(hexmcp.Options{Shared: shared, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		hs := httptest.NewServer(s.HTTPHandler(mcphttp.Options{}))
		t.Cleanup(hs.Close)
		servers, urls = append(servers, s), append(urls, hs.URL)
	}
	a := urls[0]
	hdr := func(sid string) map[string]string {
		return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"}
	}
	resp, body := post(t, a, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"sampling":{},"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, a, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr(sid)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, body)
	}

	rc := client(t, srv)
	w := watchBus(t, rc, prefix)
	// Whatever the instances published at start has gone through.
	w.mark(servers[0], "test://before-a")
	w.mark(servers[1], "test://before-b")
	before := publishes(t, rc)

	const perBatch, batches = 5_000, 3
	for k := range batches {
		var rb, cb strings.Builder
		rb.WriteByte('[')
		cb.WriteByte('[')
		for i := range perBatch {
			if i > 0 {
				rb.WriteByte(',')
				cb.WriteByte(',')
			}
			// ids of every shape a server request id could have: numbers,
			// strings, and strings shaped like the ids of a bus instance
			// ("<instance>-<n>") that never sent them.
			var id string
			switch i % 3 {
			case 0:
				id = strconv.Itoa(k*perBatch + i + 1_000)
			case 1:
				id = fmt.Sprintf(`"r-%d-%d"`, k, i)
			default:
				id = fmt.Sprintf(`"%016x-%d"`, uint64(k*perBatch+i)*0x9e3779b97f4a7c15, i)
			}
			fmt.Fprintf(&rb, `{"jsonrpc":"2.0","id":%s,"result":{"roots":[]}}`, id)
			fmt.Fprintf(&cb, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}`, id)
		}
		rb.WriteByte(']')
		cb.WriteByte(']')
		for what, b := range map[string]string{"responses": rb.String(), "cancellations": cb.String()} {
			resp, body := post(t, a, b, hdr(sid))
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("a batch of %s: %d %.200s", what, resp.StatusCode, body)
			}
		}
	}
	w.mark(servers[0], "test://after")
	got := publishes(t, rc) - before - 1 // the marker
	// 30,000 messages that can match nothing: the responses whose ids name
	// another instance (the third of them) and the cancellations may be
	// forwarded, at most MaxForwardsPerMessage of them per batch.
	if limit := 2 * batches * app.DefaultMaxForwardsPerMessage; got > limit {
		t.Fatalf("%d unmatched responses and cancellations made %d PUBLISH, want at most %d", 2*perBatch*batches, got, limit)
	}
	t.Logf("%d PUBLISH for %d unmatched messages", got, 2*perBatch*batches)
	if d := servers[0].Engine().DroppedForwards(); d == 0 {
		t.Fatal("DroppedForwards() = 0 after batches over the bound")
	}
}
