package mcpredis

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// taskCollectGrace is how long past a task's expiry its Redis key lives:
// the store's clock decides expiry; the key TTL only collects what nobody
// asks for any more.
const taskCollectGrace = time.Minute

// TaskStoreOptions configure [NewTaskStore]. Zero (or negative) fields take
// the defaults.
type TaskStoreOptions struct {
	// Prefix begins every Redis key of the store (default
	// "hexmcp:").
	Prefix string
	// MaxTasks bounds the live tasks of every instance together (default
	// 10,000).
	MaxTasks int
	// MaxTasksPerClient bounds the live tasks of one client
	// ([ports.Task.Client]; default 1,000; never
	// more than MaxTasks).
	MaxTasksPerClient int
	// MaxTaskBytes bounds what one task keeps, its InputRequests,
	// Result, Error and State together (default 4 MiB).
	MaxTaskBytes int
	// MaxBytesPerClient bounds what the live tasks of one client keep
	// together (default 16 MiB; never less than
	// MaxTaskBytes nor more than MaxBytes).
	MaxBytesPerClient int
	// MaxBytes bounds what the live tasks of every instance keep
	// together (default 128 MiB).
	MaxBytes int
	// MaxStatusMessageBytes bounds a task's StatusMessage (default
	// 4 KiB).
	MaxStatusMessageBytes int
	// DefaultTTL is the TTL of a task created with none (default
	// 1 hour; never more than MaxTTL).
	DefaultTTL time.Duration
	// MaxTTL caps the TTL of every task (default 24 hours).
	MaxTTL time.Duration
	// MaxPage bounds the tasks of one List page (default
	// 100).
	MaxPage int
	// Timeout bounds each Redis call (default 1 second).
	Timeout time.Duration
	// Clock tells the time (default the system clock). Expiry is decided
	// by it, on every instance alike; Redis key TTLs (a task's TTL and a
	// minute) only collect what nobody asks for any more.
	Clock ports.Clock
}

// taskStore is the [ports.TaskStore] of [NewTaskStore].
type taskStore struct {
	c    redis.UniversalClient
	opts TaskStoreOptions
	lim  portlimits.TaskLimits
	kp   string // the key prefix (see keyPrefix)
}

var _ ports.TaskStore = (*taskStore)(nil)

// NewTaskStore returns a [ports.TaskStore] on c, shared through Redis:
// every instance on the same Redis and Prefix sees every task, so a task started through one
// instance is polled, cancelled and collected through any other. Each
// operation is one round trip (a Lua script run atomically by Redis, which
// makes Update and Claim true compare-and-sets); Claim sends and reads the
// claim and the status message only, whatever the task holds.
//
// A task is a hash "<Prefix>task:<id>". The sorted sets "<Prefix>tlive"
// and "<Prefix>tclient:<client>" count the live tasks, of all and of one
// client (by expiry); "<Prefix>towner:<owner>" lists one owner's (by
// creation number, from the counter "<Prefix>tseq", which orders List).
// What tasks count in bytes is kept in "<Prefix>tsize" (per task, until
// the task is dropped, even when Redis collected its hash), "<Prefix>tbytes"
// (per client) and "<Prefix>tbytes:all". Every Create drops a few expired
// tasks; at a limit, Create (or an Update that grows a task) first drops
// the expired tasks of the client, then up to 1,000 of all, and then
// refuses. On a Redis Cluster (a [redis.ClusterClient]) the keys begin
// with the hash tag "{<Prefix>tasks}" rather than Prefix, so that the
// scripts, which compute the keys they touch, run on the one node of that
// slot, and the bounds hold exactly.
func NewTaskStore(c redis.UniversalClient, opts TaskStoreOptions) ports.TaskStore {
	opts.Prefix = cmp.Or(opts.Prefix, defaultPrefix)
	lim := portlimits.TaskLimits{MaxTasks: opts.MaxTasks, MaxTasksPerClient: opts.MaxTasksPerClient, MaxTaskBytes: opts.MaxTaskBytes,
		MaxBytesPerClient: opts.MaxBytesPerClient, MaxBytes: opts.MaxBytes, MaxStatusMessageBytes: opts.MaxStatusMessageBytes,
		DefaultTTL: opts.DefaultTTL, MaxTTL: opts.MaxTTL, MaxPage: opts.MaxPage}.WithDefaults()
	opts.Timeout = positive(opts.Timeout, defaultTimeout)
	if opts.Clock == nil {
		opts.Clock = ports.SystemClock{}
	}
	return &taskStore{c: c, opts: opts, lim: lim, kp: keyPrefix(c, opts.Prefix, "tasks")}
}

