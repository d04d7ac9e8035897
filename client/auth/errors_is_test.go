package auth_test

import (
	"context"
	"errors"
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
