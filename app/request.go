package app

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

type requestKey struct{}

// RequestContext describes the request a tool handler is serving: the
// protocol revision it came under, the client, and a way to report progress.
// Get it with [RequestFrom], or take a *RequestContext parameter in a handler
// given to hexmcp.NewTool. It is valid only while the handler runs.
type RequestContext struct {
	env     *requestEnv
	id      jsontext.Value
	info    callInfo
	tool    string
	token   string              // the bearer token, for a tool declared WithAccessToken
	related ports.MessageWriter // the request's own stream, if any
	trans   handlerapi.TransportInfo

	// input is the multi round-trip state of a stateless-era tools/call,
	// prompts/get or resources/read (nil otherwise).
	input *inputRound
	// round holds the answers received (Answers) and, in a revision
	// with input rounds, what input points to: allocated with rc there
	// (requestWithRound), on the first answer in the handshake era.
	round *inputRound
	// wmu keeps writes to related one at a time.
	wmu sync.Mutex
	// slot is the connection-loop call running the handler (nil on HTTP).
	slot *callSlot
	// progressSink receives a detached request's progress (nil: the
	// progress token decides).
	progressSink ProgressFunc
	// logSink receives a detached request's log messages too.
	logSink LogFunc

	mu           sync.Mutex
	lastProgress float64
	progressSent bool
}

// requestEnv is what a handler's RequestContext reaches back to in the
// engine: the revision policy, multi round-trip input, the tools (a
// session's own are checked as registered ones) and the visibility of
// lists.
type requestEnv struct {
	policy  domain.RevisionPolicy
	timeout time.Duration // Options.ClientRequestTimeout
	input   *inputRounds
	tools   *toolCatalog
	vis     *viewFilter
}

// newRequestContext is the context of a request served by a handler.
func (env *requestEnv) newRequestContext(ctx context.Context, m message, ci callInfo) *RequestContext {
	var rc *RequestContext
	if ci.features.InputRequired {
		w := new(requestWithRound)
		rc = &w.rc
		rc.round = &w.round
	} else {
		rc = new(RequestContext)
	}
	rc.env, rc.id, rc.info, rc.slot = env, m.id, ci, m.slot
	rc.related, _ = ctx.Value(relatedKey{}).(ports.MessageWriter)
	rc.trans, _ = ctx.Value(transportKey{}).(handlerapi.TransportInfo)
	rc.progressSink, _ = ctx.Value(progressSinkKey{}).(ProgressFunc)
	rc.logSink, _ = ctx.Value(logSinkKey{}).(LogFunc)
	return rc
}

// requestWithRound is a RequestContext and its round in one allocation,
// for a revision whose calls may take input rounds (most stateless calls
// ask nothing, and need no second allocation); a handshake-era call, which
// carries no round, costs the smaller RequestContext alone.
type requestWithRound struct {
	rc    RequestContext
	round inputRound
}

// A tool declared with hexmcp.NewTool or hexmcp.ToolsOf may take the
// request context as a parameter; the declarations learn its type here.
func init() { decl.SetRequestContext(RequestFrom) }

// RequestFrom returns the request context in ctx, or nil outside a tool call.
func RequestFrom(ctx context.Context) *RequestContext {
	rc, _ := ctx.Value(requestKey{}).(*RequestContext)
	return rc
}

// Revision is the protocol revision of the call: the one negotiated by
// initialize (handshake era) or named in the request's _meta (stateless).
func (rc *RequestContext) Revision() domain.Revision { return rc.info.rev }

// Era tells whether the call came through a session or statelessly.
func (rc *RequestContext) Era() domain.Era { return rc.info.era }

// AccessToken returns the caller's raw bearer token for a tool declared
// with hexmcp.WithAccessToken, and "" for every other tool (and without
// authentication).
func (rc *RequestContext) AccessToken() string { return rc.token }

// SessionID returns the id of the handshake-era session the request belongs
// to, as its transport named it (Streamable HTTP's Mcp-Session-Id), or ""
// (a stateless-era request, a connection's session). It addresses the
// session from outside the request: [Engine.NotifyElicitationComplete].
func (rc *RequestContext) SessionID() string {
	if rc.info.session == nil {
		return ""
	}
	return rc.info.session.sessionID()
}

// Features is what the call's revision supports.
func (rc *RequestContext) Features() domain.Features { return rc.info.features }

// ToolName is the name of the tool being called.
func (rc *RequestContext) ToolName() string { return rc.tool }

// RequestID is the JSON-RPC id of the call, as JSON ("7" or "\"abc\"").
func (rc *RequestContext) RequestID() string { return string(rc.id) }

// Client is the client's self-reported name and version: from initialize in
// the handshake era, from _meta in the stateless era (zero when absent).
// Do not base security decisions on it.
func (rc *RequestContext) Client() domain.Implementation {
	if rc.info.era == domain.EraStateless {
		var impl domain.Implementation
		if rc.info.clientInfo != nil {
			_ = json.Unmarshal(rc.info.clientInfo, &impl)
		}
		return impl
	}
	if s := rc.info.session; s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.client
	}
	return domain.Implementation{}
}

