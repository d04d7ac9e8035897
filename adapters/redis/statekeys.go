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
	"golang.org/x/sync/singleflight"

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [StateKeysOptions].
const (
	defaultPrefix      = "hexmcp:"
	defaultRotateEvery = 24 * time.Hour
	defaultRetain      = time.Hour
	defaultCacheFor    = 5 * time.Second
	defaultTimeout     = time.Second
)

// StateKeysOptions configure [StateKeys]. Zero fields take the defaults.
type StateKeysOptions struct {
	// Prefix begins the Redis key of the ring, "<Prefix>statekeys"
	// (default "hexmcp:").
	Prefix string
	// RotateEvery is the age at which the signing key is replaced by a new
	// one, made by the first instance that finds it that old (default
	// 24 hours).
	RotateEvery time.Duration
	// Retain is how long a key keeps verifying after a newer one took over
	// signing (default 1 hour). Keep it above the engine's
	// Options.RequestStateTTL (15 minutes by default), or state signed just
	// before a rotation expires early.
	Retain time.Duration
	// CacheFor is how long an instance uses the keys it read before it
	// reads them again (default 5 seconds): Keys is called for
	// every request that carries or makes state, and costs no round trip
	// within it. A new key verifies at once but signs only once it is
	// CacheFor old, when every instance has read it (their clocks agreeing
	// within a fraction of CacheFor): state it signs verifies everywhere.
	CacheFor time.Duration
	// Timeout bounds each Redis call (default 1 second).
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

	loads  singleflight.Group // one load at a time per instance
	mu     sync.Mutex
	cached [][]byte
	readAt time.Time
}

var _ ports.StateKeys = (*StateKeys)(nil)

// NewStateKeys returns the key ring on c.
func NewStateKeys(c redis.UniversalClient, opts StateKeysOptions) *StateKeys {
	opts.Prefix = cmp.Or(opts.Prefix, defaultPrefix)
	opts.RotateEvery = cmp.Or(opts.RotateEvery, defaultRotateEvery)
	opts.Retain = cmp.Or(opts.Retain, defaultRetain)
	opts.CacheFor = cmp.Or(opts.CacheFor, defaultCacheFor)
	opts.Timeout = cmp.Or(opts.Timeout, defaultTimeout)
	if opts.Clock == nil {
		opts.Clock = ports.SystemClock{}
	}
	return &StateKeys{c: c, opts: opts, key: opts.Prefix + "statekeys"}
}

// Keys returns the keys, the signing key first: from the cache within
// CacheFor, else from Redis (one read at a time per instance, which
// concurrent callers share), making the first key, or the next one when
// the newest key is RotateEvery old (in one script, so that two instances
// never both add one), and retiring keys whose successor is older than
// Retain. The signing key is the newest key at least CacheFor old (the
// only key, when there is one); a newer one verifies. When Redis cannot
// be read the keys read last are used for as long as Retain (they still
// verify everywhere); after that, or with none, the error wraps
// [ports.ErrNoStateKey].
func (k *StateKeys) Keys(ctx context.Context) ([][]byte, error) {
	now := k.opts.Clock.Now()
	k.mu.Lock()
	if k.cached != nil && now.Sub(k.readAt) < k.opts.CacheFor {
		keys := k.cached
		k.mu.Unlock()
		return keys, nil
	}
	k.mu.Unlock()
	// The load's context is the first caller's, detached from its
	// cancellation (the others share its result), bounded by Timeout.
	res := <-k.loads.DoChan("", func() (any, error) {
		at := k.opts.Clock.Now()
		keys, err := k.load(context.WithoutCancel(ctx), at)
		k.mu.Lock()
		defer k.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if !at.Before(k.readAt) { // never a newer read replaced by an older one
			k.cached, k.readAt = keys, at
		}
		return k.cached, nil
	})
	if res.Err == nil {
		return res.Val.([][]byte), nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cached != nil && now.Sub(k.readAt) < k.opts.Retain {
		return k.cached, nil
	}
	return nil, fmt.Errorf("hexmcp: mcpredis: reading the state keys: %w: %w", ports.ErrNoStateKey, res.Err)
}

// Rotate makes a new key now, which verifies at once and signs once it is
// CacheFor old; the others keep verifying until they are retired.
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
	made   int64   // unix milliseconds
	score  float64 // its order in the ring (made, or just after a key of the same millisecond)
}

