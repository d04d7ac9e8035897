package mcpotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/hexmcptest"
	mcpotel "github.com/hexmcp/hexmcp/otel"
)

// sessionPoints collects the data points of mcp.server.session.duration
// (none when nothing was recorded), checking the instrument's unit and
// buckets.
func sessionPoints(t *testing.T, reader *sdkmetric.ManualReader) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	dps, _ := histogramPoints(t, reader, "mcp.server.session.duration")
	return dps
}

// histogramPoints collects the data points of the histogram name, checking
// its scope, unit (seconds) and buckets ([mcpotel.DurationBuckets]); ok is
// false when nothing was recorded in it.
func histogramPoints(t *testing.T, reader *sdkmetric.ManualReader, name string) (dps []metricdata.HistogramDataPoint[float64], ok bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			if sm.Scope.Name != mcpotel.ScopeName || m.Unit != "s" {
				t.Errorf("scope %q unit %q, want %q and s", sm.Scope.Name, m.Unit, mcpotel.ScopeName)
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("%s is a %T, want a float64 histogram", name, m.Data)
			}
			for _, dp := range h.DataPoints {
				if !slices.Equal(dp.Bounds, mcpotel.DurationBuckets) {
					t.Errorf("bucket bounds %v, want %v", dp.Bounds, mcpotel.DurationBuckets)
				}
			}
			return h.DataPoints, true
		}
	}
	return nil, false
}

func totalCount(dps []metricdata.HistogramDataPoint[float64]) uint64 {
	var n uint64
	for _, dp := range dps {
		n += dp.Count
	}
	return n
}

// One Telemetry gives both the middleware and OnSessionEnd: a session
// over an in-memory connection that closes, and a Streamable HTTP session
// its client DELETEs, each get one mcp.server.session.duration value with
// the negotiated revision and the transport; an open session and a
// stateless client get none.
func TestSessionDuration(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tel := mcpotel.New(mcpotel.Options{TracerProvider: tp, MeterProvider: mp})
	echo := hexmcp.Func(func(_ context.Context, in echoIn) (string, error) { return in.S, nil }, hexmcp.WithName("echo"))
	srv := hexmcptest.NewServer(t, hexmcp.Options{
		Tools:        []hexmcp.Tool{echo},
		Middleware:   []app.Middleware{tel.Middleware()},
		OnSessionEnd: tel.OnSessionEnd,
	})

	for _, tc := range []struct {
		transport hexmcptest.Transport
		rev       domain.Revision
		attrs     map[attribute.Key]string
	}{
		{hexmcptest.InMemory, "2025-06-18", map[attribute.Key]string{mcpotel.KeyProtocolVersion: "2025-06-18", mcpotel.KeyNetTransport: "pipe"}},
		{hexmcptest.StreamableHTTP, "2025-11-25", map[attribute.Key]string{mcpotel.KeyProtocolVersion: "2025-11-25", mcpotel.KeyNetTransport: "tcp", mcpotel.KeyNetProtocol: "http"}},
	} {
		before := totalCount(sessionPoints(t, reader))
		c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Transport: tc.transport, Revision: tc.rev})
		if res, err := c.CallTool(t.Context(), "echo", map[string]any{"s": "x"}); err != nil || res.IsError {
			t.Fatalf("%s: echo: %+v %v", tc.transport, res, err)
		}
		if n := totalCount(sessionPoints(t, reader)); n != before {
			t.Errorf("%s: %d session values while the session is open, want %d", tc.transport, n, before)
		}
		if err := c.Close(); err != nil { // in memory: the connection closes; HTTP: DELETE
			t.Fatal(err)
		}
		dps := sessionPoints(t, reader)
		if n := totalCount(dps); n != before+1 {
			t.Errorf("%s: %d session values after the session ended, want %d", tc.transport, n, before+1)
		}
		dp, ok := point(dps, tc.attrs)
		if !ok || dp.Count != 1 || dp.Sum < 0 || dp.Sum > 60 {
			t.Errorf("%s: point with %v: %v, count %d, sum %v s; have %v", tc.transport, tc.attrs, ok, dp.Count, dp.Sum, dps)
		}
	}

	for _, rev := range hexmcptest.Revisions(srv) {
		if srv.Engine().Policy().Features(rev).Era != domain.EraStateless {
			continue
		}
		c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Transport: hexmcptest.StreamableHTTP, Revision: rev})
		if _, err := c.CallTool(t.Context(), "echo", map[string]any{"s": "x"}); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		if n := totalCount(sessionPoints(t, reader)); n != 2 {
			t.Errorf("%s: %d session values after a stateless client, want 2", rev, n)
		}
	}
}

