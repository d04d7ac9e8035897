package hexmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/portlimits"
)

// ConfirmKey is the key under which [ConfirmDestructive] asks its question
// ([ElicitInput]): a tool that asks questions of its own must use other
// keys.
const ConfirmKey = "hexmcp.confirm"

// maxShownArguments bounds the arguments quoted in the default question
// (1 KiB; longer ones are cut, with an ellipsis).
const maxShownArguments = 1 << 10

// ConfirmOptions configure [ConfirmDestructive]. The zero value confirms
// every tool annotated destructiveHint: true and refuses to run one for a
// client that cannot be asked.
type ConfirmOptions struct {
	// Message writes the question put to the user (default: it names the
	// tool, says that it is marked destructive, and quotes the arguments, cut
	// at 1 KiB).
	Message func(call *ToolCall) string
	// IncludeUnannotated confirms also the tools whose annotations do not
	// say destructiveHint and do not say readOnlyHint: true (no hint at
	// all, or readOnlyHint: false alone), which the specification presumes
	// destructive (default: only those that say destructiveHint: true).
	IncludeUnannotated bool
	// AllowWithoutElicitation runs a destructive tool unconfirmed for a
	// client that cannot be asked (it did not declare elicitation, or its
	// revision predates elicitation/create, 2025-06-18). Default: the call
	// is refused with an isError result that says why, and the tool does not
	// run.
	AllowWithoutElicitation bool
}

// ConfirmDestructive returns tool middleware that asks the user before a
// destructive tool runs: a tool whose annotations say destructiveHint: true
// and not readOnlyHint: true (with IncludeUnannotated, also one that says
// no destructiveHint and is not readOnlyHint: true). It asks through
// elicitation, in both eras: an elicitation/create request in the
// handshake era, an input_required round answered on the client's retry
// at 2026-07-28. The question is a
// form with one boolean, "confirm", that the user must tick.
//
//   - Accepted with confirm true: the tool runs.
//   - Declined, cancelled, or accepted without confirm: the handler never
//     runs; the model reads an isError result saying that the user did not
//     confirm, and nothing was done.
//   - A client that cannot be asked: refused the same way, with the reason
//     (unless AllowWithoutElicitation).
//
// Put it first in Options.ToolMiddleware (the outermost), so that the time
// the user takes to answer is not counted by a ToolTimeout inside it.
func ConfirmDestructive(opts ConfirmOptions) ToolMiddleware {
	message := opts.Message
	if message == nil {
		message = defaultQuestion
	}
	return func(next ToolHandler) ToolHandler {
		return func(ctx context.Context, call *ToolCall) (any, error) {
			if !destructive(call.Tool, opts.IncludeUnannotated) {
				return next(ctx, call)
			}
			rc := app.RequestFrom(ctx)
			if rc == nil {
				return nil, errors.New("hexmcp: ConfirmDestructive runs only inside a tool call")
			}
			q := ElicitInput(ConfirmKey, ElicitForm(message(call), confirmSchema(call.Tool)))
			if !rc.CanAsk(q) {
				if opts.AllowWithoutElicitation {
					return next(ctx, call)
				}
				return nil, NewToolError(fmt.Sprintf("The tool %q is destructive and runs only when the user confirms it, "+
					"but this client cannot ask the user (it does not support elicitation). Nothing was done.", call.Tool.Name))
			}
			answers, err := rc.Ask(ctx, q)
			if err != nil {
				return nil, err // input_required in the stateless era, or the client gone
			}
			res, _ := answers.Elicitation(ConfirmKey)
			var v struct {
				Confirm bool `json:"confirm"`
			}
			if res.Accepted() && res.Decode(&v) == nil && v.Confirm {
				return next(ctx, call)
			}
			how := "declined"
			switch {
			case res == nil:
				how = "did not answer"
			case res.Action == domain.ElicitCancel:
				how = "cancelled"
			case res.Accepted():
				how = "did not tick confirm"
			}
			return nil, NewToolError(fmt.Sprintf("The user %s running the destructive tool %q. Nothing was done.", how, call.Tool.Name))
		}
	}
}

// destructive tells whether t is to be confirmed.
func destructive(t *domain.Tool, unannotated bool) bool {
	if t == nil {
		return false
	}
	a := t.Annotations
	if a == nil {
		return unannotated
	}
	if a.ReadOnlyHint != nil && *a.ReadOnlyHint {
		return false
	}
	if a.DestructiveHint != nil {
		return *a.DestructiveHint
	}
	// No destructiveHint, and not read-only: the specification's default
	// of destructiveHint (true) applies, whether readOnlyHint said false
	// or nothing.
	return unannotated
}

func defaultQuestion(call *ToolCall) string {
	name := call.Tool.Name
	if call.Tool.Title != "" {
		name = fmt.Sprintf("%s (%s)", call.Tool.Title, call.Tool.Name)
	}
	args := string(call.Arguments)
	if len(args) > maxShownArguments {
		args = portlimits.Cut(args, maxShownArguments) + "…"
	}
	if args == "" || args == "null" {
		args = "{}"
	}
	return fmt.Sprintf("%s is marked destructive: it may delete or overwrite data. Run it with the arguments %s?", name, args)
}

// confirmSchema is the form: one boolean the user must set.
func confirmSchema(t *domain.Tool) json.RawMessage {
	title, _ := json.Marshal("Run " + t.Name)
	return json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":` + string(title) +
		`,"description":"Tick to let the destructive tool run."}},"required":["confirm"]}`)
}
