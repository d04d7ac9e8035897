// Package mcpotel traces and measures an MCP server of this SDK with
// OpenTelemetry, following the OpenTelemetry semantic conventions for MCP
// (repository open-telemetry/semantic-conventions-genai, where they moved
// from the main semantic-conventions repository: docs/gen-ai/mcp.md as of
// its v0.1.0 release and later, status Development, with the method
// registry's 2026-07-28 additions). It is a Go module of its own
// (github.com/hexmcp/hexmcp/otel), so that the SDK itself never depends on
// OpenTelemetry.
//
// [New] returns a [Telemetry]: its [Telemetry.Middleware] is method
// middleware ([app.Middleware]), to put first, so that it sees what the
// middleware after it refuses; its [Telemetry.OnSessionEnd] is the
// engine's session hook ([app.Options.OnSessionEnd]):
//
//	t := mcpotel.New(mcpotel.Options{})
//	srv, err := hexmcp.New(hexmcp.Options{
//		Tools:        tools,
//		Middleware:   []app.Middleware{t.Middleware(), hexmcp.RateLimit(hexmcp.RateLimitOptions{})},
//		OnSessionEnd: t.OnSessionEnd,
//	})
//
// [Middleware] is New(opts).Middleware(), for a server that records no
// session durations.
//
// # Spans
//
// One span of kind SERVER per incoming request and notification, named
// "{mcp.method.name} {target}": the target is the tool's name for
// tools/call and the prompt's for prompts/get ("tools/call get-weather"),
// absent otherwise ("tools/list"), and dropped from a request answered
// -32602 (an unknown or hidden tool or prompt: a name the client chose).
// Its parent is the trace context the request carried in params._meta
// (traceparent, tracestate and baggage, read by the configured propagator,
// as the convention asks: from [app.Request.Trace], which the engine read,
// and for a notification from its params); the span that was current in
// the request's context (an HTTP server span, say) is then linked, not
// parent. Without a _meta trace context the span continues the current
// span; without either, the trace context of the HTTP request's headers
// (Streamable HTTP), when it has one. The handlers run with the span (and the baggage) in their
// context, so their own spans are its children.
//
// Attributes: mcp.method.name; gen_ai.tool.name and gen_ai.operation.name
// "execute_tool" (tools/call), gen_ai.prompt.name (prompts/get),
// mcp.resource.uri (the methods with a params.uri); jsonrpc.request.id
// (requests, the id as sent, a string id without its quotes);
// mcp.session.id (a Streamable HTTP session); mcp.protocol.version (the
// request's revision; for initialize, the one its result agreed on);
// network.transport ("tcp" for HTTP and the WebSocket, "pipe" for stdio
// and in-memory connections); network.protocol.name "http" (Streamable
// HTTP); client.address and client.port (the peer, when the transport
// knows it). jsonrpc.protocol.version is never set: the convention asks
// for it only when it is not "2.0", and the engine accepts nothing else.
//
// A request answered with a JSON-RPC error ends with status Error, the
// error's message as the status description, and error.type and
// rpc.response.status_code set to its code ("-32602"); an error of other
// middleware that is not a *domain.ProtocolError is answered -32603 by the
// engine, and recorded so. A tools/call whose result has isError true ends
// with status Error and error.type "tool_error". A request that got no
// answer because it was cancelled (notifications/cancelled, the client
// gone) ends with status Error and error.type "cancelled". These are all
// the values of error.type it records.
//
// # Metrics
//
// mcp.server.operation.duration, a histogram in seconds with the
// convention's bucket boundaries ([DurationBuckets]), gets one value per
// request and notification, from when the middleware is called to when it
// returns, with the low-cardinality attributes only: mcp.method.name,
// gen_ai.tool.name, gen_ai.prompt.name, gen_ai.operation.name,
// mcp.protocol.version, network.transport, network.protocol.name,
// error.type and rpc.response.status_code; never the request id, the
// session id, the client's address or the resource URI. So that a client
// cannot mint series: a notification method the SDK does not know is
// recorded as "_OTHER" (in the span name too; its attribute keeps the
// name); the tool or prompt name is left out of a request answered -32602
// (an unknown or hidden tool, invalid arguments before 2025-11-25), and at
// most [Options.MaxNames] distinct tool names and as many prompt names are
// recorded, the others as "_OTHER".
//
// mcp.server.session.duration, a histogram in seconds with the same
// buckets, gets one value per handshake-era session that ends
// ([Telemetry.OnSessionEnd]: its connection closed, its client deleted it,
// the session store dropped it), from its initialize to its end, with
// mcp.protocol.version (the negotiated revision), network.transport and
// network.protocol.name as for requests (a session with an id is a
// Streamable HTTP one). error.type, which the convention asks for a
// session that ends with an error, is never set: none of these ends is
// one (a connection closing is how a stdio or WebSocket session ends, and
// expiry how a Streamable HTTP client that never sends DELETE leaves), and
// the engine does not tell a broken connection from a closed one.
// Stateless (2026-07-28) requests have no session, so no value.
package mcpotel

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/hexmcp/hexmcp/otel"

