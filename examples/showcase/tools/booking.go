package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/hexmcp/hexmcp"
)

// BookTableInput is when bookTable books the table.
type BookTableInput struct {
	Time string `json:"time,omitempty" description:"When, as HH:MM (default 20:00)" pattern:"^[0-2][0-9]:[0-5][0-9]$"`
}

// TableRequest is the form bookTable asks the user to fill in: its tags
// become the elicitation schema (see tableForm).
type TableRequest struct {
	Name    string `json:"name" title:"Name" description:"Who the table is for"`
	Seating string `json:"seating" title:"Seating" enum:"inside,terrace,bar" default:"inside"`
	Quiet   bool   `json:"quiet,omitempty" title:"Quiet corner" description:"A table away from the kitchen" default:"false"`
}

// tableForm is the elicitation schema of TableRequest, derived once.
var tableForm = sync.OnceValues(func() (json.RawMessage, error) {
	return hexmcp.ElicitSchemaFor(reflect.TypeFor[TableRequest]())
})

// bookTable asks the user who the table is for (elicitation) and books it.
// The same code serves both eras: in the handshake era Elicit sends
// elicitation/create to the client and waits for the answer; at 2026-07-28
// its first call fails with an input-required error that the handler
// returns unchanged, the engine answers resultType "input_required", and
// the client calls again with the answer. Nothing happens before the
// question that must happen only once.
//
// A client that cannot be asked (it did not declare the elicitation
// capability, or its revision, before 2025-06-18, has no elicitation) gets
// a tool error it can show, and a user who declines or cancels a polite
// text.
func bookTable(ctx context.Context, rc *hexmcp.RequestContext, in BookTableInput) (string, error) {
	form, err := tableForm()
	if err != nil {
		return "", err
	}
	when := in.Time
	if when == "" {
		when = "20:00"
	}
	ask := hexmcp.ElicitInput("table", hexmcp.ElicitForm("Who is the table at "+when+" for?", form))
	if !rc.CanAsk(ask) {
		why := "it did not declare the elicitation capability"
		if !rc.Features().Elicitation {
			why = "protocol revision " + string(rc.Revision()) + " has no elicitation"
		}
		return "", hexmcp.NewToolError("This client cannot ask the user (" + why + "), so no table was booked.")
	}
	answers, err := rc.Ask(ctx, ask)
	if err != nil {
		return "", err // never swallowed: at 2026-07-28 it asks the client
	}
	res, _ := answers.Elicitation("table")
	switch {
	case res.Accepted():
	case res.Action == hexmcp.ElicitDecline:
		return "No table was booked: you declined. Ask again any time.", nil
	default:
		return "No table was booked: the request was cancelled.", nil
	}
	var req TableRequest
	if err := res.Decode(&req); err != nil {
		return "", hexmcp.ToolErrorf("The answer could not be read: %v", err)
	}
	quiet := ""
	if req.Quiet {
		quiet = ", in a quiet corner"
	}
	return fmt.Sprintf("Booked a table for %s at %s, %s%s.", req.Name, when, seatingPlace(req.Seating), quiet), nil
}

// seatingPlace says where a seating is.
func seatingPlace(seating string) string {
	switch seating {
	case "terrace":
		return "on the terrace"
	case "bar":
		return "at the bar"
	}
	return "inside"
}
