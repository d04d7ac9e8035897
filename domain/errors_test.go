package domain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
)

// The errors of a definition that cannot be registered start with the
// SDK's prefix and name what they are about when it has a name.
func TestDefinitionErrorMessages(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&domain.DefinitionError{Kind: "tool", Name: "calc", Reason: "no handler"}, `hexmcp: invalid tool "calc": no handler`},
		{&domain.DefinitionError{Kind: "tool", Reason: "name is empty"}, `hexmcp: invalid tool: name is empty`},
		{&domain.DefinitionError{Kind: "resource", Name: "file:///a", Reason: "no handler"}, `hexmcp: invalid resource "file:///a": no handler`},
		{&domain.DefinitionError{Kind: "resource", Reason: "uri is empty"}, `hexmcp: invalid resource: uri is empty`},
		{&domain.DefinitionError{Kind: "prompt", Name: "greet", Reason: "no handler"}, `hexmcp: invalid prompt "greet": no handler`},
		{&domain.DefinitionError{Kind: "prompt", Reason: "name is empty"}, `hexmcp: invalid prompt: name is empty`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// A content block's annotations are written only when one of them is set
// (an empty Annotations writes nothing), and a _meta that cannot be
// encoded is an error, not a block cut short.
func TestContentAnnotationsAndMeta(t *testing.T) {
	half := 0.5
	for _, c := range []struct {
		a    *domain.Annotations
		want string
	}{
		{nil, `{"type":"text","text":"t"}`},
		{&domain.Annotations{}, `{"type":"text","text":"t"}`},
		{&domain.Annotations{Priority: &half}, `{"type":"text","text":"t","annotations":{"priority":0.5}}`},
		{&domain.Annotations{LastModified: "2025-01-12T15:00:58Z"}, `{"type":"text","text":"t","annotations":{"lastModified":"2025-01-12T15:00:58Z"}}`},
		{&domain.Annotations{Audience: []string{"user"}}, `{"type":"text","text":"t","annotations":{"audience":["user"]}}`},
	} {
		got, err := json.Marshal(&domain.TextContent{Text: "t", Annotations: c.a})
		if err != nil || string(got) != c.want {
			t.Errorf("annotations %+v: %s, %v; want %s", c.a, got, err, c.want)
		}
	}
	// MarshalJSON itself: json.Marshal would refuse what it returned
	// anyway, valid JSON or not.
	if got, err := (&domain.TextContent{Text: "t", Meta: map[string]any{"bad": make(chan int)}}).MarshalJSON(); err == nil {
		t.Errorf("an unencodable _meta was written: %s", got)
	}
	// The embedded resource's own _meta, and a block's inside a result,
	// which names the block.
	bad := map[string]any{"bad": make(chan int)}
	if got, err := (&domain.EmbeddedResource{Resource: domain.ResourceContents{URI: "x://r", Text: "t", Meta: bad}}).MarshalJSON(); err == nil {
		t.Errorf("an embedded resource with an unencodable _meta was written: %s", got)
	}
	r := &domain.CallToolResult{Content: []domain.Content{&domain.TextContent{Text: "ok"}, &domain.TextContent{Text: "t", Meta: bad}}}
	if got, err := r.MarshalJSON(); err == nil || !strings.Contains(err.Error(), "content block 1 (text)") {
		t.Errorf("a result with an unencodable block: %s, %v; want an error naming block 1", got, err)
	}
}

// IsZero is true with no annotation, false with any one of them.
func TestToolAnnotationsIsZero(t *testing.T) {
	yes := true
	if !(*domain.ToolAnnotations)(nil).IsZero() || !(&domain.ToolAnnotations{}).IsZero() {
		t.Fatal("no annotation is not zero")
	}
	for name, a := range map[string]domain.ToolAnnotations{
		"Title": {Title: "t"}, "ReadOnlyHint": {ReadOnlyHint: &yes}, "DestructiveHint": {DestructiveHint: &yes},
		"IdempotentHint": {IdempotentHint: &yes}, "OpenWorldHint": {OpenWorldHint: &yes},
	} {
		if a.IsZero() {
			t.Errorf("annotations with %s only are zero", name)
		}
	}
}

// An icon's mimeType must be a MIME type (type/subtype).
func TestIconMimeType(t *testing.T) {
	if err := (domain.Icon{Src: "https://example.com/i.png", MimeType: "image/png"}).Validate(); err != nil {
		t.Fatal(err)
	}
	err := (domain.Icon{Src: "https://example.com/i.png", MimeType: "png"}).Validate()
	if err == nil || !strings.Contains(err.Error(), `mimeType "png"`) {
		t.Fatalf("a mimeType without a subtype: %v", err)
	}
}
