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

	"github.com/hexmcp/hexmcp/adapters/memory"
	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [TaskStoreOptions]: the in-memory store's (one place says
// them).
const (
	DefaultMaxTasks                  = memory.DefaultMaxTasks
	DefaultMaxTasksPerOwner          = memory.DefaultMaxTasksPerOwner
	DefaultMaxTaskPayloadBytes       = memory.DefaultMaxTaskPayloadBytes
	DefaultMaxTaskStatusMessageBytes = memory.DefaultMaxTaskStatusMessageBytes
	DefaultTaskTTL                   = memory.DefaultTaskTTL
	DefaultMaxTaskTTL                = memory.DefaultMaxTaskTTL
	DefaultMaxTaskPage               = memory.DefaultMaxTaskPage
)

// taskCollectGrace is how long past a task's expiry its Redis key lives:
// the store's clock decides expiry; the key TTL only collects what nobody
// asks for any more.
const taskCollectGrace = time.Minute

// TaskStoreOptions configure [TaskStore]. Zero (or negative) fields take
// the defaults.
type TaskStoreOptions struct {
	// Prefix begins every Redis key of the store (default
	// [DefaultPrefix]).
	Prefix string
	// MaxTasks bounds the live tasks of every instance together (default
	// [DefaultMaxTasks]).
	MaxTasks int
	// MaxTasksPerOwner bounds the live tasks of one owner (default
	// [DefaultMaxTasksPerOwner]; never more than MaxTasks).
	MaxTasksPerOwner int
	// MaxPayloadBytes bounds each of a task's InputRequests, Result and
	// Error (default [DefaultMaxTaskPayloadBytes]).
	MaxPayloadBytes int
	// MaxStatusMessageBytes bounds a task's StatusMessage (default
	// [DefaultMaxTaskStatusMessageBytes]).
	MaxStatusMessageBytes int
	// DefaultTTL is the TTL of a task created with none (default
	// [DefaultTaskTTL]; never more than MaxTTL).
	DefaultTTL time.Duration
	// MaxTTL caps the TTL of every task (default [DefaultMaxTaskTTL]).
	MaxTTL time.Duration
	// MaxPage bounds the tasks of one List page (default
	// [DefaultMaxTaskPage]).
	MaxPage int
	// Timeout bounds each Redis call (default [DefaultTimeout]).
	Timeout time.Duration
	// Clock tells the time (default the system clock). Expiry is decided
	// by it, on every instance alike; Redis key TTLs (a task's TTL and a
	// minute) only collect what nobody asks for any more.
	Clock ports.Clock
}

// TaskStore is a [ports.TaskStore] shared through Redis: every instance on
// the same Redis and Prefix sees every task, so a task started through one
// instance is polled, cancelled and collected through any other. Each
// operation is one round trip (a Lua script run atomically by Redis, which
// makes Update a true compare-and-set). A task is a hash
// "<Prefix>task:<id>"; the sorted set "<Prefix>tasks" counts the live
// tasks (by expiry) and "<Prefix>towner:<owner>" one owner's (by creation
// number, from the counter "<Prefix>tseq", which orders List). At a limit
// Create first drops expired tasks (of the owner: all of them, at most
// MaxTasksPerOwner; in total: at most 1,000 per call) and then refuses.
// The scripts name keys they compute, so the store needs one Redis (or
// Valkey) node, not a cluster.
type TaskStore struct {
	c    redis.UniversalClient
	opts TaskStoreOptions
}

var _ ports.TaskStore = (*TaskStore)(nil)

