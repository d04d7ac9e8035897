package auth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hexmcp/hexmcp/client/auth"
)

// TestErrorIs: errors.Is matches an *auth.Error by its Reason alone, and
// only a target that sets nothing else.
func TestErrorIs(t *testing.T) {
	err := &auth.Error{Reason: auth.ReasonStateMismatch, Code: "x", Description: "d"}
	if !errors.Is(err, &auth.Error{Reason: auth.ReasonStateMismatch}) {
		t.Fatal("the same reason does not match")
	}
	for name, target := range map[string]*auth.Error{
		"another reason":         {Reason: auth.ReasonToken},
		"a target with a code":   {Reason: auth.ReasonStateMismatch, Code: "x"},
		"a target with an error": {Reason: auth.ReasonStateMismatch, Err: errors.New("e")},
	} {
		if errors.Is(err, target) {
			t.Errorf("%s matches", name)
		}
	}
}

// TestIDJAGExchangeIDTokenError: the ID token source's error ends the
// exchange, before anything is sent.
func TestIDJAGExchangeIDTokenError(t *testing.T) {
	boom := errors.New("no ID token")
	exchange := auth.IDJAGExchange(auth.IDJAGOptions{
		TokenEndpoint: "https://idp.invalid/token",
		ClientID:      "c",
		IDToken:       func(context.Context) (string, error) { return "", boom },
	})
	if _, err := exchange(context.Background(), "https://as.invalid", "https://mcp.invalid/mcp"); !errors.Is(err, boom) {
		t.Fatalf("error %v, want the ID token's", err)
	}
}

// TestIDJAGExchangeRefused: the identity provider's refusal is a
// ReasonToken error with its error code and description, or the status
// when it gives no description.
func TestIDJAGExchangeRefused(t *testing.T) {
	var body atomic.Value
	body.Store(`{"error":"invalid_grant","error_description":"the ID token has expired"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, body.Load().(string))
	}))
	defer srv.Close()
	exchange := auth.IDJAGExchange(auth.IDJAGOptions{
		TokenEndpoint: srv.URL,
		ClientID:      "c",
		IDToken:       func(context.Context) (string, error) { return "id-token", nil },
	})
	_, err := exchange(context.Background(), "https://as.invalid", "https://mcp.invalid/mcp")
	var ae *auth.Error
	if !errors.As(err, &ae) || ae.Reason != auth.ReasonToken || ae.Code != "invalid_grant" || ae.Description != "the ID token has expired" {
		t.Fatalf("error %#v, want the provider's code and description", err)
	}
	body.Store(`{}`)
	_, err = exchange(context.Background(), "https://as.invalid", "https://mcp.invalid/mcp")
	if !errors.As(err, &ae) || ae.Reason != auth.ReasonToken || !strings.Contains(ae.Description, "status 400") {
		t.Fatalf("error %#v, want the status", err)
	}
}

// TestHeadlessAuthorizerUnreachable: an authorization server that cannot
// be reached is the authorizer's error.
func TestHeadlessAuthorizerUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	_, err := auth.HeadlessAuthorizer(nil)(context.Background(), addr+"/authorize?redirect_uri="+url.QueryEscape("http://127.0.0.1:1/cb"))
	if err == nil {
		t.Fatal("no error from an unreachable authorization server")
	}
}

// TestIDJAGExchangeInsecureEndpoint: an identity provider's token endpoint
// that is plain http off loopback is refused before the ID token is even
// asked for, so the token never travels in the clear.
func TestIDJAGExchangeInsecureEndpoint(t *testing.T) {
	asked := false
	exchange := auth.IDJAGExchange(auth.IDJAGOptions{
		TokenEndpoint: "http://idp.invalid/token",
		ClientID:      "c",
		IDToken:       func(context.Context) (string, error) { asked = true; return "id-token", nil },
	})
	_, err := exchange(context.Background(), "https://as.invalid", "https://mcp.invalid/mcp")
	if !errors.Is(err, &auth.Error{Reason: auth.ReasonInsecureURL}) || asked {
		t.Fatalf("error %v (ID token asked for: %v), want ReasonInsecureURL before asking", err, asked)
	}
}
