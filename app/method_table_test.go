package app_test

import (
	"testing"

	"github.com/hexmcp/hexmcp/app"
)

// The method table says which era each method exists in, and which run
// apart from the reader; nothing else lists methods.
func TestMethodTable(t *testing.T) {
	for _, c := range []struct {
		name                       string
		handshake, stateless, call bool
		nameParam                  string
	}{
		{"initialize", true, false, false, ""},
		{"ping", true, false, false, ""},
		{"logging/setLevel", true, false, false, ""},
		{"server/discover", false, true, false, ""},
		{"tools/list", true, true, false, ""},
		{"tools/call", true, true, true, "name"},
		{"resources/list", true, true, false, ""},
		{"resources/templates/list", true, true, false, ""},
		{"resources/read", true, true, true, "uri"},
		{"resources/subscribe", true, false, false, ""},
		{"resources/unsubscribe", true, false, false, ""},
		{"subscriptions/listen", false, true, true, ""},
		{"prompts/list", true, true, false, ""},
		{"prompts/get", true, true, true, "name"},
		{"completion/complete", true, true, false, ""},
	} {
		m, ok := app.LookupMethod(c.name)
		if !ok || m.Handshake != c.handshake || m.Stateless != c.stateless || m.Call != c.call || m.NameParam != c.nameParam {
			t.Errorf("%s: %+v (known %v)", c.name, m, ok)
		}
	}
	if _, ok := app.LookupMethod("tools/explode"); ok {
		t.Error("an unknown method is known")
	}
	if n := len(app.Methods()); n != 15 {
		t.Errorf("%d methods", n)
	}
}
