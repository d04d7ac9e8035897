package mcpredis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp"
	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/redistest"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
	"github.com/hexmcp/hexmcp/ports/porttest"
)

func client(t *testing.T, srv *redistest.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// Instances on one Redis see one ring: the same signing key, at least 32
// bytes.
func TestStateKeysShared(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := mcpredis.NewStateKeys(client(t, srv), mcpredis.StateKeysOptions{})
	b := mcpredis.NewStateKeys(client(t, srv), mcpredis.StateKeysOptions{})
	ka, err := a.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := b.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ka) != 1 || len(kb) != 1 || !bytes.Equal(ka[0], kb[0]) || len(ka[0]) < ports.MinStateKeyLen {
		t.Fatalf("instance keys differ or are short: %d %d", len(ka), len(kb))
	}
}

// Rotation: a new key is made once the signing key is RotateEvery old; it
// verifies at once and signs CacheFor later; the old one verifies for
// Retain more, then it is retired.
func TestStateKeysRotate(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	opts := mcpredis.StateKeysOptions{RotateEvery: time.Hour, Retain: 20 * time.Minute, CacheFor: time.Second, Clock: clock}
	a := mcpredis.NewStateKeys(client(t, srv), opts)
	b := mcpredis.NewStateKeys(client(t, srv), opts)
	first, err := a.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	second, err := b.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The new key verifies at once and signs once every instance can
	// have read it (CacheFor).
	if len(second) != 2 || !bytes.Equal(second[0], first[0]) || bytes.Equal(second[1], first[0]) {
		t.Fatalf("after RotateEvery: %d keys, want the old one signing and a new one verifying", len(second))
	}
	clock.Advance(time.Second)
	if again, _ := b.Keys(ctx); len(again) != 2 || !bytes.Equal(again[0], second[1]) || !bytes.Equal(again[1], first[0]) {
		t.Fatal("after CacheFor the new key does not sign")
	}
	second, _ = b.Keys(ctx)
	if again, _ := a.Keys(ctx); len(again) != 2 || !bytes.Equal(again[0], second[0]) {
		t.Fatal("the other instance does not sign with the new key")
	}
	clock.Advance(20 * time.Minute)
	third, err := a.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(third) != 1 || !bytes.Equal(third[0], second[0]) {
		t.Fatalf("after Retain: %d keys, want the old one retired", len(third))
	}
	if err := a.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second)
	if k, _ := b.Keys(ctx); len(k) != 2 || bytes.Equal(k[0], third[0]) {
		t.Fatal("Rotate did not make a new signing key")
	}
}

// The defaults as documented: the signing key is replaced at 24 hours, a
// new key signs once it is 5 seconds old (an instance reads the keys again
// every 5 seconds), and the old one verifies for an hour after that.
func TestStateKeysDefaults(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	k := mcpredis.NewStateKeys(client(t, srv), mcpredis.StateKeysOptions{Prefix: "defaults:", Clock: clock})
	keys := func(when string) [][]byte {
		t.Helper()
		got, err := k.Keys(ctx)
		if err != nil {
			t.Fatalf("Keys %s: %v", when, err)
		}
		return got
	}
	first := keys("at first")
	clock.Advance(24*time.Hour - time.Millisecond)
	if got := keys("just before 24 hours"); len(got) != 1 || !bytes.Equal(got[0], first[0]) {
		t.Fatalf("just before 24 hours: %d keys, want the first one alone", len(got))
	}
	// (each Keys below comes past the 5 seconds an instance keeps what it read)
	clock.Advance(5 * time.Second)
	second := keys("past 24 hours")
	if len(second) != 2 || !bytes.Equal(second[0], first[0]) {
		t.Fatalf("past 24 hours: %d keys, want the first one signing and a new one", len(second))
	}
	clock.Advance(5 * time.Second)
	if got := keys("once the new key is 5 s old"); len(got) != 2 || !bytes.Equal(got[0], second[1]) || !bytes.Equal(got[1], first[0]) {
		t.Fatal("5 seconds on, the new key does not sign with the old one verifying")
	}
	clock.Advance(time.Hour)
	if got := keys("an hour later"); len(got) != 1 || bytes.Equal(got[0], first[0]) {
		t.Fatalf("an hour after the new key took over: %d keys, want the old one retired", len(got))
	}
}

// Redis down: the keys read last serve for Retain, then the error says so;
// Redis back: service resumes without a restart.
func TestStateKeysRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	k := mcpredis.NewStateKeys(client(t, srv), mcpredis.StateKeysOptions{Retain: time.Minute, CacheFor: time.Second, Timeout: 300 * time.Millisecond, Clock: clock})
	before, err := k.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	clock.Advance(2 * time.Second)
	if got, err := k.Keys(ctx); err != nil || !bytes.Equal(got[0], before[0]) {
		t.Fatalf("within Retain with Redis down: %v", err)
	}
	clock.Advance(time.Minute)
	if _, err := k.Keys(ctx); !errors.Is(err, ports.ErrNoStateKey) {
		t.Fatalf("past Retain with Redis down: %v, want ErrNoStateKey", err)
	}
	srv.Restart(t)
	if got, err := k.Keys(ctx); err != nil || len(got) != 1 {
		t.Fatalf("Redis back: %v", err)
	}
}

