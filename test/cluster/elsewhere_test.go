package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// Scenarios where a session's exchange begins at one instance and goes on
// at another, pinned to given instances with Instance.URL (a proxy would
// choose by itself). Each runs twice: "same-instance", both ends at i0, a
// control that passes with or without sharing (it checks the scenario),
// and "other-instance", i0 then i1, which needs the feature shared (and
// skips while it is pending: pending_test.go).

// eventWait bounds the wait for one expected event of a stream.
const eventWait = 10 * time.Second

// elsewhere runs scenario for the two pairs of instances.
func elsewhere(t *testing.T, feature string, scenario func(t *testing.T, first, then *Instance)) {
	t.Helper()
	c := startCluster(t, clusterOptions{noHAProxy: true})
	t.Run("same-instance", func(t *testing.T) { scenario(t, c.Instances[0], c.Instances[0]) })
	t.Run("other-instance", func(t *testing.T) {
		awaiting(t, feature)
		scenario(t, c.Instances[0], c.Instances[1])
	})
}

// The elicitation bookTable sends, and the answer that books (as in
// test/e2e).
const (
	elicitCaps   = `{"elicitation":{}}`
	bookedAnswer = "Booked a table for Ada at 19:30, on the terrace, in a quiet corner."
)

var elicitAnswer = map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "seating": "terrace", "quiet": true}}

