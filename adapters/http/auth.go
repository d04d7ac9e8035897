package mcphttp

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/hexmcp/hexmcp/internal/deflog"
	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// AuthOptions configure [RequireBearer].
type AuthOptions struct {
	// ResourceMetadataURL is the URL of the server's OAuth 2.0 Protected
	// Resource Metadata (RFC 9728); when set it is sent in the
	// WWW-Authenticate header of every 400, 401 and 403 answer
	// (resource_metadata="…"), as MCP's authorization spec asks, so that
	// clients can find the authorization server. mcpoauth.Mount serves the
	// document and returns this URL.
	ResourceMetadataURL string
	// RequiredScopes must all be granted to the token (Principal.Scopes);
	// a token that lacks one is refused with 403 insufficient_scope. They
	// are named in the scope parameter of the 401 and 403 challenges, so
	// that a client asks the authorization server for them.
	RequiredScopes []string
	// Logger receives the refusals of a token, at slog.LevelInfo, and
	// the authenticator's failures that are not a bad token (an
	// unreachable authorization server, say), at slog.LevelError; default:
	// slog on standard error (slog.New(slog.DiscardHandler) discards them). See
	// [RequireBearer] for what a record holds: never the token.
	Logger ports.Logger
	// MaxLogsPerSecond bounds the records of refusals written per second,
	// as many at once, and apart from them those of failures; the records
	// beyond are counted, and the next one written says how many were left
	// out (suppressed). Nothing changes for the client. Default
	// [DefaultMaxAuthLogsPerSecond] (10).
	MaxLogsPerSecond int
}

// DefaultMaxAuthLogsPerSecond is how many records of refused tokens
// [RequireBearer] writes per second at most (and as many of failures of
// its authenticator) unless AuthOptions.MaxLogsPerSecond says otherwise:
// enough to see who is refused and why, few enough that a flood of bad
// tokens cannot flood the log.
const DefaultMaxAuthLogsPerSecond = 10

