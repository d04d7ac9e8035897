package porttest

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/ports"
)

// stateKeysRotator is implemented by a key ring that can put a new signing key in
// place (mcpredis.StateKeys): TestStateKeys checks that the new key signs on every
// instance and the old one still verifies.
type stateKeysRotator interface {
	Rotate(ctx context.Context) error
}

// TestStateKeys checks the key rings made by newKeys, which returns one handle per
// instance of a server on one backend (at least one; two or more check
// that instances share their keys). A ring that caches what it read must
// be made to read again at once (its cache off) for the rotation check.
func TestStateKeys(t *testing.T, newKeys func(t *testing.T) []ports.StateKeys) {
	keys := func(t *testing.T, k ports.StateKeys) [][]byte {
		t.Helper()
		ks, err := k.Keys(ctx)
		if err != nil {
			t.Fatalf("Keys: %v", err)
		}
		if len(ks) == 0 {
			t.Fatal("Keys returned no key and no error (want ports.ErrNoStateKey)")
		}
		return ks
	}
	contains := func(ks [][]byte, k []byte) bool {
		for _, x := range ks {
			if bytes.Equal(x, k) {
				return true
			}
		}
		return false
	}

	t.Run("KeysAreLongAndDistinct", func(t *testing.T) {
		for _, h := range newKeys(t) {
			ks := keys(t, h)
			for i, k := range ks {
				if len(k) < ports.MinStateKeyLen {
					t.Fatalf("key %d is %d bytes, want at least %d", i, len(k), ports.MinStateKeyLen)
				}
				for _, other := range ks[:i] {
					if bytes.Equal(k, other) {
						t.Fatalf("key %d is given twice", i)
					}
				}
			}
		}
	})

	t.Run("SigningKeyIsStable", func(t *testing.T) {
		for _, h := range newKeys(t) {
			first := bytes.Clone(keys(t, h)[0])
			for range 3 {
				if got := keys(t, h)[0]; !bytes.Equal(got, first) {
					t.Fatal("the signing key changed between two calls, with no rotation asked")
				}
			}
		}
	})

	t.Run("InstancesShareKeys", func(t *testing.T) {
		hs := newKeys(t)
		if len(hs) < 2 {
			t.Skip("one instance")
		}
		sign := keys(t, hs[0])[0]
		for i, h := range hs[1:] {
			ks := keys(t, h)
			if !bytes.Equal(ks[0], sign) {
				t.Fatalf("instance %d signs with another key than instance 0", i+1)
			}
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		hs := newKeys(t)
		var wg sync.WaitGroup
		for _, h := range hs {
			for range 8 {
				wg.Go(func() {
					for range 20 {
						if ks, err := h.Keys(ctx); err != nil || len(ks) == 0 {
							t.Errorf("Keys: %v (%d keys)", err, len(ks))
							return
						}
					}
				})
			}
		}
		wg.Wait()
	})

	t.Run("RotationSignsNewVerifiesOld", func(t *testing.T) {
		hs := newKeys(t)
		r, ok := hs[0].(stateKeysRotator)
		if !ok {
			t.Skip("the ring does not rotate")
		}
		old := bytes.Clone(keys(t, hs[0])[0])
		if err := r.Rotate(ctx); err != nil {
			t.Fatalf("Rotate: %v", err)
		}
		var sign []byte
		for i, h := range hs {
			ks := keys(t, h)
			if bytes.Equal(ks[0], old) {
				t.Fatalf("instance %d still signs with the key from before the rotation", i)
			}
			if sign == nil {
				sign = ks[0]
			} else if !bytes.Equal(ks[0], sign) {
				t.Fatalf("instance %d signs with another new key than instance 0", i)
			}
			if !contains(ks, old) {
				t.Fatalf("instance %d no longer verifies with the key from before the rotation", i)
			}
		}
	})
}