// luaTasks holds the functions every task script uses. ARGV[1..9]:
// prefix, now (ms), then the limits: tasks in all, per client; bytes per
// task, per client, in all; the least a task counts; the key grace (ms).
// A member of the "tlive" and "tclient:" sets is
// "<len(id)>:<id><len(owner)>:<owner><client>", which says all that
// dropping the task needs; "tsize" maps a task id to "<bytes> <member>".
const luaTasks = `
local prefix, now = ARGV[1], tonumber(ARGV[2])
local maxTasks, maxClient = tonumber(ARGV[3]), tonumber(ARGV[4])
local maxTask, maxClientBytes, maxBytes, minBytes = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local grace = tonumber(ARGV[9])
local all, sizes, cbytes, allbytes = prefix .. 'tlive', prefix .. 'tsize', prefix .. 'tbytes', prefix .. 'tbytes:all'
local function tkey(id) return prefix .. 'task:' .. id end
local function okey(owner) return prefix .. 'towner:' .. owner end
local function ckey(client) return prefix .. 'tclient:' .. client end
local function member(id, owner, client) return string.len(id) .. ':' .. id .. string.len(owner) .. ':' .. owner .. client end
local function unmember(m)
  local c = string.find(m, ':', 1, true)
  local n = tonumber(string.sub(m, 1, c - 1))
  local id, rest = string.sub(m, c + 1, c + n), string.sub(m, c + n + 1)
  c = string.find(rest, ':', 1, true)
  n = tonumber(string.sub(rest, 1, c - 1))
  return id, string.sub(rest, c + 1, c + n), string.sub(rest, c + n + 1)
end
local function addBytes(client, d)
  if d == 0 then return end
  if redis.call('HINCRBY', cbytes, client, d) <= 0 then redis.call('HDEL', cbytes, client) end
  if redis.call('INCRBY', allbytes, d) <= 0 then redis.call('DEL', allbytes) end
end
-- forget drops task id and all that counts it.
local function forget(id)
  redis.call('DEL', tkey(id))
  local rec = redis.call('HGET', sizes, id)
  if not rec then return end
  local sp = string.find(rec, ' ', 1, true)
  local b, m = tonumber(string.sub(rec, 1, sp - 1)), string.sub(rec, sp + 1)
  local _, owner, client = unmember(m)
  redis.call('HDEL', sizes, id)
  redis.call('ZREM', all, m)
  redis.call('ZREM', ckey(client), m)
  redis.call('ZREM', okey(owner), id)
  addBytes(client, -b)
end
-- purge drops up to n expired tasks of the sorted set key.
local function purge(key, n)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', now, 'LIMIT', 0, n)) do
    local id, _, client = unmember(m)
    forget(id)
    redis.call('ZREM', all, m)
    redis.call('ZREM', ckey(client), m)
  end
end
-- over names the limit that client, growing by grow bytes (and by one
-- task when adding), would pass; nil when none.
local function over(client, grow, adding)
  if adding and redis.call('ZCARD', all) >= maxTasks then return 'full' end
  if adding and redis.call('ZCARD', ckey(client)) >= maxClient then return 'clientfull' end
  if grow > 0 and tonumber(redis.call('HGET', cbytes, client) or '0') + grow > maxClientBytes then return 'clientbytes' end
  if grow > 0 and tonumber(redis.call('GET', allbytes) or '0') + grow > maxBytes then return 'bytes' end
  return nil
end
-- room is over after dropping expired tasks: the client's, then all's.
local function room(client, grow, adding)
  if not over(client, grow, adding) then return nil end
  purge(ckey(client), maxClient)
  if not over(client, grow, adding) then return nil end
  purge(all, 1000)
  return over(client, grow, adding)
end
-- live reports whether the owner's task is live, dropping an expired one.
local function live(id, owner)
  local f = redis.call('HMGET', tkey(id), 'o', 'x')
  if not f[1] then
    if redis.call('HEXISTS', sizes, id) == 1 then forget(id) end
    return false
  end
  if now >= tonumber(f[2]) then
    forget(id)
    return false
  end
  return f[1] == owner
end
local fields = {'s', 'm', 'c', 'u', 't', 'p', 'i', 'r', 'e', 'a', 'v', 'w', 'l', 'k'}
-- read answers 'ok' and the task's fields.
local function read(id)
  local v = redis.call('HMGET', tkey(id), unpack(fields))
  table.insert(v, 1, id)
  table.insert(v, 1, 'ok')
  return v
end
local function keepAtLeast(key, ms)
  local cur = redis.call('PTTL', key)
  if cur >= 0 and cur < ms then redis.call('PEXPIRE', key, ms) end
  if cur == -1 then redis.call('PEXPIRE', key, ms) end
end
`

