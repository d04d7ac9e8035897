package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [Options].
const (
	// DefaultMaxPages bounds the pages one list follows.
	DefaultMaxPages = 1000
	// DefaultMaxInputRounds bounds the input_required rounds of one
	// stateless-era request.
	DefaultMaxInputRounds = 16
	// DefaultProbeTimeout bounds the server/discover probe on a
	// connection that may stay silent (stdio, WebSocket).
	DefaultProbeTimeout = 10 * time.Second
	// maxHandlers bounds the server's requests answered at once.
	maxHandlers = 64
)

// The _meta keys of a stateless-era request.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// Options configure a [Client]. The zero value is a client that speaks
// the newest revision the server and this package share and declares no
// capability.
//
// The handlers answer the server's questions the same way in both eras:
// in the handshake era (2024-11-05 to 2025-11-25) the server sends them as
// requests on the connection and the client answers each; in the
// stateless era (2026-07-28) a call's result is "input_required", the
// client runs the handlers on its inputRequests and calls again with
// their answers (inputResponses) and the requestState, until the result
// is complete. Handlers may run concurrently. A handler's error is the
// client's answer in the handshake era (a JSON-RPC error: return an
// [*RPCError] to choose it, any other error is -32603 with its text); the
// stateless era has no error answer, so there it fails the call.
type Options struct {
	// ClientInfo names the client (default "hexmcp-client" "0.1.0").
	ClientInfo domain.Implementation
	// Revision pins the protocol revision ("2025-06-18", or
	// domain.Revision20250618 of github.com/hexmcp/hexmcp/domain): the client
	// speaks it or fails to connect. Empty: the newest the server
	// supports, the stateless era first (server/discover), falling back
	// to initialize when the server does not speak it.
	Revision domain.Revision

	// Elicitation answers elicitation/create; when set the client declares
	// the elicitation capability (form mode; URL mode too when
	// ElicitURL is set).
	Elicitation func(ctx context.Context, p domain.ElicitParams) (*domain.ElicitResult, error)
	// ElicitURL declares URL-mode elicitation as well (the handler gets
	// p.Mode "url" and p.URL to open).
	ElicitURL bool
	// Sampling answers sampling/createMessage; when set the client
	// declares the sampling capability.
	Sampling func(ctx context.Context, p domain.CreateMessageParams) (*domain.CreateMessageResult, error)
	// Roots answers roots/list; when set the client declares the roots
	// capability.
	Roots func(ctx context.Context) ([]domain.Root, error)
	// Tasks declares the tasks extension ([TasksExtension]): the server
	// may then run a task-supporting tool's call as a task, which
	// [Session.CallTool] awaits (and [Session.StartTool] returns).
	Tasks bool
	// Capabilities, when not nil, are declared instead of the ones the
	// handlers imply.
	Capabilities map[string]any

	// The callbacks below run on the goroutine that reads the connection,
	// in the order the server sent the notifications: they must return
	// quickly and must not wait for an answer of the session (start a
	// goroutine for that).

	// Logging receives the server's log records (notifications/message).
	Logging func(LogMessage)
	// LogLevel is the lowest level the server is asked to send (default
	// "info" when Logging is set): logging/setLevel after initialize in
	// the handshake era, _meta on every request in the stateless era.
	LogLevel domain.LogLevel
	// ToolListChanged, PromptListChanged and ResourceListChanged are
	// called on the server's notifications/*/list_changed.
	ToolListChanged     func()
	PromptListChanged   func()
	ResourceListChanged func()
	// ResourceUpdated is called on notifications/resources/updated, with
	// the resource's URI (see [Session.Subscribe]).
	ResourceUpdated func(uri string)
	// TaskStatus is called on notifications/tasks: a task a
	// subscriptions/listen stream listens to ([Subscriptions].TaskIDs)
	// changed, as tasks/get would now answer.
	TaskStatus func(Task)
	// Notification receives every notification of the server, after the
	// callbacks above.
	Notification func(Notification)

	// Middleware wraps every request the client sends, the first
	// outermost (see [Middleware]).
	Middleware []Middleware

	// Validator compiles the output schemas [CallToolAs] checks structured
	// results against (default adapters/jsonschema: JSON Schema 2020-12).
	Validator ports.SchemaValidator
	// SkipOutputValidation turns those checks off.
	SkipOutputValidation bool

	// MaxMessageBytes bounds one message from the server (default
	// [DefaultMaxMessageBytes]); a longer one ends the session.
	MaxMessageBytes int64
	// MaxPages bounds the pages one list follows (default
	// [DefaultMaxPages]).
	MaxPages int
	// MaxInputRounds bounds the input_required rounds of one request
	// (default [DefaultMaxInputRounds]).
	MaxInputRounds int
	// ProbeTimeout bounds the server/discover probe on stdio and WebSocket,
	// where a server of the handshake era may not answer it (default
	// [DefaultProbeTimeout]).
	ProbeTimeout time.Duration
}