// RequireBearer returns a middleware that lets through only requests with
// a valid "Authorization: Bearer <token>" (RFC 6750): the authenticator
// judges the token, and the principal it returns is put in the request's
// context ([ports.WithPrincipal]) for the tool handlers. A token in the URL's
// query string (access_token, which the MCP authorization spec forbids
// clients to send) is a 400 with error="invalid_request", even beside a
// header; a missing or malformed header is a 401 whose WWW-Authenticate
// names no error; a token the authenticator rejects
// (ports.ErrUnauthenticated) a 401 with error="invalid_token"; missing
// scopes a 403 with error="insufficient_scope" ([InsufficientScope]); any
// other authenticator error a 503 (the client's token is not at fault)
// with Retry-After: what the error says when it has a method
// RetryAfter() time.Duration (mcpoauth's errors do), else 5 seconds.
// Every challenge carries resource_metadata (when
// AuthOptions.ResourceMetadataURL is set) and, on a 401 or 403, the
// RequiredScopes as scope. Error details never reach the client.
//
// A request that opens a stream which may outlive its token (a GET, a
// subscriptions/listen) ends when the principal expires
// (ports.Principal.Expires, which mcpoauth sets): its context is cancelled
// then, as when the client goes away, so that nothing more is sent on a
// token no longer accepted; the client reconnects (GET with Last-Event-ID,
// or listens again) with a fresh token, and is answered 401 until it has
// one. Other requests are served to their end, as they were accepted. A
// WebSocket upgrade is left to its handler, which closes the connection at
// expiry with its own close code.
//
// Every refusal of a token (the 400, the 401 invalid_token, the 403) is
// logged at slog.LevelInfo, "hexmcp: a bearer token was refused", with
// the challenge's error code, the reason (the authenticator's error: an
// mcpoauth verifier says which check failed, "the token is for
// ["https://elsewhere/mcp"], not for this resource", an unknown kid, an
// expiry, a typ, an inactive token…; for a 403 the subject and the
// missing scopes), the remote address, the method and the path; an
// authenticator's failure (the 503) at slog.LevelError, "hexmcp: the
// authenticator failed". A request without a Bearer credential (none, or a
// malformed Authorization header), the first step of every OAuth client,
// is not logged. A record never holds the token, nor the query string:
// should an authenticator's error quote the token, or a dot-separated
// segment of it, that is cut out; the reason and the path are cut at 512
// bytes. Records are bounded by AuthOptions.MaxLogsPerSecond (refusals and
// failures apart); the next record written after some were left out says
// how many (suppressed). An operator who wants no refusals sets the
// logger's level above Info.
func RequireBearer(a ports.Authenticator, opts AuthOptions) func(http.Handler) http.Handler {
	if opts.Logger == nil {
		opts.Logger = deflog.New()
	}
	perSecond := opts.MaxLogsPerSecond
	if perSecond <= 0 {
		perSecond = DefaultMaxAuthLogsPerSecond
	}
	refusals, failures := newLogBudget(perSecond), newLogBudget(perSecond)
	required := slices.DeleteFunc(slices.Clone(opts.RequiredScopes), badScope)
	scope := strings.Join(required, " ")
	gate := &bearerGate{metadataURL: opts.ResourceMetadataURL, required: required,
		refused: func(r *http.Request, p *ports.Principal, needed []string) {
			refusals.log(r, opts.Logger, slog.LevelInfo, msgRefused, func() []slog.Attr {
				var subject string
				var missing []string
				if p != nil {
					token := ports.AccessTokenFrom(r.Context())
					subject, missing = redact(p.Subject, token), MissingScopes(*p, needed...)
				}
				return []slog.Attr{slog.Any("error", "insufficient_scope"), slog.Any("reason", "the token lacks the scopes of what the request calls"),
					slog.Any("subject", subject), slog.Any("missing_scopes", missing)}
			})
		}}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tokenInQuery(r) {
				refusals.log(r, opts.Logger, slog.LevelInfo, msgRefused, func() []slog.Attr {
					return []slog.Attr{slog.Any("error", "invalid_request"), slog.Any("reason", "an access_token in the query string (RFC 6750 section 2.3), which the MCP authorization spec forbids")}
				})
				challenge(w, http.StatusBadRequest, opts, "invalid_request", "")
				return
			}
			token, ok := bearerToken(r.Header.Values("Authorization"))
			if !ok {
				challenge(w, http.StatusUnauthorized, opts, "", scope)
				return
			}
			p, err := a.Authenticate(r.Context(), token)
			if err != nil {
				if errors.Is(err, ports.ErrUnauthenticated) {
					refusals.log(r, opts.Logger, slog.LevelInfo, msgRefused, func() []slog.Attr {
						return []slog.Attr{slog.Any("error", "invalid_token"), slog.Any("reason", redact(err.Error(), token))}
					})
					challenge(w, http.StatusUnauthorized, opts, "invalid_token", scope)
					return
				}
				failures.log(r, opts.Logger, slog.LevelError, "hexmcp: the authenticator failed", func() []slog.Attr {
					return []slog.Attr{slog.Any("error", redact(err.Error(), token))}
				})
				w.Header().Set("Retry-After", authRetryAfter(err))
				writeAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable")
				return
			}
			if missing := MissingScopes(p, opts.RequiredScopes...); len(missing) > 0 {
				refusals.log(r, opts.Logger, slog.LevelInfo, msgRefused, func() []slog.Attr {
					return []slog.Attr{slog.Any("error", "insufficient_scope"), slog.Any("reason", "the token lacks required scopes"),
						slog.Any("subject", redact(p.Subject, token)), slog.Any("missing_scopes", missing)}
				})
				InsufficientScope(w, opts, opts.RequiredScopes...)
				return
			}
			ctx := withGate(ports.WithPrincipal(r.Context(), p), gate)
			if !p.Expires.IsZero() && longLived(r) {
				var end context.CancelCauseFunc
				ctx, end = context.WithCancelCause(ctx)
				t := time.AfterFunc(time.Until(p.Expires), func() { end(errTokenExpired) })
				defer func() {
					t.Stop()
					end(nil)
				}()
			}
			next.ServeHTTP(w, r.WithContext(ports.WithAccessToken(ctx, token)))
		})
	}
}