// createTask: ARGV[10..] id, owner, client, status, message, ttl, poll,
// inputs, state.
var createTaskScript = redis.NewScript(luaTasks + `
local id, owner, client, st, msg = ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14]
local ttl, poll, inputs, state = tonumber(ARGV[15]), ARGV[16], ARGV[17], ARGV[18]
local size = string.len(inputs) + string.len(state)
if size > maxTask then return {'toolarge', tostring(size)} end
local old = redis.call('HMGET', tkey(id), 'x')
if old[1] and now < tonumber(old[1]) then return {'exists'} end
forget(id)
purge(all, 10)
local bytes = math.max(size, minBytes)
local full = room(client, bytes, true)
if full then return {full} end
local seq = redis.call('INCR', prefix .. 'tseq')
redis.call('HSET', tkey(id), 'o', owner, 'k', client, 's', st, 'm', msg, 'c', now, 'u', now, 't', ttl, 'p', poll,
  'i', inputs, 'r', '', 'e', '', 'a', state, 'v', 1, 'x', now + ttl, 'q', seq, 'w', '', 'l', 0, 'b', bytes)
redis.call('PEXPIRE', tkey(id), ttl + grace)
local m = member(id, owner, client)
redis.call('ZADD', all, now + ttl, m)
redis.call('ZADD', ckey(client), now + ttl, m)
redis.call('ZADD', okey(owner), seq, id)
keepAtLeast(okey(owner), ttl + grace)
redis.call('HSET', sizes, id, bytes .. ' ' .. m)
addBytes(client, bytes)
return read(id)
`)

// getTask: ARGV[10..] id, owner.
var getTaskScript = redis.NewScript(luaTasks + `
if not live(ARGV[10], ARGV[11]) then return {'notfound'} end
return read(ARGV[10])
`)

// updateTask: ARGV[10..] id, owner, status, message, inputs, result,
// error; ARGV[17] is "1" for a cancel, which leaves a terminal task as it
// is; ARGV[18] the state, ARGV[19] "1" when ARGV[18] is a state to set
// ("0" keeps it; a terminal status drops it), ARGV[20] the version the
// update is conditional on ("0": none), ARGV[21] the runner it is
// conditional on ("": none).
var updateTaskScript = redis.NewScript(luaTasks + `
local id, owner, st, msg, inputs, res, err = ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15], ARGV[16]
local cancel, state, setState, ifVersion, ifRunner = ARGV[17] == '1', ARGV[18], ARGV[19] == '1', ARGV[20], ARGV[21]
if not live(id, owner) then return {'notfound'} end
local f = redis.call('HMGET', tkey(id), 's', 'v', 'w', 'k', 'a', 'b')
local from = f[1]
if from ~= 'working' and from ~= 'input_required' then
  if cancel then return read(id) end
  return {'transition', from}
end
if ifVersion ~= '0' and f[2] ~= ifVersion then return {'conflict', f[2]} end
if ifRunner ~= '' and (f[3] or '') ~= ifRunner then return {'claimed'} end
local newState = f[5] or ''
if st ~= 'working' and st ~= 'input_required' then
  newState = ''
elseif setState then
  newState = state
end
local size = string.len(inputs) + string.len(res) + string.len(err) + string.len(newState)
if size > maxTask then return {'toolarge', tostring(size)} end
local client = f[4] or owner
local nb, ob = math.max(size, minBytes), tonumber(f[6]) or minBytes
if nb > ob then
  local full = room(client, nb - ob, false)
  if full then return {full} end
end
redis.call('HSET', tkey(id), 's', st, 'm', msg, 'u', now, 'i', inputs, 'r', res, 'e', err, 'a', newState, 'b', nb)
if st ~= 'working' then redis.call('HSET', tkey(id), 'w', '', 'l', 0) end
redis.call('HINCRBY', tkey(id), 'v', 1)
if redis.call('HEXISTS', sizes, id) == 1 then
  redis.call('HSET', sizes, id, nb .. ' ' .. member(id, owner, client))
  addBytes(client, nb - ob)
end
return read(id)
`)

