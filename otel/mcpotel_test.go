package mcpotel_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/hexmcptest"
	mcpotel "github.com/hexmcp/hexmcp/otel"
)

type echoIn struct {
	S string `json:"s"`
}

// rig is a server with the middleware, recording into in-memory
// exporters.
type rig struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	srv    *hexmcp.Server

	mu       sync.Mutex
	handlers map[string]trace.SpanContext // echo's argument → the span its handler ran in
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader(), handlers: map[string]trace.SpanContext{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	echo := hexmcp.Func(func(ctx context.Context, in echoIn) (string, error) {
		r.mu.Lock()
		r.handlers[in.S] = trace.SpanContextFromContext(ctx)
		r.mu.Unlock()
		return in.S, nil
	}, hexmcp.WithName("echo"))
	fail := hexmcp.Func(func(context.Context, echoIn) (string, error) {
		return "", hexmcp.NewToolError("the tool failed")
	}, hexmcp.WithName("fail"))
	deny := hexmcp.Func(func(context.Context, echoIn) (string, error) {
		return "", domain.NewProtocolError(-32001, "Denied by policy", nil)
	}, hexmcp.WithName("deny"))
	r.srv = hexmcptest.NewServer(t, hexmcp.Options{
		Tools:      []hexmcp.Tool{echo, fail, deny},
		Middleware: []app.Middleware{mcpotel.Middleware(mcpotel.Options{TracerProvider: tp, MeterProvider: mp})},
	})
	return r
}

// traceparent returns a new W3C traceparent and its trace and span ids.
func traceparent(t *testing.T) (string, trace.TraceID, trace.SpanID) {
	t.Helper()
	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	return fmt.Sprintf("00-%s-%s-01", hex.EncodeToString(tid[:]), hex.EncodeToString(sid[:])), tid, sid
}

// call sends tools/call of name with the trace context tp in _meta.
func call(ctx context.Context, c *client.Session, name, arg, tp string) (*client.CallToolResult, error) {
	var res client.CallToolResult
	err := c.Call(ctx, "tools/call", map[string]any{
		"name": name, "arguments": map[string]any{"s": arg},
		"_meta": map[string]any{"traceparent": tp, "tracestate": "rojo=00f067aa0ba902b7"},
	}, &res)
	return &res, err
}

// spanOf returns the one ended span of trace tid.
func (r *rig) spanOf(t *testing.T, tid trace.TraceID) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range r.spans.Ended() {
		if s.SpanContext().TraceID() == tid {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans of trace %s, want 1", len(found), tid)
	}
	return found[0]
}

func attrs(kvs []attribute.KeyValue) map[attribute.Key]string {
	m := make(map[attribute.Key]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.Emit()
	}
	return m
}

// wantAttrs fails the test unless got holds want (a value "*" asks only
// for presence, "" for absence).
func wantAttrs(t *testing.T, got map[attribute.Key]string, want map[attribute.Key]string) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		switch {
		case v == "" && ok:
			t.Errorf("attribute %s = %q, want none", k, g)
		case v == "*" && !ok:
			t.Errorf("attribute %s missing", k)
		case v != "" && v != "*" && g != v:
			t.Errorf("attribute %s = %q, want %q", k, g, v)
		}
	}
}

var transports = []hexmcptest.Transport{hexmcptest.InMemory, hexmcptest.StreamableHTTP}

