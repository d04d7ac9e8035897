package mcpredis

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// sessionOverhead is what the store counts for a session besides its
// encoded state and Peer: the hash's other fields, its entries in the
// sorted sets and in the size index.
const sessionOverhead = 256

// SessionStoreOptions configure [NewSessionStore]. Zero fields take the
// defaults.
type SessionStoreOptions struct {
	// Prefix begins every Redis key of the store (default
	// "hexmcp:").
	Prefix string
	// IdleTimeout is how long a ready session lives without activity
	// (default 30 minutes).
	IdleTimeout time.Duration
	// PendingTimeout is how long a session whose client has not sent
	// notifications/initialized lives without activity (default
	// 30 s; never longer than IdleTimeout).
	PendingTimeout time.Duration
	// MaxSessions bounds the live sessions of every instance together
	// (default 10,000; there is no unbounded setting).
	MaxSessions int
	// MaxSessionsPerClient bounds the live sessions of one client (one
	// non-empty Peer; default 100;
	// [ports.UnlimitedSessionsPerClient]: no bound but MaxSessions).
	MaxSessionsPerClient int
	// MaxSessionBytes bounds the bytes the live sessions of every instance
	// hold in Redis together (default 64 MiB;
	// [ports.UnlimitedSessionBytes]: no bound). A session counts the JSON of its
	// state as stored, its Peer and 256 bytes.
	MaxSessionBytes int
	// MaxSessionBytesPerClient bounds the bytes of the live sessions of
	// one client (default 1 MiB;
	// [ports.UnlimitedSessionBytes]: no bound but MaxSessionBytes).
	MaxSessionBytesPerClient int
	// Timeout bounds each Redis call (default 1 second).
	Timeout time.Duration
	// Clock tells the time (default the system clock). Expiry is decided
	// by it, on every instance alike; Redis key TTLs (IdleTimeout and a
	// minute) only collect what nobody asks for any more.
	Clock ports.Clock
}

// sessionStore is the [ports.SessionStore] of [NewSessionStore].
type sessionStore struct {
	c    redis.UniversalClient
	opts SessionStoreOptions
	kp   string // the key prefix (see keyPrefix)
}

var _ ports.SessionStore = (*sessionStore)(nil)

// NewSessionStore returns a [ports.SessionStore] on c, shared through
// Redis: every instance on the same Redis and Prefix sees every session. Each
// operation is one round trip (a Lua script run atomically by Redis). A
// session is a hash "<Prefix>sess:<id>"; the sorted sets "<Prefix>sessions"
// and "<Prefix>peer:<peer>" count the live sessions, in total and per
// client, and "<Prefix>sessbytes" and the hash "<Prefix>peerbytes" the
// bytes they hold (the hash "<Prefix>sessinfo" remembers each session's
// size and Peer until it is removed, also once its own hash has expired).
// Past MaxSessions, MaxSessionsPerClient, MaxSessionBytes or
// MaxSessionBytesPerClient, Create first drops the expired sessions it
// finds (at most 100 per call) and then refuses with
// [ports.ErrTooManySessions] or [ports.ErrTooManySessionsForClient]; it
// does not evict live idle sessions as the in-memory store does. An Update
// that makes a session larger (its subscriptions) past a byte budget is
// refused the same way.
//
// A Get (one per request of a session) is one HMGET of the session's
// hash; it writes the session's activity (a script, a second round trip)
// only when a tenth of its timeout (IdleTimeout, or PendingTimeout before
// the client's notifications/initialized) has passed since it last did: a
// session thus expires between 0.9 and 1 timeout after its last request,
// by the store's Clock.
//
// On a Redis Cluster every key of the store begins with the hash tag
// "{<Prefix>sess}" (see [Share]), so that the scripts, which compute the
// keys they touch, run on the one node of that slot, and the bounds
// above hold exactly, for every instance together; the store's load is
// that node's (and its replica's).
func NewSessionStore(c redis.UniversalClient, opts SessionStoreOptions) ports.SessionStore {
	opts.Prefix = cmp.Or(opts.Prefix, defaultPrefix)
	opts.IdleTimeout = cmp.Or(opts.IdleTimeout, portlimits.DefaultSessionIdleTimeout)
	opts.PendingTimeout = min(cmp.Or(opts.PendingTimeout, portlimits.DefaultSessionPendingTimeout), opts.IdleTimeout)
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = portlimits.DefaultMaxSessions // never unbounded
	}
	switch {
	case opts.MaxSessionsPerClient == 0:
		opts.MaxSessionsPerClient = portlimits.DefaultMaxSessionsPerClient
	case opts.MaxSessionsPerClient < 0: // ports.UnlimitedSessionsPerClient
		opts.MaxSessionsPerClient = opts.MaxSessions
	}
	opts.MaxSessionBytes = cmp.Or(opts.MaxSessionBytes, portlimits.DefaultMaxSessionBytes)
	opts.MaxSessionBytesPerClient = cmp.Or(opts.MaxSessionBytesPerClient, portlimits.DefaultMaxSessionBytesPerClient)
	opts.Timeout = cmp.Or(opts.Timeout, defaultTimeout)
	if opts.Clock == nil {
		opts.Clock = ports.SystemClock{}
	}
	return &sessionStore{c: c, opts: opts, kp: keyPrefix(c, opts.Prefix, "sess")}
}