// msgRefused is the message of the record of a refused token.
const msgRefused = "hexmcp: a bearer token was refused"

// maxLoggedReason bounds the reason and the path a record of RequireBearer
// carries, in bytes: an authenticator's error may quote what the token's
// header says (a kid, a typ), which the client chose, as it chose the path.
const maxLoggedReason = 512

// logBudget bounds the records of one kind that RequireBearer writes: a
// token bucket of n per second, n at once, and the count of the records
// left out since the last one written.
type logBudget struct {
	lim        *rate.Limiter
	suppressed atomic.Int64
}

func newLogBudget(perSecond int) *logBudget {
	return &logBudget{lim: rate.NewLimiter(rate.Limit(perSecond), perSecond)}
}

// log writes one record of r at level, with the fields fields returns
// (called only when the record is written), the remote address, the
// method and the path, and the number of records left out before it when
// some were. Nothing is counted while the logger does not want the level.
func (b *logBudget) log(r *http.Request, l ports.Logger, level slog.Level, msg string, fields func() []slog.Attr) {
	ctx := r.Context()
	if !l.Enabled(ctx, level) {
		return
	}
	suppressed, ok := b.take(time.Now())
	if !ok {
		return
	}
	f := append(fields(), slog.Any("remote", r.RemoteAddr), slog.Any("method", r.Method), slog.Any("path", redact(r.URL.Path, "")))
	if suppressed > 0 {
		f = append(f, slog.Any("suppressed", suppressed))
	}
	l.LogAttrs(ctx, level, msg, f...)
}

// take reports whether a record may be written at now and, when it may,
// how many were left out since the last one (which it forgets).
func (b *logBudget) take(now time.Time) (suppressed int64, ok bool) {
	if !b.lim.AllowN(now, 1) {
		b.suppressed.Add(1)
		return 0, false
	}
	return b.suppressed.Swap(0), true
}

// redact returns s, an authenticator's error text, without the token nor
// any of its dot-separated segments of 8 bytes or more (a JWT's header,
// claims or signature), at most maxLoggedReason bytes: mcpoauth's errors
// never quote the token, an authenticator of someone else's might.
func redact(s, token string) string {
	if token != "" {
		s = strings.ReplaceAll(s, token, "[token]")
		for part := range strings.SplitSeq(token, ".") {
			if len(part) >= 8 {
				s = strings.ReplaceAll(s, part, "[token]")
			}
		}
	}
	if len(s) > maxLoggedReason {
		s = portlimits.Cut(s, maxLoggedReason) + "…"
	}
	return s
}

// errTokenExpired is the cause of the end of a stream whose token expired.
var errTokenExpired = errors.New("hexmcp: the access token expired")

// longLived reports whether r opens an exchange that may outlive its
// token: a GET (the standalone SSE stream of a session, or its resumption)
// or a POST subscriptions/listen (2026-07-28), not a WebSocket upgrade,
// whose handler ends the connection itself (with close code 4401).
func longLived(r *http.Request) bool {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return false
	}
	return r.Method == http.MethodGet || (r.Method == http.MethodPost && r.Header.Get(HeaderMethod) == "subscriptions/listen")
}

// defaultAuthRetryAfter is the Retry-After of RequireBearer's 503 when the
// authenticator's error does not say how long to wait: 5 seconds.
const defaultAuthRetryAfter = 5 * time.Second

// authRetryAfter is the Retry-After, in whole seconds (at least 1), of an
// authenticator's failure: what its error's RetryAfter method says
// (mcpoauth's do: the time until the key set may be fetched again), else
// defaultAuthRetryAfter.
func authRetryAfter(err error) string {
	d := defaultAuthRetryAfter
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		d = min(ra.RetryAfter(), time.Hour)
	}
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}