// OnSessionEnd on its own: a session with an id (Streamable HTTP) whose
// initialize another instance saw has no transport information and is
// still recorded as HTTP; one without a start records nothing; one that
// ends before it starts (two clocks) records 0. A zero Telemetry records
// nothing and its middleware passes requests on.
func TestOnSessionEndUnit(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel := mcpotel.New(mcpotel.Options{MeterProvider: mp})
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

	tel.OnSessionEnd(hexmcp.SessionEnd{ID: "s1", Revision: "2025-11-25", Started: now.Add(-90 * time.Second), Ended: now, Reason: hexmcp.SessionRemoved})
	tel.OnSessionEnd(hexmcp.SessionEnd{Revision: "2025-11-25", Ended: now, Reason: hexmcp.SessionClosed})
	tel.OnSessionEnd(hexmcp.SessionEnd{Revision: "2025-03-26", Transport: hexmcp.TransportInfo{RemoteAddr: "192.0.2.1:4000"}, Started: now.Add(time.Second), Ended: now, Reason: hexmcp.SessionClosed})
	dps := sessionPoints(t, reader)
	if dp, ok := point(dps, map[attribute.Key]string{mcpotel.KeyProtocolVersion: "2025-11-25", mcpotel.KeyNetTransport: "tcp", mcpotel.KeyNetProtocol: "http"}); !ok || dp.Count != 1 || dp.Sum != 90 {
		t.Errorf("restored HTTP session: %v count %d sum %v, want 1 value of 90 s; have %v", ok, dp.Count, dp.Sum, dps)
	}
	if dp, ok := point(dps, map[attribute.Key]string{mcpotel.KeyProtocolVersion: "2025-03-26", mcpotel.KeyNetTransport: "tcp"}); !ok || dp.Count != 1 || dp.Sum != 0 {
		t.Errorf("WebSocket session ending before its start: %v count %d sum %v, want 1 value of 0 s; have %v", ok, dp.Count, dp.Sum, dps)
	}
	if n := totalCount(dps); n != 2 {
		t.Errorf("%d values, want 2 (none for the session without a start)", n)
	}
	for _, dp := range dps {
		if dp.Attributes.HasValue(mcpotel.KeyErrorType) || dp.Attributes.HasValue(mcpotel.KeySessionID) {
			t.Errorf("a session value has error.type or mcp.session.id: %v", dp.Attributes.ToSlice())
		}
	}

	var zero mcpotel.Telemetry
	zero.OnSessionEnd(hexmcp.SessionEnd{Started: now.Add(-time.Second), Ended: now})
	res, err := zero.Middleware()(func(context.Context, *app.Request) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	})(context.Background(), toolCall("echo", ""))
	if err != nil || string(res) != `{"ok":true}` {
		t.Errorf("zero Telemetry's middleware: %s %v", res, err)
	}
}

// Through the engine, a request's _meta trace context (its names escaped)
// and a notification's are the spans' parents.
func TestMetaThroughEngine(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	echo := hexmcp.Func(func(_ context.Context, in echoIn) (string, error) { return in.S, nil }, hexmcp.WithName("echo"))
	srv := hexmcptest.NewServer(t, hexmcp.Options{
		Tools:      []hexmcp.Tool{echo},
		Middleware: []app.Middleware{mcpotel.New(mcpotel.Options{TracerProvider: tp}).Middleware()},
	})
	client, conn := memory.NewPipe()
	done := make(chan error, 1)
	go func() { done <- srv.Engine().ServeConn(context.Background(), conn) }()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	roundTrip := func(msg string, answered bool) {
		t.Helper()
		if err := client.WriteMessage(ctx, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if answered {
			if _, err := client.ReadMessage(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, true)
	ntp, ntid, nparent := traceparent(t)
	roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{"\u005fmeta":{"trace\u0070arent":%q}}}`, ntp), false)
	rtp, rtid, rparent := traceparent(t)
	// The reader serves the notification before it reads this call.
	roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"s":"x"},"\u005fmeta":{"progressToken":1,"trace\u0070arent":%q,"tracestate":"rojo=1"}}}`, rtp), true)
	client.Close()
	<-done

	found := map[string]bool{}
	for _, s := range spans.Ended() {
		switch s.Name() {
		case "notifications/initialized":
			found[s.Name()] = true
			if s.SpanContext().TraceID() != ntid || s.Parent().SpanID() != nparent {
				t.Errorf("notification: trace %v parent %v, want %v %v", s.SpanContext().TraceID(), s.Parent().SpanID(), ntid, nparent)
			}
		case "tools/call echo":
			found[s.Name()] = true
			if s.SpanContext().TraceID() != rtid || s.Parent().SpanID() != rparent || s.Parent().TraceState().Get("rojo") != "1" {
				t.Errorf("request: trace %v parent %v state %q, want %v %v rojo=1", s.SpanContext().TraceID(), s.Parent().SpanID(), s.Parent().TraceState(), rtid, rparent)
			}
		}
	}
	if len(found) != 2 {
		t.Errorf("spans found: %v, want the notification's and the call's", found)
	}
}
