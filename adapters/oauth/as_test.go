package mcpoauth_test

import (
	"testing"

	"github.com/hexmcp/hexmcp/internal/mockas"
)

// authServer is a real OAuth 2.0 authorization server (internal/mockas:
// oauth2-mock-server on Node 22 from testdata/as, on a free loopback port)
// with this package's helpers for its control endpoint.
type authServer struct{ *mockas.Server }

// startAS starts the authorization server for t and stops it when t ends.
// Without `npm ci` in testdata/as it skips t, unless CI is set: then it
// fails (CI runs make deps).
func startAS(t *testing.T) *authServer {
	t.Helper()
	return &authServer{mockas.Start(t, mockas.Options{})}
}

// signReq asks the authorization server to sign a token with its own key
// (kid, or the current one): its default claims (iss, iat, exp, nbf), then
// claims, less remove; header members added to its header.
type signReq struct {
	Kid       string         `json:"kid,omitempty"`
	ExpiresIn int            `json:"expiresIn,omitempty"`
	Header    map[string]any `json:"header,omitempty"`
	Claims    map[string]any `json:"claims,omitempty"`
	Remove    []string       `json:"remove,omitempty"`
}

func (as *authServer) sign(t *testing.T, r signReq) string {
	t.Helper()
	var out struct{ Token string }
	as.Call(t, "/sign", r, &out)
	return out.Token
}

// addKey adds a key of alg to the set (not the one /token signs with).
func (as *authServer) addKey(t *testing.T, alg string) string {
	t.Helper()
	var out struct{ Kid string }
	as.Call(t, "/keys", map[string]any{"alg": alg}, &out)
	return out.Kid
}

// rotate makes a new RS256 key the one /token signs with; retire drops the
// old one from the set.
func (as *authServer) rotate(t *testing.T, retire bool) (kid, old string) {
	t.Helper()
	var out struct{ Kid, Old string }
	as.Call(t, "/rotate", map[string]any{"retire": retire}, &out)
	return out.Kid, out.Old
}

// setIntrospection makes the introspection endpoint answer status and body.
func (as *authServer) setIntrospection(t *testing.T, status int, body any) {
	t.Helper()
	as.Call(t, "/introspection", map[string]any{"statusCode": status, "body": body}, nil)
}

// introspectionAuth returns the Authorization headers the introspection
// endpoint received.
func (as *authServer) introspectionAuth(t *testing.T) []string {
	t.Helper()
	var out struct{ Auth []string }
	as.Call(t, "/introspection-auth", map[string]any{}, &out)
	return out.Auth
}
