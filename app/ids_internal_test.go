package app

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/ports"
)

// The head of an over-limit message: the id counts once its value is
// complete, and only if nothing before the cut names "id" again.
func TestReadIDFromHead(t *testing.T) {
	big := strings.Repeat("x", 100)
	for _, tc := range []struct{ head, id string }{
		{`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":{"s":"` + big, `42`},
		{`{"id":"abc","jsonrpc":"2.0","method":"tools/call","params":{"argu`, `"abc"`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"n","name":"m"},"id":3,"x":"` + big, `3`},
		{`{"jsonrpc":"2.0","id":42,`, `42`},
		{`{"jsonrpc":"2.0","id":42 ,`, `42`},
		{`{"jsonrpc":"2.0","id":42`, ``},       // 42 may go on: 421, 42.5
		{`{"jsonrpc":"2.0","id":"ab`, ``},      // the string is cut
		{`{"jsonrpc":"2.0","id":1,"id":2`, ``}, // id twice
		{`{"jsonrpc":"2.0","id":1,"id"`, ``},   // a second id member begins
		{`{"jsonrpc":"2.0","id":null,"x":"` + big, ``},
		{`{"jsonrpc":"2.0","id":true,"x":"` + big, ``},
		{`{"jsonrpc":"2.0","id":1,]`, ``}, // not JSON before the cut
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"x":"` + big, ``},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"s":"` + big, ``},
		{``, ``},
	} {
		id, _ := readID([]byte(tc.head), false)
		if string(id) != tc.id {
			t.Errorf("readID(%.60q) = %q, want %q", tc.head, id, tc.id)
		}
	}
}

// The scan of a head stops at ports.MaxMessageHead bytes.
func TestReadIDHeadBounded(t *testing.T) {
	pad := strings.Repeat("x", ports.MaxMessageHead)
	head := `{"jsonrpc":"2.0","pad":"` + pad + `","id":5,"method":"ping"}`
	if id, _ := readID([]byte(head), false); id != nil {
		t.Fatalf("id %s read past MaxMessageHead", id)
	}
}

func TestTooLargeErrorAnswersID(t *testing.T) {
	tl := &ports.MessageTooLargeError{Size: 9000, Limit: 1024, Unit: "line",
		Head: []byte(`{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"arguments":{"s":"xxxx`)}
	for _, err := range []error{tl, fmt.Errorf("read: %w", tl)} {
		got := string(encodeError(tooLargeError(err)))
		want := `{"jsonrpc":"2.0","id":"big-1","error":{"code":-32600,"message":"Invalid Request: ` + err.Error() + `"}}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	if !errors.Is(tl, ports.ErrMessageTooLarge) {
		t.Error("MessageTooLargeError does not wrap ErrMessageTooLarge")
	}
	// A transport that keeps no head: no id.
	plain := fmt.Errorf("frame too big: %w", ports.ErrMessageTooLarge)
	if got := string(encodeError(tooLargeError(plain))); strings.Contains(got, `"id"`) {
		t.Errorf("id without a head: %s", got)
	}
}

// TestCanonicalIDPlainIntegers checks the shortcut of canonicalID against
// parsing: the ids it keeps as they are print back the same.
func TestCanonicalIDPlainIntegers(t *testing.T) {
	for _, id := range []string{"0", "-0", "7", "-7", "100", "123456", "-999999", "1234567", "1000000", "100000", "01", "-", "", "1.0", "1e2", "-01", `"1"`} {
		parsed := id
		if f, err := strconv.ParseFloat(id, 64); err == nil {
			parsed = strconv.FormatFloat(f, 'g', -1, 64)
		}
		if plainInteger([]byte(id)) && parsed != id {
			t.Errorf("%q kept as it is, but prints %q", id, parsed)
		}
		if got := string(canonicalID(jsontext.Value(id))); id != "" && id[0] != '"' && got != parsed {
			t.Errorf("canonicalID(%q) = %q, want %q", id, got, parsed)
		}
	}
}
