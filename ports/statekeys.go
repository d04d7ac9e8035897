package ports

import (
	"context"
	"errors"
)

// StateKeys supplies the secret keys that protect the requestState of
// multi round-trip requests (2026-07-28): the server signs the state it
// hands to a client with an HMAC and refuses state whose signature does not
// verify. Every server instance that may receive a retried request must see
// the same keys.
type StateKeys interface {
	// Keys returns the keys in use: the first signs new state, and state
	// signed with any of them verifies (so a key can be rotated in by putting
	// it first and rotated out by dropping it once outstanding state has
	// expired). Each key must be at least 32 bytes of secret random data.
	// It is called for every request that carries or produces state, so it
	// should be cheap (cache the keys).
	Keys(ctx context.Context) ([][]byte, error)
}

// MinStateKeyLen is the shortest key a StateKeys may return.
const MinStateKeyLen = 32

// ErrNoStateKey is wrapped by the error of a StateKeys that has no key to
// give.
var ErrNoStateKey = errors.New("no state key")