// DurationBuckets are the explicit bucket boundaries, in seconds, of the
// mcp.server.operation.duration and mcp.server.session.duration
// histograms, as the convention gives them.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Attribute keys of the MCP semantic conventions.
const (
	keyMethodName      = attribute.Key("mcp.method.name")
	keyProtocolVersion = attribute.Key("mcp.protocol.version")
	keyResourceURI     = attribute.Key("mcp.resource.uri")
	keySessionID       = attribute.Key("mcp.session.id")
	keyToolName        = attribute.Key("gen_ai.tool.name")
	keyPromptName      = attribute.Key("gen_ai.prompt.name")
	keyOperationName   = attribute.Key("gen_ai.operation.name")
	keyRequestID       = attribute.Key("jsonrpc.request.id")
	keyErrorType       = attribute.Key("error.type")
	keyStatusCode      = attribute.Key("rpc.response.status_code")
	keyNetTransport    = attribute.Key("network.transport")
	keyNetProtocol     = attribute.Key("network.protocol.name")
	keyClientAddress   = attribute.Key("client.address")
	keyClientPort      = attribute.Key("client.port")
)

// Values of error.type besides JSON-RPC error codes, and the value that
// stands for names kept out of metrics.
const (
	errorTypeToolError = "tool_error"
	errorTypeCancelled = "cancelled"
	otherValue         = "_OTHER"
)

// codeInvalidParams is the error.type of -32602, the answer to an unknown
// tool or prompt.
var codeInvalidParams = strconv.Itoa(domain.CodeInvalidParams)

// defaultMaxNames is the default of [Options.MaxNames].
const defaultMaxNames = 1000

// Options configure [New]. The zero value uses the global
// providers and W3C propagation.
type Options struct {
	// TracerProvider makes the tracer (default otel.GetTracerProvider()).
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter (default otel.GetMeterProvider()).
	MeterProvider metric.MeterProvider
	// Propagator reads the trace context of a request's _meta (and of
	// its HTTP headers). Default: the global propagator
	// (otel.GetTextMapPropagator()) when one is set by the time
	// Middleware is called, else W3C Trace Context and W3C Baggage, the
	// formats the convention names for _meta.
	Propagator propagation.TextMapPropagator
	// MaxNames bounds the distinct tool names, and apart the distinct
	// prompt names, recorded in metrics (default 1000);
	// past it a new name is recorded as "_OTHER". Spans always carry
	// the name.
	MaxNames int
}

// Telemetry records spans and metrics of a server: requests through
// [Telemetry.Middleware], session ends through [Telemetry.OnSessionEnd].
// Make one with [New] (the zero value records nothing); it is safe for
// concurrent use, and one value serves one server or several.
type Telemetry struct {
	tracer          trace.Tracer
	prop            propagation.TextMapPropagator
	duration        metric.Float64Histogram
	sessionDuration metric.Float64Histogram
	tools, prompts  *nameSet
}

