package auth

import "strings"

// Reason tells which step of the authorization flow failed ([Error]).
type Reason string

// The reasons of an [Error].
const (
	// ReasonInsecureURL: a URL of the flow (the MCP server's, a metadata
	// document's, an endpoint's) is neither https nor http on a loopback
	// host.
	ReasonInsecureURL Reason = "insecure_url"
	// ReasonDiscovery: the protected resource metadata or the
	// authorization server metadata could not be found or read.
	ReasonDiscovery Reason = "discovery"
	// ReasonResourceMismatch: the protected resource metadata names
	// another resource than the MCP server.
	ReasonResourceMismatch Reason = "resource_mismatch"
	// ReasonIssuerMismatch: the authorization server metadata names
	// another issuer than the one it was fetched for.
	ReasonIssuerMismatch Reason = "issuer_mismatch"
	// ReasonPKCEUnsupported: the authorization server does not list S256
	// in code_challenge_methods_supported.
	ReasonPKCEUnsupported Reason = "pkce_unsupported"
	// ReasonNoClient: no client identity fits: no Options.ClientID, no
	// Client ID Metadata Document the server accepts, no registration
	// endpoint.
	ReasonNoClient Reason = "no_client"
	// ReasonRegistration: dynamic client registration failed.
	ReasonRegistration Reason = "registration"
	// ReasonNoAuthorizer: the flow needs a user's authorization and
	// Options.Authorizer is nil.
	ReasonNoAuthorizer Reason = "no_authorizer"
	// ReasonAuthorizer: the Authorizer failed.
	ReasonAuthorizer Reason = "authorizer"
	// ReasonStateMismatch: the authorization response's state is not the
	// request's.
	ReasonStateMismatch Reason = "state_mismatch"
	// ReasonIssMismatch: the authorization response's iss is not the
	// authorization server's issuer, or is missing though the server
	// advertises it (RFC 9207).
	ReasonIssMismatch Reason = "iss_mismatch"
	// ReasonAuthorizationDenied: the authorization response is an error
	// (Error.Code: access_denied, invalid_scope…).
	ReasonAuthorizationDenied Reason = "authorization_denied"
	// ReasonToken: the token endpoint refused or failed (Error.Code: the
	// OAuth error code when it gave one).
	ReasonToken Reason = "token"
	// ReasonStepUpLimit: the server still answered 403 insufficient_scope
	// after Options.MaxStepUps authorizations for one request.
	ReasonStepUpLimit Reason = "step_up_limit"
)

// Error is a failure of the authorization flow. It never holds a token.
type Error struct {
	// Reason tells which step failed.
	Reason Reason
	// Code is the OAuth error code the authorization server gave
	// (invalid_grant, access_denied…), if any.
	Code string
	// Description is what the authorization server said of it
	// (error_description), or what was wrong, for people to read.
	Description string
	// Err is the underlying error, if any.
	Err error
}

// Error returns "hexmcp: <reason>[: <code>][: <description>][: <err>]".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("hexmcp: ")
	b.WriteString(string(e.Reason))
	for _, s := range []string{e.Code, e.Description} {
		if s != "" {
			b.WriteString(": ")
			b.WriteString(s)
		}
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Reason and no other
// field set, so that errors.Is(err, &auth.Error{Reason:
// auth.ReasonStateMismatch}) tells a reason.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Reason == e.Reason && t.Code == "" && t.Description == "" && t.Err == nil
}

func fail(r Reason, desc string, err error) *Error {
	return &Error{Reason: r, Description: desc, Err: err}
}
