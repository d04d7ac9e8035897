package mcpredis

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [EventStoreOptions] of the Redis store's own. The others
// are every event store's (1,000 and those
// after it); the store-wide byte budget is larger than the in-memory
// store's, since one Redis serves every instance.
const (
	// defaultMaxEventBytes bounds the bytes of all the events kept, by
	// every instance together: 256 MiB.
	defaultMaxEventBytes = 256 << 20
	// defaultMaxKeysPerStream is how many AppendOnce keys a stream
	// remembers: 128, few enough that Redis keeps each stream's set in its
	// compact encoding.
	defaultMaxKeysPerStream = 128
	// defaultReplayPageBytes bounds what one round trip of Replay reads:
	// 1 MiB.
	defaultReplayPageBytes = 1 << 20
	// defaultMaxWatchers bounds the watchers of one store value: 10,000,
	// the connections one mcphttp server accepts by default (each watcher
	// follows one SSE response).
	defaultMaxWatchers = 10_000
)

// purgePerCall bounds the expired streams one call drops (each call drops
// some, so they all go; Redis key expiry collects the rest when no call
// comes).
const purgePerCall = 100

// EventStoreOptions configures [NewEventStore]. Zero (or negative) fields
// take their defaults: no field turns a bound off.
//
// The byte budgets count each kept event as len(data) +
// 128 bytes (in Redis, the store's bookkeeping of it).
// When appending an event would pass a budget, the oldest events under
// that budget are dropped first (of the stream, of its group, or of the
// whole store); a replay from the id of a dropped event then fails with
// [ports.ErrEventNotFound]. An event larger than the smallest of the
// three budgets is not kept at all: it gets its id (from which a replay
// resumes, with the events after it), but its stream's earlier events are
// dropped with it, since a replay from them would have to skip it.
type EventStoreOptions struct {
	// Prefix begins every Redis key and Pub/Sub channel of the store
	// (default "hexmcp:"). Instances share events when they use the
	// same Redis and Prefix.
	Prefix string
	// MaxEventsPerStream is how many of its latest events a stream keeps.
	// Default 1,000.
	MaxEventsPerStream int
	// MaxStreams bounds the streams kept by every instance together; a new
	// stream beyond it evicts the least recently appended one. Default
	// 10,000.
	MaxStreams int
	// MaxBytes bounds the bytes of all the events kept, by every instance
	// together. Default 256 MiB.
	MaxBytes int64
	// MaxBytesPerGroup bounds the bytes of the events of the streams of one
	// group (the stream id up to its first '/'; for
	// the Streamable HTTP transport, one session). Default
	// 16 MiB.
	MaxBytesPerGroup int64
	// MaxBytesPerStream bounds the bytes of the events of one stream.
	// Default 8 MiB.
	MaxBytesPerStream int64
	// MaxKeysPerStream is how many of its latest AppendOnce keys a stream
	// remembers: an older key no longer stops an append. Default
	// 128.
	MaxKeysPerStream int
	// ReplayPageBytes bounds the bytes of the events one round trip of
	// Replay reads (one event larger than that is read alone), so that a
	// replay holds at most that much at once. Default
	// 1 MiB.
	ReplayPageBytes int
	// MaxWatchers bounds the watchers (see [EventStore.Watch]) of this
	// store value at once. Default 10,000.
	MaxWatchers int
	// TTL is how long an event is kept; a stream without an event appended
	// for that long is dropped. Default 10 minutes.
	TTL time.Duration
	// Timeout bounds each Redis call (default 1 second).
	Timeout time.Duration
	// Clock tells the time (default the system clock). Expiry is decided
	// by it, on every instance alike; Redis key TTLs (TTL and a minute)
	// only collect what nobody asks for any more.
	Clock ports.Clock
}

