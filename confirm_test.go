package hexmcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

type wipeIn struct {
	Table string `json:"table"`
}

// confirmServer serves a destructive tool, a read-only one, an
// unannotated one and a destructive one that asks a question of its own;
// runs counts the handlers that ran.
func confirmServer(t *testing.T, opts hexmcp.ConfirmOptions, runs *atomic.Int64) *hexmcp.Server {
	t.Helper()
	yes, no := hexmcp.Bool(true), hexmcp.Bool(false)
	run := func(context.Context, wipeIn) (string, error) { runs.Add(1); return "wiped", nil }
	asking := func(ctx context.Context, in wipeIn) (string, error) {
		rc := hexmcp.RequestFrom(ctx)
		ans, err := rc.Elicit(ctx, "reason", hexmcp.ElicitForm("Why?", json.RawMessage(`{"type":"object","properties":{"why":{"type":"string"}}}`)))
		if err != nil {
			return "", err
		}
		var v struct{ Why string }
		_ = ans.Decode(&v)
		runs.Add(1)
		return "wiped because " + v.Why, nil
	}
	return hexmcptest.NewServer(t, hexmcp.Options{
		Tools: []hexmcp.Tool{
			hexmcp.Func(run, hexmcp.WithName("wipe"), hexmcp.WithTitle("Wipe a table"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{DestructiveHint: yes})),
			hexmcp.Func(run, hexmcp.WithName("peek"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{ReadOnlyHint: yes, DestructiveHint: yes})),
			hexmcp.Func(run, hexmcp.WithName("plain")),
			hexmcp.Func(run, hexmcp.WithName("safe"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{ReadOnlyHint: no, DestructiveHint: no})),
			hexmcp.Func(run, hexmcp.WithName("titled"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{Title: "Only a title"})),
			hexmcp.Func(run, hexmcp.WithName("writes"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{ReadOnlyHint: no})),
			hexmcp.Func(asking, hexmcp.WithName("wipeWhy"), hexmcp.WithAnnotations(hexmcp.ToolAnnotations{DestructiveHint: yes})),
		},
		ToolMiddleware: []hexmcp.ToolMiddleware{hexmcp.ConfirmDestructive(opts)},
	})
}

// answerer answers the confirmation with action and content, and the
// wipeWhy question with "tests"; it keeps the questions it saw.
type answerer struct {
	mu      sync.Mutex
	asked   []domain.ElicitParams
	action  domain.ElicitAction
	content string
}

func (a *answerer) answer(_ context.Context, p domain.ElicitParams) (*domain.ElicitResult, error) {
	a.mu.Lock()
	a.asked = append(a.asked, p)
	a.mu.Unlock()
	if p.Message == "Why?" {
		return &domain.ElicitResult{Action: domain.ElicitAccept, Content: json.RawMessage(`{"why":"tests"}`)}, nil
	}
	r := &domain.ElicitResult{Action: a.action}
	if a.content != "" {
		r.Content = json.RawMessage(a.content)
	}
	return r, nil
}

func (a *answerer) questions() []domain.ElicitParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]domain.ElicitParams(nil), a.asked...)
}

var transports = []hexmcptest.Transport{hexmcptest.InMemory, hexmcptest.StreamableHTTP}

func TestConfirmDestructive(t *testing.T) {
	cases := []struct {
		name          string
		action        domain.ElicitAction
		content       string
		runs          bool
		text          string
		isError       bool
		elicitVersion bool // only where the revision has elicitation
	}{
		{"accepted", domain.ElicitAccept, `{"confirm":true}`, true, "wiped", false, true},
		{"declined", domain.ElicitDecline, "", false, `The user declined running the destructive tool "wipe". Nothing was done.`, true, true},
		{"cancelled", domain.ElicitCancel, "", false, `The user cancelled running the destructive tool "wipe". Nothing was done.`, true, true},
		{"accepted unticked", domain.ElicitAccept, `{"confirm":false}`, false, `The user did not tick confirm running the destructive tool "wipe". Nothing was done.`, true, true},
	}
	for _, tr := range transports {
		t.Run(tr.String(), func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					var runs atomic.Int64
					srv := confirmServer(t, hexmcp.ConfirmOptions{}, &runs)
					a := &answerer{action: tc.action, content: tc.content}
					hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{Transport: tr, Elicitation: a.answer}, func(t *testing.T, c *client.Session) {
						before := runs.Load()
						asked := len(a.questions())
						res, err := c.CallTool(t.Context(), "wipe", map[string]any{"table": "users"})
						if err != nil {
							t.Fatalf("wipe: %v", err)
						}
						if !c.Features().Elicitation {
							// No elicitation before 2025-06-18: refused, not run.
							if !res.IsError || !strings.Contains(res.Text(), "cannot ask the user") || runs.Load() != before {
								t.Errorf("without elicitation: %+v (ran %d)", res, runs.Load()-before)
							}
							return
						}
						if res.IsError != tc.isError || res.Text() != tc.text {
							t.Errorf("wipe = %q (isError %v), want %q (%v)", res.Text(), res.IsError, tc.text, tc.isError)
						}
						if ran := runs.Load() - before; (ran == 1) != tc.runs || ran > 1 {
							t.Errorf("the handler ran %d times", ran)
						}
						qs := a.questions()[asked:]
						if len(qs) != 1 {
							t.Fatalf("asked %d questions, want 1", len(qs))
						}
						q := qs[0]
						if !strings.Contains(q.Message, "Wipe a table (wipe) is marked destructive") || !strings.Contains(q.Message, `{"table":"users"}`) {
							t.Errorf("question = %q", q.Message)
						}
						var schema struct {
							Properties map[string]struct{ Type string }
							Required   []string
						}
						if err := json.Unmarshal(q.RequestedSchema, &schema); err != nil || schema.Properties["confirm"].Type != "boolean" || len(schema.Required) != 1 {
							t.Errorf("schema = %s (%v)", q.RequestedSchema, err)
						}
					})
				})
			}
		})
	}
}

