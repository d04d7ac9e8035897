package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/ports"
)

// Extension is an MCP extension the engine serves (SEP-2133): it is
// advertised under capabilities.extensions, keyed by its ID, in both eras
// (the initialize result and server/discover), and only when registered
// (Options.Extensions). It may add request methods to the engine's method
// table and resources to its resource registry. An extension package (such
// as extensions/skills) builds one; a server adds its own the same way.
type Extension struct {
	// ID is the extension's identifier, a _meta-style key with its
	// mandatory prefix: reverse-DNS labels, a slash, a name
	// ("io.modelcontextprotocol/skills", "com.example/audit").
	ID string
	// Settings is the extension's settings object, sent as it is under
	// capabilities.extensions[ID] (nil: {}, support with no settings).
	// It must encode as a JSON object.
	Settings map[string]any
	// Methods are the request methods the extension adds. A name the
	// engine already serves (tools/call, …) or another extension adds
	// fails NewEngine.
	Methods []ExtensionMethod
	// Resources (hexmcp.Resource) are registered with Options.Resources by
	// NewEngine (they
	// need Options.ResourceRegistry).
	Resources []decl.Resource
	// Middleware, when not nil, wraps the handling of every request like
	// Options.Middleware, inside all of those (the extensions' own in
	// the order of Options.Extensions): an extension that changes how
	// the engine's own methods answer (the tasks extension answers a
	// tools/call with a task) does it here.
	Middleware Middleware
	// Close, when not nil, is called once by Engine.Close (after the
	// engine's calls were cancelled), to stop what the extension runs in
	// the background; its error is logged.
	Close func() error
	// Attach, when not nil, is called once by NewEngine with the engine
	// the extension serves, before any request: an extension that
	// notifies clients from the background (Engine.NotifyTopic) keeps it.
	Attach func(*Engine)
	// Listen are the members of subscriptions/listen's notifications
	// object the extension serves (2026-07-28).
	Listen []ListenTopic
}

// ListenTopic is a member of the subscriptions/listen notifications
// object that an extension serves: an array of ids the stream asks to be
// told about, such as the tasks extension's taskIds. The engine reads it
// within the limits of resourceSubscriptions (Options.MaxListenSubscriptions
// ids of Options.MaxURILength bytes), acknowledges the ids Accept keeps,
// and delivers to the stream what [Engine.NotifyTopic] publishes for them.
type ListenTopic struct {
	// Name is the member's name ("taskIds"); not one the engine reads
	// itself, nor another extension's.
	Name string
	// Accept returns the ids among ids the stream may listen to (the
	// others are left out of the acknowledgement); a
	// *[domain.ProtocolError] refuses the listen request (the tasks
	// extension answers -32021 to a client that did not declare it), any
	// other error is logged and answered -32603. nil accepts every id.
	Accept func(ctx context.Context, req *Request, ids []string) ([]string, error)
}

// ExtensionMethod is one request method of an [Extension].
type ExtensionMethod struct {
	// Name is the JSON-RPC method name ("skills/list").
	Name string
	// HandshakeOnly and StatelessOnly restrict the method to one era
	// (both false: it exists in both). In the other era it is answered
	// -32601, as an unknown method.
	HandshakeOnly, StatelessOnly bool
	// Call runs the method apart from the connection's reader, as
	// tools/call is (on stdio and WebSocket: other requests of the
	// connection are answered meanwhile, and notifications/cancelled
	// cancels its ctx): for a method that may take long, such as one
	// that reads a shared store. false: the reader answers it in order.
	Call bool
	// Cacheable adds the list-caching attributes (ttlMs from
	// Options.ListTTL, cacheScope) to the result in revisions that have
	// them (2026-07-28 on), unless the result sets them itself.
	Cacheable bool
	// Serve answers a request. Its result must encode as a JSON object;
	// the engine adds resultType "complete" and the result _meta in the
	// revisions that need them. A [domain.ProtocolError] (possibly
	// wrapped) is sent to the client as it is; any other error is logged
	// and answered -32603.
	Serve func(ctx context.Context, req ExtensionRequest) (any, error)
}

// ExtensionRequest is what an [ExtensionMethod]'s Serve gets.
type ExtensionRequest struct {
	// Method is the request method.
	Method string
	// Params is the request's params member as received (nil when
	// absent), _meta included.
	Params jsontext.Value
	// Revision and Era are the request's protocol revision and era.
	Revision domain.Revision
	Era      domain.Era
}