// A multi round-trip request whose state one instance signed completes on
// another: both engines take their keys from the same Redis.
func TestRequestStateAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	twoQuestions := hexmcp.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		first, err := rc.Elicit(ctx, "first", hexmcp.ElicitForm("First?", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)))
		if err != nil {
			return "", err
		}
		second, err := rc.Elicit(ctx, "second", hexmcp.ElicitForm("Second?", json.RawMessage(`{"type":"object","properties":{"b":{"type":"string"}}}`)))
		if err != nil {
			return "", err
		}
		return string(first.Content) + string(second.Content), nil
	}, hexmcp.WithName("two"))
	engine := func() *app.Engine {
		e := testtools.NewEngine(t, app.Options{Logger: slog.New(slog.DiscardHandler), StateKeys: mcpredis.NewStateKeys(client(t, srv), mcpredis.StateKeysOptions{}), Tools: []hexmcp.Tool{twoQuestions}})
		t.Cleanup(func() { e.Close() })
		return e
	}
	a, b := engine(), engine()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	call := func(e *app.Engine, extra string) (string, string) {
		resp := string(testtools.Exchange(t, e, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"two","arguments":{},`+extra+meta+`}}`)[0])
		var m struct {
			Result struct {
				ResultType   string `json:"resultType"`
				RequestState string `json:"requestState"`
			} `json:"result"`
		}
		_ = json.Unmarshal([]byte(resp), &m)
		return m.Result.RequestState, resp
	}
	answerFirst := `"inputResponses":{"first":{"action":"accept","content":{"a":"x"}}},`
	state, resp := call(a, answerFirst)
	if state == "" {
		t.Fatalf("instance A did not ask the second question: %s", resp)
	}
	_, resp = call(b, `"inputResponses":{"second":{"action":"accept","content":{"b":"y"}}},"requestState":"`+state+`",`)
	if !strings.Contains(resp, `"resultType":"complete"`) || !strings.Contains(resp, `{\"a\":\"x\"}{\"b\":\"y\"}`) {
		t.Fatalf("instance B did not complete the request A began: %s", resp)
	}
}

// The Redis key ring passes the key ring contract: two instances on one
// Redis (each with its own client), reading the ring at every call.
func TestStateKeysContract(t *testing.T) {
	srv := redistest.Start(t)
	n := 0
	porttest.TestStateKeys(t, func(t *testing.T) []ports.StateKeys {
		n++
		opts := mcpredis.StateKeysOptions{Prefix: fmt.Sprintf("ring%d:", n), CacheFor: time.Nanosecond}
		return []ports.StateKeys{mcpredis.NewStateKeys(client(t, srv), opts), mcpredis.NewStateKeys(client(t, srv), opts)}
	})
}

// Instances that find the ring due for rotation at the same moment add one
// key between them, and each signs only with a key the other has: state
// signed at one verifies at the other, through every rotation. (Before,
// each could add a key after reading the ring, and cache a ring without
// the other's key: its state was refused there for up to CacheFor.) Each
// instance also runs concurrent callers, which share one read.
func TestStateKeysConcurrentRotation(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	clock := porttest.NewFakeClock(time.Unix(1_700_000_000, 0))
	opts := mcpredis.StateKeysOptions{RotateEvery: time.Hour, Retain: 3 * time.Hour, CacheFor: time.Second, Clock: clock}
	rings := []*mcpredis.StateKeys{mcpredis.NewStateKeys(client(t, srv), opts), mcpredis.NewStateKeys(client(t, srv), opts)}
	rc := client(t, srv)
	has := func(ks [][]byte, k []byte) bool {
		for _, x := range ks {
			if bytes.Equal(x, k) {
				return true
			}
		}
		return false
	}
	for round := range 150 {
		// Every other round the rotation is due; in between, the new key
		// starts signing.
		if round%2 == 0 {
			clock.Advance(time.Hour)
		} else {
			clock.Advance(2 * time.Second)
		}
		const callers = 4
		got := make([][][]byte, len(rings)*callers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() {
				<-start
				ks, err := rings[i%len(rings)].Keys(ctx)
				if err != nil {
					t.Errorf("round %d: Keys: %v", round, err)
				}
				got[i] = ks
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
		for i, ks := range got {
			for j, other := range got {
				if !has(other, ks[0]) {
					t.Fatalf("round %d: caller %d signs with a key caller %d does not verify", round, i, j)
				}
			}
		}
		if n, err := rc.ZCard(ctx, "hexmcp:statekeys").Result(); err != nil || n > 4 {
			t.Fatalf("round %d: the ring holds %d keys (%v): instances rotating at once added one each", round, n, err)
		}
	}
}
