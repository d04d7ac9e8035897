package app_test

import (
	"testing"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/internal/exchange"
)

// The exchange port is the engine's: a value that is no engine, or a nil
// *Engine, has none (and nothing panics later for it).
func TestExchangePortOfNoEngine(t *testing.T) {
	for name, v := range map[string]any{"nil *Engine": (*app.Engine)(nil), "not an engine": "x", "nil": nil} {
		if p, ok := exchange.PortOf(v, nil); ok || p != nil {
			t.Errorf("%s: PortOf = %v, %v; want none", name, p, ok)
		}
	}
}
