package mcpredis

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
)

// RateLimiterOptions configure [NewRateLimiter]. Zero fields take the
// defaults.
type RateLimiterOptions struct {
	// Prefix begins the Redis key of each client, "<Prefix>rl:<hash of
	// the client's key>" (default "hexmcp:").
	Prefix string
	// Timeout bounds each Redis call (default 1 second).
	Timeout time.Duration
}

// RateLimiter keeps the request allowance of each client in Redis, for
// hexmcp.RateLimit (a hexmcp.RateLimiter, for RateLimitOptions.Limiter), so
// that a client's rate holds across every instance of the server on the
// same Redis and Prefix, not per instance. It is a generic cell rate algorithm (GCRA):
// one key per client holds the time at which its allowance is whole
// again, read and moved forward by one Lua script (one round trip, two
// commands and Redis's clock, so the instances' clocks do not matter); the
// key expires once the client's allowance is whole. On a Redis Cluster
// each client's key is its own (no hash tag): the clients spread over the
// masters.
type RateLimiter struct {
	c    redis.UniversalClient
	opts RateLimiterOptions
}

// NewRateLimiter returns the rate limiter on c.
func NewRateLimiter(c redis.UniversalClient, opts RateLimiterOptions) *RateLimiter {
	opts.Prefix = cmp.Or(opts.Prefix, defaultPrefix)
	opts.Timeout = positive(opts.Timeout, defaultTimeout)
	return &RateLimiter{c: c, opts: opts}
}

// gcraScript: KEYS[1] the client's key; ARGV the interval between two
// requests at the rate, and the burst's span (burst intervals), in µs.
// The key holds the theoretical arrival time (µs, Redis's clock) of the
// next request at the rate. Returns 0 when the request is allowed, else
// the µs until it would be.
var gcraScript = redis.NewScript(`
local interval, span = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local next = tat + interval
local allowAt = next - span
if allowAt > now then return math.ceil(allowAt - now) end
redis.call('SET', KEYS[1], string.format('%d', next), 'PX', math.ceil((next - now) / 1000) + 1)
return 0
`)

// Allow takes one request from the allowance of the client key: rate
// requests per second, burst at once. It returns 0 when the request is
// allowed, else how long until it would be; with Redis unreachable, an
// error within Timeout (hexmcp.RateLimit then decides with the
// instance's own buckets).
func (l *RateLimiter) Allow(ctx context.Context, key string, rate float64, burst int) (time.Duration, error) {
	if rate <= 0 || math.IsNaN(rate) || math.IsInf(rate, 0) || burst <= 0 {
		return 0, fmt.Errorf("hexmcp: mcpredis: rate limiting at %v per second, %d at once: both must be positive", rate, burst)
	}
	interval := max(math.Round(1e6/rate), 1)
	span := interval * float64(burst)
	if span > 1<<50 {
		return 0, fmt.Errorf("hexmcp: mcpredis: rate limiting at %v per second, %d at once: too slow a rate", rate, burst)
	}
	ctx, cancel := context.WithTimeout(ctx, l.opts.Timeout)
	defer cancel()
	sum := sha256.Sum256([]byte(key))
	k := l.opts.Prefix + "rl:" + base64.RawURLEncoding.EncodeToString(sum[:16])
	us, err := runScriptKeys(ctx, l.c, gcraScript, []string{k}, int64(interval), int64(span)).Int64()
	if err != nil {
		return 0, fmt.Errorf("hexmcp: mcpredis: rate limiting: %w", err)
	}
	return time.Duration(us) * time.Microsecond, nil
}
