package mcpotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	mnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tnoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	mcpotel "github.com/hexmcp/hexmcp/otel"
)

// unit is the middleware around a handler of the test's own, without an
// engine: for what a transport cannot easily show.
type unit struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	rig    *rig
	mw     app.Middleware
}

func newUnit(t *testing.T, opts mcpotel.Options) *unit {
	t.Helper()
	u := &unit{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	u.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(u.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(u.reader))
	t.Cleanup(func() {
		_ = u.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts.TracerProvider, opts.MeterProvider = u.tp, mp
	u.mw = mcpotel.Middleware(opts)
	u.rig = &rig{spans: u.spans, reader: u.reader}
	return u
}

func (u *unit) serve(ctx context.Context, req *app.Request, next app.MethodHandler) (json.RawMessage, error) {
	if next == nil {
		next = func(context.Context, *app.Request) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }
	}
	return u.mw(next)(ctx, req)
}

func (u *unit) last(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := u.spans.Ended()
	if len(ended) == 0 {
		t.Fatal("no span ended")
	}
	return ended[len(ended)-1]
}

// named returns the last ended span called name.
func (u *unit) named(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := u.spans.Ended()
	for i := len(ended) - 1; i >= 0; i-- {
		if ended[i].Name() == name {
			return ended[i]
		}
	}
	t.Fatalf("no span %q ended", name)
	return nil
}

// toolCall is the Request of a tools/call of name, its _meta (JSON, or
// "" for none) in its params and its trace context in Trace, as the
// engine gives them.
func toolCall(name, meta string) *app.Request {
	params := fmt.Sprintf(`{"name":%q,"arguments":{}}`, name)
	var tc app.TraceContext
	if meta != "" {
		params = fmt.Sprintf(`{"name":%q,"arguments":{"_meta":"not this one"},"_meta":%s}`, name, meta)
		var m struct{ Traceparent, Tracestate, Baggage string }
		if err := json.Unmarshal([]byte(meta), &m); err != nil {
			panic(err)
		}
		tc = app.TraceContext{TraceParent: m.Traceparent, TraceState: m.Tracestate, Baggage: m.Baggage}
	}
	return &app.Request{Method: "tools/call", ID: json.RawMessage(`"req-7"`), Params: json.RawMessage(params), Name: name,
		Revision: "2025-11-25", Era: domain.EraHandshake, Trace: tc}
}

// With a _meta trace context and a current span (as an HTTP server span
// of otelhttp would be), the _meta context is the parent and the current
// span a link, as the convention asks; the handler gets the span and the
// _meta baggage.
func TestParentFromMetaLinksTheCurrentSpan(t *testing.T) {
	u := newUnit(t, mcpotel.Options{})
	ctx, ambient := u.tp.Tracer("http").Start(context.Background(), "POST /mcp")
	tp, tid, parent := traceparent(t)
	var inHandler trace.SpanContext
	var user string
	_, err := u.serve(ctx, toolCall("echo", fmt.Sprintf(`{"traceparent":%q,"baggage":"user=alice"}`, tp)), func(ctx context.Context, _ *app.Request) (json.RawMessage, error) {
		inHandler = trace.SpanContextFromContext(ctx)
		user = baggage.FromContext(ctx).Member("user").Value()
		return json.RawMessage(`{"content":[]}`), nil
	})
	ambient.End()
	if err != nil {
		t.Fatal(err)
	}
	s := u.rig.spanOf(t, tid)
	if s.Parent().SpanID() != parent {
		t.Errorf("parent %v, want %v", s.Parent().SpanID(), parent)
	}
	if l := s.Links(); len(l) != 1 || l[0].SpanContext.SpanID() != ambient.SpanContext().SpanID() {
		t.Errorf("links %v, want one to the current span %v", l, ambient.SpanContext().SpanID())
	}
	if inHandler.SpanID() != s.SpanContext().SpanID() || user != "alice" {
		t.Errorf("the handler saw span %v and baggage user=%q, want %v and alice", inHandler.SpanID(), user, s.SpanContext().SpanID())
	}
	wantAttrs(t, attrs(s.Attributes()), map[attribute.Key]string{mcpotel.KeyRequestID: "req-7"})
}

// Without a _meta trace context the current span is the parent; without
// one either, the HTTP headers' traceparent.
func TestParentWithoutMeta(t *testing.T) {
	u := newUnit(t, mcpotel.Options{})
	ctx, ambient := u.tp.Tracer("http").Start(context.Background(), "POST /mcp")
	if _, err := u.serve(ctx, toolCall("echo", ""), nil); err != nil {
		t.Fatal(err)
	}
	ambient.End()
	if s := u.named(t, "tools/call echo"); s.Parent().SpanID() != ambient.SpanContext().SpanID() || len(s.Links()) != 0 {
		t.Errorf("parent %v links %v, want the current span %v and no link", s.Parent().SpanID(), s.Links(), ambient.SpanContext().SpanID())
	}

	tp, tid, parent := traceparent(t)
	req := toolCall("echo", "")
	req.Transport.Header = http.Header{"Traceparent": {tp}}
	if _, err := u.serve(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if s := u.rig.spanOf(t, tid); s.Parent().SpanID() != parent || len(s.Links()) != 0 {
		t.Errorf("parent %v links %v, want the header's %v and no link", s.Parent().SpanID(), s.Links(), parent)
	}
}

// A notification method the SDK does not know is "_OTHER" in the span
// name and the metric (a client chooses it), and kept in the span's
// attribute; a known one is itself.
func TestUnknownNotification(t *testing.T) {
	u := newUnit(t, mcpotel.Options{})
	for _, m := range []string{"notifications/x-made-up-1", "notifications/cancelled"} {
		if _, err := u.serve(context.Background(), &app.Request{Method: m}, nil); err != nil {
			t.Fatal(err)
		}
		s := u.last(t)
		want := m
		if m != "notifications/cancelled" {
			want = mcpotel.Other
		}
		if s.Name() != want {
			t.Errorf("span name %q, want %q", s.Name(), want)
		}
		wantAttrs(t, attrs(s.Attributes()), map[attribute.Key]string{mcpotel.KeyMethodName: m, mcpotel.KeyRequestID: "", mcpotel.KeyNetTransport: "pipe"})
	}
	dps := u.rig.durations(t)
	for _, m := range []string{mcpotel.Other, "notifications/cancelled"} {
		if _, ok := point(dps, map[attribute.Key]string{mcpotel.KeyMethodName: m, mcpotel.KeyNetTransport: "pipe"}); !ok {
			t.Errorf("no data point for method %q", m)
		}
	}
}

// An error that is no *domain.ProtocolError is answered -32603 by the
// engine, and recorded so; one of a cancelled request (the engine's
// answer to a cancelled call is none) as "cancelled".
func TestOtherErrors(t *testing.T) {
	u := newUnit(t, mcpotel.Options{})
	failing := func(context.Context, *app.Request) (json.RawMessage, error) { return nil, errors.New("disk on fire") }
	if _, err := u.serve(context.Background(), toolCall("echo", ""), failing); err == nil {
		t.Fatal("the error was lost")
	}
	s := u.last(t)
	if s.Status().Code != codes.Error || s.Status().Description != "Internal error" {
		t.Errorf("status %+v, want Error \"Internal error\"", s.Status())
	}
	wantAttrs(t, attrs(s.Attributes()), map[attribute.Key]string{mcpotel.KeyErrorType: "-32603", mcpotel.KeyStatusCode: "-32603"})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = u.serve(ctx, toolCall("echo", ""), failing)
	wantAttrs(t, attrs(u.last(t).Attributes()), map[attribute.Key]string{mcpotel.KeyErrorType: mcpotel.ErrorTypeCancelled, mcpotel.KeyStatusCode: ""})
}

// At most MaxNames distinct tool names reach the metrics; the others are
// "_OTHER" there, and themselves in span names.
func TestMaxNames(t *testing.T) {
	u := newUnit(t, mcpotel.Options{MaxNames: 2})
	for _, name := range []string{"a", "b", "c", "a", "d"} {
		if _, err := u.serve(context.Background(), toolCall(name, ""), nil); err != nil {
			t.Fatal(err)
		}
		if s := u.last(t); s.Name() != "tools/call "+name {
			t.Errorf("span name %q", s.Name())
		}
	}
	dps := u.rig.durations(t)
	for name, count := range map[string]uint64{"a": 2, "b": 1, mcpotel.Other: 2} {
		dp, ok := point(dps, map[attribute.Key]string{mcpotel.KeyMethodName: "tools/call", mcpotel.KeyOperationName: "execute_tool",
			mcpotel.KeyProtocolVersion: "2025-11-25", mcpotel.KeyNetTransport: "pipe", mcpotel.KeyToolName: name})
		if !ok || dp.Count != count {
			t.Errorf("tool %q: %v count %d, want %d", name, ok, dp.Count, count)
		}
	}
	if len(dps) != 3 {
		t.Errorf("%d data points, want 3", len(dps))
	}
}

// A result is a tool error only by its own top-level isError true,
// however the name is escaped; one inside content is not.
func TestToolErrorDetection(t *testing.T) {
	u := newUnit(t, mcpotel.Options{})
	for res, want := range map[string]string{
		`{"content":[{"type":"text","text":"x"}],"isError":true}`:                      mcpotel.ErrorTypeToolError,
		`{"content":[],"is\u0045rror":true}`:                                           mcpotel.ErrorTypeToolError,
		`{"content":[{"type":"text","text":"{\"isError\":true}","isError":true}]}`:     "",
		`{"content":[],"isError":false}`:                                               "",
		`{"content":[],"structuredContent":{"isError":true},"_meta":{"isError":true}}`: "",
	} {
		_, _ = u.serve(context.Background(), toolCall("echo", ""), func(context.Context, *app.Request) (json.RawMessage, error) {
			return json.RawMessage(res), nil
		})
		wantAttrs(t, attrs(u.last(t).Attributes()), map[attribute.Key]string{mcpotel.KeyErrorType: want})
	}
}

// A request's trace context is its Trace, not its params: the engine has
// read _meta (however its names are escaped, wherever it stands; see
// TestMetaThroughEngine). A notification's, which the engine does not
// read, is read from its params, however its names are escaped; a _meta
// nested deeper is not its own.
func TestMetaParsing(t *testing.T) {
	u := newUnit(t, mcpotel.Options{})
	tp, tid, parent := traceparent(t)
	req := &app.Request{Method: "tools/call", ID: json.RawMessage(`1`), Name: "echo",
		Params: json.RawMessage(fmt.Sprintf(`{"_meta":{"traceparent":%q},"name":"echo"}`, tp))}
	if _, err := u.serve(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if s := u.last(t); s.SpanContext().TraceID() == tid {
		t.Error("a request's params were read for its trace context; its Trace is the engine's reading")
	}
	req.Trace.TraceParent = tp
	if _, err := u.serve(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if s := u.last(t); s.SpanContext().TraceID() != tid || s.Parent().SpanID() != parent {
		t.Errorf("Trace: trace %v parent %v, want %v %v", s.SpanContext().TraceID(), s.Parent().SpanID(), tid, parent)
	}

	for _, params := range []string{
		fmt.Sprintf(`{"_meta":{"traceparent":%q},"requestId":1}`, tp),
		fmt.Sprintf(`{"requestId":1,"reason":{"a":[1,{"b":"_meta"}]},"\u005fmeta":{"progressToken":1,"trace\u0070arent":%q}}`, tp),
	} {
		n := &app.Request{Method: "notifications/cancelled", Params: json.RawMessage(params)}
		if _, err := u.serve(context.Background(), n, nil); err != nil {
			t.Fatal(err)
		}
		if s := u.last(t); s.SpanContext().TraceID() != tid || s.Parent().SpanID() != parent {
			t.Errorf("%s: trace %v parent %v, want %v %v", params, s.SpanContext().TraceID(), s.Parent().SpanID(), tid, parent)
		}
	}
	nested := fmt.Sprintf(`{"requestId":1,"reason":{"_meta":{"traceparent":%q}}}`, tp)
	_, _ = u.serve(context.Background(), &app.Request{Method: "notifications/cancelled", Params: json.RawMessage(nested)}, nil)
	if s := u.last(t); s.SpanContext().TraceID() == tid {
		t.Error("a _meta inside a member was taken for the notification's")
	}
}

// Options.Propagator is the one that reads _meta: one without baggage
// leaves the _meta baggage out.
func TestPropagatorOption(t *testing.T) {
	u := newUnit(t, mcpotel.Options{Propagator: propagation.TraceContext{}})
	tp, tid, _ := traceparent(t)
	var members int
	_, _ = u.serve(context.Background(), toolCall("echo", fmt.Sprintf(`{"traceparent":%q,"baggage":"user=alice"}`, tp)), func(ctx context.Context, _ *app.Request) (json.RawMessage, error) {
		members = baggage.FromContext(ctx).Len()
		return json.RawMessage(`{}`), nil
	})
	if s := u.last(t); s.SpanContext().TraceID() != tid || members != 0 {
		t.Errorf("trace %v (want %v), %d baggage members (want 0)", s.SpanContext().TraceID(), tid, members)
	}
}

// keysPropagator records the keys its carrier says it holds, as a
// propagator that iterates its carrier does.
type keysPropagator struct{ keys *[]string }

func (p keysPropagator) Inject(context.Context, propagation.TextMapCarrier) {}
func (p keysPropagator) Extract(ctx context.Context, c propagation.TextMapCarrier) context.Context {
	*p.keys = c.Keys()
	return ctx
}
func (p keysPropagator) Fields() []string { return []string{"traceparent", "tracestate", "baggage"} }

// The carrier a propagator reads lists the _meta trace members present,
// and only those.
func TestCarrierKeys(t *testing.T) {
	for _, c := range []struct {
		meta string
		want []string
	}{
		{`{"traceparent":"x","baggage":"b"}`, []string{"traceparent", "baggage"}},
		{`{"tracestate":"s"}`, []string{"tracestate"}},
	} {
		var keys []string
		u := newUnit(t, mcpotel.Options{Propagator: keysPropagator{&keys}})
		_, _ = u.serve(context.Background(), toolCall("echo", c.meta), nil)
		if !slices.Equal(keys, c.want) {
			t.Errorf("_meta %s: the carrier's keys are %q, want %q", c.meta, keys, c.want)
		}
	}
}

// The middleware's cost per tools/call with a _meta traceparent, around
// a handler that does nothing: with the SDK's providers (every span
// sampled, kept by a recorder that is reset), and with no-op providers
// (the middleware's own work: extracting the trace context, the
// attributes).
func BenchmarkMiddleware(b *testing.B) {
	spans := tracetest.NewSpanRecorder()
	for _, p := range []struct {
		name string
		opts mcpotel.Options
	}{
		{"sdk", mcpotel.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
			MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))}},
		{"noop", mcpotel.Options{TracerProvider: tnoop.NewTracerProvider(), MeterProvider: mnoop.NewMeterProvider()}},
	} {
		b.Run(p.name, func(b *testing.B) {
			h := mcpotel.Middleware(p.opts)(func(context.Context, *app.Request) (json.RawMessage, error) {
				return json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`), nil
			})
			req := toolCall("echo", `{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`)
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := h(ctx, req); err != nil {
					b.Fatal(err)
				}
				if i%1024 == 0 {
					spans.Reset()
				}
			}
		})
	}
}
