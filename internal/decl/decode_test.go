package decl_test

import (
	"errors"
	"fmt"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/internal/decl"
)

// DescribeDecodeError says what was found where, for a semantic error
// however deeply wrapped, and nothing more for anything else.
func TestDescribeDecodeError(t *testing.T) {
	decodeErr := func(text string, v any) error {
		t.Helper()
		err := jsonv2.Unmarshal([]byte(text), v)
		if err == nil {
			t.Fatalf("%s decoded", text)
		}
		return err
	}
	var in struct {
		A []struct {
			B int `json:"b"`
		} `json:"a"`
	}
	semantic := decodeErr(`{"a":[{"b":"x"}]}`, &in)
	var n int
	atRoot := decodeErr(`"x"`, &n) // a semantic error with an empty pointer
	for _, tc := range []struct {
		err  error
		want string
	}{
		{semantic, "unexpected string at /a/0/b"},
		{fmt.Errorf("wrapped: %w", semantic), "unexpected string at /a/0/b"},
		{&decl.ArgumentsError{Err: fmt.Errorf("twice: %w", semantic)}, "unexpected string at /a/0/b"},
		{atRoot, "malformed params"},
		{decodeErr(`{`, &in), "malformed params"},
		{errors.New("plain"), "malformed params"},
		{fmt.Errorf("wrapped: %w", errors.New("plain")), "malformed params"},
		{errors.Join(semantic), "malformed params"}, // Unwrap() []error is not followed
		{nil, "malformed params"},
	} {
		if got := decl.DescribeDecodeError(tc.err); got != tc.want {
			t.Errorf("DescribeDecodeError(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	ae := &decl.ArgumentsError{Err: semantic}
	if ae.Error() != "unexpected string at /a/0/b" || !errors.Is(ae, semantic) {
		t.Errorf("ArgumentsError: %q", ae.Error())
	}
}

func TestKindName(t *testing.T) {
	for k, want := range map[jsontext.Kind]string{
		'{': "object", '[': "array", '"': "string", '0': "number", 't': "boolean", 'f': "boolean", 'n': "null",
		'}': "value", 0: "value",
	} {
		if got := decl.KindName(k); got != want {
			t.Errorf("KindName(%q) = %q, want %q", k, got, want)
		}
	}
}
