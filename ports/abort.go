package ports

import "context"

// abortKey carries the hard-stop signals of WithAbort.
type abortKey struct{}

// WithAbort returns a copy of ctx carrying abort as a hard stop: a
// connection or session the engine serves with the returned context (or
// one derived from it) cancels its handlers' contexts when abort is done,
// while the engine's other connections go on. A transport uses it to
// cancel its own calls when its shutdown deadline passes. Signals
// accumulate: a context given to WithAbort twice is stopped by either.
func WithAbort(ctx, abort context.Context) context.Context {
	prev := Aborts(ctx)
	return context.WithValue(ctx, abortKey{}, append(prev[:len(prev):len(prev)], abort))
}

// Aborts returns the hard stops ctx carries (WithAbort), oldest first.
func Aborts(ctx context.Context) []context.Context {
	a, _ := ctx.Value(abortKey{}).([]context.Context)
	return a
}
