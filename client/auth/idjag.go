package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// IDJAGOptions configure [IDJAGExchange]: the enterprise identity
// provider's token endpoint, the client registered there, and the user's
// ID token it issued (from the single sign-on).
type IDJAGOptions struct {
	// TokenEndpoint is the identity provider's token endpoint (https, or
	// http on loopback).
	TokenEndpoint string
	// ClientID and ClientSecret are the client at the identity provider
	// (client_secret_basic when there is a secret, else client_id in the
	// form).
	ClientID, ClientSecret string
	// IDToken returns the user's ID token.
	IDToken func(ctx context.Context) (string, error)
	// HTTPClient sends the request. Default: a client with a 30-second
	// timeout.
	HTTPClient *http.Client
}

// IDJAGExchange returns an [Options].JWTBearer for Enterprise-Managed
// Authorization (SEP-990): for each authorization server it exchanges the
// user's ID token at the identity provider (RFC 8693 token exchange,
// requested_token_type urn:ietf:params:oauth:token-type:id-jag, audience
// the authorization server's issuer, resource the MCP server) for an
// Identity Assertion JWT Authorization Grant, which the Transport then
// presents with the JWT bearer grant.
func IDJAGExchange(o IDJAGOptions) func(ctx context.Context, issuer, resource string) (string, error) {
	return func(ctx context.Context, issuer, resource string) (string, error) {
		if _, err := secureURL("IDJAGOptions.TokenEndpoint", o.TokenEndpoint); err != nil {
			return "", err
		}
		idToken, err := o.IDToken(ctx)
		if err != nil {
			return "", err
		}
		form := url.Values{
			"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
			"subject_token":        {idToken},
			"subject_token_type":   {"urn:ietf:params:oauth:token-type:id_token"},
			"audience":             {issuer},
			"resource":             {resource},
		}
		if o.ClientSecret == "" {
			form.Set("client_id", o.ClientID)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.TokenEndpoint, strings.NewReader(form.Encode()))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if o.ClientSecret != "" {
			req.SetBasicAuth(url.QueryEscape(o.ClientID), url.QueryEscape(o.ClientSecret))
		}
		c := o.HTTPClient
		if c == nil {
			c = &http.Client{Timeout: 30 * time.Second}
		}
		resp, err := c.Do(req)
		if err != nil {
			return "", fail(ReasonToken, "the identity provider's token exchange", err)
		}
		defer resp.Body.Close()
		b, err := readBounded(resp.Body)
		if err != nil {
			return "", fail(ReasonToken, "the identity provider's token exchange", err)
		}
		if resp.StatusCode != http.StatusOK {
			e := oauthError(b)
			e.Reason = ReasonToken
			if e.Description == "" {
				e.Description = fmt.Sprintf("the identity provider's token exchange: status %d", resp.StatusCode)
			}
			return "", e
		}
		var out struct {
			AccessToken     string `json:"access_token"`
			IssuedTokenType string `json:"issued_token_type"`
		}
		if err := json.Unmarshal(b, &out); err != nil || out.AccessToken == "" {
			return "", fail(ReasonToken, "the identity provider's token exchange answered no access_token", err)
		}
		if out.IssuedTokenType != "urn:ietf:params:oauth:token-type:id-jag" {
			return "", fail(ReasonToken, fmt.Sprintf("the identity provider issued a %q, not an ID-JAG", out.IssuedTokenType), nil)
		}
		return out.AccessToken, nil
	}
}
