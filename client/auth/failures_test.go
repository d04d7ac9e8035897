package auth_test

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hexmcp/hexmcp/client/auth"
	"github.com/hexmcp/hexmcp/internal/testtools"
)

// closeBody is a request body that notes its Close.
type closeBody struct {
	io.Reader
	closed bool
}

func (b *closeBody) Close() error { b.closed = true; return nil }

// TestUnparsableResourceClosesBody: a request refused because
// Options.Resource does not parse has its body closed, as a RoundTripper
// must; one without a body is refused too.
func TestUnparsableResourceClosesBody(t *testing.T) {
	tr, err := auth.NewTransport(auth.Options{Resource: "http://127.0.0.1:1/%zz"})
	if err != nil {
		t.Fatal(err)
	}
	body := &closeBody{Reader: strings.NewReader("{}")}
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/mcp", body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RoundTrip(req); err == nil || !body.closed {
		t.Fatalf("error %v, body closed %v; want an error and the body closed", err, body.closed)
	}
	req, err = http.NewRequest(http.MethodGet, "http://127.0.0.1:1/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("a request without a body is sent")
	}
}

// TestLoopbackAuthorizerOpenError: open's error is the authorizer's, even
// when ctx has ended with it (as with a browser command run under ctx).
func TestLoopbackAuthorizerOpenError(t *testing.T) {
	port, err := testtools.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("no browser")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a, err := auth.LoopbackAuthorizer(fmt.Sprintf("http://127.0.0.1:%d/callback", port), func(context.Context, string) error {
		cancel()
		return boom
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a(ctx, "http://127.0.0.1:1/authorize"); !errors.Is(err, boom) {
		t.Fatalf("error %v, want open's", err)
	}
}

// TestLoopbackAuthorizerOnlyGETOfPath: the listener takes the query of a
// GET of the redirect URL's path only; another path or another method is
// answered 404 and not taken.
func TestLoopbackAuthorizerOnlyGETOfPath(t *testing.T) {
	port, err := testtools.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	a, err := auth.LoopbackAuthorizer(base+"/callback", func(ctx context.Context, _ string) error {
		for _, r := range []struct {
			method, path string
			status       int
		}{
			{http.MethodGet, "/other?code=other-path", http.StatusNotFound},
			{http.MethodPost, "/callback?code=post", http.StatusNotFound},
			{http.MethodGet, "/callback?code=right", http.StatusOK},
		} {
			req, err := http.NewRequestWithContext(ctx, r.method, base+r.path, nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != r.status {
				return fmt.Errorf("%s %s: %d, want %d", r.method, r.path, resp.StatusCode, r.status)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := a(t.Context(), "http://127.0.0.1:1/authorize")
	if err != nil || cb.Code != "right" {
		t.Fatalf("callback %+v, error %v; want the code of the GET of /callback", cb, err)
	}
}

// TestHeadlessAuthorizerNoRedirectURI: an authorization URL without a
// redirect_uri, or with one that does not parse, is refused before
// anything is sent.
func TestHeadlessAuthorizerNoRedirectURI(t *testing.T) {
	var hits atomic.Int32
	srv := newServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	for _, q := range []string{"", "?redirect_uri=" + url.QueryEscape("http://127.0.0.1:1/%zz")} {
		_, err := auth.HeadlessAuthorizer(nil)(t.Context(), srv+"/authorize"+q)
		if err == nil || hits.Load() != 0 {
			t.Fatalf("%q: error %v, %d requests sent; want an error and none", q, err, hits.Load())
		}
	}
}

// failingSigner is a key whose signatures fail.
type failingSigner struct {
	crypto.Signer
	err error
}

func (s failingSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) { return nil, s.err }

// TestClientKeySignError: a client key that fails to sign ends the token
// request with its error; no assertion is sent.
func TestClientKeySignError(t *testing.T) {
	s, key := keyClientSetup(t)
	boom := errors.New("the key is locked")
	c, _ := s.client(t, auth.Options{ClientCredentials: true, ClientID: "machine", ClientKey: failingSigner{key, boom}})
	_, _, err := callTool(c, s.mcp.url, "whoami")
	if !errors.Is(err, boom) || !errors.Is(err, &auth.Error{Reason: auth.ReasonToken}) {
		t.Fatalf("error %v, want a ReasonToken error with the key's", err)
	}
	if toks := find(s.as.requests(), "token"); toks != nil {
		t.Fatalf("token requests %v", toks)
	}
}

// TestUnreachableAuthorizationServer: an authorization server whose
// metadata cannot be fetched (nothing listens) is a ReasonDiscovery error
// carrying the fetch's.
func TestUnreachableAuthorizationServer(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	issuer := closed.URL
	closed.Close()
	s := newSetup(t, asConfig{}, serverOpts{customIssuer: issuer})
	c, _ := s.client(t, auth.Options{ClientID: "app"})
	e := wantReason(t, c, s.mcp.url, auth.ReasonDiscovery)
	var ue *url.Error
	if !errors.As(e, &ue) {
		t.Fatalf("error %v, want the fetch's *url.Error in it", e)
	}
}
