//go:build !mcpgen_never

package methods

import "context"

// Drop deletes every value.
//
//mcp:tool destructive idempotent
func (s *Store) Drop(_ context.Context) {
	clear(s.data)
}

// Health reports whether the store answers.
//
//mcp:tool
func Health() bool { return true }