// claimTask: ARGV[10..] id, owner, runner, lease (ms; ≤ 0 releases),
// "1" when ARGV[15] is a status message to set, the message, the version
// the claim is conditional on ("0": none). It reads and writes neither
// payloads nor state, and answers the task without them.
var claimTaskScript = redis.NewScript(luaTasks + `
local id, owner, runner, lease, setMsg, msg, ifVersion = ARGV[10], ARGV[11], ARGV[12], tonumber(ARGV[13]), ARGV[14] == '1', ARGV[15], ARGV[16]
if not live(id, owner) then return {'notfound'} end
local f = redis.call('HMGET', tkey(id), 's', 'v', 'w', 'l', 'm')
if f[1] ~= 'working' then return {'transition', f[1]} end
if ifVersion ~= '0' and f[2] ~= ifVersion then return {'conflict', f[2]} end
local cur = f[3] or ''
local held = cur ~= '' and now < (tonumber(f[4]) or 0)
if lease > 0 then
  if held and cur ~= runner then return {'claimed'} end
  redis.call('HSET', tkey(id), 'w', runner, 'l', now + lease)
else
  if cur ~= runner then return {'claimed'} end
  redis.call('HSET', tkey(id), 'w', '', 'l', 0)
end
if setMsg and msg ~= (f[5] or '') then
  redis.call('HSET', tkey(id), 'm', msg, 'u', now)
  redis.call('HINCRBY', tkey(id), 'v', 1)
end
local v = redis.call('HMGET', tkey(id), 's', 'm', 'c', 'u', 't', 'p', 'v', 'w', 'l', 'k')
return {'ok', id, v[1], v[2], v[3], v[4], v[5], v[6], '', '', '', '', v[7], v[8], v[9], v[10]}
`)

// listTasks: ARGV[10..] owner, after (creation number), limit. Returns
// {next, task fields...}, taskFields fields a task.
var listTasksScript = redis.NewScript(luaTasks + `
local owner, after, limit = ARGV[10], ARGV[11], tonumber(ARGV[12])
local out, n, next = {''}, 0, ''
local from = '(' .. after
while true do
  local batch = redis.call('ZRANGEBYSCORE', okey(owner), from, '+inf', 'WITHSCORES', 'LIMIT', 0, limit + 1)
  if #batch == 0 then break end
  for j = 1, #batch, 2 do
    local id, seq = batch[j], batch[j + 1]
    from = '(' .. seq
    if not live(id, owner) then
      redis.call('ZREM', okey(owner), id)
    elseif n == limit then
      out[1] = next
      return out
    else
      local v = read(id)
      for k = 2, #v do table.insert(out, v[k]) end
      n = n + 1
      next = seq
    end
  end
end
return out
`)

// deleteTask: ARGV[10..] id, owner.
var deleteTaskScript = redis.NewScript(luaTasks + `
if live(ARGV[10], ARGV[11]) then forget(ARGV[10]) end
return 1
`)

func (s *taskStore) args(more ...any) []any {
	return append([]any{s.kp, s.opts.Clock.Now().UnixMilli(), s.lim.MaxTasks, s.lim.MaxTasksPerClient,
		s.lim.MaxTaskBytes, s.lim.MaxBytesPerClient, s.lim.MaxBytes, portlimits.MinTaskBytes, taskCollectGrace.Milliseconds()}, more...)
}

