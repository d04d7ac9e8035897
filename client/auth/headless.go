package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// HeadlessAuthorizer returns an [Authorizer] for an authorization server
// that answers the authorization request at once, without a user (a test
// server, the conformance suite's): it GETs authURL with c (default
// http.DefaultClient's transport), follows redirects until one goes to the
// request's redirect_uri, and returns that redirect's query. It fails
// when the server answers anything else.
func HeadlessAuthorizer(c *http.Client) Authorizer {
	return func(ctx context.Context, authURL string) (Callback, error) {
		au, err := url.Parse(authURL)
		if err != nil {
			return Callback{}, err
		}
		redirect := au.Query().Get("redirect_uri")
		ru, err := url.Parse(redirect)
		if redirect == "" || err != nil {
			return Callback{}, errors.New("hexmcp: the authorization URL has no redirect_uri")
		}
		var hc http.Client
		if c != nil {
			hc = *c
		}
		var cb *url.URL
		hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if req.URL.Scheme == ru.Scheme && req.URL.Host == ru.Host && req.URL.Path == ru.Path {
				cb = req.URL
				return http.ErrUseLastResponse
			}
			if len(via) >= 10 {
				return errors.New("hexmcp: too many redirects")
			}
			return nil
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return Callback{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return Callback{}, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if cb == nil {
			return Callback{}, fmt.Errorf("hexmcp: the authorization server answered %d, not a redirect to %s", resp.StatusCode, redirect)
		}
		return CallbackFromQuery(cb.Query()), nil
	}
}
