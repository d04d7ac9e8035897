package app

import (
	"slices"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

func TestClientCapabilityOf(t *testing.T) {
	for method, want := range map[string]string{
		domain.MethodElicit: "elicitation", domain.MethodCreateMessage: "sampling", domain.MethodListRoots: "roots", "x": "",
	} {
		if got := clientCapabilityOf(method); got != want {
			t.Errorf("clientCapabilityOf(%q) = %q, want %q", method, got, want)
		}
	}
}

func TestMissingScopes(t *testing.T) {
	if got := handlerapi.MissingScopes([]string{"a", "b", "c", "d"}, []string{"c", "a"}); !slices.Equal(got, []string{"b", "d"}) {
		t.Errorf("missingScopes = %q, want [b d]", got)
	}
	if got := handlerapi.MissingScopes([]string{"c", "a"}, []string{"a", "b", "c"}); got != nil {
		t.Errorf("missingScopes = %q, want nil", got)
	}
}