// luaCommon holds the functions every script uses. ARGV[1..4]: prefix,
// now (ms), idle (ms), pending (ms).
const luaCommon = `
local prefix, now, idle, pending = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local all = prefix .. 'sessions'
local function skey(id) return prefix .. 'sess:' .. id end
local function expired(id)
  local f = redis.call('HMGET', skey(id), 'l', 'r')
  if not f[1] then return true end
  local lim = idle
  if f[2] == '0' then lim = pending end
  return now - tonumber(f[1]) > lim
end
local info, total, peerbytes = prefix .. 'sessinfo', prefix .. 'sessbytes', prefix .. 'peerbytes'
local function pkey(peer) return prefix .. 'peer:' .. peer end
-- sizeof returns a session's counted size and Peer (0 and the hash's Peer
-- for a session stored without a size).
local function sizeof(id)
  local meta = redis.call('HGET', info, id)
  if meta then
    local sep = string.find(meta, ':', 1, true)
    return tonumber(string.sub(meta, 1, sep - 1)), string.sub(meta, sep + 1)
  end
  return 0, redis.call('HGET', skey(id), 'p') or ''
end
-- count adds delta bytes to the totals of every session and of peer.
local function count(peer, delta)
  if redis.call('INCRBY', total, delta) <= 0 then redis.call('DEL', total) end
  if peer ~= '' and redis.call('HINCRBY', peerbytes, peer, delta) <= 0 then redis.call('HDEL', peerbytes, peer) end
end
local function held() return tonumber(redis.call('GET', total) or '0') end
local function heldBy(peer) return tonumber(redis.call('HGET', peerbytes, peer) or '0') end
local function remove(id)
  local size, peer = sizeof(id)
  if size > 0 then count(peer, -size) end
  redis.call('HDEL', info, id)
  redis.call('DEL', skey(id))
  redis.call('ZREM', all, id)
  if peer ~= '' then redis.call('ZREM', pkey(peer), id) end
end
local function purge(set)
  local old = redis.call('ZRANGEBYSCORE', set, '-inf', '(' .. (now - pending), 'LIMIT', 0, 100)
  for _, id in ipairs(old) do
    if expired(id) then
      remove(id)
      redis.call('ZREM', set, id)
    end
  end
end
`

// create: ARGV[5..] id, state, ready, peer, created, ttl, max, maxPeer,
// size, maxBytes, maxPeerBytes (a negative byte budget: none).
var createScript = redis.NewScript(luaCommon + `
local id, st, ready, peer, created, ttl = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local max, maxPeer = tonumber(ARGV[11]), tonumber(ARGV[12])
local size, maxBytes, maxPeerBytes = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15])
if redis.call('EXISTS', skey(id)) == 1 then
  if not expired(id) then return -1 end
  remove(id)
end
if redis.call('ZCARD', all) >= max then
  purge(all)
  if redis.call('ZCARD', all) >= max then return -2 end
end
if maxBytes >= 0 and held() + size > maxBytes then
  purge(all)
  if held() + size > maxBytes then return -4 end
end
if peer ~= '' then
  local ps = pkey(peer)
  if redis.call('ZCARD', ps) >= maxPeer then
    purge(ps)
    if redis.call('ZCARD', ps) >= maxPeer then return -3 end
  end
  if maxPeerBytes >= 0 and heldBy(peer) + size > maxPeerBytes then
    purge(ps)
    if heldBy(peer) + size > maxPeerBytes then return -5 end
  end
  redis.call('ZADD', ps, now, id)
end
redis.call('HSET', skey(id), 's', st, 'r', ready, 'p', peer, 'c', created, 'l', now)
redis.call('PEXPIRE', skey(id), ttl)
redis.call('ZADD', all, now, id)
redis.call('HSET', info, id, size .. ':' .. peer)
count(peer, size)
return 1
`)

