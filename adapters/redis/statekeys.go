package mcpredis

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [StateKeysOptions].
const (
	DefaultPrefix      = "hexmcp:"
	DefaultRotateEvery = 24 * time.Hour
	DefaultRetain      = time.Hour
	DefaultCacheFor    = 5 * time.Second
	DefaultTimeout     = time.Second
)

// StateKeysOptions configure [StateKeys]. Zero fields take the defaults.
type StateKeysOptions struct {
	// Prefix begins the Redis key of the ring, "<Prefix>statekeys"
	// (default [DefaultPrefix]).
	Prefix string
	// RotateEvery is the age at which the signing key is replaced by a new
	// one, made by the first instance that finds it that old (default
	// [DefaultRotateEvery]).
	RotateEvery time.Duration
	// Retain is how long a key keeps verifying after a newer one took over
	// signing (default [DefaultRetain]). Keep it above the engine's
	// Options.RequestStateTTL (15 minutes by default), or state signed just
	// before a rotation expires early.
	Retain time.Duration
	// CacheFor is how long an instance uses the keys it read before it
	// reads them again (default [DefaultCacheFor]): Keys is called for
	// every request that carries or makes state, and costs no round trip
	// within it. A key made on one instance is used by the others within
	// CacheFor; until then they still verify with the keys they have.
	CacheFor time.Duration
	// Timeout bounds each Redis call (default [DefaultTimeout]).
	Timeout time.Duration
	// Clock tells the time (default the system clock).
	Clock ports.Clock
}

// StateKeys is a [ports.StateKeys] shared through Redis: a sorted set of
// random 32-byte keys scored by when they were made. The newest signs;
// every key not yet retired verifies. Every instance on the same Redis
// and Prefix sees the same keys, so a retried request may reach any of
// them. Keys live in Redis only (nothing is written elsewhere): a Redis
// that loses its data makes a new ring, and state signed before then is
// refused (the client starts its request over).
type StateKeys struct {
	c    redis.UniversalClient
	opts StateKeysOptions
	key  string

	mu     sync.Mutex
	cached [][]byte
	readAt time.Time
}

var _ ports.StateKeys = (*StateKeys)(nil)

// NewStateKeys returns the key ring on c.
func NewStateKeys(c redis.UniversalClient, opts StateKeysOptions) *StateKeys {
	opts.Prefix = cmp.Or(opts.Prefix, DefaultPrefix)
	opts.RotateEvery = cmp.Or(opts.RotateEvery, DefaultRotateEvery)
	opts.Retain = cmp.Or(opts.Retain, DefaultRetain)
	opts.CacheFor = cmp.Or(opts.CacheFor, DefaultCacheFor)
	opts.Timeout = cmp.Or(opts.Timeout, DefaultTimeout)
	if opts.Clock == nil {
		opts.Clock = ports.SystemClock{}
	}
	return &StateKeys{c: c, opts: opts, key: opts.Prefix + "statekeys"}
}

// Keys returns the keys, newest (the signing key) first: from the cache
// within CacheFor, else from Redis, making the first key, or the next one
// when the signing key is RotateEvery old, and retiring keys whose
// successor is older than Retain. When Redis cannot be read the keys read
// last are used for as long as Retain (they still verify everywhere);
// after that, or with none, the error wraps [ports.ErrNoStateKey].
func (k *StateKeys) Keys(ctx context.Context) ([][]byte, error) {
	now := k.opts.Clock.Now()
	k.mu.Lock()
	if k.cached != nil && now.Sub(k.readAt) < k.opts.CacheFor {
		keys := k.cached
		k.mu.Unlock()
		return keys, nil
	}
	k.mu.Unlock()
	keys, err := k.load(ctx, now)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		if k.cached != nil && now.Sub(k.readAt) < k.opts.Retain {
			return k.cached, nil
		}
		return nil, fmt.Errorf("mcpredis: reading the state keys: %w: %w", ports.ErrNoStateKey, err)
	}
	k.cached, k.readAt = keys, now
	return keys, nil
}

// Rotate makes a new signing key now; the others keep verifying until
// they are retired.
func (k *StateKeys) Rotate(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, k.opts.Timeout)
	defer cancel()
	if err := k.add(ctx, k.opts.Clock.Now()); err != nil {
		return err
	}
	k.mu.Lock()
	k.cached = nil
	k.mu.Unlock()
	return nil
}

type ringKey struct {
	secret []byte
	made   int64 // unix milliseconds
}

func (k *StateKeys) add(ctx context.Context, now time.Time) error {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("mcpredis: making a state key: %w", err)
	}
	_, err := within(ctx, k.c, func(ctx context.Context) (int64, error) {
		return k.c.ZAdd(ctx, k.key, redis.Z{Score: float64(now.UnixMilli()), Member: string(secret)}).Result()
	})
	if err != nil {
		return fmt.Errorf("mcpredis: storing a state key: %w", err)
	}
	return nil
}

func (k *StateKeys) read(ctx context.Context) ([]ringKey, error) {
	zs, err := within(ctx, k.c, func(ctx context.Context) ([]redis.Z, error) {
		return k.c.ZRangeWithScores(ctx, k.key, 0, -1).Result()
	})
	if err != nil {
		return nil, err
	}
	ring := make([]ringKey, 0, len(zs))
	for _, z := range zs {
		s, ok := z.Member.(string)
		if !ok || len(s) < ports.MinStateKeyLen {
			continue // not ours: ignored, never used to sign
		}
		ring = append(ring, ringKey{secret: []byte(s), made: int64(z.Score)})
	}
	// newest first; ties (two instances rotating at once) by the key's
	// bytes, so that every instance picks the same signing key
	slices.SortFunc(ring, func(a, b ringKey) int {
		if c := cmp.Compare(b.made, a.made); c != 0 {
			return c
		}
		return cmp.Compare(string(a.secret), string(b.secret))
	})
	return ring, nil
}

func (k *StateKeys) load(ctx context.Context, now time.Time) ([][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, k.opts.Timeout)
	defer cancel()
	ring, err := k.read(ctx)
	if err != nil {
		return nil, err
	}
	if len(ring) == 0 || now.Sub(time.UnixMilli(ring[0].made)) >= k.opts.RotateEvery {
		if err := k.add(ctx, now); err != nil {
			return nil, err
		}
		if ring, err = k.read(ctx); err != nil {
			return nil, err
		}
	}
	if len(ring) == 0 {
		return nil, errors.New("the ring is empty after adding a key")
	}
	keys := [][]byte{ring[0].secret}
	for i := 1; i < len(ring); i++ {
		// a key retires Retain after its successor took over
		if now.Sub(time.UnixMilli(ring[i-1].made)) >= k.opts.Retain {
			if ring[i].made < ring[i-1].made {
				// this key and the older ones are retired: gone from the
				// ring (best effort; a later read retires them again)
				_, _ = within(ctx, k.c, func(ctx context.Context) (int64, error) {
					return k.c.ZRemRangeByScore(ctx, k.key, "-inf", strconv.FormatInt(ring[i].made, 10)).Result()
				})
			}
			break
		}
		keys = append(keys, ring[i].secret)
	}
	return keys, nil
}
