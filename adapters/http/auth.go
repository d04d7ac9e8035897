package mcphttp

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// WithPrincipal returns ctx carrying the authenticated principal of a
// request ([ports.WithPrincipal]). [RequireBearer] calls it; an
// authentication middleware of your own may too. The [Handler] passes it to
// tool handlers as app.TransportInfo.Principal, and the WebSocket handler
// to every request of the connection it upgrades.
func WithPrincipal(ctx context.Context, p ports.Principal) context.Context {
	return ports.WithPrincipal(ctx, p)
}

// PrincipalFrom returns the principal in ctx, or nil ([ports.PrincipalFrom]).
func PrincipalFrom(ctx context.Context) *ports.Principal { return ports.PrincipalFrom(ctx) }

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
	// Logger receives authenticator failures that are not a bad token (an
	// unreachable introspection endpoint, say); default: slog on standard
	// error (slog.New(slog.DiscardHandler) discards them).
	Logger ports.Logger
}

// RequireBearer returns a middleware that lets through only requests with
// a valid "Authorization: Bearer <token>" (RFC 6750): the authenticator
// judges the token, and the principal it returns is put in the request's
// context ([WithPrincipal]) for the tool handlers. A token in the URL's
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
func RequireBearer(a ports.Authenticator, opts AuthOptions) func(http.Handler) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	scope := strings.Join(slices.DeleteFunc(slices.Clone(opts.RequiredScopes), badScope), " ")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tokenInQuery(r) {
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
					challenge(w, http.StatusUnauthorized, opts, "invalid_token", scope)
					return
				}
				if opts.Logger.Enabled(r.Context(), slog.LevelError) {
					opts.Logger.LogAttrs(r.Context(), slog.LevelError, "mcphttp: the authenticator failed", slog.Any("error", err))
				}
				w.Header().Set("Retry-After", authRetryAfter(err))
				writeAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable")
				return
			}
			if len(MissingScopes(p, opts.RequiredScopes...)) > 0 {
				InsufficientScope(w, opts, opts.RequiredScopes...)
				return
			}
			ctx := withResourceMetadata(WithPrincipal(r.Context(), p), opts.ResourceMetadataURL)
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

// errTokenExpired is the cause of the end of a stream whose token expired.
var errTokenExpired = errors.New("mcphttp: the access token expired")

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
// and the [Handler] the same way for a call refused by a tool's or prompt's
// scopes (app.WithScopes); an http.Handler of your own that checks scopes
// calls it.
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
