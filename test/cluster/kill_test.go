package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	mcpredis "github.com/hexmcp/hexmcp/adapters/redis"
	"github.com/hexmcp/hexmcp/ports"
)

// Scenarios where an instance dies (SIGKILL: as a crash, no shutdown, its
// connections cut, its calls gone with it) while a client's stream is open
// at it, and the client resumes elsewhere with Last-Event-ID from what the
// instances share in Redis; and one notification reaching many sessions
// listening through a proxy. A killed instance is taken out of the proxies
// (Cluster.Kill): the in-process proxy stops choosing it, haproxy's health
// checks (clusterOptions.healthChecks) mark it down.
//
// What the tests compare against is what Redis holds: the tests read the
// shared event store themselves (storedAfter), with the same
// mcpredis.EventStore the instances use.
//
// The showcase has no way to trigger notifications/resources/updated, so
// the notifications counted are notifications/tools/list_changed
// (toggleGreeting), all alike: each is told apart by its event id. The
// ids of one stream strictly increase ("<epoch>.<generation>.<seq>"), none
// repeats, and their number is the number of changes raised.

const (
	// killBefore is how many list changes the GET stream carries, each
	// awaited, before its instance is killed.
	killBefore = 3
	// killRacing is how many are raised just before the kill while the
	// instance holding the stream is frozen (SIGSTOP): stored in Redis by
	// the others, never delivered by it.
	killRacing = 2
	// killWhileDown is how many are raised while no GET stream is open
	// anywhere: they wait in Redis.
	killWhileDown = 5
	// killAfter is how many are raised once the stream is resumed, each
	// awaited on it.
	killAfter = 3
	// killGrace bounds how long a resumed stream is watched for anything
	// beyond what Redis held (then the test closes it).
	killGrace = time.Second
	// killTestTimeout bounds one kill scenario.
	killTestTimeout = 2 * time.Minute
)

const listChangedMethod = "notifications/tools/list_changed"

// clusterEvents returns an event store on the cluster's Redis, the one
// the instances share (mcpredis's defaults, as wiring.Redis uses), to read
// what they stored.
func clusterEvents(tb testing.TB, c *Cluster) *mcpredis.EventStore {
	tb.Helper()
	if c.Redis == nil {
		tb.Fatal("the cluster has no Redis")
	}
	rdb := redis.NewClient(&redis.Options{Addr: c.Redis.Addr})
	es := mcpredis.NewEventStore(rdb, mcpredis.EventStoreOptions{})
	tb.Cleanup(func() {
		_ = es.Close()
		_ = rdb.Close()
	})
	return es
}