// EventStore is a [ports.EventStore] shared through Redis, for a server
// that runs as several instances: an event appended through one instance
// is replayed through any other on the same Redis and Prefix, and the
// bounds of [EventStoreOptions] hold for all of them together (the
// accounting lives in Redis). It also tells of appends
// ([ports.EventWatcher], see [EventStore.Watch]) and keeps a keyed event
// once however many instances append it ([ports.OnceAppender]).
//
// Each operation is one round trip (a Lua script run atomically by Redis;
// two the first time a Redis sees the script), except a Replay longer than
// ReplayPageBytes, which reads one page per round trip. The layout, under
// "<Prefix>ev:": a stream's events are a Redis Stream (entry id
// "<seq>-0", the data in field "d") and a list of their bookkeeping
// (order, time, size), both named by the stream's generation, a number
// given to each stream started and never reused, so that an id of a
// deleted or expired stream never finds a new stream of the same name.
// Sorted sets of the streams by last append and by oldest event, in all
// and per group, and a hash of byte counts, keep the bounds. The Redis
// must not evict keys by itself (maxmemory-policy noeviction): the store
// bounds its own memory. On a Redis Cluster (a [redis.ClusterClient]),
// the keys begin with the hash tag "{<Prefix>ev}" rather than Prefix, so
// that the scripts, which compute the keys they touch, run on the one
// node of that slot and the bounds hold exactly; the watchers' channels
// share the tag, and appends publish to them with SPUBLISH (sharded
// Pub/Sub, Redis 7 or later).
//
// Event ids are "<epoch>.<generation>.<seq>", made of the SSE-safe
// characters [A-Za-z0-9._-]. The epoch is made at random when the store's
// keys are first written, so that after Redis lost its data (a restart
// without persistence) the ids from before are unknown rather than
// confused with new streams. It and the counters live in the one key that
// never expires, "<Prefix>ev:ids" (a few bytes); every other key expires a
// minute after TTL without an append.
//
// Replay refuses, with an error wrapping [ports.ErrEventNotFound], an id
// it cannot resume from without losing events: one it did not make, one of
// a stream that was deleted, evicted or expired, and one older than the
// event just before the oldest its stream still keeps. A replay of more
// than one page may also fail so after it delivered the events of its
// first pages, when the stream lost the events of the next page in
// between (trimmed by the bounds, or deleted): it never skips one.
//
// Redis unreachable or slow: every call fails within Timeout with an
// error that does not wrap ErrEventNotFound, and works again when Redis is
// back. Use [NewEventStore]; call Close when the server stops.
type EventStore struct {
	c     redis.UniversalClient
	opts  EventStoreOptions
	kp    string // the key prefix (see keyPrefix)
	watch watchHub
}

var (
	_ ports.EventStore   = (*EventStore)(nil)
	_ ports.EventWatcher = (*EventStore)(nil)
	_ ports.OnceAppender = (*EventStore)(nil)
)