// NewTaskStore returns the task store on c.
func NewTaskStore(c redis.UniversalClient, opts TaskStoreOptions) *TaskStore {
	opts.Prefix = cmp.Or(opts.Prefix, DefaultPrefix)
	opts.MaxTasks = positive(opts.MaxTasks, DefaultMaxTasks)
	opts.MaxTasksPerOwner = min(positive(opts.MaxTasksPerOwner, DefaultMaxTasksPerOwner), opts.MaxTasks)
	opts.MaxPayloadBytes = positive(opts.MaxPayloadBytes, DefaultMaxTaskPayloadBytes)
	opts.MaxStatusMessageBytes = positive(opts.MaxStatusMessageBytes, DefaultMaxTaskStatusMessageBytes)
	opts.MaxTTL = positive(opts.MaxTTL, DefaultMaxTaskTTL)
	opts.DefaultTTL = min(positive(opts.DefaultTTL, DefaultTaskTTL), opts.MaxTTL)
	opts.MaxPage = positive(opts.MaxPage, DefaultMaxTaskPage)
	opts.Timeout = positive(opts.Timeout, DefaultTimeout)
	if opts.Clock == nil {
		opts.Clock = ports.SystemClock{}
	}
	return &TaskStore{c: c, opts: opts}
}

// luaTasks holds the functions every task script uses. ARGV[1..2]:
// prefix, now (ms). A member of the "tasks" set is "<len(id)>:<id><owner>",
// so that a task whose hash Redis collected is still removed from its
// owner's set.
const luaTasks = `
local prefix, now = ARGV[1], tonumber(ARGV[2])
local all = prefix .. 'tasks'
local function tkey(id) return prefix .. 'task:' .. id end
local function okey(owner) return prefix .. 'towner:' .. owner end
local function member(id, owner) return string.len(id) .. ':' .. id .. owner end
local function unmember(m)
  local c = string.find(m, ':', 1, true)
  local n = tonumber(string.sub(m, 1, c - 1))
  return string.sub(m, c + 1, c + n), string.sub(m, c + n + 1)
end
local function remove(id, owner)
  redis.call('DEL', tkey(id))
  redis.call('ZREM', all, member(id, owner))
  redis.call('ZREM', okey(owner), id)
end
local fields = {'s', 'm', 'c', 'u', 't', 'p', 'i', 'r', 'e', 'a', 'v'}
-- live returns the owner's unexpired task's fields, dropping an expired one.
local function live(id, owner)
  local f = redis.call('HMGET', tkey(id), 'o', 'x')
  if not f[1] then return nil end
  if now >= tonumber(f[2]) then
    remove(id, f[1])
    return nil
  end
  if f[1] ~= owner then return nil end
  local v = redis.call('HMGET', tkey(id), unpack(fields))
  table.insert(v, 1, id)
  return v
end
local function keepAtLeast(key, ms)
  local cur = redis.call('PTTL', key)
  if cur >= 0 and cur < ms then redis.call('PEXPIRE', key, ms) end
  if cur == -1 then redis.call('PEXPIRE', key, ms) end
end
`

// createTask: ARGV[3..] id, owner, status, message, ttl, poll, inputs,
// max, maxOwner, grace, state.
var createTaskScript = redis.NewScript(luaTasks + `
local id, owner, st, msg, ttl, poll, inputs = ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9]
local max, maxOwner, grace, state = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]), ARGV[13]
local old = redis.call('HMGET', tkey(id), 'o', 'x')
if old[1] then
  if now < tonumber(old[2]) then return {'exists'} end
  remove(id, old[1])
end
if redis.call('ZCARD', all) >= max then
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', all, '-inf', now, 'LIMIT', 0, 1000)) do
    local mid, mowner = unmember(m)
    remove(mid, mowner)
  end
  if redis.call('ZCARD', all) >= max then return {'full'} end
end
local ok = okey(owner)
if redis.call('ZCARD', ok) >= maxOwner then
  for _, mid in ipairs(redis.call('ZRANGE', ok, 0, maxOwner)) do
    live(mid, owner)
    if redis.call('EXISTS', tkey(mid)) == 0 then remove(mid, owner) end
  end
  if redis.call('ZCARD', ok) >= maxOwner then return {'ownerfull'} end
end
local seq = redis.call('INCR', prefix .. 'tseq')
redis.call('HSET', tkey(id), 'o', owner, 's', st, 'm', msg, 'c', now, 'u', now, 't', ttl, 'p', poll,
  'i', inputs, 'r', '', 'e', '', 'a', state, 'v', 1, 'x', now + ttl, 'q', seq)
redis.call('PEXPIRE', tkey(id), ttl + grace)
redis.call('ZADD', all, now + ttl, member(id, owner))
redis.call('ZADD', ok, seq, id)
keepAtLeast(ok, ttl + grace)
return {'ok', id, st, msg, tostring(now), tostring(now), tostring(ttl), poll, inputs, '', '', state, '1'}
`)