// storedAfter returns the stream of the event id and the events Redis
// keeps after it, priming events (no data) left out, as a replay sends
// them.
func storedAfter(tb testing.TB, es *mcpredis.EventStore, id string) (string, []ports.Event) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var evs []ports.Event
	stream, err := es.Replay(ctx, id, func(e ports.Event) error {
		if len(e.Data) > 0 {
			evs = append(evs, ports.Event{ID: e.ID, StreamID: e.StreamID, Data: bytes.Clone(e.Data)})
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("replaying the stored events after %s: %v", id, err)
	}
	return stream, evs
}

// eventSeq splits an event id of mcpredis ("<epoch>.<generation>.<seq>")
// into its stream part and its sequence number.
func eventSeq(id string) (string, uint64, bool) {
	i := strings.LastIndexByte(id, '.')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(id[i+1:], 10, 64)
	return id[:i], n, err == nil
}

// changeLog checks the list changes one client receives on its session's
// stream, over every connection it opens: each event is a
// notifications/tools/list_changed with an id of the same stream, later
// than every id before.
type changeLog struct {
	// last is the id of the last event received (the priming one
	// included): the Last-Event-ID to resume from.
	last string
	// ids are the ids of the list changes received, in order.
	ids []string
}

// add records ev, a list change, or says why it is not the next one.
func (l *changeLog) add(ev sseEvent) error {
	var m rpc
	if err := json.Unmarshal(ev.Data, &m); err != nil || m.Method != listChangedMethod {
		return fmt.Errorf("event %q: %s, want %s", ev.ID, ev.Data, listChangedMethod)
	}
	stream, seq, ok := eventSeq(ev.ID)
	if !ok {
		return fmt.Errorf("event id %q is not <epoch>.<generation>.<seq>", ev.ID)
	}
	if l.last != "" {
		prevStream, prev, _ := eventSeq(l.last)
		if stream != prevStream || seq <= prev {
			return fmt.Errorf("event %q after %q: not a later event of the same stream (received %q)", ev.ID, l.last, l.ids)
		}
	}
	l.last = ev.ID
	l.ids = append(l.ids, ev.ID)
	return nil
}

// toggler calls toggleGreeting and keeps, per instance, whether it has the
// tool greet (the tool's answer says), to check tools/list against.
type toggler struct {
	n     int
	greet map[string]bool
}

// toggle calls toggleGreeting in sess, served by the instance named at
// (pinned) or, through a proxy (at ""), the one the proxy names, which
// must not be dead. It returns the instance that served it.
func (g *toggler) toggle(t *testing.T, ctx context.Context, sess *session, at, dead string) string {
	t.Helper()
	g.n++
	r, err := sess.call(ctx, "toggle-"+strconv.Itoa(g.n), "toggleGreeting", map[string]any{})
	if err != nil || r.Status != http.StatusOK {
		t.Fatalf("toggleGreeting #%d: %v %v", g.n, r, err)
	}
	if at == "" {
		at = r.Instance
	}
	if at == "" || at == dead {
		t.Fatalf("toggleGreeting #%d was served by %q (dead: %q)", g.n, at, dead)
	}
	switch {
	case bytes.Contains(r.Message, []byte("Added greet")):
		g.greet[at] = true
	case bytes.Contains(r.Message, []byte("Removed greet")):
		g.greet[at] = false
	default:
		t.Fatalf("toggleGreeting #%d at %s answered %s", g.n, at, r.Message)
	}
	return at
}

// checkTools lists the tools through the proxy at sess a few times (every
// live instance in turn): each answer comes from a live instance, has
// toggleGreeting, and has greet exactly when that instance has it.
func (g *toggler) checkTools(t *testing.T, ctx context.Context, sess *session, dead string, live int) {
	t.Helper()
	for k := range 2 * live {
		r, err := sess.request(ctx, "list-"+strconv.Itoa(k), "tools/list", nil)
		if err != nil || r.Status != http.StatusOK || r.Instance == "" || r.Instance == dead {
			t.Fatalf("tools/list through the proxy after %s was killed: %v %v", dead, r, err)
		}
		var m struct {
			Result struct {
				Tools []struct{ Name string }
			}
		}
		if err := json.Unmarshal(r.Message, &m); err != nil {
			t.Fatalf("tools/list at %s: %v: %s", r.Instance, err, r.Message)
		}
		has := map[string]bool{}
		for _, tool := range m.Result.Tools {
			has[tool.Name] = true
		}
		if !has["toggleGreeting"] || has["greet"] != g.greet[r.Instance] {
			t.Fatalf("tools/list at %s: toggleGreeting %v, greet %v; want true, %v", r.Instance, has["toggleGreeting"], has["greet"], g.greet[r.Instance])
		}
	}
}

// TestClusterKillGetStream: a session's GET stream is open at one instance,
// which carries the list changes raised at the two others; the instance is
// killed mid-stream, with changes stored in Redis that it had not
// delivered (raised while it was frozen, just before the kill); more changes are raised while no GET stream is
// open anywhere (the instances that hold the session store them in
// Redis); the client resumes with Last-Event-ID at another instance, gets
// every change it missed, in order, once each, and then the live ones.
// Every change raised reaches the client exactly once in all (by id and by
// count, against what Redis holds).
//
// Three variants, each on its own cluster (each kills an instance):
// direct (the GET at i0 and the resumption at i1, pinned; the changes at
// i1 and i2 pinned), and through each proxy: the GET through the proxy,
// which names the instance it chose, and that instance is killed; the
// changes before the kill pinned to the two others, the later ones and the
// resumption through the proxy, which must send nothing to the dead
// instance (haproxy with health checks; see Cluster.Kill). After the kill
// tools/list through the proxy is answered by live instances only, each
// with its own tools (greet where toggleGreeting left it).
func TestClusterKillGetStream(t *testing.T) {
	t.Run("direct", func(t *testing.T) {
		c := startCluster(t, clusterOptions{noHAProxy: true})
		killGetStream(t, c, nil)
	})
	t.Run("go", func(t *testing.T) {
		c := startCluster(t, clusterOptions{noHAProxy: true})
		killGetStream(t, c, c.Go)
	})
	t.Run("haproxy", func(t *testing.T) {
		if _, ok := haproxyBinary(); !ok {
			skipOrFail(t, ci(), "haproxy is not installed (apt-get install haproxy); CI runs this test")
		}
		c := startCluster(t, clusterOptions{healthChecks: true})
		killGetStream(t, c, c.HAProxy)
	})
}

// killGetStream runs TestClusterKillGetStream's scenario, through p (nil:
// pinned, the in-process proxy only for the session's setup and the
// tools/list checks).
func killGetStream(t *testing.T, c *Cluster, p proxy) {
	ctx, cancel := context.WithTimeout(context.Background(), killTestTimeout)
	defer cancel()
	es := clusterEvents(t, c)
	var front proxy = c.Go
	if p != nil {
		front = p
	}
	cl := newClient(front.URL(), 4)
	defer cl.close()
	sess, _, err := cl.initialize(ctx, `{}`)
	if err != nil {
		t.Fatal(err)
	}

	// The GET stream, at i0 or where the proxy sends it.
	var holder *Instance
	var st *stream
	if p == nil {
		holder = c.Instances[0]
		st, err = sess.at(holder.URL).open(ctx, http.MethodGet, nil, nil)
	} else {
		st, err = sess.open(ctx, http.MethodGet, nil, nil)
	}
	if err != nil {
		t.Fatalf("the GET stream: %v", err)
	}
	defer st.close()
	if p != nil {
		holder = c.instance(t, st.Instance)
	}
	var others []*Instance
	for _, in := range c.Instances {
		if in != holder {
			others = append(others, in)
		}
	}
	prime, err := st.next(eventWait)
	if err != nil || prime.ID == "" || len(prime.Data) != 0 {
		t.Fatalf("the GET stream at %s began with %+v %v, want a priming event (an id, no data)", holder.Name, prime, err)
	}
	log := &changeLog{last: prime.ID}
	tg := &toggler{greet: map[string]bool{}}
	raised := 0
	// raiseAt raises a change at in, pinned, in the session itself (so
	// that in holds it and stores what it is told).
	raiseAt := func(in *Instance) {
		tg.toggle(t, ctx, sess.at(in.URL), in.Name, holder.Name)
		raised++
	}
	// raiseLater raises a change after the kill: through the proxy, or
	// pinned to i1.
	raiseLater := func(k int) {
		if p == nil {
			raiseAt(others[k%len(others)])
			return
		}
		tg.toggle(t, ctx, sess, "", holder.Name)
		raised++
	}
	// receive reads the next event of s, which must be the next change.
	receive := func(s *stream, where string) {
		t.Helper()
		ev, err := s.next(eventWait)
		if err == nil {
			err = log.add(ev)
		}
		if err != nil {
			t.Fatalf("the stream %s, change %d: %v", where, len(log.ids)+1, err)
		}
	}

	for k := range killBefore {
		raiseAt(others[k%len(others)])
		receive(st, "at "+holder.Name)
	}
	holder.Freeze(t)
	for k := range killRacing {
		raiseAt(others[k%len(others)])
	}
	c.Kill(t, holder)
	// What the client got before its connection was cut counts.
	for {
		ev, err := st.next(eventWait)
		if errors.Is(err, errStreamEnded) {
			break
		}
		if err == nil {
			err = log.add(ev)
		}
		if err != nil {
			t.Fatalf("the GET stream at %s, killed: %v", holder.Name, err)
		}
	}
	got := len(log.ids)
	if got != killBefore {
		t.Fatalf("the GET stream at %s carried %d changes, want the %d raised before it was frozen", holder.Name, got, killBefore)
	}

	for k := range killWhileDown {
		raiseLater(k)
	}
	tg.checkTools(t, ctx, sess.at(front.URL()), holder.Name, len(others))
	missed := raised - got
	streamID, stored := storedAfter(t, es, log.last)
	if streamID != sess.ID+"/_" || len(stored) != missed {
		t.Fatalf("Redis keeps %d events of %q after %s, want the %d changes missed, of the session's stream %q", len(stored), streamID, log.last, missed, sess.ID+"/_")
	}

	// The resumption, at i1 or through the proxy.
	var resumed *stream
	if p == nil {
		resumed, err = sess.at(others[0].URL).open(ctx, http.MethodGet, nil, map[string]string{"Last-Event-ID": log.last})
	} else {
		resumed, err = sess.open(ctx, http.MethodGet, nil, map[string]string{"Last-Event-ID": log.last})
	}
	if err != nil {
		t.Fatalf("resuming the GET stream after %s: %v", log.last, err)
	}
	defer resumed.close()
	where := "resumed at " + others[0].Name
	if p != nil {
		where = "resumed at " + resumed.Instance
		if resumed.Instance == "" || resumed.Instance == holder.Name {
			t.Fatalf("the proxy sent the resumption to %q (dead: %s)", resumed.Instance, holder.Name)
		}
	}
	for i, want := range stored {
		receive(resumed, where)
		if log.last != want.ID {
			t.Fatalf("the stream %s replayed %s as change %d of those missed, Redis has %s", where, log.last, i+1, want.ID)
		}
	}
	for k := range killAfter {
		raiseLater(k + 1)
		receive(resumed, where)
	}

	// Once each in all: what Redis holds of the stream after its priming
	// event is exactly what the client received.
	_, all := storedAfter(t, es, prime.ID)
	var allIDs []string
	for _, e := range all {
		allIDs = append(allIDs, e.ID)
	}
	if raised != killBefore+killRacing+killWhileDown+killAfter || len(log.ids) != raised || strings.Join(allIDs, " ") != strings.Join(log.ids, " ") {
		t.Fatalf("raised %d changes; received %d: %q; Redis keeps %q", raised, len(log.ids), log.ids, allIDs)
	}
	// Nothing more on the resumed stream (a change repeated would be
	// queued behind the last one by now, or in Redis above).
	select {
	case ev, ok := <-resumed.events:
		if ok {
			t.Fatalf("the stream %s carried more than the changes raised: %q %s", where, ev.ID, ev.Data)
		}
	default:
	}
}

// TestClusterKillPostStream: a 2025-11-25 tools/call (countDown, 10 steps
// of 10 ms, with a progressToken) on a POST stream at i0; after 2 progress
// notifications read, and 2 more stored in Redis (not read yet), i0 is
// killed, and the call dies with it. The client
// resumes the POST stream with Last-Event-ID at i1: it gets exactly the
// events Redis holds after the last one it read (the progress i0 stored
// before it died, none repeated), and no response: nobody runs the call
// any more.
//
// What i1 does then: it follows the stream from Redis until its response
// (a stream begun elsewhere and not answered yet), which never comes;
// after a minute without an event it ends the stream with an SSE retry
// field, and once the stream's events expire a resumption gets 400 (see
// README.md, "After a kill"). The test watches killGrace for more events
// or the end of the stream, sees neither, and closes it.
//
// If the call was answered before the kill (a machine slow enough for the
// 80 ms of the remaining steps to pass between the second progress and
// SIGKILL), the resumed stream must end after the stored response.
func TestClusterKillPostStream(t *testing.T) {
	c := startCluster(t, clusterOptions{noHAProxy: true})
	ctx, cancel := context.WithTimeout(context.Background(), killTestTimeout)
	defer cancel()
	es := clusterEvents(t, c)
	i0, i1 := c.Instances[0], c.Instances[1]
	sess, st := startCountDown(t, ctx, i0)
	type progressMsg struct {
		rpc
		Params struct {
			ProgressToken string  `json:"progressToken"`
			Progress      float64 `json:"progress"`
		} `json:"params"`
	}
	// progressOf returns the progress step ev carries (0: none).
	progressOf := func(ev sseEvent) int {
		var m progressMsg
		if json.Unmarshal(ev.Data, &m) != nil || m.Method != "notifications/progress" || m.Params.ProgressToken != "p" {
			return 0
		}
		return int(m.Params.Progress)
	}
	lastID, read := "", 0
	for read < 2 {
		ev, err := st.next(eventWait)
		if err != nil {
			t.Fatalf("countDown's stream at %s: %v", i0.Name, err)
		}
		if ev.ID == "" {
			t.Fatalf("countDown's stream at %s: event without id %s", i0.Name, ev.Data)
		}
		lastID = ev.ID
		if len(ev.Data) == 0 {
			continue // the priming event
		}
		if n := progressOf(ev); n != read+1 {
			t.Fatalf("countDown's stream at %s: %s, want progress %d", i0.Name, ev.Data, read+1)
		}
		read++
	}
	// Kill i0 once it stored events the client has not read: 2 more
	// steps, 20 ms (the call still has 60 ms to go).
	for {
		_, stored := storedAfter(t, es, lastID)
		if len(stored) >= 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("countDown at %s stored %d events after progress %d", i0.Name, len(stored), read)
		}
		time.Sleep(time.Millisecond)
	}
	c.Kill(t, i0)

	streamID, stored := storedAfter(t, es, lastID)
	if !strings.HasPrefix(streamID, sess.ID+"/") || streamID == sess.ID+"/_" {
		t.Fatalf("the events after %s are of the stream %q, want a POST stream of the session %s", lastID, streamID, sess.ID)
	}
	answered := false
	for i, e := range stored {
		var m rpc
		_ = json.Unmarshal(e.Data, &m)
		switch {
		case m.IsResponse() && i == len(stored)-1:
			answered = true
		case progressOf(sseEvent{Data: e.Data}) != read+1+i:
			t.Fatalf("Redis keeps %s as event %d after progress %d, want progress %d", e.Data, i+1, read, read+1+i)
		}
	}
	t.Logf("i0 stored %d events after progress %d before it died (the response among them: %v)", len(stored), read, answered)

	resumed, err := sess.at(i1.URL).open(ctx, http.MethodGet, nil, map[string]string{"Last-Event-ID": lastID})
	if err != nil {
		t.Fatalf("resuming countDown's stream at %s after %s: %v", i1.Name, lastID, err)
	}
	defer resumed.close()
	for i, want := range stored {
		ev, err := resumed.next(eventWait)
		if err != nil {
			t.Fatalf("the stream resumed at %s, event %d of %d stored: %v", i1.Name, i+1, len(stored), err)
		}
		if ev.ID != want.ID || !bytes.Equal(ev.Data, want.Data) {
			t.Fatalf("the stream resumed at %s sent %q %s as event %d, Redis keeps %q %s", i1.Name, ev.ID, ev.Data, i+1, want.ID, want.Data)
		}
	}
	ev, err := resumed.next(killGrace)
	switch {
	case answered && !errors.Is(err, errStreamEnded):
		t.Fatalf("the stream resumed at %s, answered, did not end: %+v %v", i1.Name, ev, err)
	case answered:
	case err == nil:
		t.Fatalf("the stream resumed at %s sent %q %s beyond what Redis kept", i1.Name, ev.ID, ev.Data)
	case errors.Is(err, errStreamEnded):
		t.Fatalf("the stream resumed at %s ended (%v): today it is held open; update the test and README.md if that changed on purpose", i1.Name, err)
	}
	if _, now := storedAfter(t, es, lastID); len(now) != len(stored) {
		t.Fatalf("Redis keeps %d events after %s now, %d just after the kill: someone appended to a dead call's stream", len(now), lastID, len(stored))
	}
}

