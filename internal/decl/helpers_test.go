package decl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/jsontest"
)

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// equalJSON fails unless got and want are the same JSON (member order aside).
func equalJSON(t *testing.T, got, want string) {
	t.Helper()
	jsontest.Equal(t, got, want)
}

// wantToolError fails unless err is a tool *domain.DefinitionError whose
// text holds want.
func wantToolError(t *testing.T, what string, err error, want string) {
	t.Helper()
	var de *domain.DefinitionError
	if !errors.As(err, &de) || de.Kind != "tool" || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want a tool *domain.DefinitionError containing %q", what, err, want)
	}
}

// wantResourceError fails unless err is a resource *domain.DefinitionError
// whose text holds want.
func wantResourceError(t *testing.T, what string, err error, want string) {
	t.Helper()
	var de *domain.DefinitionError
	if !errors.As(err, &de) || de.Kind != "resource" || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want a resource *domain.DefinitionError containing %q", what, err, want)
	}
}