// get: ARGV[5..] id, ttl. Returns {state, created, peer} or nil (gone or
// expired: then removed). It writes the activity of a live session (its
// last-seen time, its key's TTL, its places in the sorted sets) only once
// a tenth of its timeout has passed since it was last written (see
// [NewSessionStore]). Get runs it only when its plain HMGET found the
// session gone, expired or due for that write.
var getScript = redis.NewScript(luaCommon + `
local id, ttl = ARGV[5], ARGV[6]
local f = redis.call('HMGET', skey(id), 's', 'c', 'p', 'l', 'r')
if not f[4] then
  if redis.call('ZSCORE', all, id) then remove(id) end
  return false
end
local lim = idle
if f[5] == '0' then lim = pending end
local age = now - tonumber(f[4])
if age > lim then
  remove(id)
  return false
end
if age * 10 >= lim then
  redis.call('HSET', skey(id), 'l', now)
  redis.call('PEXPIRE', skey(id), ttl)
  redis.call('ZADD', all, now, id)
  if f[3] and f[3] ~= '' then redis.call('ZADD', pkey(f[3]), now, id) end
end
return {f[1], f[2], f[3]}
`)

// update: ARGV[5..] id, state, ready, ttl, size (without the Peer),
// maxBytes, maxPeerBytes. Returns 1, 0 when not found, -4 or -5 when the
// state grew past the byte budget of every session or of the client.
var updateScript = redis.NewScript(luaCommon + `
local id, st, ready, ttl = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local size, maxBytes, maxPeerBytes = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
if expired(id) then
  if redis.call('EXISTS', skey(id)) == 1 or redis.call('ZSCORE', all, id) then remove(id) end
  return 0
end
local old, peer = sizeof(id)
size = size + string.len(peer)
local grow = size - old
if grow > 0 then
  if maxBytes >= 0 and held() + grow > maxBytes then
    purge(all)
    if held() + grow > maxBytes then return -4 end
  end
  if peer ~= '' and maxPeerBytes >= 0 and heldBy(peer) + grow > maxPeerBytes then
    purge(pkey(peer))
    if heldBy(peer) + grow > maxPeerBytes then return -5 end
  end
end
redis.call('HSET', skey(id), 's', st, 'r', ready, 'l', now)
redis.call('PEXPIRE', skey(id), ttl)
redis.call('ZADD', all, now, id)
if peer ~= '' then redis.call('ZADD', pkey(peer), now, id) end
redis.call('HSET', info, id, size .. ':' .. peer)
if grow ~= 0 then count(peer, grow) end
return 1
`)

// del: ARGV[5] id.
var deleteScript = redis.NewScript(luaCommon + `
remove(ARGV[5])
return 1
`)

func (s *sessionStore) args(now time.Time, more ...any) []any {
	return append([]any{s.kp, now.UnixMilli(), s.opts.IdleTimeout.Milliseconds(), s.opts.PendingTimeout.Milliseconds()}, more...)
}

