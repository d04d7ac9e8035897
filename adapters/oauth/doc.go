// Package mcpoauth makes an MCP server an OAuth 2.1 resource server, as the
// MCP authorization spec (2025-06-18 and later) asks of a server on HTTP:
//
//   - [Metadata], [MetadataHandler] and [Mount] serve the server's OAuth 2.0
//     Protected Resource Metadata (RFC 9728) at
//     /.well-known/oauth-protected-resource and at its path-suffixed form
//     for the MCP endpoint, and tell the resource_metadata URL that every
//     401 of mcphttp.RequireBearer names (mcphttp.AuthOptions.ResourceMetadataURL).
//   - [NewJWTVerifier] is a ports.Authenticator for JWT access tokens: keys
//     from the authorization server's JWK set, found through its metadata
//     (RFC 8414, else OpenID Connect discovery) and refetched when a token
//     names an unknown key (rate-limited), so that key rotation works; an
//     allow-list of asymmetric algorithms; the typ header (a JWT typed as
//     another kind of token is refused); iss, aud (RFC 8707: this server),
//     exp, nbf and iat checked.
//   - [NewIntrospector] is a ports.Authenticator for opaque tokens, through
//     OAuth 2.0 Token Introspection (RFC 7662), its answers cached in a
//     bounded cache no longer than the token lives; an answer must name
//     this server in aud, as a JWT must.
//
// Both authenticators return an error wrapping ports.ErrUnauthenticated for
// every token they refuse (mcphttp.RequireBearer answers 401
// error="invalid_token"), and one wrapping [ErrUnavailable], not
// ports.ErrUnauthenticated, when they cannot tell because the authorization
// server, its key set or its introspection endpoint cannot be reached or
// answers nonsense (RequireBearer answers 503): never an open door. Neither
// puts the token in the principal, nor in its errors, whose text says which
// check failed ("the token is for ["https://elsewhere/mcp"], not for this
// resource", an unknown kid, an expiry, an inactive token…): what
// RequireBearer logs of each refusal, at Info, and of each failure, at
// Error, at a bounded rate (mcphttp.AuthOptions.MaxLogsPerSecond).
//
// An authorization server's URLs must be https, except on a loopback host
// (localhost, 127.0.0.0/8, ::1), where http is accepted for tests and local
// development. Every document fetched is bounded in size (1 MiB by default).
//
// JOSE (JWS signatures, JWK parsing) is github.com/lestrrat-go/jwx/v3; the
// key cache, the discovery and every check above are this package's.
package mcpoauth