// getTask: ARGV[3..] id, owner.
var getTaskScript = redis.NewScript(luaTasks + `
local v = live(ARGV[3], ARGV[4])
if not v then return {'notfound'} end
table.insert(v, 1, 'ok')
return v
`)

// updateTask: ARGV[3..] id, owner, status, message, inputs, result,
// error; ARGV[10] is "1" for a cancel, which leaves a terminal task as it
// is; ARGV[11] the state ("" keeps it; a terminal status drops it),
// ARGV[12] "1" when ARGV[11] is a state to set, ARGV[13] the version the
// update is conditional on ("0": none).
var updateTaskScript = redis.NewScript(luaTasks + `
local id, owner, st, msg, inputs, res, err, cancel = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10] == '1'
local state, setState, ifVersion = ARGV[11], ARGV[12] == '1', ARGV[13]
local v = live(id, owner)
if not v then return {'notfound'} end
local from = v[2]
if from ~= 'working' and from ~= 'input_required' then
  if cancel then
    table.insert(v, 1, 'ok')
    return v
  end
  return {'transition', from}
end
if ifVersion ~= '0' and v[12] ~= ifVersion then return {'conflict', v[12]} end
redis.call('HSET', tkey(id), 's', st, 'm', msg, 'u', now, 'i', inputs, 'r', res, 'e', err)
if st ~= 'working' and st ~= 'input_required' then
  redis.call('HSET', tkey(id), 'a', '')
elseif setState then
  redis.call('HSET', tkey(id), 'a', state)
end
redis.call('HINCRBY', tkey(id), 'v', 1)
v = live(id, owner)
table.insert(v, 1, 'ok')
return v
`)

// listTasks: ARGV[3..] owner, after (creation number), limit. Returns
// {next, task fields...}, taskFields fields a task.
var listTasksScript = redis.NewScript(luaTasks + `
local owner, after, limit = ARGV[3], ARGV[4], tonumber(ARGV[5])
local out, n, next = {''}, 0, ''
local from = '(' .. after
while true do
  local batch = redis.call('ZRANGEBYSCORE', okey(owner), from, '+inf', 'WITHSCORES', 'LIMIT', 0, limit + 1)
  if #batch == 0 then break end
  for j = 1, #batch, 2 do
    local id, seq = batch[j], batch[j + 1]
    from = '(' .. seq
    local v = live(id, owner)
    if not v then
      redis.call('ZREM', okey(owner), id)
    elseif n == limit then
      out[1] = next
      return out
    else
      for _, x in ipairs(v) do table.insert(out, x) end
      n = n + 1
      next = seq
    end
  end
end
return out
`)

// deleteTask: ARGV[3..] id, owner.
var deleteTaskScript = redis.NewScript(luaTasks + `
if live(ARGV[3], ARGV[4]) then remove(ARGV[3], ARGV[4]) end
return 1
`)

func (s *TaskStore) args(more ...any) []any {
	return append([]any{s.opts.Prefix, s.opts.Clock.Now().UnixMilli()}, more...)
}