// A tools/call over a real transport, in every revision, gets one SERVER
// span named after the tool, child of the _meta traceparent, with the
// convention's attributes; the tool's handler runs inside it.
func TestToolCallSpan(t *testing.T) {
	r := newRig(t)
	for _, tr := range transports {
		t.Run(tr.String(), func(t *testing.T) {
			hexmcptest.ForEachRevision(t, r.srv, hexmcptest.ClientOptions{Transport: tr}, func(t *testing.T, c *client.Session) {
				tp, tid, parent := traceparent(t)
				res, err := call(t.Context(), c, "echo", tp, tp)
				if err != nil || res.IsError {
					t.Fatalf("echo: %+v, %v", res, err)
				}
				s := r.spanOf(t, tid)
				if s.Name() != "tools/call echo" || s.SpanKind() != trace.SpanKindServer {
					t.Errorf("span %q of kind %v, want \"tools/call echo\" of kind server", s.Name(), s.SpanKind())
				}
				if s.Parent().SpanID() != parent || !s.Parent().IsRemote() || s.Parent().TraceState().Get("rojo") != "00f067aa0ba902b7" {
					t.Errorf("parent %v (remote %v, state %q), want the _meta traceparent's span %v", s.Parent().SpanID(), s.Parent().IsRemote(), s.Parent().TraceState(), parent)
				}
				if s.Status().Code != codes.Unset {
					t.Errorf("status %v, want unset", s.Status())
				}
				http := tr == hexmcptest.StreamableHTTP
				handshake := c.Features().Era == domain.EraHandshake
				want := map[attribute.Key]string{
					mcpotel.KeyMethodName: "tools/call", mcpotel.KeyToolName: "echo", mcpotel.KeyOperationName: "execute_tool",
					mcpotel.KeyProtocolVersion: string(c.Revision()), mcpotel.KeyRequestID: "*",
					mcpotel.KeyErrorType: "", mcpotel.KeyStatusCode: "", mcpotel.KeyNetTransport: "pipe", mcpotel.KeyNetProtocol: "",
					mcpotel.KeySessionID: "", mcpotel.KeyClientAddress: "",
				}
				if http {
					want[mcpotel.KeyNetTransport], want[mcpotel.KeyNetProtocol], want[mcpotel.KeyClientAddress] = "tcp", "http", "127.0.0.1"
					if handshake {
						want[mcpotel.KeySessionID] = "*"
					}
				}
				wantAttrs(t, attrs(s.Attributes()), want)
				r.mu.Lock()
				in := r.handlers[tp]
				r.mu.Unlock()
				if in.SpanID() != s.SpanContext().SpanID() {
					t.Errorf("the handler ran in span %v, want the request's span %v", in.SpanID(), s.SpanContext().SpanID())
				}
			})
		})
	}
}

// A JSON-RPC error (the tool's own, an unknown tool) ends the span with
// status Error, the message as its description and the code as error.type
// and rpc.response.status_code (an unknown tool's name leaves the span
// name); a tool result with isError, with error.type "tool_error".
func TestErrorSpans(t *testing.T) {
	r := newRig(t)
	for _, tr := range transports {
		t.Run(tr.String(), func(t *testing.T) {
			hexmcptest.ForEachRevision(t, r.srv, hexmcptest.ClientOptions{Transport: tr}, func(t *testing.T, c *client.Session) {
				for _, tc := range []struct {
					tool, code, message, errorType, span string
				}{
					{"deny", "-32001", "Denied by policy", "-32001", "tools/call deny"},
					{"nope", "-32602", "Unknown tool: nope", "-32602", "tools/call"},
					{"fail", "", "", mcpotel.ErrorTypeToolError, "tools/call fail"},
				} {
					tp, tid, _ := traceparent(t)
					res, err := call(t.Context(), c, tc.tool, "x", tp)
					var rpcErr *client.RPCError
					if tc.code != "" && (!errors.As(err, &rpcErr) || fmt.Sprint(rpcErr.Code) != tc.code) {
						t.Fatalf("%s: %v, want the JSON-RPC error %s", tc.tool, err, tc.code)
					}
					if tc.code == "" && (err != nil || !res.IsError) {
						t.Fatalf("%s: %+v, %v, want an isError result", tc.tool, res, err)
					}
					s := r.spanOf(t, tid)
					if s.Name() != tc.span {
						t.Errorf("span name %q, want %q", s.Name(), tc.span)
					}
					if s.Status().Code != codes.Error || s.Status().Description != tc.message {
						t.Errorf("%s: status %+v, want Error %q", tc.tool, s.Status(), tc.message)
					}
					wantAttrs(t, attrs(s.Attributes()), map[attribute.Key]string{
						mcpotel.KeyErrorType: tc.errorType, mcpotel.KeyStatusCode: tc.code, mcpotel.KeyToolName: tc.tool,
					})
				}
			})
		})
	}
}