// ClientCapabilities returns the capabilities the client declared, as JSON
// (an object; "{}" when none). To know whether a question may be put to
// the client, ask [RequestContext.CanAsk], which also weighs the revision.
func (rc *RequestContext) ClientCapabilities() stdjson.RawMessage {
	if rc.info.caps == nil {
		return stdjson.RawMessage("{}")
	}
	return stdjson.RawMessage(rc.info.caps)
}

// CanReportProgress reports whether the request carried a progressToken, so
// that progress notifications will reach the client.
func (rc *RequestContext) CanReportProgress() bool {
	return rc.info.progressToken != nil || rc.progressSink != nil
}

// progressSinkKey carries a detached request's ProgressFunc.
type progressSinkKey struct{}

// logSinkKey carries a detached request's LogFunc.
type logSinkKey struct{}

// ReportProgress sends notifications/progress for this request. total is
// the expected final value (0 when unknown); message is optional. Without a
// progressToken in the request it does nothing and returns nil.
func (rc *RequestContext) ReportProgress(ctx context.Context, progress, total float64, message string) error {
	if rc.info.progressToken == nil && rc.progressSink == nil {
		return nil
	}
	if math.IsNaN(progress) || math.IsInf(progress, 0) {
		return errors.New("hexmcp: progress must be a finite number")
	}
	sink, w, s := rc.progressSink, rc.related, rc.info.session
	if sink == nil && w == nil && s == nil {
		return nil
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.progressSent && progress <= rc.lastProgress {
		return handlerapi.ErrProgressNotIncreasing
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if sink != nil { // a detached request's (Request.WithProgress)
		rc.lastProgress, rc.progressSent = progress, true
		sink(ctx, progress, total, message)
		return nil
	}
	params := struct {
		ProgressToken jsontext.Value `json:"progressToken"`
		Progress      float64        `json:"progress"`
		Total         float64        `json:"total,omitzero"`
		Message       string         `json:"message,omitempty"`
	}{rc.info.progressToken, progress, total, message}
	msg, err := encodeNotification("notifications/progress", params)
	if err != nil {
		return err
	}
	rc.lastProgress, rc.progressSent = progress, true
	if w != nil {
		return rc.writeRelated(ctx, msg)
	}
	s.send(msg)
	return nil
}

// writeRelated sends a notification on the request's own stream, one
// writer at a time; one the stream cannot carry is dropped.
func (rc *RequestContext) writeRelated(ctx context.Context, msg []byte) error {
	rc.wmu.Lock()
	defer rc.wmu.Unlock()
	if err := rc.related.WriteMessage(ctx, msg); err != nil && !errors.Is(err, ports.ErrNoStream) {
		return err
	}
	return nil
}

type transportKey struct{}

// WithTransportInfo returns ctx carrying info for the requests served with
// it. Transport adapters call it.
func WithTransportInfo(ctx context.Context, info handlerapi.TransportInfo) context.Context {
	return context.WithValue(ctx, transportKey{}, info)
}

// Transport returns what the transport told about the request (zero on
// stdio).
func (rc *RequestContext) Transport() handlerapi.TransportInfo { return rc.trans }

// Log sends a log message to the client (notifications/message) when the
// client asked for messages of that level: with logging/setLevel in the
// handshake era, or with _meta["io.modelcontextprotocol/logLevel"] on the
// request in the stateless era. Without such a request nothing is sent (the
// spec leaves the default to the server; this one stays quiet). logger
// names the source (optional); data is any JSON value. It reports nil when
// the message was filtered out.
func (rc *RequestContext) Log(ctx context.Context, level domain.LogLevel, logger string, data any) error {
	if !level.Valid() {
		return fmt.Errorf("hexmcp: invalid log level %q", level)
	}
	if rc.logSink != nil {
		rc.logSink(ctx, level, logger, data)
	}
	min := rc.info.logLevel
	s := rc.info.session
	if rc.info.era == domain.EraHandshake && s != nil {
		s.mu.Lock()
		min = s.logLevel
		s.mu.Unlock()
	}
	if !level.AtLeast(min) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	params := struct {
		Level  domain.LogLevel `json:"level"`
		Logger string          `json:"logger,omitempty"`
		Data   any             `json:"data"`
	}{level, logger, data}
	msg, err := encodeNotification("notifications/message", params)
	if err != nil {
		return fmt.Errorf("hexmcp: log data cannot be encoded: %w", err)
	}
	if rc.related != nil {
		return rc.writeRelated(ctx, msg)
	}
	if s != nil {
		s.send(msg)
	}
	return nil
}

// TraceContext is the OpenTelemetry trace context a request carried in
// _meta (keys traceparent, tracestate and baggage, in W3C Trace Context and
// W3C Baggage formats), for a handler to continue the caller's trace. Empty
// fields were absent.
type TraceContext struct {
	TraceParent string
	TraceState  string
	Baggage     string
}

// Trace returns the trace context of the request (zero when it carried
// none). The values are passed on as sent; parse them with an OpenTelemetry
// propagator.
func (rc *RequestContext) Trace() TraceContext { return rc.info.trace }
