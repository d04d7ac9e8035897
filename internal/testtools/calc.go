package testtools

import (
	"context"

	"github.com/hexmcp/hexmcp/app"
)

// Calc holds a tool of each shape ToolsOf accepts, for the tests of
// discovery (internal/decl's, which add methods of the shapes it skips) and
// of the discovered tools served by the engine (app's).
type Calc struct{ Calls int }

// CalcIn is the input of Calc.Add.
type CalcIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// FetchIn is the input of Calc.URLFetch.
type FetchIn struct {
	URL string `json:"url" description:"Address to fetch"`
}

// Add has the full shape: ctx, input struct, (Out, error).
func (c *Calc) Add(_ context.Context, in CalcIn) (float64, error) {
	c.Calls++
	return in.A + in.B, nil
}

// URLFetch takes only the input, by pointer, and returns only a value.
func (c *Calc) URLFetch(in *FetchIn) string { return "fetched " + in.URL }

// WhoAmI reads the request context.
func (c *Calc) WhoAmI(_ context.Context, rc *app.RequestContext, _ struct{}) (string, error) {
	return rc.ToolName(), nil
}

// Reset is void.
func (c *Calc) Reset(struct{}) error { c.Calls = 0; return nil }
