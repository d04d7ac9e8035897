package client_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/showcasebin"
)

// TestMain builds the showcase server once, for the stdio tests.
func TestMain(m *testing.M) { os.Exit(showcasebin.Run(m, "client")) }

// The showcase server as a child process, every revision: a form filled
// in by elicitation, progress, logging.
func TestStdioShowcase(t *testing.T) {
	bin := showcasebin.Build(t, showcasebin.Options{})
	for _, rev := range revisions {
		name := string(rev)
		if name == "" {
			name = "auto"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			var logs []string
			c := client.New(client.Options{
				Revision: rev,
				Elicitation: func(ctx context.Context, p domain.ElicitParams) (*domain.ElicitResult, error) {
					return client.Accept(map[string]any{"name": "Ada", "seating": "terrace"})
				},
				LogLevel: domain.LogInfo,
				Logging:  func(m client.LogMessage) { logs = append(logs, string(m.Level)) },
			})
			s := connect(t, c, client.CommandTransport(exec.Command(bin)))
			if rev != "" && s.Revision() != rev || rev == "" && s.Revision() != domain.Revision20260728 {
				t.Fatalf("session at %s", s.Revision())
			}
			tools, err := client.Collect(s.ListTools(ctx))
			if err != nil || !containsTool(tools, "bookTable") {
				t.Fatalf("tools: %d %v", len(tools), err)
			}
			res, err := s.CallTool(ctx, "bookTable", map[string]any{"time": "19:30"})
			if err != nil {
				t.Fatal(err)
			}
			if s.Features().Elicitation {
				if res.IsError || !strings.Contains(res.Text(), "Booked a table for Ada at 19:30") {
					t.Errorf("bookTable = %q", res.Text())
				}
			} else if !res.IsError {
				t.Errorf("bookTable without elicitation = %q, want a tool error", res.Text())
			}
			checkCountDownAndLog(ctx, t, s, &logs)
		})
	}
}

// A server process that fails: its standard error is in the error.
func TestStdioProcessFails(t *testing.T) {
	bin := showcasebin.Build(t, showcasebin.Options{})
	_, err := client.New(client.Options{}).Connect(t.Context(), client.CommandTransport(exec.Command(bin, "-no-such-flag")))
	if !errors.Is(err, client.ErrClosed) || !strings.Contains(err.Error(), "no-such-flag") || !strings.Contains(err.Error(), "exit status 2") {
		t.Fatalf("connect: %v, want the exit status and the process's standard error", err)
	}
	// Stderr given: it gets the process's standard error.
	var stderr strings.Builder
	cmd := exec.Command(bin, "-no-such-flag")
	cmd.Stderr = &stderr
	if _, err := client.New(client.Options{}).Connect(t.Context(), client.CommandTransport(cmd)); err == nil || !strings.Contains(stderr.String(), "no-such-flag") {
		t.Fatalf("connect: %v; stderr %q", err, stderr.String())
	}
}

// A server that neither answers nor exits when its standard input closes
// is stopped by Close (SIGTERM after CommandGrace, then kill).
func TestCommandClosedStopsTheProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs sh")
	}
	cmd := exec.Command("sh", "-c", "trap '' TERM; while :; do sleep 1; done")
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := client.New(client.Options{ProbeTimeout: 20 * time.Millisecond}).Connect(ctx, client.CommandTransport(cmd))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("connect: %v", err)
	}
	// Connect closed the session: the process is gone.
	if cmd.ProcessState == nil || cmd.ProcessState.Success() {
		t.Fatalf("process state %v", cmd.ProcessState)
	}
}

// A Transport used without a Client (ConnOptions{} names no limit) reads
// messages up to DefaultMaxMessageBytes, not none.
func TestTransportWithoutAClientTakesTheDefaultLimit(t *testing.T) {
	fromServer, toClient := io.Pipe()
	toServer, fromClient := io.Pipe()
	defer toServer.Close()
	msg := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 64<<10) + `"}}`
	go func() { _, _ = io.WriteString(toClient, msg+"\n") }()
	conn, err := client.IOTransport(fromServer, fromClient).Connect(t.Context(), client.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, err := conn.Read(t.Context())
	if err != nil || string(got) != msg {
		t.Fatalf("Read = %d bytes, %v; want the %d-byte message", len(got), err, len(msg))
	}
}