// New returns the Telemetry of opts. An instrument the meter cannot make
// is reported to otel.Handle and left out.
func New(opts Options) *Telemetry {
	if opts.TracerProvider == nil {
		opts.TracerProvider = otel.GetTracerProvider()
	}
	if opts.MeterProvider == nil {
		opts.MeterProvider = otel.GetMeterProvider()
	}
	if opts.Propagator == nil {
		opts.Propagator = otel.GetTextMapPropagator()
		if len(opts.Propagator.Fields()) == 0 { // none set: the global one is a no-op
			opts.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
		}
	}
	if opts.MaxNames <= 0 {
		opts.MaxNames = defaultMaxNames
	}
	t := &Telemetry{
		tracer:  opts.TracerProvider.Tracer(ScopeName),
		prop:    opts.Propagator,
		tools:   &nameSet{max: int64(opts.MaxNames)},
		prompts: &nameSet{max: int64(opts.MaxNames)},
	}
	meter := opts.MeterProvider.Meter(ScopeName)
	t.duration = histogram(meter, "mcp.server.operation.duration",
		"MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.")
	t.sessionDuration = histogram(meter, "mcp.server.session.duration",
		"The duration of the MCP session as observed on the MCP server.")
	return t
}

// histogram makes a histogram in seconds with [DurationBuckets], a no-op
// one when the meter cannot.
func histogram(meter metric.Meter, name, description string) metric.Float64Histogram {
	h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(description),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	if err != nil {
		otel.Handle(err)
		return noop.Float64Histogram{}
	}
	return h
}

// Middleware returns New(opts).Middleware(): spans and
// mcp.server.operation.duration, without session durations (for those,
// keep the [Telemetry] and give the engine its OnSessionEnd too).
func Middleware(opts Options) app.Middleware {
	return New(opts).Middleware()
}

// Middleware returns method middleware that records a span and an
// mcp.server.operation.duration value for every request and notification
// (see the package documentation for what they hold). Put it first in
// [app.Options.Middleware].
func (t *Telemetry) Middleware() app.Middleware {
	if t == nil || t.tracer == nil {
		return func(next app.MethodHandler) app.MethodHandler { return next }
	}
	return t.middleware
}

// OnSessionEnd records the mcp.server.session.duration of a session that
// ended; give it to the engine as [app.Options.OnSessionEnd]. A session
// without a start time records nothing; one that seems to end before it
// started (clocks of two instances apart) records 0.
func (t *Telemetry) OnSessionEnd(end hexmcp.SessionEnd) {
	if t == nil || t.sessionDuration == nil || end.Started.IsZero() {
		return
	}
	d := max(end.Ended.Sub(end.Started).Seconds(), 0)
	attrs := make([]attribute.KeyValue, 0, 3)
	if end.Revision != "" {
		attrs = append(attrs, keyProtocolVersion.String(string(end.Revision)))
	}
	attrs = appendTransport(attrs, end.Transport, end.ID != "")
	t.sessionDuration.Record(context.Background(), d, metric.WithAttributes(attrs...))
}