// tokenInQuery reports whether the request's URL carries an access_token
// query parameter (RFC 6750 section 2.3).
func tokenInQuery(r *http.Request) bool {
	if r.URL.RawQuery == "" {
		return false
	}
	q, _ := url.ParseQuery(r.URL.RawQuery) // the pairs that parse; "access%5Ftoken" too
	return q.Has("access_token")
}

// MissingScopes returns the scopes of required that p was not granted, in
// the order of required; nil when it has them all.
func MissingScopes(p ports.Principal, required ...string) []string {
	var missing []string
	for _, s := range required {
		if !slices.Contains(p.Scopes, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// InsufficientScope answers a request whose token lacks scopes with 403
// Forbidden and the step-up challenge of the MCP authorization spec:
// WWW-Authenticate: Bearer error="insufficient_scope", scope="<scopes>"
// and resource_metadata (opts.ResourceMetadataURL, when set), with the body
// {"error":"insufficient_scope"}. scopes should be every scope the request
// needs, those the token has as well as the missing ones (the spec's
// recommended approach: a client that asks the authorization server for
// exactly these keeps what it had). Scopes that are not RFC 6749 scope
// tokens (printable ASCII without space, '"' or '\') are left out of the
// challenge. [RequireBearer] answers this way for AuthOptions.RequiredScopes,
// and the [Handler] behind it the same way for a call refused by a tool's
// or prompt's scopes (hexmcp.WithScopes), naming the RequiredScopes first
// and logging the refusal as RequireBearer logs its own; an http.Handler of
// your own that checks scopes calls it.
func InsufficientScope(w http.ResponseWriter, opts AuthOptions, scopes ...string) {
	challenge(w, http.StatusForbidden, opts, "insufficient_scope", strings.Join(slices.DeleteFunc(slices.Clone(scopes), badScope), " "))
}

// badScope reports whether s is not a scope token (RFC 6749 section 3.3).
func badScope(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return true
		}
	}
	return false
}

// bearerToken extracts the token of a single Bearer credential.
func bearerToken(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	if token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// challenge answers with a Bearer challenge (RFC 6750, section 3).
func challenge(w http.ResponseWriter, status int, opts AuthOptions, code, scope string) {
	w.Header().Set("WWW-Authenticate", bearerChallenge(code, scope, opts.ResourceMetadataURL))
	if code == "" {
		code = "unauthorized" // no credentials: RFC 6750 sends no error code in the challenge
	}
	writeAuthError(w, status, code)
}

// bearerChallenge is the WWW-Authenticate value of a Bearer challenge
// (RFC 6750, with RFC 9728's resource_metadata): only the parameters given.
func bearerChallenge(code, scope, metadataURL string) string {
	var params []string
	if code != "" {
		params = append(params, `error="`+code+`"`)
	}
	if scope != "" {
		params = append(params, "scope="+strconv.Quote(scope))
	}
	if metadataURL != "" {
		params = append(params, "resource_metadata="+strconv.Quote(metadataURL))
	}
	if len(params) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(params, ", ")
}

func writeAuthError(w http.ResponseWriter, status int, code string) {
	b, _ := json.Marshal(map[string]string{"error": code})
	writeJSON(w, status, b)
}

// StaticTokens is a [ports.Authenticator] with a fixed set of tokens, each
// naming its principal: for tests, examples and single-user local servers.
// Real deployments validate tokens issued by an authorization server:
// mcpoauth.NewJWTVerifier (JWT access tokens) or mcpoauth.NewIntrospector
// (opaque tokens, RFC 7662), package github.com/hexmcp/hexmcp/adapters/oauth.
type StaticTokens map[string]ports.Principal

// Authenticate returns the token's principal, or an error wrapping
// ports.ErrUnauthenticated. Tokens are compared in constant time.
func (t StaticTokens) Authenticate(_ context.Context, token string) (ports.Principal, error) {
	var (
		found ports.Principal
		ok    bool
	)
	for k, p := range t {
		if subtle.ConstantTimeCompare([]byte(k), []byte(token)) == 1 {
			found, ok = p, true
		}
	}
	if !ok {
		return ports.Principal{}, ports.ErrUnauthenticated
	}
	return found, nil
}