func raw(v any) json.RawMessage {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func str(v any) string { s, _ := v.(string); return s }

func millis(v any) int64 {
	n, _ := strconv.ParseInt(str(v), 10, 64)
	return n
}

// taskFields is how many fields the scripts answer a task with.
const taskFields = 15

// decodeTask reads the taskFields fields id, s, m, c, u, t, p, i, r, e,
// a, v, w, l, k.
func decodeTask(f []any, owner string) ports.Task {
	t := ports.Task{
		ID: str(f[0]), Owner: owner, Status: ports.TaskStatus(str(f[1])), StatusMessage: str(f[2]),
		CreatedAt: time.UnixMilli(millis(f[3])).UTC(), UpdatedAt: time.UnixMilli(millis(f[4])).UTC(),
		TTL: time.Duration(millis(f[5])) * time.Millisecond, PollInterval: time.Duration(millis(f[6])) * time.Millisecond,
		InputRequests: raw(f[7]), Result: raw(f[8]), Error: raw(f[9]), State: raw(f[10]), Version: millis(f[11]),
		Runner: str(f[12]), Client: cmp.Or(str(f[14]), owner),
	}
	if t.Runner != "" {
		t.LeaseUntil = time.UnixMilli(millis(f[13])).UTC()
	}
	return t
}

// run runs a script that answers {code, ...}.
func (s *taskStore) run(ctx context.Context, what string, sc *redis.Script, args []any) (string, []any, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, err := runScript(ctx, s.c, sc, s.kp, args...).Slice()
	if err != nil {
		return "", nil, fmt.Errorf("hexmcp: mcpredis: %s: %w", what, err)
	}
	if len(res) == 0 {
		return "", nil, fmt.Errorf("hexmcp: mcpredis: %s: empty answer", what)
	}
	return str(res[0]), res[1:], nil
}

func (s *taskStore) task(what, code string, rest []any, owner string) (ports.Task, error) {
	switch {
	case code == "notfound":
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %w", ports.ErrTaskNotFound)
	case code == "toolarge":
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %w: %s bytes of payloads and state, over %d", ports.ErrTaskTooLarge, str(first(rest)), s.lim.MaxTaskBytes)
	case code == "full":
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %w: the store holds %d", ports.ErrTooManyTasks, s.lim.MaxTasks)
	case code == "clientfull":
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %w: the client holds %d", ports.ErrTooManyTasksForClient, s.lim.MaxTasksPerClient)
	case code == "clientbytes":
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %w: the client's tasks would keep over %d bytes", ports.ErrTooManyTasksForClient, s.lim.MaxBytesPerClient)
	case code == "bytes":
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %w: the store's tasks would keep over %d bytes", ports.ErrTooManyTasks, s.lim.MaxBytes)
	case code == "claimed":
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %w", ports.ErrTaskClaimed)
	case code != "ok" || len(rest) != taskFields:
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %s: unexpected answer %q of %d fields", what, code, len(rest))
	}
	return decodeTask(rest, owner), nil
}

func first(v []any) any {
	if len(v) == 0 {
		return nil
	}
	return v[0]
}

// Create stores a new task (see [ports.TaskStore.Create] and [NewTaskStore]
// for the limits).
func (s *taskStore) Create(ctx context.Context, t ports.Task) (ports.Task, error) {
	if err := s.lim.CheckNew("hexmcp: mcpredis", t); err != nil {
		return ports.Task{}, err
	}
	if t.ID == "" {
		t.ID = rand.Text()
	}
	client := cmp.Or(t.Client, t.Owner)
	ttl := s.lim.TTL(t.TTL).Milliseconds()
	poll := max(t.PollInterval, 0).Milliseconds()
	code, rest, err := s.run(ctx, "creating a task", createTaskScript, s.args(t.ID, t.Owner, client, string(t.Status), t.StatusMessage,
		ttl, poll, string(t.InputRequests), string(t.State)))
	if err != nil {
		return ports.Task{}, err
	}
	if code == "exists" {
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %w: %q", ports.ErrTaskExists, t.ID)
	}
	return s.task("creating a task", code, rest, t.Owner)
}

// Get returns the owner's live task.
func (s *taskStore) Get(ctx context.Context, id, owner string) (ports.Task, error) {
	code, rest, err := s.run(ctx, "reading a task", getTaskScript, s.args(id, owner))
	if err != nil {
		return ports.Task{}, err
	}
	return s.task("reading a task", code, rest, owner)
}

// Update applies u to the owner's live task, atomically.
func (s *taskStore) Update(ctx context.Context, id, owner string, u ports.TaskUpdate) (ports.Task, error) {
	if err := u.Check(); err != nil {
		return ports.Task{}, err
	}
	if err := s.lim.CheckSizes(u.StatusMessage, u.InputRequests, u.Result, u.Error, u.State); err != nil {
		return ports.Task{}, err
	}
	setState := "0"
	if u.State != nil {
		setState = "1"
	}
	code, rest, err := s.run(ctx, "updating a task", updateTaskScript, s.args(id, owner, string(u.Status), u.StatusMessage,
		string(u.InputRequests), string(u.Result), string(u.Error), "0", string(u.State), setState, max(u.IfVersion, 0), u.IfRunner))
	if err != nil {
		return ports.Task{}, err
	}
	switch {
	case code == "transition" && len(rest) == 1:
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: task %q: %w", id, &ports.TaskTransitionError{From: ports.TaskStatus(str(rest[0])), To: u.Status})
	case code == "conflict" && len(rest) == 1:
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: task %q at version %s, not %d: %w", id, str(rest[0]), u.IfVersion, ports.ErrTaskConflict)
	}
	return s.task("updating a task", code, rest, owner)
}

// Claim changes the claim on the owner's working task (see
// [ports.TaskStore.Claim]): one small script, which sends Redis the claim
// and the status message, not the task's state.
func (s *taskStore) Claim(ctx context.Context, id, owner string, c ports.TaskClaim) (ports.Task, error) {
	if c.Runner == "" {
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: %w: a claim names its runner", ports.ErrInvalidTaskUpdate)
	}
	setMsg, msg := "0", ""
	if c.StatusMessage != nil {
		if err := s.lim.CheckSizes(*c.StatusMessage); err != nil {
			return ports.Task{}, err
		}
		setMsg, msg = "1", *c.StatusMessage
	}
	lease := int64(0)
	if c.Lease > 0 {
		lease = max(c.Lease.Milliseconds(), 1)
	}
	code, rest, err := s.run(ctx, "claiming a task", claimTaskScript, s.args(id, owner, c.Runner, lease, setMsg, msg, max(c.IfVersion, 0)))
	if err != nil {
		return ports.Task{}, err
	}
	switch {
	case code == "transition" && len(rest) == 1:
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: task %q: %w", id, &ports.TaskTransitionError{From: ports.TaskStatus(str(rest[0])), To: ports.TaskWorking})
	case code == "conflict" && len(rest) == 1:
		return ports.Task{}, fmt.Errorf("hexmcp: mcpredis: task %q at version %s, not %d: %w", id, str(rest[0]), c.IfVersion, ports.ErrTaskConflict)
	}
	return s.task("claiming a task", code, rest, owner)
}

// Cancel makes the owner's live task cancelled; a terminal one is returned
// as it is.
func (s *taskStore) Cancel(ctx context.Context, id, owner, message string) (ports.Task, error) {
	if err := s.lim.CheckSizes(message); err != nil {
		return ports.Task{}, err
	}
	code, rest, err := s.run(ctx, "cancelling a task", updateTaskScript, s.args(id, owner, string(ports.TaskCancelled), message, "", "", "", "1", "", "0", 0, ""))
	if err != nil {
		return ports.Task{}, err
	}
	return s.task("cancelling a task", code, rest, owner)
}

// List returns a page of the owner's live tasks, oldest first. The cursor
// is the creation number of the last task of the previous page.
func (s *taskStore) List(ctx context.Context, owner, cursor string, limit int) ([]ports.Task, string, error) {
	after := "0"
	if cursor != "" {
		if _, err := strconv.ParseUint(cursor, 10, 64); err != nil {
			return nil, "", fmt.Errorf("hexmcp: mcpredis: %w", ports.ErrInvalidTaskCursor)
		}
		after = cursor
	}
	limit = s.lim.Page(limit)
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, err := runScript(ctx, s.c, listTasksScript, s.kp, s.args(owner, after, limit)...).Slice()
	if err != nil {
		return nil, "", fmt.Errorf("hexmcp: mcpredis: listing tasks: %w", err)
	}
	if len(res) == 0 || (len(res)-1)%taskFields != 0 {
		return nil, "", fmt.Errorf("hexmcp: mcpredis: listing tasks: %d fields", len(res))
	}
	tasks := make([]ports.Task, 0, (len(res)-1)/taskFields)
	for i := 1; i < len(res); i += taskFields {
		tasks = append(tasks, decodeTask(res[i:i+taskFields], owner))
	}
	return tasks, str(res[0]), nil
}

// Delete drops the owner's task.
func (s *taskStore) Delete(ctx context.Context, id, owner string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	if err := runScript(ctx, s.c, deleteTaskScript, s.kp, s.args(id, owner)...).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("hexmcp: mcpredis: deleting a task: %w", err)
	}
	return nil
}
