package hexmcptest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

// recorder is a testing.TB that keeps what CheckContract reports instead of
// failing the test that runs it.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	logs   []string
	fatal  bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	runtime.Goexit()
}

// check runs CheckContract with a recorder, on its own goroutine so that a
// Fatalf ends only it.
func check(t *testing.T, srv *hexmcp.Server, lock string) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		hexmcptest.CheckContract(r, srv, lock)
	}()
	<-done
	return r
}

type order struct {
	Item     string `json:"item"`
	Quantity int    `json:"quantity,omitempty" minimum:"1" maximum:"10"`
}

type orderV2 struct {
	Item     string `json:"item"`
	Quantity int    `json:"quantity,omitempty" minimum:"1" maximum:"5"`
	Address  string `json:"address"`
}

type orderV2Compatible struct {
	Item     string `json:"item"`
	Quantity int    `json:"quantity,omitempty" minimum:"1" maximum:"20"`
	Note     string `json:"note,omitempty"`
}

func placeOrder[In any](context.Context, In) (string, error) { return "ok", nil }

func shop(tools ...hexmcp.Tool) *hexmcp.Server {
	srv, err := hexmcp.New(hexmcp.Options{Tools: tools})
	if err != nil {
		panic(err)
	}
	return srv
}

func TestCheckContract(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "tools.lock.json")
	v1 := shop(hexmcp.Func(placeOrder[order], hexmcp.WithName("placeOrder")))
	defer v1.Close()

	if r := check(t, v1, lock); !r.fatal || len(r.errors) != 1 || !strings.Contains(r.errors[0], hexmcptest.WriteContractEnv+"=1") {
		t.Errorf("without a lock file: fatal %v, errors %q", r.fatal, r.errors)
	}
	t.Setenv(hexmcptest.WriteContractEnv, "1")
	if r := check(t, v1, lock); len(r.errors) != 0 {
		t.Fatalf("writing: %q", r.errors)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("no lock written: %v", err)
	}
	t.Setenv(hexmcptest.WriteContractEnv, "")

	if r := check(t, v1, lock); len(r.errors) != 0 || len(r.logs) != 0 {
		t.Errorf("the same server: errors %q, logs %q", r.errors, r.logs)
	}

	compatible := shop(hexmcp.Func(placeOrder[orderV2Compatible], hexmcp.WithName("placeOrder")), hexmcp.Func(placeOrder[order], hexmcp.WithName("quote")))
	defer compatible.Close()
	r := check(t, compatible, lock)
	if len(r.errors) != 0 {
		t.Errorf("compatible changes failed the test: %q", r.errors)
	}
	if logs := strings.Join(r.logs, "\n"); !strings.Contains(logs, `"quote" /: new tool`) || !strings.Contains(logs, "/inputSchema/properties/note: new optional parameter") {
		t.Errorf("compatible changes not logged:\n%s", logs)
	}

	breaking := shop(hexmcp.Func(placeOrder[orderV2], hexmcp.WithName("placeOrder")))
	defer breaking.Close()
	r = check(t, breaking, lock)
	errs := strings.Join(r.errors, "\n")
	for _, want := range []string{
		`BREAKING tool "placeOrder" /inputSchema/required: new required parameter "address"`,
		`BREAKING tool "placeOrder" /inputSchema/properties/quantity/maximum: bound tightened`,
		"2 breaking changes",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("errors lack %q:\n%s", want, errs)
		}
	}
	if r.fatal {
		t.Error("breaking changes stopped the test: each should be its own error")
	}
}

func TestCheckContractRefusesABadLock(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "tools.lock.json")
	if err := os.WriteFile(lock, []byte(`{"tools": "nope"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := shop(hexmcp.Func(placeOrder[order], hexmcp.WithName("placeOrder")))
	defer srv.Close()
	if r := check(t, srv, lock); !r.fatal || !strings.Contains(strings.Join(r.errors, ""), "tools.lock.json") {
		t.Errorf("a bad lock: fatal %v, errors %q", r.fatal, r.errors)
	}
}

// refusing is a server whose middleware answers the methods of refuse
// with the JSON-RPC error code.
func refusing(code int, refuse ...string) *hexmcp.Server {
	mw := func(next hexmcp.MethodHandler) hexmcp.MethodHandler {
		return func(ctx context.Context, req *hexmcp.Request) (json.RawMessage, error) {
			if slices.Contains(refuse, req.Method) {
				return nil, hexmcp.NewProtocolError(code, "refused", nil)
			}
			return next(ctx, req)
		}
	}
	srv, err := hexmcp.New(hexmcp.Options{Tools: []hexmcp.Tool{hexmcp.Func(placeOrder[order], hexmcp.WithName("placeOrder"))}, Middleware: []hexmcp.Middleware{mw}})
	if err != nil {
		panic(err)
	}
	return srv
}

// A server without prompts and resources (their lists are -32601) has a
// contract of its tools; a server whose list fails otherwise stops the
// check, naming the lists.
func TestCheckContractOfAServerWithToolsOnly(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "tools.lock.json")
	toolsOnly := refusing(-32601, "prompts/list", "resources/list", "resources/templates/list")
	defer toolsOnly.Close()
	t.Setenv(hexmcptest.WriteContractEnv, "1")
	if r := check(t, toolsOnly, lock); len(r.errors) != 0 {
		t.Fatalf("writing the lock of a server with tools only: %q", r.errors)
	}
	t.Setenv(hexmcptest.WriteContractEnv, "")
	if r := check(t, toolsOnly, lock); len(r.errors) != 0 {
		t.Fatalf("checking it: %q", r.errors)
	}
	failing := refusing(-32603, "tools/list")
	defer failing.Close()
	if r := check(t, failing, lock); !r.fatal || !strings.Contains(strings.Join(r.errors, ""), "reading the server's lists") {
		t.Fatalf("a failing tools/list: fatal %v, errors %q", r.fatal, r.errors)
	}
}