// Sizes of TestClusterManySessionsListChanged.
const (
	// manyListeners is how many sessions listen on their GET stream.
	manyListeners = 200
	// manyWorkers bounds the sessions being set up (or ended) at once.
	manyWorkers = 16
	// manyHosts is how many client addresses (127.0.0.2, ...) the sessions
	// come from: 25 sessions each, under the per-client session bound
	// (100; all 200 from one address would pass it).
	manyHosts = 8
	// manyWait bounds the wait for every stream to get a notification.
	manyWait = 30 * time.Second
	// manyGrace is how long the streams are left, after the last
	// expected notification, for one more to show.
	manyGrace = 500 * time.Millisecond
)

// listener is a session listening on its GET stream; a goroutine reads
// the stream and counts the list changes.
type listener struct {
	sess  *session
	st    *stream
	prime string // the id of the stream's priming event

	mu    sync.Mutex
	ids   []string // of the list changes received
	other []string // anything else received (a failure)
}

// TestClusterManySessionsListChanged: 200 sessions (from 8 client
// addresses) each with its GET stream open through the proxy, spread over
// the instances by round robin; one toggleGreeting through the proxy:
// every stream gets exactly one notifications/tools/list_changed, wherever
// it is held; a second toggleGreeting (the marker): every stream gets
// exactly its second, and nothing more within manyGrace; and Redis holds
// exactly those two events on each session's stream. The instances run
// with -trusted-proxy: the sessions count against the client addresses
// the proxies forward (X-Forwarded-For), not against the proxy's.
func TestClusterManySessionsListChanged(t *testing.T) {
	c := startCluster(t, clusterOptions{trustedProxy: true})
	es := clusterEvents(t, c)
	forEachProxy(t, c, func(t *testing.T, p proxy) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		clients := make([]*client, manyHosts)
		for h := range clients {
			clients[h] = newClientFrom(p.URL(), net.IPv4(127, 0, 0, byte(2+h)), manyWorkers)
			defer clients[h].close()
		}
		arrived := make(chan int, 4*manyListeners)
		ls := make([]*listener, manyListeners)
		held := map[string]int{}
		var mu sync.Mutex
		forEachBounded(t, manyListeners, func(i int) error {
			sess, _, err := clients[i%manyHosts].initialize(ctx, `{}`)
			if err != nil {
				return err
			}
			st, err := sess.open(ctx, http.MethodGet, nil, nil)
			if err != nil {
				return fmt.Errorf("the GET stream: %w", err)
			}
			l := &listener{sess: sess, st: st}
			mu.Lock()
			ls[i] = l
			held[st.Instance]++
			mu.Unlock()
			ev, err := st.next(eventWait)
			if err != nil || ev.ID == "" || len(ev.Data) != 0 {
				return fmt.Errorf("the GET stream at %s began with %+v %v, want a priming event", st.Instance, ev, err)
			}
			l.prime = ev.ID
			go func() {
				for ev := range st.events {
					var m rpc
					l.mu.Lock()
					if json.Unmarshal(ev.Data, &m) == nil && m.Method == listChangedMethod {
						l.ids = append(l.ids, ev.ID)
					} else {
						l.other = append(l.other, ev.ID+" "+string(ev.Data))
					}
					l.mu.Unlock()
					select {
					case arrived <- i:
					default: // the waiter has wakes enough queued
					}
				}
			}()
			return nil
		})
		defer func() {
			for _, l := range ls {
				if l != nil {
					l.st.close()
				}
			}
			forEachBounded(t, manyListeners, func(i int) error {
				if ls[i] == nil {
					return nil
				}
				r, err := ls[i].sess.end(context.Background())
				if err == nil && r.Status != http.StatusNoContent {
					err = fmt.Errorf("DELETE: %v", r)
				}
				return err
			})
		}()
		if t.Failed() {
			t.FailNow()
		}
		t.Logf("%d GET streams held by %v", manyListeners, held)
		for _, in := range c.Instances {
			if held[in.Name] == 0 {
				t.Fatalf("no GET stream at %s: %v", in.Name, held)
			}
		}

		ctl, _, err := newClient(p.URL(), 2).initialize(ctx, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		defer ctl.c.close()
		tg := &toggler{greet: map[string]bool{}}
		for want := 1; want <= 2; want++ {
			at := tg.toggle(t, ctx, ctl, "", "")
			// Every stream gets its want-th list change.
			deadline := time.After(manyWait)
			for {
				waiting := 0
				for _, l := range ls {
					l.mu.Lock()
					if len(l.ids) < want {
						waiting++
					}
					l.mu.Unlock()
				}
				if waiting == 0 {
					break
				}
				select {
				case <-arrived:
				case <-deadline:
					t.Fatalf("toggleGreeting #%d at %s: %d of the %d GET streams got no list change #%d within %v", want, at, waiting, manyListeners, want, manyWait)
				}
			}
			t.Logf("toggleGreeting #%d at %s reached the %d streams", want, at, manyListeners)
			if want == 2 {
				time.Sleep(manyGrace)
			}
			// None got more (before the marker, or within the grace).
			for i, l := range ls {
				l.mu.Lock()
				n, other := len(l.ids), l.other
				l.mu.Unlock()
				if n != want || len(other) > 0 {
					t.Fatalf("GET stream %d (at %s) got %d list changes after toggleGreeting #%d, want %d; and %q", i, l.st.Instance, n, want, want, other)
				}
			}
		}
		for i, l := range ls {
			_, stored := storedAfter(t, es, l.prime)
			if len(stored) != 2 || stored[0].ID != l.ids[0] || stored[1].ID != l.ids[1] {
				t.Fatalf("GET stream %d (at %s) received %q; Redis keeps %d events after its priming event: %+v", i, l.st.Instance, l.ids, len(stored), stored)
			}
		}
	})
}

