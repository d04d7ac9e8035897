package hexmcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/contract"
)

// WriteContractEnv is the environment variable that turns [CheckContract]
// into the writer of its lock file: HEXMCP_WRITE_CONTRACT=1 go test -run X.
const WriteContractEnv = "HEXMCP_WRITE_CONTRACT"

// CheckContract fails the test for every change of srv's contract, since
// the lock file lockFile, that can break a client or a model that learned
// it, each named with its tool (prompt, resource) and a JSON Pointer: a
// tool removed, a new required parameter, a parameter removed or renamed, a
// type narrowed, an enum value removed, a bound tightened, an output schema
// that no longer promises what it did, an annotation that moved away from
// its safe value. Compatible changes (a new tool, a new optional parameter,
// a looser bound, wording) are logged only. It is the check of the
// mcpcontract command, in a test: the lock files of both are the same
// format, and one written by either is checked by the other.
//
// A missing lock file fails the test. With the environment variable
// HEXMCP_WRITE_CONTRACT=1 it writes lockFile from srv instead (and passes):
// the lock is then reviewed and committed like any other change.
//
// The lists are read under the lock's protocol revision when srv supports
// it (a lock is written under the newest revision that opens a session with
// initialize), since what a definition carries depends on the revision.
func CheckContract(tb testing.TB, srv *hexmcp.Server, lockFile string) {
	tb.Helper()
	if os.Getenv(WriteContractEnv) == "1" {
		l, err := fetchContract(tb, srv, contract.Revision(srv.Engine().Policy()))
		if err != nil {
			tb.Fatalf("hexmcp: %v", err)
		}
		b, err := l.Marshal()
		if err == nil {
			err = os.WriteFile(lockFile, b, 0o644)
		}
		if err != nil {
			tb.Fatalf("hexmcp: writing the contract: %v", err)
		}
		tb.Logf("hexmcp: wrote %s: %d tools, %d prompts, %d resources, %d resource templates", lockFile, len(l.Tools), len(l.Prompts), len(l.Resources), len(l.ResourceTemplates))
		return
	}
	data, err := os.ReadFile(lockFile)
	if errors.Is(err, os.ErrNotExist) {
		tb.Fatalf("hexmcp: no contract lock %s: write it with %s=1 go test (or mcpcontract write -o %s -- your server), review it and commit it", lockFile, WriteContractEnv, lockFile)
	}
	if err != nil {
		tb.Fatalf("hexmcp: %v", err)
	}
	lock, err := contract.Parse(data)
	if err != nil {
		tb.Fatalf("hexmcp: %s: %v", lockFile, err)
	}
	policy := srv.Engine().Policy()
	rev := domain.Revision(lock.ProtocolVersion)
	if !policy.Supports(rev) {
		rev = contract.Revision(policy)
	}
	live, err := fetchContract(tb, srv, rev)
	if err != nil {
		tb.Fatalf("hexmcp: %v", err)
	}
	breaking := 0
	for _, c := range contract.Compare(lock, live) {
		if c.Breaking {
			breaking++
			tb.Errorf("%s: %s", lockFile, c)
		} else {
			tb.Logf("%s: %s", lockFile, c)
		}
	}
	if breaking > 0 {
		tb.Errorf("%s: %d breaking changes to the server's contract; if they are meant, tell the clients and write the lock again (%s=1)", lockFile, breaking, WriteContractEnv)
	}
}

func fetchContract(tb testing.TB, srv *hexmcp.Server, rev domain.Revision) (*contract.Lock, error) {
	c := Connect(tb, srv, ClientOptions{Revision: rev})
	defer c.Close()
	l, err := contract.Fetch(tb.Context(), lister{c}, string(c.Revision()))
	if err != nil {
		return nil, fmt.Errorf("reading the server's lists: %w", err)
	}
	return l, nil
}

// lister reads list pages with a session.
type lister struct{ c *client.Session }

func (l lister) List(ctx context.Context, method, cursor string) (json.RawMessage, error) {
	var params any
	if cursor != "" {
		params = map[string]any{"cursor": cursor}
	}
	var raw json.RawMessage
	err := l.c.Call(ctx, method, params, &raw)
	if e := (*client.RPCError)(nil); errors.As(err, &e) && e.Code == domain.CodeMethodNotFound {
		return nil, fmt.Errorf("%w: %w", contract.ErrNoMethod, err)
	}
	return raw, err
}
