package hexmcp

// Ready-made middleware (the examples show how to write your own): [Audit] logs every
// request (log/slog), [RateLimit] bounds each client's request rate
// (golang.org/x/time/rate), [ToolTimeout] bounds how long a tool call may
// run and [ConfirmDestructive] (confirm.go) asks the user before a
// destructive tool runs. They go in [Options].Middleware and
// [Options].ToolMiddleware.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/hexmcp/hexmcp/domain"
)

// auditMessage is the message of Audit's records.
const auditMessage = "mcp request"

// Audit returns method middleware that writes one record to l for every
// request once it is answered, at level Info (Warn when it failed): the
// method, the request id, params.name or params.uri, the revision and era,
// the session, the client (authenticated subject, else the peer's
// address), how long it took, and the JSON-RPC error code and message of a
// failure. Notifications are logged at Debug. Arguments are never logged:
// they may hold what a user typed. The record's message is "mcp request":
// a record of the audit trail, in the logger given, not one of the SDK's
// own messages (which start with "hexmcp: ").
func Audit(l *slog.Logger) Middleware {
	if l == nil {
		l = slog.Default()
	}
	return func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *Request) (json.RawMessage, error) {
			start := time.Now()
			res, err := next(ctx, req)
			attrs := []slog.Attr{slog.String("method", req.Method)}
			if !req.IsNotification() {
				attrs = append(attrs, slog.String("id", string(req.ID)))
			}
			if req.Name != "" {
				attrs = append(attrs, slog.String("name", req.Name))
			}
			if req.URI != "" {
				attrs = append(attrs, slog.String("uri", req.URI))
			}
			if req.Revision != "" {
				attrs = append(attrs, slog.String("revision", string(req.Revision)))
			}
			if req.SessionID != "" {
				attrs = append(attrs, slog.String("session", req.SessionID))
			}
			if c := req.ClientKey(); c != "" {
				attrs = append(attrs, slog.String("client", c))
			}
			attrs = append(attrs, slog.Duration("duration", time.Since(start)))
			level := slog.LevelInfo
			if req.IsNotification() {
				level = slog.LevelDebug
			}
			if err != nil {
				level = slog.LevelWarn
				var pe *domain.ProtocolError
				if errors.As(err, &pe) {
					attrs = append(attrs, slog.Int("code", pe.Code), slog.String("error", pe.Message))
				} else {
					attrs = append(attrs, slog.Int("code", domain.CodeInternalError), slog.String("error", err.Error()))
				}
			}
			l.LogAttrs(ctx, level, auditMessage, attrs...)
			return res, err
		}
	}
}

// CodeRateLimited is the JSON-RPC error code of a request refused by
// [RateLimit]. Its data holds retryAfterMs, the time after which the
// client may try again.
const CodeRateLimited = -32051

// RateLimitOptions configure [RateLimit]. Zero fields take the defaults.
type RateLimitOptions struct {
	// Rate is the number of requests per second one client may send on
	// average (default 10).
	Rate rate.Limit
	// Burst is how many requests one client may send at once above the
	// rate (default 20).
	Burst int
	// Key names the client of a request (default [Request.ClientKey]:
	// the authenticated subject, else the peer's IP address; stdio's one
	// client has the empty key, which is limited too).
	Key func(*Request) string
	// MaxClients bounds the clients remembered at once (default 10,000):
	// past it, the clients idle longest are forgotten (and start afresh
	// with a full burst), so that the limiter's memory is bounded however
	// many addresses send requests.
	MaxClients int
	// Limiter, when set, keeps each client's allowance where every
	// instance of the server sees it (mcpredis.NewRateLimiter: on the
	// Redis the instances share), so that Rate and Burst hold per client
	// across the service; without it they hold per instance (three
	// instances behind a load balancer allow a client three times the
	// rate). A request the Limiter cannot decide (its store unreachable)
	// is decided by this instance's own buckets, as without a Limiter.
	Limiter RateLimiter
}

// RateLimiter decides, for [RateLimit], whether a client may make one more
// request now, with an allowance shared by every instance of the server.
type RateLimiter interface {
	// Allow takes one request from the allowance of the client key, which
	// is rate requests per second on average and burst at once (a
	// generic cell rate, as a token bucket of burst tokens refilled at
	// rate). It returns 0 when the request is allowed, else how long
	// until it would be; an error when it cannot tell.
	Allow(ctx context.Context, key string, rate float64, burst int) (retryAfter time.Duration, err error)
}

