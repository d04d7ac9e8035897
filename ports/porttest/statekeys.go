package porttest

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/hexmcp/hexmcp/ports"
)

// stateKeysRotator is implemented by a key ring that can put a new signing
// key in place (mcpredis.StateKeys).
type stateKeysRotator interface {
	Rotate(ctx context.Context) error
}

// TestStateKeys checks the key rings made by newKeys, which returns one
// handle per instance of a server on one backend (at least one; two or more
// check that instances share their keys). A ring that caches what it read
// must be made to read again at once (its cache off) for the rotation check:
// a ring with a method Rotate(ctx context.Context) error (mcpredis.StateKeys
// has one) must, once rotated, sign with a new key on every instance and
// still verify with the old one.
func TestStateKeys(t *testing.T, newKeys func(t *testing.T) []ports.StateKeys) {
	runSuite(t, keyRingSuite{newKeys: newKeys})
}

// keyRingSuite holds the subtests of [TestStateKeys], one method each.
type keyRingSuite struct {
	newKeys keyRingMaker
}

func (suite keyRingSuite) KeysAreLongAndDistinct(t *testing.T) {
	for _, h := range suite.newKeys(t) {
		ks := ringKeys(t, h)
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
}

func (suite keyRingSuite) SigningKeyIsStable(t *testing.T) {
	for _, h := range suite.newKeys(t) {
		first := bytes.Clone(ringKeys(t, h)[0])
		for range 3 {
			if got := ringKeys(t, h)[0]; !bytes.Equal(got, first) {
				t.Fatal("the signing key changed between two calls, with no rotation asked")
			}
		}
	}
}

func (suite keyRingSuite) InstancesShareKeys(t *testing.T) {
	hs := suite.newKeys(t)
	if len(hs) < 2 {
		t.Skip("one instance")
	}
	sign := ringKeys(t, hs[0])[0]
	for i, h := range hs[1:] {
		ks := ringKeys(t, h)
		if !bytes.Equal(ks[0], sign) {
			t.Fatalf("instance %d signs with another key than instance 0", i+1)
		}
	}
}

func (suite keyRingSuite) Concurrent(t *testing.T) {
	hs := suite.newKeys(t)
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
}

func (suite keyRingSuite) RotationSignsNewVerifiesOld(t *testing.T) {
	hs := suite.newKeys(t)
	r, ok := hs[0].(stateKeysRotator)
	if !ok {
		t.Skip("the ring does not rotate")
	}
	old := bytes.Clone(ringKeys(t, hs[0])[0])
	if err := r.Rotate(ctx); err != nil {
		t.Fatalf("Rotate: %v", err)
	}
	var sign []byte
	for i, h := range hs {
		ks := ringKeys(t, h)
		if bytes.Equal(ks[0], old) {
			t.Fatalf("instance %d still signs with the key from before the rotation", i)
		}
		if sign == nil {
			sign = ks[0]
		} else if !bytes.Equal(ks[0], sign) {
			t.Fatalf("instance %d signs with another new key than instance 0", i)
		}
		if !slices.ContainsFunc(ks, func(k []byte) bool { return bytes.Equal(k, old) }) {
			t.Fatalf("instance %d no longer verifies with the key from before the rotation", i)
		}
	}
}

// ringKeys returns the keys of k, failing t on an error or none.
func ringKeys(t *testing.T, k ports.StateKeys) [][]byte {
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

// keyRingMaker makes key rings on one fresh backend.
type keyRingMaker = func(t *testing.T) []ports.StateKeys
