package mcpoauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// serverMetadata is what this package reads of an authorization server's
// metadata (RFC 8414, or OpenID Connect Discovery 1.0).
type serverMetadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// discoveryURLs are the URLs of an issuer's metadata, in the order the MCP
// authorization spec gives: for an issuer with a path, RFC 8414's
// (well-known suffix inserted between host and path), OpenID Connect's with
// the same insertion, then OpenID Connect's appended to the path; for one
// without, RFC 8414's and OpenID Connect's at the root.
func discoveryURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if path == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration",
	}
}

// discover fetches the metadata of issuer, trying each of its well-known
// URLs until one answers 200; a 404 (or 410) moves on to the next. The
// metadata's issuer must be the configured one, character for character
// (RFC 8414 section 3.3: otherwise the document must not be used). A
// failure to reach the server, or an answer other than 200 or 404, wraps
// ErrUnavailable; a document that is there but unusable does not.
func discover(ctx context.Context, client *http.Client, issuer string, timeout time.Duration, max int64) (serverMetadata, error) {
	u, err := parseSecureURL("issuer", issuer, false)
	if err != nil {
		return serverMetadata{}, err
	}
	var unavailable []error
	for _, mu := range discoveryURLs(u) {
		var md serverMetadata
		err := getJSON(ctx, client, mu, timeout, max, &md)
		if notFound(err) {
			continue
		}
		if err != nil {
			unavailable = append(unavailable, err)
			continue
		}
		if md.Issuer != issuer {
			return serverMetadata{}, fmt.Errorf("hexmcp: the metadata at %s names the issuer %q, not %q", mu, md.Issuer, issuer)
		}
		return md, nil
	}
	if len(unavailable) > 0 {
		return serverMetadata{}, fmt.Errorf("%w: discovering %s: %w", ErrUnavailable, issuer, errors.Join(unavailable...))
	}
	return serverMetadata{}, fmt.Errorf("hexmcp: no authorization server metadata for %s at %s", issuer, strings.Join(discoveryURLs(u), ", "))
}
