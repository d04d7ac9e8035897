// Package testtools holds the tools the SDK's own tests serve on every
// transport: they ask the client for input, so that one fixture checks the
// same behaviour over the in-memory connection, HTTP and WebSocket.
package testtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/decl"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

// NameSchema is the form AskName asks the user to fill in.
const NameSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`

// AskName is the tool "ask_name": it elicits a name under the key
// "user_name" and answers "Hello, NAME!", "The user said ACTION." when the
// user did not accept, or ClientErrorText when the client answered with an
// error.
func AskName() decl.Tool {
	return decl.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		res, err := rc.Elicit(ctx, "user_name", handlerapi.ElicitForm("What is your name?", json.RawMessage(NameSchema)))
		if err != nil {
			return ClientErrorText(err)
		}
		var in struct {
			Name string `json:"name"`
		}
		if err := res.Decode(&in); err != nil {
			return "The user said " + string(res.Action) + ".", nil
		}
		return "Hello, " + in.Name + "!", nil
	}, decl.WithName("ask_name"))
}

// Summarize is the tool "summarize": it asks the client's LLM (key
// "summary") and answers "summary: TEXT".
func Summarize() decl.Tool {
	return decl.NewTool(func(ctx context.Context, rc *app.RequestContext) (string, error) {
		res, err := rc.CreateMessage(ctx, "summary", domain.CreateMessageParams{
			Messages:  []domain.SamplingMessage{handlerapi.UserText("Summarize the weather")},
			MaxTokens: 100,
		})
		if err != nil {
			return ClientErrorText(err)
		}
		return "summary: " + res.Text(), nil
	}, decl.WithName("summarize"))
}

// ClientErrorText turns a client's error answer into the tool's text
// ("client error CODE on METHOD: MESSAGE"); any other error is returned.
func ClientErrorText(err error) (string, error) {
	var ce *handlerapi.ClientError
	if errors.As(err, &ce) {
		return fmt.Sprintf("client error %d on %s: %s", ce.Code, ce.Method, ce.Message), nil
	}
	return "", err
}

// LogEveryLevel is the tool "logs": it logs one message (its level's
// name, logger "state") at each level from debug to error, so that a test
// sees which ones a client's level lets through.
func LogEveryLevel() decl.Tool {
	return decl.NewTool(func(ctx context.Context, rc *app.RequestContext) error {
		for _, l := range []domain.LogLevel{domain.LogDebug, domain.LogInfo, domain.LogWarning, domain.LogError} {
			if err := rc.Log(ctx, l, "state", string(l)); err != nil {
				return err
			}
		}
		return nil
	}, decl.WithName("logs"))
}

// Recv returns the next value received from ch, or fails t with what (the
// message: what did not happen) when none comes within d.
func Recv[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatal(what)
		panic("unreachable")
	}
}

// Eventually polls cond until it holds, and fails t with what (the
// condition awaited) when it still does not after d: a deadline for what
// must happen, not a measure of its speed.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting, after %v, for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ReadToEnd reads r to its end and returns what it read, or fails t with
// what (the message: what did not end) when r has not ended within d.
func ReadToEnd(t testing.TB, r io.Reader, d time.Duration, what string) string {
	t.Helper()
	rest := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		rest <- string(b)
	}()
	return Recv(t, rest, d, what)
}
