package tools

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

// bookingServer serves bookTable alone.
func bookingServer(t *testing.T) *hexmcp.Server {
	t.Helper()
	for _, tool := range All() {
		if tool.Definition().Name == "bookTable" {
			return hexmcptest.NewServer(t, hexmcp.Options{Tools: []hexmcp.Tool{tool}})
		}
	}
	t.Fatal("bookTable is not among All()")
	return nil
}

// answering is a client whose user gives answer to every elicitation, and
// records the questions.
type answering struct {
	mu        sync.Mutex
	questions []hexmcp.ElicitParams
	answer    func() (*hexmcp.ElicitResult, error)
}

func (a *answering) elicit(_ context.Context, p hexmcp.ElicitParams) (*hexmcp.ElicitResult, error) {
	a.mu.Lock()
	a.questions = append(a.questions, p)
	a.mu.Unlock()
	return a.answer()
}

func (a *answering) asked() []hexmcp.ElicitParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]hexmcp.ElicitParams(nil), a.questions...)
}

func (a *answering) reset() {
	a.mu.Lock()
	a.questions = nil
	a.mu.Unlock()
}

// TestBookTableAnswers drives bookTable under every revision that has
// elicitation, in memory and over HTTP: the question (its text and the
// TableRequest form), then each possible answer. In a session the server
// sends elicitation/create; at 2026-07-28 it answers input_required and the
// client retries with the answer: the same handler code either way.
func TestBookTableAnswers(t *testing.T) {
	srv := bookingServer(t)
	form, err := tableForm()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		answer func() (*hexmcp.ElicitResult, error)
		want   string
	}{
		{func() (*hexmcp.ElicitResult, error) {
			return client.Accept(map[string]any{"name": "Ada", "seating": "terrace", "quiet": true})
		}, "Booked a table for Ada at 19:30, on the terrace, in a quiet corner."},
		{func() (*hexmcp.ElicitResult, error) {
			return client.Accept(map[string]any{"name": "Bob", "seating": "bar"})
		}, "Booked a table for Bob at 19:30, at the bar."},
		{func() (*hexmcp.ElicitResult, error) { return &hexmcp.ElicitResult{Action: hexmcp.ElicitDecline}, nil },
			"No table was booked: you declined. Ask again any time."},
		{func() (*hexmcp.ElicitResult, error) { return &hexmcp.ElicitResult{Action: hexmcp.ElicitCancel}, nil },
			"No table was booked: the request was cancelled."},
	} {
		user := &answering{answer: tc.answer}
		for _, tr := range []hexmcptest.Transport{hexmcptest.InMemory, hexmcptest.StreamableHTTP} {
			opts := hexmcptest.ClientOptions{Transport: tr, Elicitation: user.elicit}
			hexmcptest.ForEachRevision(t, srv, opts, func(t *testing.T, c *client.Session) {
				if !c.Features().Elicitation {
					return // TestBookTableNeedsElicitation
				}
				user.reset()
				res, err := c.CallTool(t.Context(), "bookTable", BookTableInput{Time: "19:30"})
				if err != nil || res.IsError || res.Text() != tc.want {
					t.Fatalf("%v: %+v, %v; want %q", tr, res, err, tc.want)
				}
				q := user.asked()
				if len(q) != 1 || q[0].Message != "Who is the table at 19:30 for?" || q[0].Mode != "form" {
					t.Fatalf("questions %+v, want one form asking who the table at 19:30 is for", q)
				}
				if string(q[0].RequestedSchema) != string(form) {
					t.Errorf("requestedSchema = %s, want %s", q[0].RequestedSchema, form)
				}
			})
		}
	}

	// Without a time, the table is at 20:00.
	user := &answering{answer: func() (*hexmcp.ElicitResult, error) {
		return client.Accept(map[string]any{"name": "Ada", "seating": "inside"})
	}}
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: hexmcp.Revision20251125, Elicitation: user.elicit})
	res, err := c.CallTool(t.Context(), "bookTable", nil)
	if err != nil || res.Text() != "Booked a table for Ada at 20:00, inside." {
		t.Errorf("result = %+v, %v", res, err)
	}
	if q := user.asked(); len(q) != 1 || q[0].Message != "Who is the table at 20:00 for?" {
		t.Errorf("questions %+v", q)
	}
}

// TestBookTableNeedsElicitation: a client that cannot be asked, because it
// did not declare elicitation or because its revision (2024-11-05,
// 2025-03-26) has none, gets bookTable's polite tool error, never -32021.
// A client that declares it, at a revision that has it, is asked.
func TestBookTableNeedsElicitation(t *testing.T) {
	srv := bookingServer(t)
	polite := func(t *testing.T, res *client.CallToolResult, err error) {
		t.Helper()
		var rpcErr *client.RPCError
		if errors.As(err, &rpcErr) {
			t.Fatalf("JSON-RPC error %d %q, want bookTable's tool error", rpcErr.Code, rpcErr.Message)
		}
		if err != nil || !res.IsError || !strings.Contains(res.Text(), "cannot ask the user") || !strings.Contains(res.Text(), "no table was booked") {
			t.Fatalf("result %+v, %v; want the tool error saying the user cannot be asked", res, err)
		}
	}

	// Not declared: every revision.
	hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
		res, err := c.CallTool(t.Context(), "bookTable", nil)
		polite(t, res, err)
		if c.Features().Elicitation && !strings.Contains(res.Text(), "did not declare the elicitation capability") {
			t.Errorf("text %q does not say the capability is missing", res.Text())
		}
	})

	// Declared, at 2025-03-26 (no elicitation in that revision).
	user := &answering{answer: func() (*hexmcp.ElicitResult, error) {
		return client.Accept(map[string]any{"name": "Ada", "seating": "inside"})
	}}
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Revision: hexmcp.Revision20250326, Elicitation: user.elicit})
	res, err := c.CallTool(t.Context(), "bookTable", nil)
	polite(t, res, err)
	if want := "This client cannot ask the user (protocol revision 2025-03-26 has no elicitation), so no table was booked."; res.Text() != want {
		t.Errorf("text %q, want %q", res.Text(), want)
	}
	if q := user.asked(); len(q) != 0 {
		t.Fatalf("asked %+v at 2025-03-26", q)
	}

	// Declared, every revision: asked exactly where the revision has
	// elicitation (2025-06-18 on).
	hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{Elicitation: user.elicit}, func(t *testing.T, c *client.Session) {
		user.reset()
		res, err := c.CallTool(t.Context(), "bookTable", nil)
		wantAsked := c.Revision() >= hexmcp.Revision20250618
		if !wantAsked {
			polite(t, res, err)
		} else if err != nil || res.IsError || res.Text() != "Booked a table for Ada at 20:00, inside." {
			t.Fatalf("result %+v, %v; want the booking", res, err)
		}
		if got := len(user.asked()); got != map[bool]int{false: 0, true: 1}[wantAsked] {
			t.Errorf("asked %d times at %s", got, c.Revision())
		}
	})
}