func (t *Telemetry) middleware(next app.MethodHandler) app.MethodHandler {
	return func(ctx context.Context, req *app.Request) (json.RawMessage, error) {
		start := time.Now()
		method := req.Method
		if !knownMethod(method) {
			method = otherValue
		}
		var target string
		switch req.Method {
		case "tools/call", "prompts/get":
			target = req.Name
		}
		spanName := method
		if target != "" {
			spanName += " " + target
		}
		parent, links := t.parent(ctx, req)
		common := commonAttributes(method, req)
		attrs := append(make([]attribute.KeyValue, 0, len(common)+8), common...)
		attrs[0] = keyMethodName.String(req.Method) // the span keeps the method as sent
		attrs = append(attrs, spanAttributes(req)...)
		ctx, span := t.tracer.Start(parent, spanName,
			trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...), trace.WithLinks(links...))

		res, err := next(ctx, req)

		o := outcomeOf(ctx, req, res, err)
		if req.Method == "initialize" && req.Revision == "" && err == nil {
			// The revision is the session's once initialize has answered.
			if v := negotiatedVersion(res); v != "" {
				kv := keyProtocolVersion.String(v)
				span.SetAttributes(kv)
				common = append(common, kv)
			}
		}
		if o.errorType != "" {
			span.SetAttributes(keyErrorType.String(o.errorType))
			if o.code != "" {
				span.SetAttributes(keyStatusCode.String(o.code))
			}
			span.SetStatus(codes.Error, o.message)
			if target != "" && o.code == codeInvalidParams {
				// An unknown (or hidden) name is the client's, no
				// low-cardinality target.
				span.SetName(method)
			}
		}
		span.End()

		mattrs := append(make([]attribute.KeyValue, 0, len(common)+4), common...)
		if name := t.metricName(req, o); name != "" {
			switch req.Method {
			case "tools/call":
				mattrs = append(mattrs, keyToolName.String(name))
			case "prompts/get":
				mattrs = append(mattrs, keyPromptName.String(name))
			}
		}
		if o.errorType != "" {
			mattrs = append(mattrs, keyErrorType.String(o.errorType))
			if o.code != "" {
				mattrs = append(mattrs, keyStatusCode.String(o.code))
			}
		}
		t.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(mattrs...))
		return res, err
	}
}

// parent returns the context to start the span in and the links to give
// it: the _meta trace context as parent, the current span linked; else
// the current span; else the HTTP headers' trace context.
func (t *Telemetry) parent(ctx context.Context, req *app.Request) (context.Context, []trace.Link) {
	ambient := trace.SpanContextFromContext(ctx)
	c := (*traceCarrier)(&req.Trace)
	if req.ID == nil && req.Trace == (app.TraceContext{}) {
		c = notificationTrace(req.Params) // the engine reads requests' only
	}
	if c != nil && *c != (traceCarrier{}) {
		pctx := t.prop.Extract(ctx, c)
		if sc := trace.SpanContextFromContext(pctx); sc.IsValid() && !sc.Equal(ambient) {
			if ambient.IsValid() {
				return pctx, []trace.Link{{SpanContext: ambient}}
			}
			return pctx, nil
		}
		ctx = pctx // baggage alone, or the current span again
	}
	if !ambient.IsValid() && req.Transport.Header != nil {
		ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(req.Transport.Header))
	}
	return ctx, nil
}

// commonAttributes are the attributes of both the span and the metric;
// the method comes first.
func commonAttributes(method string, req *app.Request) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, keyMethodName.String(method))
	if req.Method == "tools/call" {
		attrs = append(attrs, keyOperationName.String("execute_tool"))
	}
	if req.Revision != "" {
		attrs = append(attrs, keyProtocolVersion.String(string(req.Revision)))
	}
	return appendTransport(attrs, req.Transport, false)
}

// appendTransport appends network.transport, and network.protocol.name
// for Streamable HTTP: a transport with headers, or a session with an id
// (one restored from the store, whose initialize another instance saw,
// has no transport information).
func appendTransport(attrs []attribute.KeyValue, ti hexmcp.TransportInfo, named bool) []attribute.KeyValue {
	switch {
	case ti.Header != nil || named: // Streamable HTTP
		return append(attrs, keyNetTransport.String("tcp"), keyNetProtocol.String("http"))
	case ti.RemoteAddr != "": // a network connection (WebSocket)
		return append(attrs, keyNetTransport.String("tcp"))
	default: // stdio, an in-memory connection
		return append(attrs, keyNetTransport.String("pipe"))
	}
}