func positive[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// NewEventStore returns the event store on c.
func NewEventStore(c redis.UniversalClient, opts EventStoreOptions) *EventStore {
	if opts.Prefix == "" {
		opts.Prefix = defaultPrefix
	}
	opts.MaxEventsPerStream = positive(opts.MaxEventsPerStream, portlimits.DefaultMaxEventsPerStream)
	opts.MaxStreams = positive(opts.MaxStreams, portlimits.DefaultMaxEventStreams)
	opts.MaxBytes = positive(opts.MaxBytes, defaultMaxEventBytes)
	opts.MaxBytesPerGroup = positive(opts.MaxBytesPerGroup, portlimits.DefaultMaxEventBytesPerGroup)
	opts.MaxBytesPerStream = positive(opts.MaxBytesPerStream, portlimits.DefaultMaxEventBytesPerStream)
	opts.MaxKeysPerStream = positive(opts.MaxKeysPerStream, defaultMaxKeysPerStream)
	opts.ReplayPageBytes = positive(opts.ReplayPageBytes, defaultReplayPageBytes)
	opts.MaxWatchers = positive(opts.MaxWatchers, defaultMaxWatchers)
	opts.TTL = positive(opts.TTL, portlimits.DefaultEventTTL)
	opts.Timeout = positive(opts.Timeout, defaultTimeout)
	if opts.Clock == nil {
		opts.Clock = ports.SystemClock{}
	}
	s := &EventStore{c: c, opts: opts, kp: keyPrefix(c, opts.Prefix, "ev")}
	s.watch.init(c, s.kp+"ev:", opts.MaxWatchers, opts.Timeout)
	return s
}

// luaEvents holds the functions every script uses. ARGV[1..5]: prefix,
// now (ms), TTL (ms), key TTL (ms), streams to purge at most.
//
// Keys, under "<prefix>ev:": "ids" (hash: e the epoch, n the last
// generation, o the last order: the counter that orders every append),
// "acct" (hash: total bytes, "g:<group>" a group's bytes, "b:<gen>" a
// stream's bytes, "s:<gen>" a stream's name), "lru" (sorted set of
// generations by the order of their last append), "old" and "grp:<group>"
// (sorted sets of the generations that keep events, by the order of their
// oldest one), and per stream "name:<stream id>" (its generation), then
// "meta:<gen>" (hash: q its last seq, t its last append's time),
// "info:<gen>" (list of "<order> <time> <size>", one per kept event),
// "data:<gen>" (a Redis Stream of the kept events) and "once:<gen>"
// (sorted set of AppendOnce keys by order). A stream keeps the events
// q-LLEN(info)+1 .. q.
const luaEvents = `
local P, now, ttl, keyttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ids, acct, lru, old = P .. 'ev:ids', P .. 'ev:acct', P .. 'ev:lru', P .. 'ev:old'
local function key(kind, x) return P .. 'ev:' .. kind .. ':' .. x end
local function num(x) return tonumber(x) or 0 end
local function int(n) return string.format('%d', n) end
local function groupOf(name)
  local i = string.find(name, '/', 1, true)
  if i then return string.sub(name, 1, i - 1) end
  return name
end
local function item(it)
  local o, t, z = string.match(it, '^(%d+) (%d+) (%d+)$')
  return tonumber(o), tonumber(t), tonumber(z)
end
local function count(gen, g, bytes)
  if bytes == 0 then return end
  redis.call('HINCRBY', acct, 'total', bytes)
  redis.call('HINCRBY', acct, 'b:' .. gen, bytes)
  if redis.call('HINCRBY', acct, 'g:' .. g, bytes) <= 0 then redis.call('HDEL', acct, 'g:' .. g) end
end
local function removeStream(gen)
  local name = redis.call('HGET', acct, 's:' .. gen)
  local bytes = num(redis.call('HGET', acct, 'b:' .. gen))
  if bytes ~= 0 then redis.call('HINCRBY', acct, 'total', -bytes) end
  if name then
    local g = groupOf(name)
    if bytes ~= 0 and redis.call('HINCRBY', acct, 'g:' .. g, -bytes) <= 0 then redis.call('HDEL', acct, 'g:' .. g) end
    redis.call('ZREM', key('grp', g), gen)
    if redis.call('GET', key('name', name)) == gen then redis.call('DEL', key('name', name)) end
  end
  redis.call('HDEL', acct, 's:' .. gen, 'b:' .. gen)
  redis.call('ZREM', lru, gen)
  redis.call('ZREM', old, gen)
  redis.call('DEL', key('meta', gen), key('info', gen), key('data', gen), key('once', gen))
end
local function dropFront(gen, g, n)
  if n <= 0 then return end
  local info = key('info', gen)
  local items = redis.call('LRANGE', info, 0, n - 1)
  local bytes = 0
  for _, it in ipairs(items) do
    local _, _, z = item(it)
    bytes = bytes + z
  end
  redis.call('LTRIM', info, #items, -1)
  local left = redis.call('LLEN', info)
  redis.call('XTRIM', key('data', gen), 'MAXLEN', left)
  count(gen, g, -bytes)
  if left == 0 then
    redis.call('ZREM', old, gen)
    redis.call('ZREM', key('grp', g), gen)
  else
    local o = item(redis.call('LINDEX', info, 0))
    redis.call('ZADD', old, o, gen)
    redis.call('ZADD', key('grp', g), o, gen)
  end
end
local function dropExpired(gen, g)
  local info, n = key('info', gen), 0
  while true do
    local items = redis.call('LRANGE', info, n, n + 99)
    for _, it in ipairs(items) do
      local _, t = item(it)
      if now - t <= ttl then
        dropFront(gen, g, n)
        return
      end
      n = n + 1
    end
    if #items < 100 then
      dropFront(gen, g, n)
      return
    end
  end
end
local function purge()
  for _ = 1, tonumber(ARGV[5]) do
    local gen = redis.call('ZRANGE', lru, 0, 0)[1]
    if not gen then return end
    local t = redis.call('HGET', key('meta', gen), 't')
    if t and now - tonumber(t) <= ttl then return end
    removeStream(gen)
  end
end
`

// eventAppendScript: ARGV[6..] epoch candidate, stream id, data, keep (1/0),
// size, max events, max streams, max bytes, max group bytes, max stream
// bytes, max keys, once key ("" for none). Returns {id, 1}, or {"", 0}
// when the once key was seen.
const eventAppendSrc = luaEvents + `
local function freeFront(gen, g, need)
  local info, n, freed = key('info', gen), 0, 0
  while freed < need do
    local items = redis.call('LRANGE', info, n, n + 99)
    if #items == 0 then break end
    for _, it in ipairs(items) do
      local _, _, z = item(it)
      n, freed = n + 1, freed + z
      if freed >= need then break end
    end
  end
  dropFront(gen, g, n)
end
local function freeOldest(set, need, self)
  while need > 0 do
    local heads = redis.call('ZRANGE', set, 0, 1, 'WITHSCORES')
    local gen = heads[1]
    if not gen then return need end
    local name = redis.call('HGET', acct, 's:' .. gen)
    local items = {}
    if name then items = redis.call('LRANGE', key('info', gen), 0, 99) end
    if #items == 0 then
      -- not a stream that keeps events (its keys expired): forget it
      if gen ~= self then
        need = need - num(redis.call('HGET', acct, 'b:' .. gen))
        removeStream(gen)
      end
      redis.call('ZREM', set, gen)
    else
      local limit = tonumber(heads[4]) -- the next stream's oldest event
      local n, freed = 0, 0
      for _, it in ipairs(items) do
        local o, _, z = item(it)
        if n > 0 and limit and o > limit then break end
        n, freed = n + 1, freed + z
        if freed >= need then break end
      end
      dropFront(gen, groupOf(name), n)
      need = need - freed
    end
  end
  return 0
end

local name, data, keep, size = ARGV[7], ARGV[8], ARGV[9] == '1', tonumber(ARGV[10])
local maxEvents, maxStreams, maxBytes = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local maxGroup, maxStream, maxKeys, once = tonumber(ARGV[14]), tonumber(ARGV[15]), tonumber(ARGV[16]), ARGV[17]
local epoch = redis.call('HGET', ids, 'e')
if not epoch then
  epoch = ARGV[6]
  redis.call('HSET', ids, 'e', epoch)
end
purge()
local g = groupOf(name)
local gen = redis.call('GET', key('name', name))
if gen then
  local t = redis.call('HGET', key('meta', gen), 't')
  if not t or now - tonumber(t) > ttl then
    removeStream(gen)
    gen = false
  end
end
if gen and once ~= '' and redis.call('ZSCORE', key('once', gen), once) then return {'', 0} end
if not gen then
  while redis.call('ZCARD', lru) >= maxStreams do
    removeStream(redis.call('ZRANGE', lru, 0, 0)[1])
  end
  gen = int(redis.call('HINCRBY', ids, 'n', 1))
  redis.call('SET', key('name', name), gen)
  redis.call('HSET', acct, 's:' .. gen, name)
  redis.call('HSET', key('meta', gen), 'q', 0)
end
local meta, info, grp = key('meta', gen), key('info', gen), key('grp', g)
dropExpired(gen, g)
if not keep then
  -- a replay from an earlier event would have to skip this one
  dropFront(gen, g, redis.call('LLEN', info))
else
  local n = redis.call('LLEN', info)
  if n >= maxEvents then dropFront(gen, g, n - maxEvents + 1) end
  local over = num(redis.call('HGET', acct, 'b:' .. gen)) + size - maxStream
  if over > 0 then freeFront(gen, g, over) end
  over = num(redis.call('HGET', acct, 'g:' .. g)) + size - maxGroup
  if over > 0 and freeOldest(grp, over, gen) > 0 then redis.call('HDEL', acct, 'g:' .. g) end
  over = num(redis.call('HGET', acct, 'total')) + size - maxBytes
  if over > 0 and freeOldest(old, over, gen) > 0 then redis.call('HSET', acct, 'total', 0) end
end
local seq = redis.call('HINCRBY', meta, 'q', 1)
local order = redis.call('HINCRBY', ids, 'o', 1)
redis.call('HSET', meta, 't', ARGV[2])
redis.call('ZADD', lru, order, gen)
local id = epoch .. '.' .. gen .. '.' .. int(seq)
if keep then
  redis.call('XADD', key('data', gen), int(seq) .. '-0', 'd', data)
  redis.call('RPUSH', info, int(order) .. ' ' .. ARGV[2] .. ' ' .. ARGV[10])
  count(gen, g, size)
  redis.call('ZADD', old, 'NX', order, gen)
  redis.call('ZADD', grp, 'NX', order, gen)
end
if once ~= '' then
  local ok = key('once', gen)
  redis.call('ZADD', ok, order, once)
  local extra = redis.call('ZCARD', ok) - maxKeys
  if extra > 0 then redis.call('ZREMRANGEBYRANK', ok, 0, extra - 1) end
end
for _, k in ipairs({key('name', name), meta, info, key('data', gen), key('once', gen), acct, lru, old, grp}) do
  redis.call('PEXPIRE', k, keyttl)
end
redis.call('PUBLISH', P .. 'ev:' .. name, id)
return {id, 1}
`

var eventAppendScript = eventScript(eventAppendSrc)

// eventReplayScript: ARGV[6..] epoch, generation, after (seq), up to (seq; 0
// on the first page), page bytes, max events. Returns {stream id, up to,
// entry id, data, entry id, data, ...} with the events after "after" that
// fit in a page, or false for an id not found.
const eventReplaySrc = luaEvents + `
if redis.call('HGET', ids, 'e') ~= ARGV[6] then return false end
purge()
local gen, after, upto = ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9])
local pageBytes, maxEvents = tonumber(ARGV[10]), tonumber(ARGV[11])
local name = redis.call('HGET', acct, 's:' .. gen)
if not name then return false end
local meta, info = key('meta', gen), key('info', gen)
local t = redis.call('HGET', meta, 't')
if not t or now - tonumber(t) > ttl then
  removeStream(gen)
  return false
end
dropExpired(gen, groupOf(name))
local q = num(redis.call('HGET', meta, 'q'))
local first = q - redis.call('LLEN', info) + 1
if after > q or after + 1 < first then return false end
if upto == 0 or upto > q then upto = q end
local out = {name, upto}
local want = math.min(upto - after, maxEvents)
if want <= 0 then return out end
local items = redis.call('LRANGE', info, after + 1 - first, after - first + want)
local n, bytes = 0, 0
for _, it in ipairs(items) do
  local _, _, z = item(it)
  if n > 0 and bytes + z > pageBytes then break end
  n, bytes = n + 1, bytes + z
end
for _, e in ipairs(redis.call('XRANGE', key('data', gen), int(after + 1) .. '-0', '+', 'COUNT', n)) do
  out[#out + 1] = e[1]
  out[#out + 1] = e[2][2]
end
return out
`

var eventReplayScript = eventScript(eventReplaySrc)

// eventDeleteScript: ARGV[6] stream id.
const eventDeleteSrc = luaEvents + `
purge()
local gen = redis.call('GET', key('name', ARGV[6]))
if gen then
  removeStream(gen)
  redis.call('PUBLISH', P .. 'ev:' .. ARGV[6], '')
end
return 1
`

var eventDeleteScript = eventScript(eventDeleteSrc)

// eventStatsScript returns {streams, bytes}.
const eventStatsSrc = luaEvents + `
purge()
return {redis.call('ZCARD', lru), num(redis.call('HGET', acct, 'total'))}
`

var eventStatsScript = eventScript(eventStatsSrc)

// eventScripts are the scripts of an event store: for one node (or a
// Sentinel's master), and for a cluster (where their appends publish with
// SPUBLISH, see shardedScript).
type eventScripts struct{ single, sharded *redis.Script }

func eventScript(src string) eventScripts {
	return eventScripts{redis.NewScript(src), shardedScript(src)}
}

// script returns sc for the store's client.
func (s *EventStore) script(sc eventScripts) *redis.Script {
	if clustered(s.c) {
		return sc.sharded
	}
	return sc.single
}

func (s *EventStore) args(more ...any) []any {
	// the scripts keep times as unsigned decimal numbers
	now := max(s.opts.Clock.Now().UnixMilli(), 0)
	return append([]any{
		s.kp, now, s.opts.TTL.Milliseconds(),
		(s.opts.TTL + time.Minute).Milliseconds(), purgePerCall,
	}, more...)
}

// newEpoch returns a random epoch candidate: 12 characters of
// [A-Za-z0-9_-]. Every call makes a new one, so that the epoch Redis keeps
// after it lost its data is never the one before.
func newEpoch() string {
	var b [9]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Append stores data as the next event of streamID and returns its id.
// Starting a new stream when MaxStreams are kept evicts the least
// recently appended one; the byte budgets drop the oldest events they
// bound (see [EventStoreOptions]). An event too large for the budgets is
// not kept (nor sent to Redis) but still gets its id. Every append is
// published to the store's watchers, on every instance.
func (s *EventStore) Append(ctx context.Context, streamID string, data []byte) (string, error) {
	id, _, err := s.append(ctx, streamID, "", data)
	if err != nil {
		return "", fmt.Errorf("hexmcp: mcpredis: appending an event: %w", err)
	}
	return id, nil
}

// AppendOnce appends data as Append does, unless an event with key was
// appended to streamID before, through any instance, while the stream
// lived: then it appends nothing and reports appended false (with an
// empty id). A stream remembers its latest MaxKeysPerStream keys (as
// hashes, whatever their length); a deleted or expired stream forgets
// them with its events.
func (s *EventStore) AppendOnce(ctx context.Context, streamID, key string, data []byte) (id string, appended bool, err error) {
	sum := sha256.Sum256([]byte(key))
	id, appended, err = s.append(ctx, streamID, base64.RawURLEncoding.EncodeToString(sum[:16]), data)
	if err != nil {
		return "", false, fmt.Errorf("hexmcp: mcpredis: appending a keyed event: %w", err)
	}
	return id, appended, nil
}

func (s *EventStore) append(ctx context.Context, streamID, once string, data []byte) (string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	size := int64(len(data)) + portlimits.EventOverhead
	keep := size <= min(s.opts.MaxBytesPerStream, s.opts.MaxBytesPerGroup, s.opts.MaxBytes)
	if !keep {
		data = nil
	} else if !enforcesDeadlines(s.c) {
		data = bytes.Clone(data) // the caller's, which a call past Timeout would go on reading (see within)
	}
	res, err := runScript(ctx, s.c, s.script(eventAppendScript), s.kp, s.args(newEpoch(), streamID, data, flag(keep), size,
		s.opts.MaxEventsPerStream, s.opts.MaxStreams, s.opts.MaxBytes, s.opts.MaxBytesPerGroup,
		s.opts.MaxBytesPerStream, s.opts.MaxKeysPerStream, once)...).Slice()
	if err != nil {
		return "", false, err
	}
	if len(res) != 2 {
		return "", false, fmt.Errorf("the script answered %d values", len(res))
	}
	id, _ := res[0].(string)
	appended, _ := res[1].(int64)
	if appended == 1 && !validID(id) {
		return "", false, fmt.Errorf("the script answered the id %q", id)
	}
	return id, appended == 1, nil
}

// Replay calls fn, in order, for every kept event of the stream of
// lastEventID that came after it, up to the last one appended when the
// replay began, and returns that stream's id. See [EventStore] for the ids
// it refuses. It reads ReplayPageBytes of events per round trip and calls
// fn between them, without holding anything in Redis, so fn may be slow
// (a network write); an error from fn, or ctx's cancellation, stops the
// replay and is returned. Timeout bounds each round trip.
func (s *EventStore) Replay(ctx context.Context, lastEventID string, fn func(ports.Event) error) (string, error) {
	epoch, gen, after, ok := parseID(lastEventID)
	if !ok {
		return "", fmt.Errorf("hexmcp: mcpredis: event id %q: %w", lastEventID, ports.ErrEventNotFound)
	}
	var name string
	var upto uint64
	for first := true; first || after < upto; first = false {
		page, err := s.page(ctx, epoch, gen, after, upto)
		if errors.Is(err, ports.ErrEventNotFound) {
			if first {
				return "", fmt.Errorf("hexmcp: mcpredis: event id %q: %w", lastEventID, err)
			}
			return name, fmt.Errorf("hexmcp: mcpredis: event id %q: the stream lost events during the replay: %w", lastEventID, err)
		}
		if err != nil {
			return name, fmt.Errorf("hexmcp: mcpredis: replaying events: %w", err)
		}
		name, upto = page.name, page.upto
		if after < upto && len(page.events) == 0 {
			return name, fmt.Errorf("hexmcp: mcpredis: replaying events: the page after %d of %d is empty", after, upto)
		}
		for _, ev := range page.events {
			if ev.seq != after+1 {
				return name, fmt.Errorf("hexmcp: mcpredis: replaying events: event %d after %d", ev.seq, after)
			}
			if err := ctx.Err(); err != nil {
				return name, err
			}
			if err := fn(ports.Event{ID: formatID(epoch, gen, ev.seq), StreamID: name, Data: ev.data}); err != nil {
				return name, err
			}
			after = ev.seq
		}
	}
	return name, nil
}

type replayPage struct {
	name   string
	upto   uint64
	events []pageEvent
}

type pageEvent struct {
	seq  uint64
	data []byte
}

// page reads the events after seq after (up to seq upto, or the last one
// when upto is 0) that fit in one page.
func (s *EventStore) page(ctx context.Context, epoch, gen string, after, upto uint64) (replayPage, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, err := runScript(ctx, s.c, s.script(eventReplayScript), s.kp, s.args(epoch, gen, after, upto, s.opts.ReplayPageBytes, s.opts.MaxEventsPerStream)...).Slice()
	if errors.Is(err, redis.Nil) {
		return replayPage{}, ports.ErrEventNotFound
	}
	if err != nil {
		return replayPage{}, err
	}
	if len(res) < 2 || len(res)%2 != 0 {
		return replayPage{}, fmt.Errorf("the script answered %d values", len(res))
	}
	p := replayPage{events: make([]pageEvent, 0, len(res)/2-1)}
	p.name, _ = res[0].(string)
	n, _ := res[1].(int64)
	p.upto = uint64(n)
	for i := 2; i < len(res); i += 2 {
		eid, _ := res[i].(string)
		data, _ := res[i+1].(string)
		seq, err := strconv.ParseUint(strings.TrimSuffix(eid, "-0"), 10, 64)
		if err != nil {
			return replayPage{}, fmt.Errorf("the script answered the entry %q", eid)
		}
		p.events = append(p.events, pageEvent{seq: seq, data: []byte(data)})
	}
	return p, nil
}

// DeleteStream drops a stream and its events, for when its session ends,
// and releases their bytes; its watchers are woken (a replay tells them
// the stream is gone). Later Replays of its ids fail; a later Append to
// the same streamID starts a new stream. Deleting an unknown stream does
// nothing.
func (s *EventStore) DeleteStream(ctx context.Context, streamID string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	if err := runScript(ctx, s.c, s.script(eventDeleteScript), s.kp, s.args(streamID)...).Err(); err != nil {
		return fmt.Errorf("hexmcp: mcpredis: deleting an event stream: %w", err)
	}
	return nil
}

// Len returns the number of streams kept, by every instance together (it
// drops expired ones first).
func (s *EventStore) Len(ctx context.Context) (int, error) {
	streams, _, err := s.stats(ctx)
	return int(streams), err
}

// Bytes returns what the kept events count against MaxBytes: the length
// of their data plus 128 bytes each, by every instance together (it
// drops expired streams first).
func (s *EventStore) Bytes(ctx context.Context) (int64, error) {
	_, bytes, err := s.stats(ctx)
	return bytes, err
}

func (s *EventStore) stats(ctx context.Context) (streams, bytes int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, err := runScript(ctx, s.c, s.script(eventStatsScript), s.kp, s.args()...).Int64Slice()
	if err != nil {
		return 0, 0, fmt.Errorf("hexmcp: mcpredis: reading the event store's size: %w", err)
	}
	if len(res) != 2 {
		return 0, 0, fmt.Errorf("hexmcp: mcpredis: reading the event store's size: %d values", len(res))
	}
	return res[0], res[1], nil
}

// formatID makes an event id: epoch.generation.seq.
func formatID(epoch, gen string, seq uint64) string {
	return epoch + "." + gen + "." + strconv.FormatUint(seq, 10)
}

// parseID reads an id made by formatID (numbers in their canonical form).
func parseID(id string) (epoch, gen string, seq uint64, ok bool) {
	epoch, rest, found := strings.Cut(id, ".")
	if !found || len(epoch) != 12 || strings.Trim(epoch, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		return "", "", 0, false
	}
	gen, q, found := strings.Cut(rest, ".")
	if !found || !canonical(gen) || !canonical(q) {
		return "", "", 0, false
	}
	seq, _ = strconv.ParseUint(q, 10, 64)
	return epoch, gen, seq, true
}

// canonical reports whether s is a positive decimal number below 2^53 (what
// Redis scripts count exactly) without leading zeros.
func canonical(s string) bool {
	n, err := strconv.ParseUint(s, 10, 64)
	return err == nil && n > 0 && n < 1<<53 && strconv.FormatUint(n, 10) == s
}

func validID(id string) bool {
	_, _, _, ok := parseID(id)
	return ok
}
