package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/exchange"
	"github.com/hexmcp/hexmcp/internal/testtools"
	"github.com/hexmcp/hexmcp/ports"
)

func TestDecodeHeaderValue(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"us-west1", "us-west1", true},
		{"with space\tand tab", "with space\tand tab", true},
		{"=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界", true},
		{"=?base64?IHBhZGRlZCA=?=", " padded ", true},
		{"=?base64?bGluZTEKbGluZTI=?=", "line1\nline2", true},
		{"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?=", true},
		{"=?base64?SGk?=", "", false},     // unpadded (SEP-2243: invalid padding)
		{"=?base64?SGVsbG8?=", "", false}, // the suite's ServerRejectsInvalidBase64Padding
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{"=?base64?SGl=?=", "", false},      // non-canonical: padding bits set
		{"=?base64?SGk==?=", "", false},     // too much padding
		{"=?base64?SGVs bG8=?=", "", false}, // a space inside
		{"=?base64?not base64!?=", "", false},
		{"=?base64?/w==?=", "", false}, // not UTF-8
		{"=?BASE64?SGk=?=", "=?BASE64?SGk=?=", true},
		{"caf\xc3\xa9", "", false},
		{"a\x00b", "", false},
	}
	for _, c := range cases {
		got, ok := decodeHeaderValue(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("decodeHeaderValue(%q) = %q, %t; want %q, %t", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParseAccept(t *testing.T) {
	cases := map[string]accepts{
		"":                                    {true, true},
		"application/json, text/event-stream": {true, true},
		"application/json":                    {json: true},
		"text/event-stream":                   {sse: true},
		"*/*":                                 {true, true},
		"application/*;q=0.5":                 {json: true},
		"text/*":                              {sse: true},
		"text/html":                           {},
		"application/json;q=0, text/event-stream": {sse: true},
		"application/json;q=0.0":                  {},
		"garbage;;":                               {},
	}
	for in, want := range cases {
		var vs []string
		if in != "" {
			vs = []string{in}
		}
		if got := parseAccept(vs); got != want {
			t.Errorf("parseAccept(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestSameValue(t *testing.T) {
	cases := []struct {
		h    string
		v    any
		want bool
	}{
		{"x", "x", true},
		{"x", "y", false},
		{"true", true, true},
		{"TRUE", true, false},
		{"false", false, true},
		{"42", json.Number("42"), true},
		{"42.0", json.Number("42"), false}, // the header must be canonical
		{"4.2e1", json.Number("42"), false},
		{"0x2a", json.Number("42"), false},
		{"42", json.Number("42.0"), true}, // the body is read as a number
		{"42", json.Number("4.2e1"), true},
		{"-7", json.Number("-7"), true},
		{"9007199254740993", json.Number("9007199254740992"), false}, // exact, not float
		{"42", "42", true},
		{"{}", map[string]any{}, false},
	}
	for _, c := range cases {
		if got := sameValue(c.h, c.v); got != c.want {
			t.Errorf("sameValue(%q, %#v) = %t", c.h, c.v, got)
		}
	}
}

func TestStatusFor(t *testing.T) {
	cases := []struct {
		ans       exchange.Answer
		stateless bool
		want      int
	}{
		{exchange.Answer{}, true, 200},
		{exchange.Answer{IsError: true, Code: -32601}, true, 404},
		{exchange.Answer{IsError: true, Code: -32601}, false, 200},
		{exchange.Answer{IsError: true, Code: -32022}, false, 400},
		{exchange.Answer{IsError: true, Code: -32021}, true, 400},
		{exchange.Answer{IsError: true, Code: -32021}, false, 200},
		{exchange.Answer{IsError: true, Code: -32020}, true, 400},
		// -32602 is a 400 when a required per-request _meta field is
		// missing (the engine says so), and an answer (200) otherwise
		// (an unknown tool).
		{exchange.Answer{IsError: true, Code: -32602}, true, 200},
		{exchange.Answer{IsError: true, Code: -32602, Malformed: true}, true, 400},
		{exchange.Answer{IsError: true, Code: -32602}, false, 200},
		{exchange.Answer{IsError: true, Code: -32603}, true, 200},
	}
	for _, c := range cases {
		if got := statusFor(c.stateless, c.ans); got != c.want {
			t.Errorf("statusFor(%t, %+v) = %d, want %d", c.stateless, c.ans, got, c.want)
		}
	}
}

func TestAppendEvent(t *testing.T) {
	got := string(appendEvent(nil, event{id: "7", data: []byte("a\nb\r\nc")}))
	if want := "id: 7\nevent: message\ndata: a\ndata: b\ndata: c\n\n"; got != want {
		t.Fatalf("%q", got)
	}
	if got := string(appendEvent(nil, event{id: "8"})); got != "id: 8\ndata:\n\n" {
		t.Fatalf("priming %q", got)
	}
}

func TestBearerToken(t *testing.T) {
	for in, want := range map[string]string{"Bearer abc": "abc", "bearer abc": "abc", "Bearer  abc ": "abc", "Bearer": "", "Basic abc": "", "Bearer a b": ""} {
		got, ok := bearerToken([]string{in})
		if got != want || ok != (want != "") {
			t.Errorf("bearerToken(%q) = %q, %t", in, got, ok)
		}
	}
	if _, ok := bearerToken(http.Header{"Authorization": {"Bearer a", "Bearer b"}}.Values("Authorization")); ok {
		t.Error("two credentials accepted")
	}
}

func TestLogBudget(t *testing.T) {
	b := newLogBudget(2)
	t0 := time.Now()
	take := func(at time.Duration, wantSuppressed int64, wantOK bool) {
		t.Helper()
		if s, ok := b.take(t0.Add(at)); s != wantSuppressed || ok != wantOK {
			t.Fatalf("at %v: %d, %v; want %d, %v", at, s, ok, wantSuppressed, wantOK)
		}
	}
	// Two at once, then none until the bucket refills: the next record
	// written counts those left out, once.
	take(0, 0, true)
	take(0, 0, true)
	for range 5 {
		take(100*time.Millisecond, 0, false)
	}
	take(600*time.Millisecond, 5, true)
	take(600*time.Millisecond, 0, false)
	take(1100*time.Millisecond, 1, true)
	take(10*time.Second, 0, true)
}

func TestRedact(t *testing.T) {
	for _, c := range []struct{ s, token, want string }{
		{"unauthenticated: no such token \"abc-secret\"", "abc-secret", "unauthenticated: no such token \"[token]\""},
		{"bad signature sigsigsigsig", "headhead.bodybody.sigsigsigsig", "bad signature [token]"},
		{"kid \"ab\" unknown", "ab.cd.ef", "kid \"ab\" unknown"}, // segments under 8 bytes stay
		{"unauthenticated", "", "unauthenticated"},
	} {
		if got := redact(c.s, c.token); got != c.want {
			t.Errorf("redact(%q, %q) = %q, want %q", c.s, c.token, got, c.want)
		}
	}
	long := strings.Repeat("é", maxLoggedReason) // 2 bytes each
	got := redact("x"+long, "")
	if len(got) > maxLoggedReason+len("…") || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Fatalf("cut to %d bytes, valid %v: %q…", len(got), utf8.ValidString(got), got[:20])
	}
}

func TestIsCanonicalInteger(t *testing.T) {
	for _, s := range []string{"0", "7", "-7", "42", "9007199254740991", "-9007199254740991"} {
		if !isCanonicalInteger(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{
		"", "-", "-0", "00", "042", "+42", "42.0", "4.2e1", "42e0", "0x2a", "0X2A", "0b101010", "0o52", "84/2",
		" 42", "42 ", "4_2", "١٢", "9007199254740992", "-9007199254740992", "99999999999999999",
		"1e999999", strings.Repeat("1", 1000),
	} {
		if isCanonicalInteger(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestCanonicalInteger(t *testing.T) {
	ints := map[string]string{
		"42": "42", "-7": "-7", "0": "0", "-0": "0", "0.0": "0", "-0.0e5": "0", "0e-99999999999999999999": "0",
		"42.0": "42", "42.000": "42", "4.2e1": "42", "4.2E+1": "42", "420e-1": "42", "0.42e2": "42",
		"1e15": "1000000000000000", "10e-1": "1", "-1.0": "-1",
		"9007199254740991": "9007199254740991", "9.007199254740991e15": "9007199254740991",
	}
	for in, want := range ints {
		if got, ok := canonicalInteger(in); !ok || got != want {
			t.Errorf("canonicalInteger(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"42.5", "0.1", "1e-1", "1e16", "12345678901234567", "1e999999", "1e99999999999999999999", "1e-99999999999999999999",
		"", "-", "01", "1.", ".5", "1e", "1e+", "0x2a", "42 ", "+1",
	} {
		if got, ok := canonicalInteger(in); ok {
			t.Errorf("canonicalInteger(%q) = %q, want no integer", in, got)
		}
	}
	// Every safe integer round-trips, however the body writes it.
	for _, n := range []int64{0, 1, -1, 42, 1 << 40, -(1 << 52), maxSafeInteger, -maxSafeInteger} {
		s := strconv.FormatInt(n, 10)
		for _, form := range []string{s, s + ".0", s + "e0", s + ".000e+0"} {
			if !sameInteger(s, json.Number(form)) {
				t.Errorf("%s does not match header %s", form, s)
			}
		}
	}
}

// A stream that handed out a priming event id and then carries only its
// final response: written to the connection that opened it, nothing of it
// stays in the store; otherwise the response is kept for the client to
// resume from the priming event.
func TestPrimedOneEventStream(t *testing.T) {
	e := testtools.NewEngine(t, app.Options{Info: testtools.Info})
	defer e.Close()
	final := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	for _, tc := range []struct {
		name string
		conn func(w http.ResponseWriter) sink
		kept bool
	}{
		{"delivered", func(w http.ResponseWriter) sink { return &directConn{w: w, rc: http.NewResponseController(w)} }, false},
		{"connection lost", func(w http.ResponseWriter) sink {
			return &directConn{w: w, rc: http.NewResponseController(w), lost: true}
		}, true},
		{"resumed connection", func(http.ResponseWriter) sink { return newQueuedConn(nil, defaultMaxStreamQueueBytes) }, true},
		{"no connection", func(http.ResponseWriter) sink { return nil }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := memory.NewEventStore(memory.EventStoreOptions{})
			h := NewHandler(e, Options{EventStore: events})
			rec := httptest.NewRecorder()
			st := &stream{h: h, id: "sid/p"}
			if c := tc.conn(rec); c != nil {
				st.conn = c
			}
			st.mu.Lock()
			prime := st.storeLocked(nil)
			st.deliverLocked(prime)
			st.mu.Unlock()
			st.finish(final)
			var got []string
			_, err := events.Replay(context.Background(), prime.id, func(e ports.Event) error {
				got = append(got, string(e.Data))
				return nil
			})
			if tc.kept {
				if err != nil || len(got) != 1 || got[0] != string(final) {
					t.Fatalf("replay after the priming event = %q, %v", got, err)
				}
				return
			}
			if events.Len() != 0 || events.Bytes() != 0 {
				t.Fatalf("the store keeps %d streams, %d bytes", events.Len(), events.Bytes())
			}
			if body := rec.Body.String(); !strings.Contains(body, "id: "+prime.id+"\n") || !strings.Contains(body, "data: "+string(final)+"\n") {
				t.Fatalf("written %q", body)
			}
		})
	}
}

// empty fails unless the budget counts nothing: the whole total is free
// and no client is remembered.
func (b *bodyBudget) empty(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	n := len(b.clients)
	b.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d clients still counted: %v", n, b.clients)
	}
	if b.sem != nil {
		if !b.sem.TryAcquire(b.size) {
			t.Fatal("the total is not free")
		}
		b.sem.Release(b.size)
	}
}

// Every path of a hold gives back exactly what it counted, in the total
// and in its client's share: a leak would lock a client out for good.
func TestBodyBudgetAccounting(t *testing.T) {
	ctx := context.Background()
	b := newBodyBudget(100, 40)
	if b.share != 40 || b.max != 40 {
		t.Fatalf("share %d, max %d", b.share, b.max)
	}

	// Read, decoded, served.
	h := b.hold("a")
	if err := h.grow(ctx, 30, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := h.grow(ctx, 30, time.Time{}); err != nil { // counted up to max: 40
		t.Fatal(err)
	}
	if h.n != 40 {
		t.Fatalf("holds %d, want the most a body counts (40)", h.n)
	}
	if err := b.hold("a").grow(ctx, 1, time.Time{}); !errors.Is(err, errClientShare) {
		t.Fatalf("past the share: %v", err)
	}
	bh := b.hold("b")
	if err := bh.grow(ctx, 40, time.Time{}); err != nil { // another client
		t.Fatal(err)
	}
	if !h.keepForCall(25) {
		t.Fatal("the call was refused")
	}
	other := b.hold("a")
	if err := other.grow(ctx, 30, time.Time{}); err != nil { // reading and calls count apart
		t.Fatal(err)
	}
	if other.keepForCall(20) { // 25 + 20 > 40
		t.Fatal("a call past the client's share was kept")
	}
	other.release()
	exact := b.hold("a")
	if err := exact.grow(ctx, 15, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if !exact.keepForCall(15) { // 25 + 15 = 40: the share, not past it
		t.Fatal("a call that fills the client's share exactly was refused")
	}
	exact.release()
	h.release()
	h.release() // twice: nothing more
	b.mu.Lock()
	if c := b.clients["a"]; c != (clientBytes{}) {
		t.Fatalf("client a still counts %+v", c)
	}
	b.mu.Unlock()

	// A hold taken along by a call that outlives its request.
	h = b.hold("a")
	if err := h.grow(ctx, 10, time.Time{}); err != nil {
		t.Fatal(err)
	}
	h.keepForCall(10)
	own := h.take()
	h.release() // holds nothing now
	b.mu.Lock()
	if c := b.clients["a"]; c.calls != 10 {
		t.Fatalf("the call's bytes were given back by the request: %+v", c)
	}
	b.mu.Unlock()
	own.release()

	// The client b, still reading, is the only one left; its release
	// empties the budget.
	b.mu.Lock()
	if c := b.clients["b"]; c.reading != 40 {
		t.Fatalf("client b counts %+v", c)
	}
	b.mu.Unlock()
	bh.release()
	b.empty(t)
}

// A body that finds no room in the total waits, then gives up: errBusy,
// or errBodyTimeout when its deadline is what ended the wait; either way
// nothing stays counted.
func TestBodyBudgetWaitGivesUp(t *testing.T) {
	b := newBodyBudget(10, 10)
	full := b.hold("a")
	if err := full.grow(context.Background(), 10, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.hold("b").grow(ctx, 1, time.Time{}); !errors.Is(err, errBusy) {
		t.Fatalf("with the request gone: %v", err)
	}
	if err := b.hold("b").grow(context.Background(), 1, time.Now().Add(-time.Second)); !errors.Is(err, errBodyTimeout) {
		t.Fatalf("past the deadline: %v", err)
	}
	full.release()
	b.empty(t)
}
