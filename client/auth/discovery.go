package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// maxDocumentBytes bounds a metadata document, a registration response and
// a token response read.
const maxDocumentBytes = 1 << 20

// resourceMetadata is the part of an MCP server's OAuth 2.0 Protected
// Resource Metadata (RFC 9728 section 2) the flow uses.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is the part of an authorization server's metadata (RFC
// 8414 section 2, OpenID Connect Discovery) the flow uses.
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssSupported bool     `json:"authorization_response_iss_parameter_supported"`
}

// isLoopback reports whether host (no port) is localhost or a loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// secureURL parses raw, an absolute URL that must be https, or http on a
// loopback host, without a fragment.
func secureURL(what, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fail(ReasonInsecureURL, what+" is not a URL", err)
	}
	if u.Host == "" || u.Fragment != "" || u.User != nil {
		return nil, fail(ReasonInsecureURL, fmt.Sprintf("%s %q is not an absolute URL without userinfo or fragment", what, raw), nil)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return nil, fail(ReasonInsecureURL, fmt.Sprintf("%s %q is http on a host that is not loopback", what, raw), nil)
		}
	default:
		return nil, fail(ReasonInsecureURL, fmt.Sprintf("%s %q is not https", what, raw), nil)
	}
	return u, nil
}

// canonicalResource returns u as an RFC 8707 resource: scheme and host in
// lower case, no query, no fragment, no lone trailing slash.
func canonicalResource(u *url.URL) string {
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath}
	s := c.String()
	if c.Path == "/" {
		s = strings.TrimSuffix(s, "/")
	}
	return s
}

// resourceMatches reports whether the protected resource metadata's
// resource prm names the server at resource: the same URL, or a prefix of
// its path (whole segments) on the same origin.
func resourceMatches(prm, resource string) bool {
	pu, err := url.Parse(prm)
	if err != nil || pu.RawQuery != "" || pu.Fragment != "" {
		return false
	}
	ru, err := url.Parse(resource)
	if err != nil {
		return false
	}
	if !strings.EqualFold(pu.Scheme, ru.Scheme) || !strings.EqualFold(pu.Host, ru.Host) {
		return false
	}
	pp, rp := strings.TrimSuffix(pu.Path, "/"), strings.TrimSuffix(ru.Path, "/")
	return pp == rp || strings.HasPrefix(rp, pp+"/")
}

// wellKnownResourceURLs are where the metadata of resource is looked for
// when the challenge names no resource_metadata (RFC 9728 section 3.1):
// with the path, then at the root.
func wellKnownResourceURLs(resource *url.URL) []string {
	const wk = "/.well-known/oauth-protected-resource"
	root := url.URL{Scheme: resource.Scheme, Host: resource.Host}
	var out []string
	if p := strings.TrimSuffix(resource.EscapedPath(), "/"); p != "" {
		out = append(out, root.String()+wk+p)
	}
	return append(out, root.String()+wk)
}

// wellKnownServerURLs are where the metadata of issuer is looked for, in
// the MCP spec's order: RFC 8414 with the path inserted, OpenID Connect
// with the path inserted, OpenID Connect with the path appended (without
// a path: RFC 8414, then OpenID Connect).
func wellKnownServerURLs(issuer *url.URL) []string {
	root := (&url.URL{Scheme: issuer.Scheme, Host: issuer.Host}).String()
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{root + "/.well-known/oauth-authorization-server", root + "/.well-known/openid-configuration"}
	}
	return []string{
		root + "/.well-known/oauth-authorization-server" + p,
		root + "/.well-known/openid-configuration" + p,
		root + p + "/.well-known/openid-configuration",
	}
}

// errNotFound is a document that is not there (a 4xx answer).
var errNotFound = errors.New("not found")