// InvalidParams returns the -32602 error an extension method answers for
// params it cannot serve: "Invalid params: " followed by msg.
func InvalidParams(msg string) error {
	return &domain.ProtocolError{Code: domain.CodeInvalidParams, Message: "Invalid params: " + msg}
}

// validExtensionID tells whether id is prefix/name with a reverse-DNS
// prefix: labels of letters, digits and hyphens (starting with a letter,
// not ending with a hyphen) joined by dots, at least two of them; and a
// name of letters, digits, '-', '_' and '.' starting and ending with a
// letter or digit.
func validExtensionID(id string) bool {
	prefix, name, ok := strings.Cut(id, "/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return false
	}
	labels := strings.Split(prefix, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || !isLetter(l[0]) || l[len(l)-1] == '-' {
			return false
		}
		for i := range len(l) {
			if c := l[i]; !isLetter(c) && !isDigit(c) && c != '-' {
				return false
			}
		}
	}
	if c := name[0]; !isLetter(c) && !isDigit(c) {
		return false
	}
	if c := name[len(name)-1]; !isLetter(c) && !isDigit(c) {
		return false
	}
	for i := range len(name) {
		if c := name[i]; !isLetter(c) && !isDigit(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// extensions are the MCP extensions the engine serves
// (Options.Extensions): their settings (capabilities.extensions), the
// methods they add to the method table, their listen topics, and what
// NewEngine and Close run for them (Attach, Close).
type extensions struct {
	settings  map[string]any         // by identifier (nil: none)
	methods   map[string]*method     // the methods they add, by name
	topics    map[string]ListenTopic // their listen topics, by name
	closers   []namedClose           // their Close, run once by Engine.Close
	attach    []func(*Engine)        // their Attach, run by NewEngine
	closeOnce sync.Once
	res       *results
	log       ports.Logger
}

// add checks opts.Extensions, builds the extension methods and settings,
// and appends their resources to opts.Resources and their middleware to
// opts.Middleware.
func (xs *extensions) add(opts *Options) error {
	if len(opts.Extensions) == 0 {
		return nil
	}
	xs.settings = make(map[string]any, len(opts.Extensions))
	xs.methods = make(map[string]*method)
	for _, x := range opts.Extensions {
		if !validExtensionID(x.ID) {
			return fmt.Errorf("hexmcp: extension %q: the identifier must be prefix/name with a reverse-DNS prefix (io.modelcontextprotocol/skills)", x.ID)
		}
		if _, dup := xs.settings[x.ID]; dup {
			return fmt.Errorf("hexmcp: extension %q is registered twice", x.ID)
		}
		settings := map[string]any{}
		if x.Settings != nil {
			settings = maps.Clone(x.Settings)
		}
		if b, err := json.Marshal(settings, json.Deterministic(true)); err != nil || jsontext.Value(b).Kind() != '{' {
			return fmt.Errorf("hexmcp: extension %q: the settings must encode as a JSON object: %w", x.ID, cmpErr(err))
		}
		xs.settings[x.ID] = settings
		for _, xm := range x.Methods {
			switch {
			case xm.Name == "":
				return fmt.Errorf("hexmcp: extension %q: a method has no name", x.ID)
			case xm.Serve == nil:
				return fmt.Errorf("hexmcp: extension %q: method %q has no Serve function", x.ID, xm.Name)
			case xm.HandshakeOnly && xm.StatelessOnly:
				return fmt.Errorf("hexmcp: extension %q: method %q cannot be both HandshakeOnly and StatelessOnly", x.ID, xm.Name)
			case methods[xm.Name] != nil:
				return fmt.Errorf("hexmcp: extension %q: method %q is one the engine serves itself", x.ID, xm.Name)
			case xs.methods[xm.Name] != nil:
				return fmt.Errorf("hexmcp: extension %q: method %q is added by another extension too", x.ID, xm.Name)
			}
			xs.methods[xm.Name] = extensionEntry(xm)
		}
		opts.Resources = append(opts.Resources, x.Resources...)
		if x.Middleware != nil {
			opts.Middleware = append(slices.Clip(opts.Middleware), x.Middleware)
		}
		if x.Close != nil {
			xs.closers = append(xs.closers, namedClose{x.ID, x.Close})
		}
		for _, lt := range x.Listen {
			switch lt.Name {
			case "", "toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions":
				return fmt.Errorf("hexmcp: extension %q: the listen topic %q is not one an extension may serve", x.ID, lt.Name)
			}
			if _, dup := xs.topics[lt.Name]; dup {
				return fmt.Errorf("hexmcp: extension %q: the listen topic %q is served by another extension too", x.ID, lt.Name)
			}
			if xs.topics == nil {
				xs.topics = make(map[string]ListenTopic)
			}
			xs.topics[lt.Name] = lt
		}
		if x.Attach != nil {
			xs.attach = append(xs.attach, x.Attach)
		}
	}
	return nil
}

// namedClose is an extension's Close with its ID, for the log.
type namedClose struct {
	id    string
	close func() error
}

// cmpErr stands in for a nil error in a message about a result that
// encoded, but not as an object.
func cmpErr(err error) error {
	if err == nil {
		return errors.New("not an object")
	}
	return err
}

// extensionEntry makes the method-table entry of an extension method.
func extensionEntry(xm ExtensionMethod) *method {
	return &method{
		MethodSpec: MethodSpec{Name: xm.Name, Handshake: !xm.StatelessOnly, Stateless: !xm.HandshakeOnly, Call: xm.Call},
		serve: func(e *Engine, ctx context.Context, _ *session, m message, _ *wireParams, ci callInfo) ([]byte, *rpcError) {
			return e.ext.serve(ctx, xm, m, ci)
		},
	}
}

// serve runs an extension method and encodes its result.
func (xs *extensions) serve(ctx context.Context, xm ExtensionMethod, m message, ci callInfo) ([]byte, *rpcError) {
	var params jsontext.Value
	if len(m.params.raw) > 0 {
		params = m.params.raw.Clone()
	}
	res, err := xm.Serve(ctx, ExtensionRequest{Method: m.method, Params: params, Revision: ci.rev, Era: ci.era})
	if err != nil {
		var pe *domain.ProtocolError
		if errors.As(err, &pe) {
			return nil, &rpcError{id: m.id, err: pe}
		}
		logf(xs.log, ctx, slog.LevelError, "hexmcp: extension method failed", slog.Any("method", m.method), slog.Any("error", err))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	b, err := json.Marshal(res, json.Deterministic(true))
	var obj map[string]jsontext.Value
	if err == nil {
		err = json.Unmarshal(b, &obj)
	}
	if err != nil || obj == nil {
		logf(xs.log, ctx, slog.LevelError, "hexmcp: extension method result is not a JSON object", slog.Any("method", m.method), slog.Any("error", cmpErr(err)))
		return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
	}
	if ci.features.ResultType {
		if _, ok := obj["resultType"]; !ok {
			obj["resultType"] = jsontext.Value(`"complete"`)
		}
	}
	if xm.Cacheable && ci.features.Caching {
		if _, ok := obj["ttlMs"]; !ok {
			obj["ttlMs"] = jsontext.Value(fmt.Sprint(xs.res.ttlMs))
		}
		if _, ok := obj["cacheScope"]; !ok {
			obj["cacheScope"] = jsontext.Value(`"` + xs.res.cacheScope() + `"`)
		}
	}
	if ci.features.ResultType { // the result _meta goes with resultType, as in toolCatalog.encodeResult
		if err := xs.res.addMeta(obj, ci.rev); err != nil {
			logf(xs.log, ctx, slog.LevelError, "hexmcp: extension method result _meta is not an object", slog.Any("method", m.method))
			return nil, newRPCError(m.id, domain.CodeInternalError, "Internal error", nil)
		}
	}
	return xs.res.encode(m.id, obj)
}

// close runs the extensions' Close, once.
func (xs *extensions) close() {
	xs.closeOnce.Do(func() {
		for _, c := range xs.closers {
			if err := c.close(); err != nil {
				logf(xs.log, context.Background(), slog.LevelError, "hexmcp: closing an extension failed", slog.Any("extension", c.id), slog.Any("error", err))
			}
		}
	})
}

// Extensions returns the identifiers of the registered extensions.
func (e *Engine) Extensions() []string {
	ids := make([]string, 0, len(e.opts.Extensions))
	for _, x := range e.opts.Extensions {
		ids = append(ids, x.ID)
	}
	return ids
}
