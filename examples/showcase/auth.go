package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	mcphttp "github.com/hexmcp/hexmcp/adapters/http"
	mcpoauth "github.com/hexmcp/hexmcp/adapters/oauth"
)

// authConfig is what the -auth-* flags ask for.
type authConfig struct {
	issuer, audience string
	scopes           []string
}

// parseAuthFlags checks the -auth-* flags: none (an open server) or an
// issuer and an audience together.
func parseAuthFlags(issuer, audience, scopes string) (authConfig, bool, error) {
	if issuer == "" && audience == "" && scopes == "" {
		return authConfig{}, false, nil
	}
	if issuer == "" || audience == "" {
		return authConfig{}, false, errors.New("-auth-issuer and -auth-audience go together")
	}
	c := authConfig{issuer: issuer, audience: audience}
	for _, s := range strings.Split(scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.scopes = append(c.scopes, s)
		}
	}
	return c, true, nil
}

// protect returns the middleware that makes the server an OAuth 2.1
// protected resource: its metadata served at the well-known paths of the
// audience (mcpoauth.Mount), every other path (/mcp and /ws) behind
// RequireBearer with a JWT verifier of the issuer, the scopes required of
// every token; and the resource_metadata URL. mcpoauth refuses an http
// issuer or audience off loopback.
//
// The verifier is lazy: the issuer's metadata and keys are fetched in the
// background, so that the server starts even while its authorization
// server cannot be reached (an outage of the identity provider must not
// make every instance that restarts exit, again and again). Until they can
// be fetched a request with a token is answered 503 with Retry-After (the
// time until the next fetch, at most one per 10 s), and the server
// recovers by itself once they can.
func protect(ctx context.Context, c authConfig, logger *slog.Logger) (func(http.Handler) http.Handler, string, error) {
	md := mcpoauth.Metadata{Resource: c.audience, AuthorizationServers: []string{c.issuer}, ScopesSupported: c.scopes,
		ResourceName: "hexmcp showcase"}
	meta, err := mcpoauth.MetadataHandler(md)
	if err != nil {
		return nil, "", err
	}
	paths, err := mcpoauth.MetadataPaths(c.audience)
	if err != nil {
		return nil, "", err
	}
	metaURL, err := mcpoauth.MetadataURL(c.audience)
	if err != nil {
		return nil, "", err
	}
	v, err := mcpoauth.NewJWTVerifier(ctx, mcpoauth.JWTOptions{Issuer: c.issuer, Audience: c.audience, Lazy: true})
	if err != nil {
		return nil, "", fmt.Errorf("the authorization server %s: %w", c.issuer, err)
	}
	bearer := mcphttp.RequireBearer(v, mcphttp.AuthOptions{ResourceMetadataURL: metaURL, RequiredScopes: c.scopes, Logger: logger})
	return func(next http.Handler) http.Handler {
		mux := http.NewServeMux()
		for _, p := range paths {
			mux.Handle(p, meta)
		}
		mux.Handle("/", bearer(next))
		return mux
	}, metaURL, nil
}
