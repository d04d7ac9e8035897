package memory

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"

	"github.com/hexmcp/hexmcp/ports"
)

// stateKeys is a [ports.StateKeys] holding its keys in memory.
type stateKeys struct {
	keys [][]byte
}

var _ ports.StateKeys = (*stateKeys)(nil)

// NewRandomStateKeys returns keys kept in memory, made of one fresh random 32-byte key. It
// suits a single server instance (state it signed does not verify on
// another instance, nor after a restart, and a client that retries then
// gets a clear -32602 and starts over).
func NewRandomStateKeys() ports.StateKeys {
	k := make([]byte, ports.MinStateKeyLen)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24 on)
	return &stateKeys{keys: [][]byte{k}}
}

// NewStateKeys returns fixed keys (for example read from a secret store and
// shared by every instance): the first signs, all verify. Each must be at
// least [ports.MinStateKeyLen] bytes.
func NewStateKeys(keys ...[]byte) (ports.StateKeys, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("hexmcp: memory: state keys: %w", ports.ErrNoStateKey)
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		if len(k) < ports.MinStateKeyLen {
			return nil, fmt.Errorf("hexmcp: memory: state key %d is %d bytes; at least %d are needed", i, len(k), ports.MinStateKeyLen)
		}
		out[i] = slices.Clone(k)
	}
	return &stateKeys{keys: out}, nil
}

// Keys returns the keys, the signing key first.
func (s *stateKeys) Keys(context.Context) ([][]byte, error) {
	if s == nil || len(s.keys) == 0 {
		return nil, ports.ErrNoStateKey
	}
	return s.keys, nil
}
