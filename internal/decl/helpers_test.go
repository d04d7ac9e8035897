package decl_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
)

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// equalJSON fails unless got and want are the same JSON (member order aside).
func equalJSON(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("JSON differs\n got: %s\nwant: %s", got, want)
	}
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