func TestConfirmOnlyDestructive(t *testing.T) {
	for _, include := range []bool{false, true} {
		var runs atomic.Int64
		srv := confirmServer(t, hexmcp.ConfirmOptions{IncludeUnannotated: include}, &runs)
		a := &answerer{action: domain.ElicitDecline}
		c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Elicitation: a.answer})
		// Without destructiveHint, and not read-only (no hint, a title alone,
		// readOnlyHint: false alone): the spec's default, destructive.
		presumed := map[string]bool{"plain": true, "titled": true, "writes": true}
		for _, name := range []string{"peek", "safe", "plain", "titled", "writes"} {
			res, err := c.CallTool(t.Context(), name, map[string]any{"table": "t"})
			if err != nil {
				t.Fatal(err)
			}
			asked := presumed[name] && include
			if asked != res.IsError {
				t.Errorf("IncludeUnannotated %v: %s = %+v", include, name, res)
			}
		}
		if want := map[bool]int{false: 0, true: 3}[include]; len(a.questions()) != want {
			t.Errorf("IncludeUnannotated %v: asked %d questions, want %d", include, len(a.questions()), want)
		}
	}
}

func TestConfirmWithoutElicitation(t *testing.T) {
	for _, allow := range []bool{false, true} {
		var runs atomic.Int64
		srv := confirmServer(t, hexmcp.ConfirmOptions{AllowWithoutElicitation: allow}, &runs)
		hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{}, func(t *testing.T, c *client.Session) {
			before := runs.Load()
			res, err := c.CallTool(t.Context(), "wipe", map[string]any{"table": "t"})
			if err != nil {
				t.Fatal(err)
			}
			ran := runs.Load() - before
			if allow {
				if res.IsError || ran != 1 {
					t.Errorf("allowed: %+v, ran %d", res, ran)
				}
				return
			}
			want := `The tool "wipe" is destructive and runs only when the user confirms it, but this client cannot ask the user (it does not support elicitation). Nothing was done.`
			if !res.IsError || res.Text() != want || ran != 0 {
				t.Errorf("refused: %q (isError %v), ran %d", res.Text(), res.IsError, ran)
			}
		})
	}
}

// A destructive tool that asks a question of its own: the confirmation
// first, then its question, in both eras (one input_required round each at
// 2026-07-28); the handler runs once.
func TestConfirmThenTheToolsOwnQuestion(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.String(), func(t *testing.T) {
			var runs atomic.Int64
			srv := confirmServer(t, hexmcp.ConfirmOptions{}, &runs)
			a := &answerer{action: domain.ElicitAccept, content: `{"confirm":true}`}
			hexmcptest.ForEachRevision(t, srv, hexmcptest.ClientOptions{Transport: tr, Elicitation: a.answer}, func(t *testing.T, c *client.Session) {
				if !c.Features().Elicitation {
					return
				}
				before, asked := runs.Load(), len(a.questions())
				res, err := c.CallTool(t.Context(), "wipeWhy", map[string]any{"table": "t"})
				if err != nil || res.IsError || res.Text() != "wiped because tests" {
					t.Fatalf("wipeWhy = %+v, %v", res, err)
				}
				if ran := runs.Load() - before; ran != 1 {
					t.Errorf("ran %d times", ran)
				}
				qs := a.questions()[asked:]
				if len(qs) != 2 || !strings.Contains(qs[0].Message, "destructive") || qs[1].Message != "Why?" {
					t.Errorf("questions: %+v", qs)
				}
			})
		})
	}
}

func TestConfirmMessageOption(t *testing.T) {
	var runs atomic.Int64
	srv := confirmServer(t, hexmcp.ConfirmOptions{Message: func(call *hexmcp.ToolCall) string { return "Really " + call.Tool.Name + "?" }}, &runs)
	a := &answerer{action: domain.ElicitAccept, content: `{"confirm":true}`}
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Elicitation: a.answer})
	if res, err := c.CallTool(t.Context(), "wipe", map[string]any{"table": strings.Repeat("x", 5000)}); err != nil || res.IsError {
		t.Fatalf("wipe = %+v, %v", res, err)
	}
	if qs := a.questions(); len(qs) != 1 || qs[0].Message != "Really wipe?" {
		t.Errorf("questions: %+v", qs)
	}
}

func TestConfirmQuotesLongArgumentsCut(t *testing.T) {
	var runs atomic.Int64
	srv := confirmServer(t, hexmcp.ConfirmOptions{}, &runs)
	a := &answerer{action: domain.ElicitDecline}
	c := hexmcptest.Connect(t, srv, hexmcptest.ClientOptions{Elicitation: a.answer})
	if _, err := c.CallTool(t.Context(), "wipe", map[string]any{"table": strings.Repeat("é", 3000)}); err != nil {
		t.Fatal(err)
	}
	qs := a.questions()
	// Cut at a character's start: no half "é" (which the JSON of the
	// request would carry as U+FFFD).
	if len(qs) != 1 || len(qs[0].Message) > 1200 || !strings.HasSuffix(qs[0].Message, "é…?") || strings.ContainsRune(qs[0].Message, utf8.RuneError) {
		t.Errorf("question of %d bytes: %.80q…", len(qs[0].Message), qs[0].Message)
	}
}