// getJSON fetches u into dst: a 200 with a JSON body of at most
// maxDocumentBytes. A 4xx is errNotFound.
func getJSON(ctx context.Context, c *http.Client, u string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDocumentBytes))
		return fmt.Errorf("GET %s: %d: %w", u, resp.StatusCode, errNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
	}
	b, err := readBounded(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// readBounded reads r to its end, refusing more than maxDocumentBytes.
func readBounded(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxDocumentBytes {
		return nil, fmt.Errorf("the document is over %d bytes", maxDocumentBytes)
	}
	return b, nil
}

// discovered is what discovery found for one MCP server.
type discovered struct {
	resource string // the RFC 8707 resource sent
	prm      resourceMetadata
	as       serverMetadata
}

// discover finds the protected resource metadata of resource (from
// metadataURL, the challenge's resource_metadata, when set) and its
// authorization server's metadata.
func discover(ctx context.Context, c *http.Client, resource *url.URL, metadataURL string) (*discovered, error) {
	candidates := wellKnownResourceURLs(resource)
	if metadataURL != "" {
		if _, err := secureURL("resource_metadata", metadataURL); err != nil {
			return nil, err
		}
		candidates = []string{metadataURL}
	}
	res := canonicalResource(resource)
	var prm resourceMetadata
	var errs []error
	found := false
	for _, u := range candidates {
		prm = resourceMetadata{}
		if err := getJSON(ctx, c, u, &prm); err != nil {
			errs = append(errs, err)
			continue
		}
		found = true
		break
	}
	if !found && metadataURL == "" && allNotFound(errs) {
		return legacyDiscover(ctx, c, resource, res, errs)
	}
	if !found {
		return nil, fail(ReasonDiscovery, "no protected resource metadata for "+res, errors.Join(errs...))
	}
	if prm.Resource == "" || !resourceMatches(prm.Resource, res) {
		return nil, fail(ReasonResourceMismatch, fmt.Sprintf("the protected resource metadata is for %q, not %q", prm.Resource, res), nil)
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, fail(ReasonDiscovery, "the protected resource metadata names no authorization server", nil)
	}
	d := &discovered{resource: prm.Resource, prm: prm}
	if strings.TrimSuffix(prm.Resource, "/") == strings.TrimSuffix(res, "/") {
		d.resource = res
	}
	issuer := prm.AuthorizationServers[0]
	iu, err := secureURL("authorization server", issuer)
	if err != nil {
		return nil, err
	}
	if iu.RawQuery != "" {
		return nil, fail(ReasonDiscovery, fmt.Sprintf("the issuer %q has a query", issuer), nil)
	}
	errs = nil
	for _, u := range wellKnownServerURLs(iu) {
		var m serverMetadata
		if err := getJSON(ctx, c, u, &m); err != nil {
			errs = append(errs, err)
			continue
		}
		if m.Issuer != issuer {
			return nil, fail(ReasonIssuerMismatch, fmt.Sprintf("the metadata at %s names the issuer %q, not %q", u, m.Issuer, issuer), nil)
		}
		if err := m.secureEndpoints(); err != nil {
			return nil, err
		}
		if m.TokenEndpoint == "" {
			return nil, fail(ReasonDiscovery, "the authorization server metadata has no token_endpoint", nil)
		}
		d.as = m
		return d, nil
	}
	return nil, fail(ReasonDiscovery, "no authorization server metadata for "+issuer, errors.Join(errs...))
}

// secureEndpoints checks the endpoints m names (see secureURL).
func (m *serverMetadata) secureEndpoints() error {
	for _, e := range []struct{ what, url string }{
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint},
	} {
		if e.url == "" {
			continue
		}
		if _, err := secureURL(e.what, e.url); err != nil {
			return err
		}
	}
	return nil
}

// allNotFound reports whether every error is a document not there.
func allNotFound(errs []error) bool {
	for _, err := range errs {
		if !errors.Is(err, errNotFound) {
			return false
		}
	}
	return len(errs) > 0
}

// legacyDiscover is the discovery of protocol revision 2025-03-26, for a
// server that publishes no protected resource metadata: the authorization
// server is the MCP server's origin (its "authorization base URL"), whose
// RFC 8414 metadata is at the root, or, without metadata, the default
// endpoints /authorize, /token and /register there (PKCE S256, as that
// revision requires it).
func legacyDiscover(ctx context.Context, c *http.Client, resource *url.URL, res string, prmErrs []error) (*discovered, error) {
	origin := (&url.URL{Scheme: resource.Scheme, Host: resource.Host}).String()
	d := &discovered{resource: res}
	var m serverMetadata
	err := getJSON(ctx, c, origin+"/.well-known/oauth-authorization-server", &m)
	switch {
	case err == nil:
		if strings.TrimSuffix(m.Issuer, "/") != origin {
			return nil, fail(ReasonIssuerMismatch, fmt.Sprintf("the metadata at %s names the issuer %q, not %q", origin, m.Issuer, origin), nil)
		}
		if m.TokenEndpoint == "" {
			return nil, fail(ReasonDiscovery, "the authorization server metadata has no token_endpoint", nil)
		}
	case errors.Is(err, errNotFound):
		m = serverMetadata{
			Issuer:                        origin,
			AuthorizationEndpoint:         origin + "/authorize",
			TokenEndpoint:                 origin + "/token",
			RegistrationEndpoint:          origin + "/register",
			CodeChallengeMethodsSupported: []string{"S256"},
		}
	default:
		return nil, fail(ReasonDiscovery, "no protected resource metadata for "+res, errors.Join(append(prmErrs, err)...))
	}
	if err := m.secureEndpoints(); err != nil {
		return nil, err
	}
	d.as = m
	return d, nil
}

// supportsS256 reports whether m lists S256 among its PKCE methods.
func (m serverMetadata) supportsS256() bool {
	return slices.Contains(m.CodeChallengeMethodsSupported, "S256")
}
