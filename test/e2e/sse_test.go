package e2e

import (
	"encoding/json"
	"strconv"
	"testing"
)

// The official TypeScript SDK v1's SSEClientTransport (the HTTP+SSE
// transport of 2024-11-05) against the showcase's -transport http, at
// /sse: the same call plan and golden file as over stdio (bookTable's
// elicitation and resetCounter's confirmations answered by POST), then
// concurrent calls on the same session.
func TestSSEV1(t *testing.T) {
	const n = 24
	r := runClientOver(t, "v1", "sse", "", "E2E_CONCURRENT="+strconv.Itoa(n))
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(r.raw, &doc); err != nil {
		t.Fatal(err)
	}
	var answers []struct {
		A     int             `json:"a"`
		Text  *string         `json:"text"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(doc["concurrent"], &answers); err != nil || len(answers) != n {
		t.Fatalf("concurrent calls: %v, %s", err, doc["concurrent"])
	}
	for _, a := range answers {
		if a.Text == nil || *a.Text != strconv.Itoa(2*a.A) {
			t.Errorf("calculate %d × 2 at once with the others: %s %s", a.A, derefOr(a.Text), a.Error)
		}
	}
	// The rest is the stdio document.
	delete(doc, "concurrent")
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	plain := &run{raw: raw, stderr: r.stderr}
	if err := json.Unmarshal(raw, &plain.doc); err != nil {
		t.Fatal(err)
	}
	checkV1(t, plain)
}

func derefOr(s *string) string {
	if s == nil {
		return "(no text)"
	}
	return *s
}
