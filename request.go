package hexmcp

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// The request a handler serves: who asks, under which revision, and what
// the handler may send or ask back.

// RequestContext is what a handler knows of the request it serves; get it
// with [RequestFrom], or take a *RequestContext parameter in a function
// given to [NewTool]. It is valid while the handler runs. Its methods
// (go doc github.com/hexmcp/hexmcp/app RequestContext lists them all):
//
//   - who and how: Revision, Era, Features (what the revision allows: ask
//     it rather than compare revisions), Client, ClientCapabilities, SessionID,
//     RequestID, ToolName, Transport (headers and the authenticated
//     [Principal]), Trace, AccessToken (with [WithAccessToken]);
//   - sending to the client: ReportProgress(ctx, progress, total, message)
//     and CanReportProgress, Log(ctx, level, logger, data) ([LogLevel]);
//   - asking the client, in both eras with the same code: Elicit,
//     CreateMessage, ListRoots, Ask (several questions at once: [ElicitInput],
//     [SamplingInput], [RootsInput]), CanAsk, Answers,
//     RequireURLElicitation, NotifyElicitationComplete;
//   - tools of the session alone: AddSessionTool, RemoveSessionTool.
type RequestContext = app.RequestContext

// RequestFrom returns the request context in a handler's ctx, or nil
// outside a request.
func RequestFrom(ctx context.Context) *RequestContext { return app.RequestFrom(ctx) }

// TransportInfo is what the transport knows of a request
// ([RequestContext.Transport], [Viewer]); its ClientKey method names the
// client that limits count by.
//
//	type TransportInfo struct {
//		Header     map[string][]string // HTTP headers minus credentials (nil on stdio)
//		Principal  *Principal          // who an authenticator vouched for, or nil
//		RemoteAddr string              // the peer's address, when known
//		Client     string              // the client key the transport decided, if any
//	}
type TransportInfo = handlerapi.TransportInfo

// Principal is who an authenticated request comes from, as the
// Authenticator of [HTTPOptions] found it: Subject, Scopes, Claims, and
// when the credential Expires. Handlers never see the token itself, unless
// declared [WithAccessToken].
type Principal = ports.Principal

// Revision is an MCP protocol revision ("2025-11-25"), as
// [RequestContext.Revision] reports it. What a revision allows is
// [RequestContext.Features]'s to say, not a comparison of revisions.
type Revision = domain.Revision

// The revisions a server speaks, oldest first: 2024-11-05 to 2025-11-25 are
// the handshake era (initialize, sessions), 2026-07-28 the stateless one.
const (
	Revision20241105 = domain.Revision20241105
	Revision20250326 = domain.Revision20250326
	Revision20250618 = domain.Revision20250618
	Revision20251125 = domain.Revision20251125
	Revision20260728 = domain.Revision20260728
)

// Era is the protocol era of a request ([RequestContext.Era], the Era of
// a middleware's [Request]): [EraHandshake] or [EraStateless].
type Era = domain.Era

// The eras of a request.
const (
	// EraHandshake: revisions 2024-11-05 to 2025-11-25, which begin with
	// initialize and keep a session.
	EraHandshake = domain.EraHandshake
	// EraStateless: revision 2026-07-28, whose every request names its
	// revision and the client's capabilities in _meta.
	EraStateless = domain.EraStateless
)

// LogLevel is the severity of a log message sent to the client
// ([RequestContext.Log]), syslog's levels from LogDebug to LogEmergency;
// the client receives those at or above the level it asked for.
type LogLevel = domain.LogLevel

// The levels of [LogLevel], least severe first.
const (
	LogDebug     = domain.LogDebug
	LogInfo      = domain.LogInfo
	LogNotice    = domain.LogNotice
	LogWarning   = domain.LogWarning
	LogError     = domain.LogError
	LogCritical  = domain.LogCritical
	LogAlert     = domain.LogAlert
	LogEmergency = domain.LogEmergency
)

// ElicitParams is a question for the user (elicitation/create), made by
// [ElicitForm] or [ElicitURL] and asked with [RequestContext].Elicit or
// [ElicitInput].
type ElicitParams = domain.ElicitParams

// ElicitForm asks the user to fill in a form described by schema, a flat
// JSON Schema object ([ElicitSchemaFor] makes one from a struct).
func ElicitForm(message string, schema json.RawMessage) ElicitParams {
	return handlerapi.ElicitForm(message, schema)
}

// ElicitURL asks the user to open url, for an out-of-band interaction (an
// OAuth consent page): the data never passes through the client.
func ElicitURL(message, url, elicitationID string) ElicitParams {
	return handlerapi.ElicitURL(message, url, elicitationID)
}

// ElicitSchemaFor describes the Go struct type t as an elicitation form
// schema, from its tags (title, description, default, enum), checked to be
// the flat object of primitive properties elicitation allows:
// ElicitSchemaFor(reflect.TypeFor[Booking]()).
func ElicitSchemaFor(t reflect.Type) (json.RawMessage, error) { return domain.ElicitSchemaFor(t) }

// ElicitResult is the user's answer to an elicitation: its Action
// ([ElicitAccept], [ElicitDecline], [ElicitCancel]) and, when accepted,
// its Content. Its methods: Accepted, and Decode(&v), which decodes the
// accepted form into v and fails when the user declined or cancelled.
type ElicitResult = domain.ElicitResult

// ElicitAction is what the user did with an elicitation.
type ElicitAction = domain.ElicitAction