// spanAttributes are the attributes of the span only (high cardinality).
func spanAttributes(req *app.Request) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	switch req.Method {
	case "tools/call":
		if req.Name != "" {
			attrs = append(attrs, keyToolName.String(req.Name))
		}
	case "prompts/get":
		if req.Name != "" {
			attrs = append(attrs, keyPromptName.String(req.Name))
		}
	}
	if req.URI != "" {
		attrs = append(attrs, keyResourceURI.String(req.URI))
	}
	if id, ok := requestID(req.ID); ok {
		attrs = append(attrs, keyRequestID.String(id))
	}
	if req.SessionID != "" {
		attrs = append(attrs, keySessionID.String(req.SessionID))
	}
	if host, port, err := net.SplitHostPort(req.Transport.RemoteAddr); err == nil {
		attrs = append(attrs, keyClientAddress.String(host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, keyClientPort.Int(p))
		}
	}
	return attrs
}

// requestID is the string form of a JSON-RPC id: a string's value, a
// number as written; none for a notification or a null id.
func requestID(id json.RawMessage) (string, bool) {
	v := jsontext.Value(id)
	switch v.Kind() {
	case '"':
		s, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return "", false
		}
		return string(s), true
	case '0':
		return string(id), true
	}
	return "", false
}

// outcome is how a request ended, for error.type and the status.
type outcome struct {
	errorType string // "" on success
	code      string // the JSON-RPC error code, when one was sent
	message   string // the status description
}

// outcomeOf classifies what next answered.
func outcomeOf(ctx context.Context, req *app.Request, res json.RawMessage, err error) outcome {
	if err != nil {
		var pe *domain.ProtocolError
		switch {
		case errors.As(err, &pe):
			c := strconv.Itoa(pe.Code)
			return outcome{errorType: c, code: c, message: pe.Message}
		case ctx.Err() != nil:
			// The engine's own answer to a cancelled call is no answer.
			return outcome{errorType: errorTypeCancelled, message: "request cancelled"}
		}
		c := strconv.Itoa(domain.CodeInternalError)
		return outcome{errorType: c, code: c, message: "Internal error"}
	}
	if req.Method == "tools/call" && resultIsError(res) {
		return outcome{errorType: errorTypeToolError}
	}
	return outcome{}
}

// metricName is the tool or prompt name to record in metrics: none for a
// request answered -32602, "_OTHER" past the bound of distinct names.
func (t *Telemetry) metricName(req *app.Request, o outcome) string {
	if req.Name == "" || o.code == codeInvalidParams {
		return ""
	}
	switch req.Method {
	case "tools/call":
		return t.tools.bounded(req.Name)
	case "prompts/get":
		return t.prompts.bounded(req.Name)
	}
	return ""
}

// nameSet remembers at most max distinct names.
type nameSet struct {
	max   int64
	count atomic.Int64
	names sync.Map // string → struct{}
}

// bounded returns name when it is remembered or there is room to
// remember it, else "_OTHER".
func (s *nameSet) bounded(name string) string {
	if _, ok := s.names.Load(name); ok {
		return name
	}
	if s.count.Add(1) > s.max {
		s.count.Add(-1)
		return otherValue
	}
	if _, loaded := s.names.LoadOrStore(name, struct{}{}); loaded {
		s.count.Add(-1)
	}
	return name
}

// knownMethod reports whether method is a request method of the SDK or a
// notification of MCP: the others are client-chosen strings, kept out of
// span names and metrics.
func knownMethod(method string) bool {
	if _, ok := app.LookupMethod(method); ok {
		return true
	}
	switch method {
	case "notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/message", "notifications/roots/list_changed",
		"notifications/tools/list_changed", "notifications/prompts/list_changed",
		"notifications/resources/list_changed", "notifications/resources/updated",
		"notifications/subscriptions/acknowledged", "notifications/elicitation/complete", "notifications/tasks/status":
		return true
	}
	return false
}