// startBooking opens a session at first (declaring elicitation), calls
// bookTable there with id "book" on a POST stream and reads it up to the
// server's elicitation/create request, which it returns.
func startBooking(t *testing.T, ctx context.Context, first *Instance) (*session, *stream, rpc) {
	t.Helper()
	cl := newClient(first.URL, 2)
	t.Cleanup(cl.close)
	sess, _, err := cl.initialize(ctx, elicitCaps)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sess.open(ctx, http.MethodPost, request("book", "tools/call", map[string]any{"name": "bookTable", "arguments": map[string]any{"time": "19:30"}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.close)
	seen, err := st.until(eventWait, func(m rpc) bool { return m.Method == "elicitation/create" })
	if err != nil {
		t.Fatalf("no elicitation/create on bookTable's stream at %s: %v (events %q)", first.Name, err, seen)
	}
	var ask rpc
	_ = json.Unmarshal(seen[len(seen)-1].Data, &ask)
	return sess, st, ask
}

// countDownSteps is how many steps the countDown calls of startCountDown make
// (the tool's maximum).
const countDownSteps = 10

// startCountDown opens a session at first and calls countDown there (id
// "count", countDownSteps steps, progress token "p") on a POST stream,
// which it returns unread; the client and the stream are closed when t
// ends.
func startCountDown(t *testing.T, ctx context.Context, first *Instance) (*session, *stream) {
	t.Helper()
	cl := newClient(first.URL, 2)
	t.Cleanup(cl.close)
	sess, _, err := cl.initialize(ctx, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sess.open(ctx, http.MethodPost, request("count", "tools/call", map[string]any{
		"name": "countDown", "arguments": map[string]any{"steps": countDownSteps}, "_meta": map[string]any{"progressToken": "p"},
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.close)
	return sess, st
}

// TestClusterClientResponseElsewhere: the server asks the client
// (elicitation/create on the POST stream of a 2025-11-25 tools/call at one
// instance); the client's answer, posted to another instance, must reach
// the call, which then books.
func TestClusterClientResponseElsewhere(t *testing.T) {
	elsewhere(t, featureClientResponses, func(t *testing.T, first, then *Instance) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sess, st, ask := startBooking(t, ctx, first)
		r, err := sess.at(then.URL).respond(ctx, ask.ID, elicitAnswer)
		if err != nil || r.Status != http.StatusAccepted {
			t.Fatalf("the answer to elicitation/create at %s: %v %v, want 202", then.Name, r, err)
		}
		seen, err := st.until(eventWait, rpc.IsResponse)
		if err != nil {
			t.Fatalf("bookTable at %s got no result after the answer at %s: %v (events %q)", first.Name, then.Name, err, seen)
		}
		var res struct {
			Content []struct{ Text string }
			IsError bool
		}
		var m rpc
		_ = json.Unmarshal(seen[len(seen)-1].Data, &m)
		if string(m.ID) != `"book"` || json.Unmarshal(m.Result, &res) != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != bookedAnswer {
			t.Fatalf("bookTable answered %s, want %q", seen[len(seen)-1].Data, bookedAnswer)
		}
	})
}

// TestClusterCancelElsewhere: a 2025-11-25 tools/call waiting at one
// instance (bookTable, for the client's answer) is cancelled by
// notifications/cancelled posted to another: its stream must end without
// a result.
func TestClusterCancelElsewhere(t *testing.T) {
	elsewhere(t, featureCancelElsewhere, func(t *testing.T, first, then *Instance) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sess, st, _ := startBooking(t, ctx, first)
		r, err := sess.at(then.URL).notify(ctx, "notifications/cancelled", map[string]any{"requestId": "book", "reason": "the test cancels"})
		if err != nil || r.Status != http.StatusAccepted {
			t.Fatalf("notifications/cancelled at %s: %v %v, want 202", then.Name, r, err)
		}
		seen, err := st.until(eventWait, rpc.IsResponse)
		switch {
		case err == nil:
			t.Fatalf("bookTable at %s, cancelled at %s, answered %s, want no response", first.Name, then.Name, seen[len(seen)-1].Data)
		case !errors.Is(err, errStreamEnded):
			t.Fatalf("bookTable at %s, cancelled at %s, went on: %v", first.Name, then.Name, err)
		}
	})
}

// TestClusterResumeElsewhere: a 2025-11-25 tools/call's POST stream
// (countDown, reporting progress) is cut at one instance and resumed with
// Last-Event-ID at another: the client gets every progress step once and
// the result.
func TestClusterResumeElsewhere(t *testing.T) {
	elsewhere(t, featureSharedEvents, func(t *testing.T, first, then *Instance) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sess, st := startCountDown(t, ctx, first)
		progress := map[int]int{}
		lastID := ""
		note := func(ev sseEvent) *rpc {
			if ev.ID != "" {
				lastID = ev.ID
			}
			var m struct {
				rpc
				Params struct {
					Progress float64 `json:"progress"`
				} `json:"params"`
			}
			if json.Unmarshal(ev.Data, &m) != nil {
				return nil
			}
			if m.Method == "notifications/progress" {
				progress[int(m.Params.Progress)]++
			}
			return &m.rpc
		}
		// Two progress steps, then the connection drops.
		for len(progress) < 2 {
			ev, err := st.next(eventWait)
			if err != nil {
				t.Fatalf("countDown's stream at %s: %v (progress %v)", first.Name, err, progress)
			}
			if m := note(ev); m != nil && m.IsResponse() {
				t.Fatalf("countDown answered before it was cut: %s", ev.Data)
			}
		}
		st.close()
		if lastID == "" {
			t.Fatal("countDown's events carry no id to resume from")
		}
		resumed, err := sess.at(then.URL).open(ctx, http.MethodGet, nil, map[string]string{"Last-Event-ID": lastID})
		if err != nil {
			t.Fatalf("resuming at %s after event %s: %v", then.Name, lastID, err)
		}
		defer resumed.close()
		for {
			ev, err := resumed.next(eventWait)
			if err != nil {
				t.Fatalf("the stream resumed at %s: %v (progress %v)", then.Name, err, progress)
			}
			m := note(ev)
			if m == nil || !m.IsResponse() {
				continue
			}
			if string(m.ID) != `"count"` || !bytes.Contains(m.Result, []byte(`"Counted down `+strconv.Itoa(countDownSteps)+` steps"`)) {
				t.Fatalf("the resumed stream answered %s", ev.Data)
			}
			break
		}
		for i := 1; i <= countDownSteps; i++ {
			if progress[i] != 1 {
				t.Errorf("progress %d received %d times, want once (all: %v)", i, progress[i], progress)
			}
		}
	})
}

// TestClusterListChangedElsewhere: a session listens on its GET stream at
// one instance; another session calls toggleGreeting (the showcase's tool
// with -redis) at another, which adds the tool greet there: the listening
// session must be told, by notifications/tools/list_changed on its stream.
func TestClusterListChangedElsewhere(t *testing.T) {
	elsewhere(t, featureNotifications, func(t *testing.T, first, then *Instance) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cl := newClient(then.URL, 2)
		defer cl.close()
		listener, _, err := cl.initialize(ctx, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		st, err := listener.open(ctx, http.MethodGet, nil, nil)
		if err != nil {
			t.Fatalf("the GET stream at %s: %v", then.Name, err)
		}
		defer st.close()
		caller, _, err := cl.at(first.URL).initialize(ctx, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		r, err := caller.call(ctx, "toggle", "toggleGreeting", map[string]any{})
		// Added, or removed (the control toggled it before): a change.
		if err != nil || r.Status != http.StatusOK || !bytes.Contains(r.Message, []byte(" greet ")) {
			t.Fatalf("toggleGreeting at %s: %v %v", first.Name, r, err)
		}
		if seen, err := st.until(eventWait, func(m rpc) bool { return m.Method == "notifications/tools/list_changed" }); err != nil {
			t.Fatalf("a session listening at %s was not told of the tool list change at %s: %v (events %q)", then.Name, first.Name, err, seen)
		}
	})
}