// The actions of an [ElicitResult].
const (
	ElicitAccept  = domain.ElicitAccept  // the user submitted the form
	ElicitDecline = domain.ElicitDecline // the user said no
	ElicitCancel  = domain.ElicitCancel  // the user dismissed the request
)

// CreateMessageParams ask the client's LLM for a completion
// (sampling/createMessage, [RequestContext].CreateMessage or
// [SamplingInput]): Messages ([UserText]), SystemPrompt, MaxTokens and the
// model preferences.
type CreateMessageParams = domain.CreateMessageParams

// CreateMessageResult is the client's completion; its Text method returns
// the text of its content.
type CreateMessageResult = domain.CreateMessageResult

// SamplingMessage is one message of a [CreateMessageParams].
type SamplingMessage = domain.SamplingMessage

// ModelPreferences are what a [CreateMessageParams] asks of the client's
// choice of model: Hints ([ModelHint], tried in order) and the cost, speed
// and intelligence priorities, each a *float64 from 0 to 1.
type ModelPreferences = domain.ModelPreferences

// ModelHint suggests a model by Name, which the client may match as a
// substring ("claude-3-5-sonnet", "sonnet").
type ModelHint = domain.ModelHint

// UserText is a [SamplingMessage] of the user holding text.
func UserText(text string) SamplingMessage { return handlerapi.UserText(text) }

// AssistantText is a [SamplingMessage] of the assistant holding text, for
// a conversation that goes on from an earlier completion.
func AssistantText(text string) SamplingMessage { return handlerapi.AssistantText(text) }

// ListRootsResult is the client's answer to roots/list
// ([RequestContext].ListRoots, [RootsInput]): its Roots, each a URI and a
// name.
type ListRootsResult = domain.ListRootsResult

// InputRequest is one question for the client, for [RequestContext].Ask
// and CanAsk: [ElicitInput], [SamplingInput] or [RootsInput] make one,
// under a key stable across the rounds of a stateless-era request.
type InputRequest = handlerapi.InputRequest

// InputResponses are the client's answers to [RequestContext].Ask, by key:
// its methods Elicitation(key), Sampling(key) and Roots(key) return each.
type InputResponses = handlerapi.InputResponses

// ElicitInput asks the user (elicitation/create) under key.
func ElicitInput(key string, p ElicitParams) InputRequest { return handlerapi.ElicitInput(key, p) }

// SamplingInput asks the client's LLM (sampling/createMessage) under key.
func SamplingInput(key string, p CreateMessageParams) InputRequest {
	return handlerapi.SamplingInput(key, p)
}

// RootsInput asks for the client's roots (roots/list) under key.
func RootsInput(key string) InputRequest { return handlerapi.RootsInput(key) }

// The errors a handler meets when it asks the client or reports progress
// (each is the engine's, under its one name here): test for them with
// [errors.Is] and [errors.As].
var (
	// ErrInputRequired is wrapped by the error [RequestContext].Ask
	// returns in the stateless era while answers are missing: return it
	// from the handler, and the engine asks the client (resultType
	// "input_required").
	ErrInputRequired = handlerapi.ErrInputRequired
	// ErrClientGone is wrapped by the error of a question to the client
	// whose session ended before the client answered.
	ErrClientGone = handlerapi.ErrClientGone
	// ErrNoClientStream is wrapped by the error of a question to the
	// client that has no way to it (an HTTP client that accepts only JSON
	// and has no GET stream open, or a broken connection).
	ErrNoClientStream = handlerapi.ErrNoClientStream
	// ErrTooManyWaiting is wrapped by the error of a question to the
	// client while calls waiting for their client's answers already hold
	// as many bytes as one client, or all of them, may
	// ([Options].MaxWaitingBytesPerClient, MaxWaitingBytes).
	ErrTooManyWaiting = handlerapi.ErrTooManyWaiting
	// ErrNoSession is returned by what needs a handshake-era session
	// ([RequestContext].AddSessionTool) in a stateless-era request.
	ErrNoSession = handlerapi.ErrNoSession
	// ErrProgressNotIncreasing is returned by
	// [RequestContext].ReportProgress when a value is not greater than the
	// one before it.
	ErrProgressNotIncreasing = handlerapi.ErrProgressNotIncreasing
)

// ClientError is the error a client answered a question with (handshake
// era), such as -1 "User rejected sampling request": its Method, Code,
// Message and Data.
type ClientError = handlerapi.ClientError

// InputRequiredError is the error [RequestContext].Ask returns in the
// stateless era while answers are missing (Keys); it wraps
// [ErrInputRequired].
type InputRequiredError = handlerapi.InputRequiredError

// MissingCapabilityError is the error of a question the client cannot
// answer (it did not declare the capability, or its revision lacks the
// method); returned from the handler, the engine answers -32021 with
// data.requiredCapabilities.
type MissingCapabilityError = handlerapi.MissingCapabilityError

// URLElicitationRequiredError is the error of
// [RequestContext].RequireURLElicitation: returned from the handler, the
// engine answers -32042 with data.elicitations (revision 2025-11-25).
type URLElicitationRequiredError = handlerapi.URLElicitationRequiredError

// InputResponseError is the error of a question whose answer does not
// follow the protocol or, for a form elicitation, does not match the
// requested schema (Key, Method, Reason); returned from the handler, the
// engine answers -32602.
type InputResponseError = handlerapi.InputResponseError
