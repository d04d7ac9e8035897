package app

import (
	"errors"
	"time"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/deflog"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// Options configure an [Engine]. ToolRegistry and Validator (or
// DisableValidation) are required; every other field has a default, and a
// zero field never turns a safety off: limits are disabled by hexmcp.Unlimited
// and validation by DisableValidation, each by name.
//
// Most programs do not fill Options for app.NewEngine themselves: the
// package at the module's root (hexmcp.New) and the wiring package fill the
// ports with the SDK's adapters (in-memory registries, JSON Schema 2020-12
// validation, slog on standard error) and take the rest from here.
type Options struct {
	// Info names the server in initialize and server/discover results
	// (default name "hexmcp-server", version "0.0.0").
	Info domain.Implementation
	// Instructions tell the model how to use the server (optional).
	Instructions string
	// Policy decides what each revision allows; the zero value serves all.
	Policy domain.RevisionPolicy

	// Tools, Resources and Prompts (declared with hexmcp.Func,
	// hexmcp.NewPrompt, hexmcp.NewResource and their kin: hexmcp.Tool,
	// hexmcp.Prompt, hexmcp.Resource) are registered by NewEngine, in order;
	// the first bad definition fails NewEngine with its error. More can be
	// added (and removed) while the engine runs: [Engine.AddTool] and its
	// kin.
	Tools     []decl.Tool
	Resources []decl.Resource
	Prompts   []decl.Prompt
	// Extensions are the MCP extensions the engine serves (SEP-2133), in
	// order: each is advertised under capabilities.extensions in the
	// initialize result and server/discover, its methods join the method
	// table and its resources are registered with Resources. A bad
	// identifier, a duplicate, or a method name already served fails
	// NewEngine. See [Extension].
	Extensions []Extension

	// ToolRegistry stores the tools (required).
	ToolRegistry ports.ToolRegistry
	// ResourceRegistry stores the resources and resource templates
	// (optional). Nil: the resources/* methods do not exist (-32601). The
	// resources capability is advertised only while something is
	// registered in it.
	ResourceRegistry ports.ResourceRegistry
	// PromptRegistry stores the prompts (optional). Nil: the prompts/*
	// methods do not exist (-32601). The prompts capability is advertised
	// only while a prompt is registered in it.
	PromptRegistry ports.PromptRegistry
	// Validator compiles input and output schemas (required unless
	// DisableValidation): every tools/call is checked against the tool's
	// inputSchema before its handler runs, and structured results against
	// its outputSchema.
	Validator ports.SchemaValidator
	// DisableValidation serves without a Validator: arguments reach the
	// handlers unchecked (only decoding into the input type stops bad
	// ones) and results are not checked against their outputSchema. A
	// Validator given with it is ignored.
	DisableValidation bool
	// Visibility decides, per request, which tools, resources and prompts
	// it sees (default: everything, to everyone). See hexmcp.Visibility.
	Visibility handlerapi.Visibility

	// Middleware wraps the handling of every incoming request and
	// notification, on every transport and in both eras; the first is the
	// outermost. See [Middleware].
	Middleware []Middleware
	// ToolMiddleware wraps every tool call, inside Middleware; the first
	// is the outermost. See hexmcp.ToolMiddleware.
	ToolMiddleware []handlerapi.ToolMiddleware

	// Logger receives the server's own log: internal errors with their
	// details, recovered panics, output-schema warnings (default: slog's
	// text format on standard error, never standard output, which may be
	// the MCP channel). slog.New(slog.DiscardHandler) discards it.
	Logger ports.Logger
	// PageSize is the number of entries per page of tools/list,
	// resources/list, resources/templates/list and prompts/list (default
	// 100).
	PageSize int
	// MaxConcurrentRequests bounds the calls (tools/call, prompts/get,
	// resources/read, batches) one connection served by ServeConn (stdio,
	// WebSocket) runs at once (default 64). At the bound the next call
	// waits until one ends, while the connection goes on reading and
	// answering other messages (ping, lists, cancellations, the client's
	// answers); reading pauses at the call after it, until the waiting one
	// has started. A call waiting for the client's answer and a
	// subscriptions/listen stream do not count (see ClientRequestTimeout
	// and MaxListenersPerClient).
	MaxConcurrentRequests int
	// MaxInFlightBytesPerConn bounds, in bytes, the request messages one
	// connection served by ServeConn (stdio, WebSocket) has in flight: the
	// calls (tools/call, prompts/get, resources/read) and batches read and
	// not yet answered (default 16 MiB;
	// hexmcp.Unlimited: no bound). Reading pauses while the next call does not
	// fit, and resumes as calls finish: the client's writes back up,
	// nothing is refused. A single message larger than the bound is
	// served when nothing else is in flight. Messages
	// the reader answers itself (ping, lists, notifications, responses)
	// are not counted: it holds one at a time. A subscriptions/listen
	// stream gives its bytes back as it starts, and a call as it starts
	// waiting for the client's answer (elicitation, sampling, roots), which
	// must be read; those waits are bounded by ClientRequestTimeout. The
	// Streamable HTTP transport has its own bound (mcphttp
	// Options.MaxInFlightBytes).
	MaxInFlightBytesPerConn int
	// MaxInFlightBytesPerClient bounds the same across the connections of
	// one client (stdio, WebSocket and HTTP+SSE: the client is
	// hexmcp.TransportInfo.ClientKey, the remote IP address, an IPv6 one by its
	// /64, or the authenticated subject; on stdio, the connection), so
	// that a client cannot multiply MaxInFlightBytesPerConn by opening
	// connections: default 64 MiB;
	// hexmcp.Unlimited: no bound. Reading pauses as it does for
	// MaxInFlightBytesPerConn, on the connection whose call does not fit.
	MaxInFlightBytesPerClient int
	// MaxInFlightBytes bounds the same for every client together (default
	// 256 MiB; hexmcp.Unlimited: no bound).
	MaxInFlightBytes int
	// MaxWaitingBytesPerClient bounds, in bytes, the messages of one
	// client's calls on stdio and WebSocket connections (ServeConn) that
	// wait for the client's answer (elicitation, sampling, roots), which
	// they keep alive while they wait, across its connections (the client
	// is hexmcp.TransportInfo.ClientKey; on stdio, the connection): default
	// 16 MiB; hexmcp.Unlimited: no bound.
	// Each waiting call counts at least [MinWaitingCallBytes]. A call past
	// the bound does not ask: its request to the client fails with an
	// error wrapping hexmcp.ErrTooManyWaiting (a handler that returns it
	// answers the call with -32603 naming the limit in data.limit), and
	// the connection goes on. A call larger than the whole bound may wait
	// when no other call of the client does. (Streamable HTTP counts its
	// calls in mcphttp Options.MaxInFlightBytesPerClient.)
	MaxWaitingBytesPerClient int
	// MaxWaitingBytes bounds the same for every client together (default
	// 128 MiB; hexmcp.Unlimited: no bound).
	MaxWaitingBytes int
	// ListTTL is the ttlMs sent with the list results (tools, resources,
	// resource templates), resources/read and server/discover results in the
	// stateless era (default 0: clients re-fetch when they need to,
	// and rely on list-changed notifications).
	ListTTL time.Duration
	// PrivateCache sends cacheScope "private" instead of "public", for
	// servers whose tool list depends on who asks.
	PrivateCache bool
	// ClientRequestTimeout bounds how long a handshake-era request of the
	// server to the client (elicitation/create, sampling/createMessage,
	// roots/list) may wait for its answer; the request is then cancelled
	// (notifications/cancelled) and the handler gets an error wrapping
	// context.DeadlineExceeded. A deadline on the handler's context also
	// applies. Default 10 minutes (an elicitation waits for a person).
	ClientRequestTimeout time.Duration
	// StateKeys supplies the keys that sign the requestState of multi
	// round-trip requests (2026-07-28). Nil: a random key made at start,
	// which suits one instance only; servers behind a load balancer must
	// share keys (memory.NewStateKeys, or a StateKeys backed by a secret
	// store).
	StateKeys ports.StateKeys
	// Bus carries list changes, resource updates and client responses
	// between the instances of one server (see [ports.NotificationBus]):
	// with it, a tools/resources/prompts list_changed, a
	// notifications/resources/updated or a VisibilityChanged raised on
	// one instance reaches the sessions and listen streams of every
	// instance, and a client's response to a server request (elicitation,
	// sampling, roots) received by another instance than the one that
	// sent the request reaches the handler waiting for it: the ids of
	// server requests are then strings "<instance>-<n>" naming the
	// instance that sent them, and a response is forwarded to that
	// instance alone (to its own channel, with a [ports.AddressedBus]).
	// Nil: one instance, nothing shared.
	Bus ports.NotificationBus
	// Shared is what the instances of one server share (see
	// [ports.SharedState]): its StateKeys and Bus stand in for the fields
	// above that are left nil, and the Streamable HTTP handler takes its
	// SessionStore and EventStore (see [Engine.Shared]).
	Shared ports.SharedState
	// MaxForwardsPerMessage bounds what one message of a client (a
	// JSON-RPC batch counts as one) makes the engine forward to the other
	// instances over Bus: its responses to server requests another
	// instance sent, and its cancellations of requests not running here
	// (default [DefaultMaxForwardsPerMessage]; hexmcp.Unlimited: no bound).
	// Only what can match elsewhere is forwarded at all: a response whose
	// id names another instance (see [Options.Bus]), to that instance
	// alone; a cancellation of a request id not in flight here, of an
	// initialized session. Past the bound they are dropped, counted
	// ([Engine.DroppedForwards]) and logged at a bounded rate; the client
	// gets no answer to them either way (responses and notifications
	// have none).
	MaxForwardsPerMessage int
	// MaxForwardsPerClient bounds what one client forwards that way per
	// second, over all its sessions at this instance (default
	// 64; hexmcp.Unlimited: no bound). The client is
	// the session's Peer (the HTTP transport's ClientKey: the
	// authenticated subject, else the remote address). Past it, as past
	// MaxForwardsPerMessage.
	MaxForwardsPerClient int
	// MaxBusQueue bounds the notices waiting to be published to Bus
	// (default 1024; hexmcp.Unlimited: no bound), and
	// MaxBusQueueBytes their bytes (default 16 MiB;
	// hexmcp.Unlimited: no bound; never less than one notice of 4 MiB). The
	// engine never waits on the bus: what it raises (a list change, a
	// resource update, a forwarded response) is delivered here at once
	// and queued for the bus, which one goroutine feeds in order; a list
	// change or resource update already queued is not queued twice. Past
	// either bound a notice is dropped for the other instances, counted
	// ([Engine.DroppedNotices]) and logged at a bounded rate (the bus
	// delivers at most once anyway). Notices still queued when the engine
	// closes are dropped.
	MaxBusQueue      int
	MaxBusQueueBytes int
	// OnSessionEnd, when set, is called once for every handshake-era
	// session that ends: its connection closed (stdio, WebSocket), its
	// client deleted it, or the store dropped it (Streamable HTTP; an
	// instance that merely lets its copy go does not count). It runs in
	// the goroutine that ended the session: keep it short.
	OnSessionEnd func(handlerapi.SessionEnd)
	// RequestStateTTL is how long a requestState stays valid (default 15
	// minutes): a retry after that is refused with -32602 and the client
	// starts over. Until then a state may be sent again any number of
	// times (replayed): it is not a one-time token. Nothing in it is
	// trusted more than what the client could send anyway: the answers it
	// carries (like those of inputResponses) are the client's own, and its
	// signature only binds them to the request, principal and expiry, so
	// a handler checks an answer as it checks any input.
	RequestStateTTL time.Duration
	// Clock tells the time for requestState expiry (default the system
	// clock).
	Clock ports.Clock
	// MaxURILength bounds, in bytes, the URI of resources/read,
	// resources/subscribe and resources/unsubscribe, and the ref.uri of
	// completion/complete (default 2048; negative: no
	// bound). A longer one is refused with -32602 naming the limit before
	// any lookup, and AddResource refuses a resource URI (or URI template)
	// longer than it, which no client could name.
	MaxURILength int
	// MaxSubscriptions bounds the resources/subscribe subscriptions one
	// handshake-era session holds (default 1000;
	// negative: no bound). One more is refused with -32602 naming the
	// limit; subscribing again to a URI already subscribed to does not
	// count, and unsubscribing frees a place.
	MaxSubscriptions int
	// MaxSubscriptionBytes bounds the total length, in bytes, of the URIs
	// one session is subscribed to (default 64 KiB;
	// negative: no bound). A subscription past it is refused with -32602
	// naming the limit.
	MaxSubscriptionBytes int
	// MaxClientDeclarationBytes bounds, in bytes, what a client declares
	// of itself that the engine keeps: an initialize's capabilities and
	// clientInfo (as sent) and the request headers its transport hands
	// over, which the handshake-era session keeps for its life; a
	// stateless-era request's _meta clientCapabilities and clientInfo
	// (a listen stream keeps them). Default
	// 64 KiB; hexmcp.Unlimited: no bound. Past it
	// the request is refused with -32602 naming the limit (data.limit
	// "maxClientDeclarationBytes", data.max) and no session is made.
	MaxClientDeclarationBytes int
	// MaxListeners bounds the subscriptions/listen streams (2026-07-28)
	// open at once on the engine, over every transport (default
	// 1,000; hexmcp.Unlimited: no bound). One more is refused at
	// once with [CodeListenLimit] (HTTP: 429 and Retry-After).
	MaxListeners int
	// MaxListenersPerClient bounds the listen streams one client has open
	// at once (default 16; hexmcp.Unlimited: no
	// bound), so that one client cannot take every place of MaxListeners.
	// One more is refused at once with [CodeListenLimit]. The client is
	// told by hexmcp.TransportInfo.ClientKey: the authenticated subject, else
	// the peer's IP address; without either, the connection (stdio, a
	// WebSocket connection). Behind a reverse proxy unauthenticated clients
	// share the proxy's address: authenticate them, or raise the bound.
	MaxListenersPerClient int
	// MaxListenSubscriptions bounds the resource URIs one listen stream
	// subscribes to (notifications.resourceSubscriptions; default
	// 100; hexmcp.Unlimited: no bound). Each URI is
	// also bounded by MaxURILength. A longer list is refused with -32602
	// naming the limit, before anything is kept of it.
	MaxListenSubscriptions int
	// ListenIdleTimeout ends a listen stream that has delivered nothing for
	// that long (default 10 minutes; hexmcp.Unlimited: never).
	// The server ends it as on a graceful stop, with the completion result
	// ([ErrEndedByServer]); a client still there listens again. Transport
	// keep-alives (SSE comments) do not count as deliveries: they find
	// peers that are gone, this frees the places of those that forgot.
	ListenIdleTimeout time.Duration
}

// withDefaults checks the required fields and fills the others with their
// defaults.
func (opts Options) withDefaults() (Options, error) {
	if opts.ToolRegistry == nil {
		return opts, errors.New("hexmcp: Options.ToolRegistry is required")
	}
	if opts.DisableValidation {
		opts.Validator = nil
	} else if opts.Validator == nil {
		return opts, errors.New("hexmcp: Options.Validator is required (set Options.DisableValidation to serve without input validation)")
	}
	if opts.Logger == nil {
		opts.Logger = deflog.New()
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	if opts.MaxConcurrentRequests <= 0 {
		opts.MaxConcurrentRequests = 64
	}
	opts.MaxInFlightBytesPerConn = limitOr(opts.MaxInFlightBytesPerConn, defaultMaxInFlightBytesPerConn)
	opts.MaxInFlightBytesPerClient = limitOr(opts.MaxInFlightBytesPerClient, defaultMaxInFlightBytesPerClient)
	opts.MaxInFlightBytes = limitOr(opts.MaxInFlightBytes, defaultMaxInFlightBytes)
	opts.MaxWaitingBytesPerClient = limitOr(opts.MaxWaitingBytesPerClient, defaultMaxWaitingBytesPerClient)
	opts.MaxWaitingBytes = limitOr(opts.MaxWaitingBytes, defaultMaxWaitingBytes)
	if opts.ClientRequestTimeout <= 0 {
		opts.ClientRequestTimeout = 10 * time.Minute
	}
	if opts.RequestStateTTL <= 0 {
		opts.RequestStateTTL = 15 * time.Minute
	}
	if opts.Clock == nil {
		opts.Clock = ports.SystemClock{}
	}
	opts.MaxURILength = limitOr(opts.MaxURILength, defaultMaxURILength)
	opts.MaxSubscriptions = limitOr(opts.MaxSubscriptions, defaultMaxSubscriptions)
	opts.MaxSubscriptionBytes = limitOr(opts.MaxSubscriptionBytes, defaultMaxSubscriptionBytes)
	opts.MaxClientDeclarationBytes = limitOr(opts.MaxClientDeclarationBytes, defaultMaxClientDeclarationBytes)
	opts.MaxListeners = limitOr(opts.MaxListeners, defaultMaxListeners)
	opts.MaxListenersPerClient = limitOr(opts.MaxListenersPerClient, defaultMaxListenersPerClient)
	opts.MaxListenSubscriptions = limitOr(opts.MaxListenSubscriptions, defaultMaxListenSubscriptions)
	opts.ListenIdleTimeout = limitOr(opts.ListenIdleTimeout, defaultListenIdleTimeout)
	if opts.StateKeys == nil {
		opts.StateKeys = opts.Shared.StateKeys
	}
	if opts.StateKeys == nil {
		opts.StateKeys = randomStateKeys()
	}
	if opts.Bus == nil {
		opts.Bus = opts.Shared.Bus
	}
	opts.MaxForwardsPerMessage = limitOr(opts.MaxForwardsPerMessage, DefaultMaxForwardsPerMessage)
	opts.MaxForwardsPerClient = limitOr(opts.MaxForwardsPerClient, defaultMaxForwardsPerClient)
	opts.MaxBusQueue = limitOr(opts.MaxBusQueue, defaultMaxBusQueue)
	opts.MaxBusQueueBytes = limitOr(opts.MaxBusQueueBytes, defaultMaxBusQueueBytes)
	if opts.MaxBusQueueBytes >= 0 {
		opts.MaxBusQueueBytes = max(opts.MaxBusQueueBytes, minBusQueueBytes)
	}
	if opts.Info.Name == "" {
		opts.Info.Name = "hexmcp-server"
	}
	if opts.Info.Version == "" {
		opts.Info.Version = "0.0.0"
	}
	return opts, nil
}
