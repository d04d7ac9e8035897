package tools

import (
	"context"
	"testing"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/hexmcptest"
)

// TestContract: the showcase keeps the contract its lock file records
// (tools.lock.json beside this file: its tools, prompts, resources and
// templates as a client learns them). A change that can break a client
// fails here, named with its tool and a JSON Pointer. After a change that
// is meant, write the lock again and review it in the diff:
//
//	HEXMCP_WRITE_CONTRACT=1 go test -run Contract ./examples/showcase/tools/
func TestContract(t *testing.T) {
	skills, err := Skills()
	if err != nil {
		t.Fatal(err)
	}
	views, err := Apps()
	if err != nil {
		t.Fatal(err)
	}
	x := Tasks()
	t.Cleanup(func() { _ = x.Shutdown(context.Background()) })
	srv := hexmcptest.NewServer(t, hexmcp.Options{
		Tools:      All(),
		Resources:  Resources(),
		Prompts:    Prompts(),
		Extensions: []hexmcp.Extension{skills, views, x.Extension()},
	})
	hexmcptest.CheckContract(t, srv, "tools.lock.json")
}
