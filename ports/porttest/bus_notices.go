package porttest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// collector records the notices a subscription gets.
type collector struct {
	mu    sync.Mutex
	got   []ports.Notice
	calls atomic.Int64
}

func (c *collector) fn(n ports.Notice) {
	c.calls.Add(1)
	c.mu.Lock()
	c.got = append(c.got, n)
	c.mu.Unlock()
}

func (c *collector) notices() []ports.Notice {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ports.Notice(nil), c.got...)
}

// wait polls until ok holds for the notices got, failing t at waitFor.
func (c *collector) wait(t *testing.T, what string, ok func([]ports.Notice) bool) []ports.Notice {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		got := c.notices()
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; got %d notices: %s", what, waitFor, len(got), noticeSummary(got))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitN waits for at least n notices.
func (c *collector) waitN(t *testing.T, what string, n int) []ports.Notice {
	t.Helper()
	return c.wait(t, what, func(got []ports.Notice) bool { return len(got) >= n })
}

// waitID waits for the notice id.
func (c *collector) waitID(t *testing.T, what, id string) []ports.Notice {
	t.Helper()
	return c.wait(t, what, func(got []ports.Notice) bool { return hasID(got, id) })
}

func hasID(got []ports.Notice, id string) bool {
	for _, n := range got {
		if n.ID == id {
			return true
		}
	}
	return false
}

func noticeSummary(got []ports.Notice) string {
	var b strings.Builder
	for i, n := range got {
		if i == 20 {
			fmt.Fprintf(&b, " ... (%d more)", len(got)-i)
			break
		}
		fmt.Fprintf(&b, " %s", describeNotice(n))
	}
	return b.String()
}

func describeNotice(n ports.Notice) string {
	data := "nil"
	if n.Data != nil {
		data = fmt.Sprintf("%d bytes", len(n.Data))
	}
	return fmt.Sprintf("{Kind:%q ID:%q Origin:%q URI:%q Session:%q Data:%s}", n.Kind, n.ID, n.Origin, n.URI, n.Session, data)
}

// reaches publishes marks on b until c gets one, which it does once its
// queue has room (a mark that finds it full may be dropped), and returns
// what c got; it fails t at waitFor.
func reaches(t *testing.T, b ports.NotificationBus, c *collector, name, what string) []ports.Notice {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for k := 0; ; k++ {
		id := fmt.Sprintf("mark-%s-%d", name, k)
		publish(t, b, ports.Notice{Kind: ports.NoticeToolsChanged, ID: id, Origin: "mark"})
		for range 10 {
			if got := c.notices(); hasID(got, id) {
				return got
			}
			time.Sleep(5 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no new notice within %v", what, waitFor)
		}
	}
}

func publish(t *testing.T, b ports.NotificationBus, n ports.Notice) {
	t.Helper()
	if err := b.Publish(ctx, n); err != nil {
		t.Fatalf("Publish %s: %v", describeNotice(n), err)
	}
}

func notice(origin string, i int) ports.Notice {
	return ports.Notice{Kind: ports.NoticeToolsChanged, ID: origin + "-" + strconv.Itoa(i), Origin: origin}
}

// seq returns the number i of a notice "<origin>-<i>" of origin, or -1.
func seq(n ports.Notice, origin string) int {
	rest, ok := strings.CutPrefix(n.ID, origin+"-")
	if !ok || n.Origin != origin {
		return -1
	}
	i, err := strconv.Atoi(rest)
	if err != nil {
		return -1
	}
	return i
}

// inOrder checks that the notices of origin in got are numbered
// increasingly; complete asks for every one of 0..total-1.
func inOrder(t *testing.T, who string, got []ports.Notice, origin string, total int, complete bool) {
	t.Helper()
	last, count := -1, 0
	for _, n := range got {
		i := seq(n, origin)
		if i < 0 {
			continue
		}
		if i <= last {
			t.Fatalf("%s: notice %s-%d after %s-%d: the order of one publisher was not kept (or a notice came twice)", who, origin, i, origin, last)
		}
		if complete && i != last+1 {
			t.Fatalf("%s: notice %s-%d after %s-%d: %d lost", who, origin, i, origin, last, i-last-1)
		}
		last = i
		count++
	}
	if complete && count != total {
		t.Fatalf("%s: %d notices of %s, want %d", who, count, origin, total)
	}
}

// bigData returns n bytes of every value, not valid UTF-8 nor JSON.
func bigData(n, seed int) []byte {
	b := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// variety returns notices that exercise every field: empty and nil Data,
// binary Data, text with quotes, newlines and non-ASCII letters, an
// unknown kind, and a large Data.
func variety() []ports.Notice {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	return []ports.Notice{
		{Kind: ports.NoticeToolsChanged, ID: "v-0", Origin: "inst-a"},
		{Kind: ports.NoticeResourcesChanged, ID: "v-1", Origin: "inst-a"},
		{Kind: ports.NoticePromptsChanged, ID: "v-2", Origin: "inst-b"},
		{Kind: ports.NoticeVisibilityChanged, ID: "v-3", Origin: "inst-b"},
		{Kind: ports.NoticeResourceUpdated, ID: "v-4", Origin: "inst-a", URI: "file:///tmp/r\u00e9sum\u00e9 \"q\"\n\x00.txt"},
		{Kind: ports.NoticeClientResponse, ID: "v-5", Origin: "inst-b", Session: "sess-\u4e16\u754c",
			Data: []byte(`{"jsonrpc":"2.0","id":7,"result":{"action":"accept","content":{"name":"\u00e9"}}}`)},
		{Kind: ports.NoticeClientResponse, ID: "v-6", Origin: "inst-a", Session: "s", Data: []byte{}},
		{Kind: ports.NoticeClientResponse, ID: "v-7", Origin: "inst-a", Session: "s", Data: all},
		{Kind: "future_kind", ID: "v-8", Origin: strings.Repeat("o", 300), URI: strings.Repeat("u", 1000), Session: strings.Repeat("s", 500), Data: []byte("not json")},
		{Kind: ports.NoticeClientResponse, ID: "v-9", Origin: "inst-b", Session: "s", Data: bigData(1<<20-4<<10, 9)},
		{ID: "v-10"},
	}
}

// twoOrMore returns the buses newBus made, failing t if they are fewer
// than two.
func twoOrMore[B any](t *testing.T, newBus func(t *testing.T) []B) []B {
	t.Helper()
	bs := newBus(t)
	if len(bs) < 2 {
		t.Fatalf("newBus returned %d buses, want at least 2", len(bs))
	}
	return bs
}

func cloneNotices(ns []ports.Notice) []ports.Notice {
	out := make([]ports.Notice, len(ns))
	for i, n := range ns {
		n.Data = bytes.Clone(n.Data)
		out[i] = n
	}
	return out
}