// Client holds the options sessions are opened with. It is safe for
// concurrent use; one client opens any number of sessions.
type Client struct {
	opts Options
}

// New returns a client with opts (defaults filled in).
func New(opts Options) *Client {
	if opts.ClientInfo.Name == "" {
		opts.ClientInfo = domain.Implementation{Name: "hexmcp-client", Version: "0.1.0"}
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.MaxPages <= 0 {
		opts.MaxPages = DefaultMaxPages
	}
	if opts.MaxInputRounds <= 0 {
		opts.MaxInputRounds = DefaultMaxInputRounds
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	if opts.Validator == nil {
		opts.Validator = jsonschema.New()
	}
	if opts.LogLevel == "" && opts.Logging != nil {
		opts.LogLevel = domain.LogInfo
	}
	return &Client{opts: opts}
}

// capabilities returns what the client declares.
func (c *Client) capabilities() map[string]any {
	if c.opts.Capabilities != nil {
		return c.opts.Capabilities
	}
	caps := map[string]any{}
	if c.opts.Elicitation != nil {
		e := map[string]any{}
		if c.opts.ElicitURL {
			e["form"] = map[string]any{}
			e["url"] = map[string]any{}
		}
		caps["elicitation"] = e
	}
	if c.opts.Sampling != nil {
		caps["sampling"] = map[string]any{}
	}
	if c.opts.Roots != nil {
		caps["roots"] = map[string]any{}
	}
	if c.opts.Tasks {
		caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	return caps
}

// policy knows the revisions this package speaks.
var policy domain.RevisionPolicy

// newest returns the newest revision of era this package speaks, among
// those listed when listed is not nil (a server's "supported").
func newest(era domain.Era, listed []domain.Revision) (domain.Revision, bool) {
	for _, r := range policy.Supported() {
		if policy.Features(r).Era == era && (listed == nil || slices.Contains(listed, r)) {
			return r, true
		}
	}
	return "", false
}

// supportedOf reads the revisions an UnsupportedProtocolVersion error lists
// (never nil: none listed is none, not any).
func supportedOf(re *RPCError) []domain.Revision {
	var data struct {
		Supported []domain.Revision `json:"supported"`
	}
	_ = json.Unmarshal(re.Data, &data)
	if data.Supported == nil {
		return []domain.Revision{}
	}
	return data.Supported
}

// Connect opens a session over t: in the stateless era it asks
// server/discover; in the handshake era it initializes the session
// (initialize, then notifications/initialized). Without
// [Options.Revision] it tries the stateless era first and falls back to
// initialize when the server does not speak it. ctx bounds the connecting
// only; close the session when done.
func (c *Client) Connect(ctx context.Context, t Transport) (*Session, error) {
	if r := c.opts.Revision; r != "" && !policy.Supports(r) {
		return nil, fmt.Errorf("hexmcp: unknown protocol revision %q", r)
	}
	conn, err := t.Connect(ctx, ConnOptions{MaxMessageBytes: c.opts.MaxMessageBytes})
	if err != nil {
		return nil, fmt.Errorf("hexmcp: connecting: %w", err)
	}
	s := newSession(c, conn)
	if err := s.open(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// open decides the era and the revision.
func (s *Session) open(ctx context.Context) error {
	want := s.c.opts.Revision
	if want != "" && policy.Features(want).Era == domain.EraHandshake {
		return s.initialize(ctx, want, true)
	}
	if want == "" {
		want, _ = newest(domain.EraStateless, nil)
	}
	err := s.discover(ctx, want)
	if err == nil {
		return nil
	}
	var re *RPCError
	if errors.As(err, &re) && re.Code == domain.CodeUnsupportedProtocolVersion {
		// The server refused the revision: ask again once with the
		// newest stateless revision it lists (the one asked for, when
		// the refusal was of something else).
		listed := supportedOf(re)
		if s.c.opts.Revision != "" {
			listed = slices.DeleteFunc(listed, func(r domain.Revision) bool { return r != s.c.opts.Revision })
		}
		if r, ok := newest(domain.EraStateless, listed); ok {
			if err = s.discover(ctx, r); err == nil {
				return nil
			}
		}
	}
	if s.c.opts.Revision != "" {
		return err // pinned
	}
	if errors.As(err, &re) {
		switch re.Code {
		case domain.CodeUnsupportedProtocolVersion:
			// A server of this era that serves none of its revisions we
			// know: speak its newest handshake revision, if it lists one.
			if r, ok := newest(domain.EraHandshake, supportedOf(re)); ok {
				return s.initialize(ctx, r, false)
			}
			return fmt.Errorf("hexmcp: the server supports none of this client's revisions: %w", err)
		case domain.CodeMissingClientCapability, domain.CodeHeaderMismatch:
			return fmt.Errorf("hexmcp: server/discover: %w", err)
		}
	}
	if ctx.Err() != nil || errors.Is(err, ErrClosed) {
		return err
	}
	if he := (*HTTPError)(nil); errors.As(err, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden) {
		// The server refuses the client, not the revision: initialize
		// would be refused the same way, and its error would hide this
		// one (which names server/discover).
		return err
	}
	// A server of the handshake era: whatever else it answered (or its
	// silence).
	r, _ := newest(domain.EraHandshake, nil)
	return s.initialize(ctx, r, false)
}

// discover sends server/discover for rev; it makes the session stateless
// when the server lists rev.
func (s *Session) discover(ctx context.Context, rev domain.Revision) error {
	s.setEra(domain.EraStateless, rev)
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if !s.httpConn() {
		pctx, cancel = context.WithTimeout(ctx, s.c.opts.ProbeTimeout)
	}
	defer cancel()
	_, _, meta := s.eraRev()
	raw, err := s.roundTrip(pctx, "server/discover", map[string]any{"_meta": meta})
	if err != nil {
		return err
	}
	var res discoverResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("hexmcp: decoding the result of server/discover: %w", err)
	}
	if len(res.SupportedVersions) == 0 {
		// No revision at all: a server of the handshake era answering
		// every request it does not know with an empty result.
		return errNotDiscover
	}
	if !slices.Contains(res.SupportedVersions, rev) {
		return &RPCError{Code: domain.CodeUnsupportedProtocolVersion, Message: "server/discover does not list " + string(rev),
			Data: mustJSON(map[string]any{"supported": res.SupportedVersions, "requested": rev})}
	}
	var info domain.Implementation
	if si, ok := res.Meta[metaServerInfo]; ok {
		_ = json.Unmarshal(si, &info)
	}
	s.mu.Lock()
	s.serverCaps, s.serverInfo, s.instructions = res.Capabilities, info, res.Instructions
	s.mu.Unlock()
	return nil
}

// errNotDiscover is the error of a server/discover whose result lists no
// revision: open falls back to initialize.
var errNotDiscover = errors.New("hexmcp: the result of server/discover lists no revision")

type discoverResult struct {
	SupportedVersions []domain.Revision          `json:"supportedVersions"`
	Capabilities      json.RawMessage            `json:"capabilities"`
	Instructions      string                     `json:"instructions"`
	Meta              map[string]json.RawMessage `json:"_meta"`
}

// initialize opens a handshake-era session for rev; pinned refuses
// another revision in the server's answer.
func (s *Session) initialize(ctx context.Context, rev domain.Revision, pinned bool) error {
	s.setEra(domain.EraHandshake, "")
	raw, err := s.roundTrip(ctx, "initialize", map[string]any{
		"protocolVersion": rev,
		"capabilities":    s.c.capabilities(),
		"clientInfo":      s.c.opts.ClientInfo,
	})
	if err != nil {
		return err
	}
	var res struct {
		ProtocolVersion domain.Revision       `json:"protocolVersion"`
		Capabilities    json.RawMessage       `json:"capabilities"`
		ServerInfo      domain.Implementation `json:"serverInfo"`
		Instructions    string                `json:"instructions"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("hexmcp: decoding the initialize result: %w", err)
	}
	got := res.ProtocolVersion
	if got != rev && (pinned || !policy.Supports(got) || policy.Features(got).Era != domain.EraHandshake) {
		return fmt.Errorf("hexmcp: the server answered initialize for %s with protocol revision %q", rev, got)
	}
	s.mu.Lock()
	s.serverCaps, s.serverInfo, s.instructions = res.Capabilities, res.ServerInfo, res.Instructions
	s.mu.Unlock()
	s.setEra(domain.EraHandshake, got)
	if err := s.notify(ctx, "notifications/initialized", nil); err != nil {
		return fmt.Errorf("hexmcp: notifications/initialized: %w", err)
	}
	if lv := s.c.opts.LogLevel; lv != "" && s.hasCapability("logging") {
		if _, err := s.roundTrip(ctx, "logging/setLevel", map[string]any{"level": lv}); err != nil {
			return err
		}
	}
	return nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