func (k *StateKeys) add(ctx context.Context, now time.Time) error {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("hexmcp: mcpredis: making a state key: %w", err)
	}
	if err := runScriptKeys(ctx, k.c, addScript, []string{k.key}, now.UnixMilli(), string(secret)).Err(); err != nil {
		return fmt.Errorf("hexmcp: mcpredis: storing a state key: %w", err)
	}
	return nil
}

// addScript adds ARGV[2] as a key made at ARGV[1] (ms), or a thousandth
// of a millisecond after the ring's newest key when that one is as new
// (the same millisecond): a rotation within the millisecond of the last
// one must still make the newest key (equal scores would be ordered by
// the keys' bytes, which could let the old key win), and its age, counted
// in whole milliseconds, stays that of its millisecond.
var addScript = redis.NewScript(`
local newest = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local at = tonumber(ARGV[1])
if #newest == 2 and tonumber(newest[2]) >= at then
  at = tonumber(newest[2]) + 0.001
end
return redis.call('ZADD', KEYS[1], at, ARGV[2])
`)

// ringScript reads the ring, adding ARGV[3] as a key made at ARGV[1] (ms)
// first when it holds no key (a member of at least ARGV[4] bytes) or its
// newest key is ARGV[2] ms old: atomically, so that instances finding the
// ring due at once add one key between them. It returns the ring as
// member, score pairs.
var ringScript = redis.NewScript(`
local ring = redis.call('ZREVRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local newest = nil
for i = 1, #ring, 2 do
  if string.len(ring[i]) >= tonumber(ARGV[4]) then
    newest = tonumber(ring[i + 1])
    break
  end
end
if newest == nil or tonumber(ARGV[1]) - newest >= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
  ring = redis.call('ZREVRANGE', KEYS[1], 0, -1, 'WITHSCORES')
end
return ring
`)

// read reads the ring, adding a key first when it is due (ringScript).
func (k *StateKeys) read(ctx context.Context, now time.Time) ([]ringKey, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("hexmcp: mcpredis: making a state key: %w", err)
	}
	pairs, err := runScriptKeys(ctx, k.c, ringScript, []string{k.key}, now.UnixMilli(), k.opts.RotateEvery.Milliseconds(),
		string(secret), ports.MinStateKeyLen).StringSlice()
	if err != nil {
		return nil, err
	}
	ring := make([]ringKey, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		s := pairs[i]
		score, err := strconv.ParseFloat(pairs[i+1], 64)
		if err != nil || len(s) < ports.MinStateKeyLen {
			continue // not ours: ignored, never used to sign
		}
		ring = append(ring, ringKey{secret: []byte(s), made: int64(score), score: score})
	}
	// newest first; ties (two instances rotating at once) by the key's
	// bytes, so that every instance picks the same signing key
	slices.SortFunc(ring, func(a, b ringKey) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(string(a.secret), string(b.secret))
	})
	return ring, nil
}

func (k *StateKeys) load(ctx context.Context, now time.Time) ([][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, k.opts.Timeout)
	defer cancel()
	ring, err := k.read(ctx, now)
	if err != nil {
		return nil, err
	}
	if len(ring) == 0 {
		return nil, errors.New("the ring is empty after adding a key")
	}
	// The newest key at least CacheFor old signs (the oldest, when none
	// is): the newer ones verify, and sign once every instance read them.
	sign := len(ring) - 1
	for i, rk := range ring {
		if now.Sub(time.UnixMilli(rk.made)) >= k.opts.CacheFor {
			sign = i
			break
		}
	}
	keys := make([][]byte, 0, len(ring))
	keys = append(keys, ring[sign].secret)
	for i := range sign {
		keys = append(keys, ring[i].secret)
	}
	for i := sign + 1; i < len(ring); i++ {
		// a key retires Retain after its successor took over
		if now.Sub(time.UnixMilli(ring[i-1].made)) >= k.opts.Retain {
			if ring[i].score < ring[i-1].score {
				// this key and the older ones are retired: gone from the
				// ring (best effort; a later read retires them again)
				_, _ = within(ctx, k.c, func(ctx context.Context) (int64, error) {
					return k.c.ZRemRangeByScore(ctx, k.key, "-inf", strconv.FormatFloat(ring[i].score, 'f', -1, 64)).Result()
				})
			}
			break
		}
		keys = append(keys, ring[i].secret)
	}
	return keys, nil
}
