package mcpredis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// within runs fn with ctx and returns what it returns, or, once ctx is
// done first, an error wrapping ctx's error (context.DeadlineExceeded at
// a part's Timeout): every part bounds its Redis calls with it, so that
// the Timeout holds whatever the client's options. go-redis applies a
// context's deadline to the reads and writes of a command only when the
// client's ContextTimeoutEnabled is set; otherwise its own ReadTimeout
// and WriteTimeout (3 s by default, or none at all) bound a call to a
// Redis that hangs. With ContextTimeoutEnabled (or a ctx without
// deadline), fn runs in the caller's goroutine; otherwise in one of its
// own, which goes on after a timeout until go-redis gives up by itself
// (its result is then dropped): fn must own what it touches, and a call's
// arguments must not be modified by the caller once it returned. Those
// goroutines are bounded by the client's pool: a command waiting for a
// connection gives up at ctx's deadline (go-redis honours it there), so
// only those holding a connection (PoolSize per Redis node) may linger.
func within[T any](ctx context.Context, c redis.UniversalClient, fn func(context.Context) (T, error)) (T, error) {
	if ctx.Done() == nil || enforcesDeadlines(c) {
		v, err := fn(ctx)
		failed(c, err)
		return v, late(ctx, err)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		failed(c, r.err)
		return r.v, late(ctx, r.err)
	case <-ctx.Done():
		failed(c, ctx.Err())
		var zero T
		return zero, fmt.Errorf("no answer from Redis in time: %w", ctx.Err())
	}
}

// failed has a cluster client reload the cluster's layout (in the
// background, at most one reload at a time) after a call failed other
// than by an answer of Redis's: a master that died leaves go-redis
// dialling it, until a MOVED or its periodic reload
// (ClusterStateReloadInterval, a minute by default) tells it the replica
// that replaced it.
func failed(c redis.UniversalClient, err error) {
	if err == nil || errors.Is(err, redis.Nil) {
		return
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		var reply redis.Error
		if errors.As(err, &reply) && !strings.HasPrefix(reply.Error(), "CLUSTERDOWN") && !strings.HasPrefix(reply.Error(), "TRYAGAIN") {
			return // an answer: the node is there
		}
		cc.ReloadState(context.Background())
	}
}

// late makes the error of a call that failed because ctx's deadline
// passed wrap context.DeadlineExceeded (go-redis reports a deadline it
// enforced on the connection as a network timeout, at the very moment
// ctx's own timer fires), and that of a call ctx cancelled wrap
// context.Canceled, so that a caller tells them by errors.Is whatever the
// client's options.
func late(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	cause := ctx.Err()
	if cause == nil {
		var ne net.Error
		if d, ok := ctx.Deadline(); ok && errors.As(err, &ne) && ne.Timeout() && !time.Now().Before(d) {
			cause = context.DeadlineExceeded
		}
	}
	if cause == nil || errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("no answer from Redis in time: %w (%w)", cause, err)
}

// runScript is sc.Run(ctx, c, []string{kp}, args...) within ctx (see
// within): the command it returns holds the script's reply, or the error
// of a call that ctx ended first. kp, the part's key prefix (see
// keyPrefix), is the one key the script names: on a cluster it sends the
// script to the node of the part's slot, where every key the script
// computes is.
func runScript(ctx context.Context, c redis.UniversalClient, sc *redis.Script, kp string, args ...any) *redis.Cmd {
	return runScriptKeys(ctx, c, sc, []string{kp}, args...)
}

// runScriptKeys runs a script that names its keys (see runScript).
func runScriptKeys(ctx context.Context, c redis.UniversalClient, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	cmd, err := within(ctx, c, func(ctx context.Context) (*redis.Cmd, error) {
		cmd := sc.Run(ctx, c, keys, args...)
		return cmd, cmd.Err()
	})
	if err != nil {
		cmd = redis.NewCmd(ctx)
		cmd.SetErr(err)
	}
	return cmd
}

// enforcesDeadlines reports whether the client applies a context's
// deadline to its commands itself (ContextTimeoutEnabled).
func enforcesDeadlines(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case interface{ Options() *redis.Options }:
		return c.Options().ContextTimeoutEnabled
	case interface{ Options() *redis.ClusterOptions }:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}
