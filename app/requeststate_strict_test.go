package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/adapters/jsonschema"

	"github.com/hexmcp/hexmcp/app"
)

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// TestRequestStateOneSpelling: a requestState verifies only as the server
// wrote it. Its signature (32 bytes, 43 base64url characters) leaves two
// bits of the last character unused: the three other characters that
// differ only in those bits decode to the same bytes non-strictly, and are
// refused (-32602) like any other alteration; so is a line break, which
// even strict base64 decoding skips.
func TestRequestStateOneSpelling(t *testing.T) {
	e := inputEngine(t, app.Options{Validator: jsonschema.New()})
	ctx := context.Background()
	r1, resp := mrtrCall(t, e, ctx, "ask_name", `"arguments":{},`)
	if r1.RequestState == "" {
		t.Fatalf("no requestState: %s", resp)
	}
	state := r1.RequestState
	_, sig, _ := strings.Cut(state, ".")
	if len(sig) != 43 {
		t.Fatalf("signature of %d characters", len(sig))
	}
	answer := `"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},`
	last := strings.IndexByte(base64URLAlphabet, state[len(state)-1])
	var variants []string
	for low := range 4 {
		if v := last&^3 | low; v != last {
			variants = append(variants, state[:len(state)-1]+base64URLAlphabet[v:v+1])
		}
	}
	variants = append(variants, state[:len(state)-2]+`\n`+state[len(state)-2:], state[:len(state)-5]+`\r\n`+state[len(state)-5:])
	for _, v := range variants {
		_, resp := mrtrCall(t, e, ctx, "ask_name", `"arguments":{},`+answer+`"requestState":"`+v+`",`)
		if !strings.Contains(resp, `"code":-32602`) || !strings.Contains(resp, "requestState does not verify") {
			t.Errorf("requestState %q: got %s, want -32602", v, resp)
		}
	}
	// The state as written still verifies.
	if r2, resp := mrtrCall(t, e, ctx, "ask_name", `"arguments":{},`+answer+`"requestState":"`+state+`",`); r2.ResultType != "complete" {
		t.Fatalf("the original state: %s", resp)
	}
}