func (s *sessionStore) ttl() int64 { return (s.opts.IdleTimeout + time.Minute).Milliseconds() }

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// encodeState is what the hash's "s" field holds: the state without the
// fields the store keeps apart (times, Peer), as JSON without HTML
// escapes (which would make '<' six bytes).
func encodeState(st ports.SessionState) (string, error) {
	st.Created, st.LastSeen, st.Peer = time.Time{}, time.Time{}, ""
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(st); err != nil {
		return "", fmt.Errorf("hexmcp: mcpredis: encoding a session: %w", err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// budget is a byte budget as the scripts take it: negative for none.
func budget(n int) int {
	if n < 0 {
		return -1
	}
	return n
}

// sizeError is the error of a script's refusal past a byte budget (-4:
// every session's, -5: the client's), or nil.
func (s *sessionStore) sizeError(n int64) error {
	switch n {
	case -4:
		return fmt.Errorf("hexmcp: mcpredis: %w: the sessions would hold more than %d bytes", ports.ErrTooManySessions, s.opts.MaxSessionBytes)
	case -5:
		return fmt.Errorf("hexmcp: mcpredis: %w: its sessions would hold more than %d bytes", ports.ErrTooManySessionsForClient, s.opts.MaxSessionBytesPerClient)
	}
	return nil
}

// Create stores a new session (see [NewSessionStore] for the limits).
func (s *sessionStore) Create(ctx context.Context, st ports.SessionState) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	now := s.opts.Clock.Now()
	created := st.Created
	if created.IsZero() {
		created = now
	}
	enc, err := encodeState(st)
	if err != nil {
		return err
	}
	n, err := runScript(ctx, s.c, createScript, s.kp, s.args(now, st.ID, enc, flag(st.Ready), st.Peer,
		created.UnixMilli(), s.ttl(), s.opts.MaxSessions, s.opts.MaxSessionsPerClient,
		len(enc)+len(st.Peer)+sessionOverhead, budget(s.opts.MaxSessionBytes), budget(s.opts.MaxSessionBytesPerClient))...).Int64()
	if err != nil {
		return fmt.Errorf("hexmcp: mcpredis: creating a session: %w", err)
	}
	if err := s.sizeError(n); err != nil {
		return err
	}
	switch n {
	case -1:
		return fmt.Errorf("hexmcp: mcpredis: session %q exists already", st.ID)
	case -2:
		return fmt.Errorf("hexmcp: mcpredis: %w: the store holds %d", ports.ErrTooManySessions, s.opts.MaxSessions)
	case -3:
		return fmt.Errorf("hexmcp: mcpredis: %w: the client holds %d", ports.ErrTooManySessionsForClient, s.opts.MaxSessionsPerClient)
	}
	return nil
}

// Get returns a live session; it counts as activity, and its LastSeen is
// now. It is one HMGET, and a script (a second round trip) only when the
// session is gone or expired (the script removes it), or a tenth of its
// timeout has passed since its activity was last written (see
// [NewSessionStore]).
func (s *sessionStore) Get(ctx context.Context, id string) (ports.SessionState, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	now := s.opts.Clock.Now()
	key := s.kp + "sess:" + id
	f, err := within(ctx, s.c, func(ctx context.Context) ([]any, error) {
		return s.c.HMGet(ctx, key, "s", "c", "p", "l", "r").Result()
	})
	if err != nil {
		return ports.SessionState{}, fmt.Errorf("hexmcp: mcpredis: reading a session: %w", err)
	}
	res := make([]string, len(f))
	for i, v := range f {
		res[i], _ = v.(string)
	}
	if len(f) != 5 || f[3] == nil || !s.fresh(now, res[3], res[4]) {
		// gone, expired or due for its activity to be written: the script
		// decides again, atomically
		res, err = runScript(ctx, s.c, getScript, s.kp, s.args(now, id, s.ttl())...).StringSlice()
		if errors.Is(err, redis.Nil) {
			return ports.SessionState{}, fmt.Errorf("hexmcp: mcpredis: %w", ports.ErrSessionNotFound)
		}
		if err != nil {
			return ports.SessionState{}, fmt.Errorf("hexmcp: mcpredis: reading a session: %w", err)
		}
		if len(res) != 3 {
			return ports.SessionState{}, fmt.Errorf("hexmcp: mcpredis: reading a session: %d fields", len(res))
		}
	}
	var st ports.SessionState
	if err := json.Unmarshal([]byte(res[0]), &st); err != nil {
		return ports.SessionState{}, fmt.Errorf("hexmcp: mcpredis: decoding a session: %w", err)
	}
	created, _ := strconv.ParseInt(res[1], 10, 64)
	st.ID, st.Created, st.LastSeen, st.Peer = id, time.UnixMilli(created).UTC(), now.Truncate(time.Millisecond).UTC(), res[2]
	return st, nil
}

// fresh reports whether a session whose hash holds last (its "l") and
// ready ("r") is live at now and its activity was written less than a
// tenth of its timeout ago (see getScript).
func (s *sessionStore) fresh(now time.Time, last, ready string) bool {
	l, err := strconv.ParseInt(last, 10, 64)
	if err != nil {
		return false
	}
	lim := s.opts.IdleTimeout.Milliseconds()
	if ready == "0" {
		lim = s.opts.PendingTimeout.Milliseconds()
	}
	age := now.UnixMilli() - l
	return age*10 < lim // a time ahead of this clock (another instance's): fresh
}

// Update replaces a live session's state (its Peer is kept); it counts as
// activity. A larger state past a byte budget is refused (see
// [NewSessionStore]); the stored one is then left as it was.
func (s *sessionStore) Update(ctx context.Context, st ports.SessionState) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	enc, err := encodeState(st)
	if err != nil {
		return err
	}
	n, err := runScript(ctx, s.c, updateScript, s.kp, s.args(s.opts.Clock.Now(), st.ID, enc, flag(st.Ready), s.ttl(),
		len(enc)+sessionOverhead, budget(s.opts.MaxSessionBytes), budget(s.opts.MaxSessionBytesPerClient))...).Int64()
	if err != nil {
		return fmt.Errorf("hexmcp: mcpredis: updating a session: %w", err)
	}
	if err := s.sizeError(n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("hexmcp: mcpredis: %w", ports.ErrSessionNotFound)
	}
	return nil
}

// Delete ends a session; deleting an unknown one is not an error.
func (s *sessionStore) Delete(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	if err := runScript(ctx, s.c, deleteScript, s.kp, s.args(s.opts.Clock.Now(), id)...).Err(); err != nil {
		return fmt.Errorf("hexmcp: mcpredis: deleting a session: %w", err)
	}
	return nil
}