// RateLimit returns method middleware that gives each client a token
// bucket of opts.Rate requests per second, opts.Burst at once. A request
// over the limit is answered at once with the JSON-RPC error
// [CodeRateLimited] "Too many requests" (data: retryAfterMs); the
// connection and the session stay. Notifications are never limited: a
// notifications/cancelled must always get through. The buckets are this
// instance's, unless opts.Limiter shares them (see [RateLimitOptions]).
func RateLimit(opts RateLimitOptions) Middleware {
	if opts.Rate <= 0 {
		opts.Rate = 10
	}
	if opts.Burst <= 0 {
		opts.Burst = 20
	}
	if opts.Key == nil {
		opts.Key = (*Request).ClientKey
	}
	if opts.MaxClients <= 0 {
		opts.MaxClients = 10_000
	}
	l := &limiters{opts: opts, m: make(map[string]*clientLimiter)}
	return func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *Request) (json.RawMessage, error) {
			if req.IsNotification() {
				return next(ctx, req)
			}
			key := opts.Key(req)
			wait, ok := time.Duration(0), false
			if opts.Limiter != nil {
				var err error
				if wait, err = opts.Limiter.Allow(ctx, key, float64(opts.Rate), opts.Burst); err == nil {
					ok = wait <= 0
				} else {
					wait, ok = l.allow(key, time.Now())
				}
			} else {
				wait, ok = l.allow(key, time.Now())
			}
			if !ok {
				return nil, domain.NewProtocolError(CodeRateLimited, "Too many requests: retry later",
					map[string]any{"retryAfterMs": wait.Milliseconds()})
			}
			return next(ctx, req)
		}
	}
}

type clientLimiter struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

// limiters holds one token bucket per client, at most opts.MaxClients.
type limiters struct {
	opts RateLimitOptions
	mu   sync.Mutex
	m    map[string]*clientLimiter
}

// allow takes a token of key's bucket; when there is none it tells how
// long until there is.
func (l *limiters) allow(key string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.m[key]
	if c == nil {
		if len(l.m) >= l.opts.MaxClients {
			l.forgetIdle()
		}
		c = &clientLimiter{lim: rate.NewLimiter(l.opts.Rate, l.opts.Burst)}
		l.m[key] = c
	}
	c.lastSeen = now
	r := c.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// forgetIdle drops the idlest tenth of the clients (at least one), in one
// sort: it runs once per tenth of MaxClients new clients, so its cost per
// new client stays small however many arrive.
func (l *limiters) forgetIdle() {
	type entry struct {
		key  string
		seen time.Time
	}
	all := make([]entry, 0, len(l.m))
	for k, c := range l.m {
		all = append(all, entry{k, c.lastSeen})
	}
	slices.SortFunc(all, func(a, b entry) int { return a.seen.Compare(b.seen) })
	for _, e := range all[:max(len(all)/10, 1)] {
		delete(l.m, e.key)
	}
}

// ToolTimeout returns tool middleware that bounds each tool call: to
// perTool[name] when the map has the tool, else to d (0: no bound for tools
// not in the map). The handler's ctx carries the deadline; a handler still
// running when it passes is abandoned (its ctx is done; whatever it
// returns later is dropped) and the model reads the tool error "tool NAME
// timed out after D", so that a call never outlives its bound.
func ToolTimeout(d time.Duration, perTool map[string]time.Duration) ToolMiddleware {
	return func(next ToolHandler) ToolHandler {
		return func(ctx context.Context, call *ToolCall) (any, error) {
			limit := d
			if t, ok := perTool[call.Tool.Name]; ok {
				limit = t
			}
			if limit <= 0 {
				return next(ctx, call)
			}
			ctx, cancel := context.WithTimeout(ctx, limit)
			defer cancel()
			type outcome struct {
				v   any
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				var o outcome
				defer func() {
					if r := recover(); r != nil {
						o = outcome{err: fmt.Errorf("tool handler panicked: %v", r)}
					}
					done <- o
				}()
				o.v, o.err = next(ctx, call)
			}()
			select {
			case o := <-done:
				if errors.Is(o.err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return nil, timedOut(call.Tool.Name, limit)
				}
				return o.v, o.err
			case <-ctx.Done():
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return nil, timedOut(call.Tool.Name, limit)
				}
				return nil, ctx.Err() // the call itself was cancelled
			}
		}
	}
}

func timedOut(name string, d time.Duration) error {
	return NewToolError(fmt.Sprintf("tool %s timed out after %s", name, d))
}