func (s *TaskStore) checkSizes(msg string, payloads ...[]byte) error {
	if err := memory.CheckTaskSizes(s.opts.MaxStatusMessageBytes, s.opts.MaxPayloadBytes, msg, payloads...); err != nil {
		return fmt.Errorf("mcpredis: %w", err)
	}
	return nil
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
const taskFields = 12

// decodeTask reads the taskFields fields id, s, m, c, u, t, p, i, r, e,
// a, v.
func decodeTask(f []any, owner string) ports.Task {
	return ports.Task{
		ID: str(f[0]), Owner: owner, Status: ports.TaskStatus(str(f[1])), StatusMessage: str(f[2]),
		CreatedAt: time.UnixMilli(millis(f[3])).UTC(), UpdatedAt: time.UnixMilli(millis(f[4])).UTC(),
		TTL: time.Duration(millis(f[5])) * time.Millisecond, PollInterval: time.Duration(millis(f[6])) * time.Millisecond,
		InputRequests: raw(f[7]), Result: raw(f[8]), Error: raw(f[9]), State: raw(f[10]), Version: millis(f[11]),
	}
}

// run runs a script that answers {code, ...}.
func (s *TaskStore) run(ctx context.Context, what string, sc *redis.Script, args []any) (string, []any, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, err := runScript(ctx, s.c, sc, args...).Slice()
	if err != nil {
		return "", nil, fmt.Errorf("mcpredis: %s: %w", what, err)
	}
	if len(res) == 0 {
		return "", nil, fmt.Errorf("mcpredis: %s: empty answer", what)
	}
	return str(res[0]), res[1:], nil
}

func (s *TaskStore) task(what, code string, rest []any, owner string) (ports.Task, error) {
	switch {
	case code == "notfound":
		return ports.Task{}, fmt.Errorf("mcpredis: %w", ports.ErrTaskNotFound)
	case code != "ok" || len(rest) != taskFields:
		return ports.Task{}, fmt.Errorf("mcpredis: %s: unexpected answer %q of %d fields", what, code, len(rest))
	}
	return decodeTask(rest, owner), nil
}

// Create stores a new task (see [ports.TaskStore.Create] and [TaskStore]
// for the limits).
func (s *TaskStore) Create(ctx context.Context, t ports.Task) (ports.Task, error) {
	u := ports.TaskUpdate{Status: t.Status, StatusMessage: t.StatusMessage, InputRequests: t.InputRequests, Result: t.Result, Error: t.Error, State: t.State}
	if err := u.Check(); err != nil {
		return ports.Task{}, fmt.Errorf("mcpredis: %w", err)
	}
	if t.Status.Terminal() {
		return ports.Task{}, fmt.Errorf("mcpredis: %w: a new task cannot be %s", ports.ErrInvalidTaskUpdate, t.Status)
	}
	if err := s.checkSizes(t.StatusMessage, t.InputRequests, t.State); err != nil {
		return ports.Task{}, err
	}
	if t.ID == "" {
		t.ID = rand.Text()
	}
	ttl := max(min(cmp.Or(max(t.TTL, 0), s.opts.DefaultTTL), s.opts.MaxTTL).Milliseconds(), 1)
	poll := max(t.PollInterval, 0).Milliseconds()
	code, rest, err := s.run(ctx, "creating a task", createTaskScript, s.args(t.ID, t.Owner, string(t.Status), t.StatusMessage,
		ttl, poll, string(t.InputRequests), s.opts.MaxTasks, s.opts.MaxTasksPerOwner, taskCollectGrace.Milliseconds(), string(t.State)))
	if err != nil {
		return ports.Task{}, err
	}
	switch code {
	case "exists":
		return ports.Task{}, fmt.Errorf("mcpredis: %w: %q", ports.ErrTaskExists, t.ID)
	case "full":
		return ports.Task{}, fmt.Errorf("mcpredis: %w: the store holds %d", ports.ErrTooManyTasks, s.opts.MaxTasks)
	case "ownerfull":
		return ports.Task{}, fmt.Errorf("mcpredis: %w: the owner holds %d", ports.ErrTooManyTasksForOwner, s.opts.MaxTasksPerOwner)
	}
	return s.task("creating a task", code, rest, t.Owner)
}

// Get returns the owner's live task.
func (s *TaskStore) Get(ctx context.Context, id, owner string) (ports.Task, error) {
	code, rest, err := s.run(ctx, "reading a task", getTaskScript, s.args(id, owner))
	if err != nil {
		return ports.Task{}, err
	}
	return s.task("reading a task", code, rest, owner)
}

// Update applies u to the owner's live task, atomically.
func (s *TaskStore) Update(ctx context.Context, id, owner string, u ports.TaskUpdate) (ports.Task, error) {
	if err := u.Check(); err != nil {
		return ports.Task{}, fmt.Errorf("mcpredis: %w", err)
	}
	if err := s.checkSizes(u.StatusMessage, u.InputRequests, u.Result, u.Error, u.State); err != nil {
		return ports.Task{}, err
	}
	setState := "0"
	if u.State != nil {
		setState = "1"
	}
	code, rest, err := s.run(ctx, "updating a task", updateTaskScript, s.args(id, owner, string(u.Status), u.StatusMessage,
		string(u.InputRequests), string(u.Result), string(u.Error), "0", string(u.State), setState, max(u.IfVersion, 0)))
	if err != nil {
		return ports.Task{}, err
	}
	switch {
	case code == "transition" && len(rest) == 1:
		return ports.Task{}, fmt.Errorf("mcpredis: task %q: %w", id, &ports.TaskTransitionError{From: ports.TaskStatus(str(rest[0])), To: u.Status})
	case code == "conflict" && len(rest) == 1:
		return ports.Task{}, fmt.Errorf("mcpredis: task %q at version %s, not %d: %w", id, str(rest[0]), u.IfVersion, ports.ErrTaskConflict)
	}
	return s.task("updating a task", code, rest, owner)
}

// Cancel makes the owner's live task cancelled; a terminal one is returned
// as it is.
func (s *TaskStore) Cancel(ctx context.Context, id, owner, message string) (ports.Task, error) {
	if err := s.checkSizes(message); err != nil {
		return ports.Task{}, err
	}
	code, rest, err := s.run(ctx, "cancelling a task", updateTaskScript, s.args(id, owner, string(ports.TaskCancelled), message, "", "", "", "1", "", "0", 0))
	if err != nil {
		return ports.Task{}, err
	}
	return s.task("cancelling a task", code, rest, owner)
}

// List returns a page of the owner's live tasks, oldest first. The cursor
// is the creation number of the last task of the previous page.
func (s *TaskStore) List(ctx context.Context, owner, cursor string, limit int) ([]ports.Task, string, error) {
	after := "0"
	if cursor != "" {
		if _, err := strconv.ParseUint(cursor, 10, 64); err != nil {
			return nil, "", fmt.Errorf("mcpredis: %w", ports.ErrInvalidTaskCursor)
		}
		after = cursor
	}
	if limit <= 0 || limit > s.opts.MaxPage {
		limit = s.opts.MaxPage
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, err := runScript(ctx, s.c, listTasksScript, s.args(owner, after, limit)...).Slice()
	if err != nil {
		return nil, "", fmt.Errorf("mcpredis: listing tasks: %w", err)
	}
	if len(res) == 0 || (len(res)-1)%taskFields != 0 {
		return nil, "", fmt.Errorf("mcpredis: listing tasks: %d fields", len(res))
	}
	tasks := make([]ports.Task, 0, (len(res)-1)/taskFields)
	for i := 1; i < len(res); i += taskFields {
		tasks = append(tasks, decodeTask(res[i:i+taskFields], owner))
	}
	return tasks, str(res[0]), nil
}

// Delete drops the owner's task.
func (s *TaskStore) Delete(ctx context.Context, id, owner string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	if err := runScript(ctx, s.c, deleteTaskScript, s.args(id, owner)...).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("mcpredis: deleting a task: %w", err)
	}
	return nil
}
