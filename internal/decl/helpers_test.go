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

// wantToolError fails unless err is a *domain.ToolDefinitionError whose
// text holds want.
func wantToolError(t *testing.T, what string, err error, want string) {
	t.Helper()
	var de *domain.ToolDefinitionError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want a *domain.ToolDefinitionError containing %q", what, err, want)
	}
}

// wantResourceError fails unless err is a *domain.ResourceDefinitionError
// whose text holds want.
func wantResourceError(t *testing.T, what string, err error, want string) {
	t.Helper()
	var de *domain.ResourceDefinitionError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want a *domain.ResourceDefinitionError containing %q", what, err, want)
	}
}
