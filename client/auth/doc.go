// Package auth is the MCP authorization flow for a client, as an
// [http.RoundTripper] any [http.Client] can use: give the client's
// Streamable HTTP transport an http.Client whose Transport is a
// [*Transport], and its requests carry a bearer token, obtained when the MCP
// server first answers 401.
//
// On a 401 the Transport follows the MCP authorization spec (revisions
// 2025-06-18, 2025-11-25 and 2026-07-28):
//
//  1. the server's OAuth 2.0 Protected Resource Metadata (RFC 9728), from
//     the resource_metadata parameter of its WWW-Authenticate challenge,
//     else from the well-known URLs (with the endpoint's path, then at the
//     root); the document's resource must be the server's URL (or a prefix
//     of it, on the same origin);
//  2. the authorization server's metadata: RFC 8414 (path inserted), then
//     OpenID Connect discovery (path inserted, then appended); its issuer
//     must be, character for character, the one the resource named;
//  3. the client's identity: a pre-registered client (Options.ClientID), a
//     Client ID Metadata Document (Options.ClientMetadataURL, when the
//     authorization server says client_id_metadata_document_supported), or
//     Dynamic Client Registration (RFC 7591) when it has a
//     registration_endpoint;
//  4. the authorization code grant with PKCE S256 (an authorization server
//     that does not list S256 in code_challenge_methods_supported is
//     refused), the resource parameter (RFC 8707) on the authorization and
//     every token request, state checked, and iss in the authorization
//     response checked (RFC 9207): required when the server advertises
//     authorization_response_iss_parameter_supported, compared whenever it
//     is present; the browser step is the application's [Authorizer];
//  5. the scopes of the challenge, else the metadata's scopes_supported.
//
// A 403 with error="insufficient_scope" and a scope makes it authorize
// again with the union of the scopes asked before and those of the
// challenge, at most Options.MaxStepUps times per request (step-up). A token
// about to expire is refreshed before it is sent, and a 401 on a token with
// a refresh token tries the refresh before a new authorization. A machine
// client (Options.ClientCredentials) uses the client_credentials grant
// instead, authenticated with client_secret_basic or client_secret_post,
// or with private_key_jwt (Options.ClientKey, RFC 7523). Options.JWTBearer
// uses the JWT bearer grant with an assertion of the application (a
// workload identity token, or the ID-JAG of Enterprise-Managed
// Authorization: [IDJAGExchange]). Options.DPoPKey binds the tokens to a
// key (DPoP, RFC 9449): proofs at the token endpoint and on every request,
// the DPoP scheme, and the servers' use_dpop_nonce followed once.
// A refresh token goes only to the authorization server that issued it,
// and a registration serves only the server that made it: when the
// resource's metadata names another authorization server, the client
// registers there and authorizes again. offline_access is asked when the
// authorization server lists it in scopes_supported.
//
// [LoopbackAuthorizer] is an Authorizer for a native application (a
// browser and a listener on a loopback redirect URI);
// [HeadlessAuthorizer] one for a server that answers at once.
//
// Tokens are kept in a [TokenStore], by resource and client (a
// [MemoryStore] by default). A request's body is buffered (up to
// Options.MaxReplayBytes) unless it has GetBody, so that it can be sent
// again after a 401 or a 403. Metadata and token responses are read up to
// 1 MiB; the metadata fetches follow no redirect to another host; every URL
// of the flow must be https, or http on a loopback host; tokens are never
// logged nor put in an error. Failures of the flow are [*Error] values, whose
// Reason tells which step failed.
package auth