// forEachBounded runs f(0), ..., f(n-1) by manyWorkers goroutines and
// fails t with the errors.
func forEachBounded(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range manyWorkers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					errs <- fmt.Errorf("#%d: %w", i, err)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	k := 0
	for err := range errs {
		if k++; k <= 5 {
			t.Error(err)
		}
	}
	if k > 5 {
		t.Errorf("... and %d more", k-5)
	}
}

// TestClusterKillOrphanSession: a session that only the killed instance
// held (initialized there, its GET stream there) resumes at another
// instance after list changes were raised while no live instance held it:
// it should get them. It does not today (pending featureOrphanNotices):
// an instance writes a notification to the sessions it holds, and none
// held this one, so the changes never reached its stream in Redis.
func TestClusterKillOrphanSession(t *testing.T) {
	awaiting(t, featureOrphanNotices)
	c := startCluster(t, clusterOptions{noHAProxy: true})
	ctx, cancel := context.WithTimeout(context.Background(), killTestTimeout)
	defer cancel()
	es := clusterEvents(t, c)
	i0, i1 := c.Instances[0], c.Instances[1]
	cl := newClient(i0.URL, 4)
	defer cl.close()
	orphan, _, err := cl.initialize(ctx, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	st, err := orphan.open(ctx, http.MethodGet, nil, nil)
	if err != nil {
		t.Fatalf("the GET stream at %s: %v", i0.Name, err)
	}
	defer st.close()
	prime, err := st.next(eventWait)
	if err != nil || prime.ID == "" || len(prime.Data) != 0 {
		t.Fatalf("the GET stream at %s began with %+v %v, want a priming event", i0.Name, prime, err)
	}
	log := &changeLog{last: prime.ID}
	// Another session raises the changes, at i1.
	raiser, _, err := cl.at(i1.URL).initialize(ctx, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	tg := &toggler{greet: map[string]bool{}}
	tg.toggle(t, ctx, raiser, i1.Name, "")
	if ev, err := st.next(eventWait); err != nil || log.add(ev) != nil {
		t.Fatalf("the GET stream at %s: %+v %v, want the change raised at %s", i0.Name, ev, err, i1.Name)
	}
	c.Kill(t, i0)
	for range killWhileDown {
		tg.toggle(t, ctx, raiser, i1.Name, "")
	}
	_, stored := storedAfter(t, es, log.last)
	resumed, err := orphan.at(i1.URL).open(ctx, http.MethodGet, nil, map[string]string{"Last-Event-ID": log.last})
	if err != nil {
		t.Fatalf("resuming at %s after %s: %v", i1.Name, log.last, err)
	}
	defer resumed.close()
	for range len(stored) {
		if ev, err := resumed.next(eventWait); err != nil || log.add(ev) != nil {
			t.Fatalf("the stream resumed at %s: %+v %v", i1.Name, ev, err)
		}
	}
	if len(stored) != killWhileDown {
		t.Fatalf("%d list changes were raised at %s while %s, the only instance holding the session, was dead; Redis keeps %d of them for it", killWhileDown, i1.Name, i0.Name, len(stored))
	}
}