// durations collects the data points of mcp.server.operation.duration,
// checking the instrument's unit and buckets.
func (r *rig) durations(t *testing.T) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	dps, ok := histogramPoints(t, r.reader, "mcp.server.operation.duration")
	if !ok {
		t.Fatal("no mcp.server.operation.duration")
	}
	return dps
}

// point returns the data point with exactly the attributes want.
func point(dps []metricdata.HistogramDataPoint[float64], want map[attribute.Key]string) (metricdata.HistogramDataPoint[float64], bool) {
	for _, dp := range dps {
		got := attrs(dp.Attributes.ToSlice())
		if len(got) != len(want) {
			continue
		}
		same := true
		for k, v := range want {
			if got[k] != v {
				same = false
			}
		}
		if same {
			return dp, true
		}
	}
	return metricdata.HistogramDataPoint[float64]{}, false
}

// mcp.server.operation.duration gets one value per request, in seconds,
// with the convention's buckets and only low-cardinality attributes: no
// request id, no session id, no client address; an unknown tool's name is
// left out.
func TestOperationDuration(t *testing.T) {
	r := newRig(t)
	rev := domain.Revision("2025-11-25")
	for _, tr := range transports {
		c := hexmcptest.Connect(t, r.srv, hexmcptest.ClientOptions{Transport: tr, Revision: rev})
		for _, tool := range []string{"echo", "echo", "fail", "deny", "nope"} {
			tp, _, _ := traceparent(t)
			_, _ = call(t.Context(), c, tool, tp, tp)
		}
	}
	dps := r.durations(t)
	for _, dp := range dps {
		for _, k := range []attribute.Key{mcpotel.KeyRequestID, mcpotel.KeySessionID, mcpotel.KeyClientAddress, mcpotel.KeyClientPort, mcpotel.KeyResourceURI} {
			if dp.Attributes.HasValue(k) {
				t.Errorf("a data point has the high-cardinality attribute %s: %v", k, dp.Attributes.ToSlice())
			}
		}
	}
	for _, tr := range []struct{ transport, protocol string }{{"pipe", ""}, {"tcp", "http"}} {
		base := func(extra map[attribute.Key]string) map[attribute.Key]string {
			m := map[attribute.Key]string{mcpotel.KeyMethodName: "tools/call", mcpotel.KeyOperationName: "execute_tool",
				mcpotel.KeyProtocolVersion: string(rev), mcpotel.KeyNetTransport: tr.transport}
			if tr.protocol != "" {
				m[mcpotel.KeyNetProtocol] = tr.protocol
			}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		for _, tc := range []struct {
			attrs map[attribute.Key]string
			count uint64
		}{
			{base(map[attribute.Key]string{mcpotel.KeyToolName: "echo"}), 2},
			{base(map[attribute.Key]string{mcpotel.KeyToolName: "fail", mcpotel.KeyErrorType: "tool_error"}), 1},
			{base(map[attribute.Key]string{mcpotel.KeyToolName: "deny", mcpotel.KeyErrorType: "-32001", mcpotel.KeyStatusCode: "-32001"}), 1},
			{base(map[attribute.Key]string{mcpotel.KeyErrorType: "-32602", mcpotel.KeyStatusCode: "-32602"}), 1},
		} {
			dp, ok := point(dps, tc.attrs)
			if !ok {
				t.Errorf("%s: no data point with attributes %v; have %d points", tr.transport, tc.attrs, len(dps))
				continue
			}
			if dp.Count != tc.count || dp.Sum <= 0 || dp.Sum > 60 {
				t.Errorf("%s %v: count %d sum %v s, want count %d and a sum in seconds", tr.transport, tc.attrs, dp.Count, dp.Sum, tc.count)
			}
		}
		init := map[attribute.Key]string{mcpotel.KeyMethodName: "initialize", mcpotel.KeyProtocolVersion: string(rev), mcpotel.KeyNetTransport: tr.transport}
		if tr.protocol != "" {
			init[mcpotel.KeyNetProtocol] = tr.protocol
		}
		if _, ok := point(dps, init); !ok {
			t.Errorf("%s: no data point for initialize", tr.transport)
		}
	}
}
