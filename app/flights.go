package app

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"
)

// Defaults of the bounds of the calls in flight on the stdio, WebSocket and
// HTTP+SSE connections of an engine, across connections
// ([Options.MaxInFlightBytesPerClient], [Options.MaxInFlightBytes]).
const (
	// defaultMaxInFlightBytesPerClient: 64 MiB of one client's calls,
	// four connections' worth (MaxInFlightBytesPerConn), however many
	// connections it opens.
	defaultMaxInFlightBytesPerClient = 64 << 20
	// defaultMaxInFlightBytes: 256 MiB of every client's calls.
	defaultMaxInFlightBytes = 256 << 20
)

// flightBook holds the budgets of the calls in flight that span
// connections: one per client, shared by its connections, and one for
// all of them. A connection's reader takes a call's bytes from its own
// budget, then its client's, then the total, waiting while one has no
// room (reading pauses: the client's writes back up), and a call gives
// them back as it ends, starts waiting for the client's answer, or starts
// a listen stream, as it gives back its connection's bytes.
type flightBook struct {
	perClient, total int64               // ≤ 0: no bound
	all              *semaphore.Weighted // nil: no bound

	mu      sync.Mutex
	clients map[string]*clientFlight
}

// clientFlight is one client's budget and the connections sharing it.
type clientFlight struct {
	sem   *semaphore.Weighted
	conns int
}

func newFlightBook(perClient, total int) *flightBook {
	b := &flightBook{perClient: int64(perClient), total: int64(total), clients: make(map[string]*clientFlight)}
	if b.total > 0 {
		b.all = semaphore.NewWeighted(b.total)
	}
	return b
}

// join returns client's budget for one more of its connections (nil: no
// bound per client); leave gives the connection's share of the account
// back once the connection has ended and holds nothing.
func (b *flightBook) join(client string) *clientFlight {
	if b.perClient <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cf := b.clients[client]
	if cf == nil {
		cf = &clientFlight{sem: semaphore.NewWeighted(b.perClient)}
		b.clients[client] = cf
	}
	cf.conns++
	return cf
}

func (b *flightBook) leave(client string, cf *clientFlight) {
	if cf == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cf.conns--; cf.conns == 0 && b.clients[client] == cf {
		delete(b.clients, client)
	}
}

// acquire takes w bytes from the client's budget cf and the total,
// waiting while either has no room; false when ctx ended first (nothing
// is then held).
func (b *flightBook) acquire(ctx context.Context, cf *clientFlight, w int64) bool {
	if cf != nil && cf.sem.Acquire(ctx, w) != nil {
		return false
	}
	if b.all != nil && b.all.Acquire(ctx, w) != nil {
		if cf != nil {
			cf.sem.Release(w)
		}
		return false
	}
	return true
}

// release gives w bytes back to cf and the total.
func (b *flightBook) release(cf *clientFlight, w int64) {
	if cf != nil {
		cf.sem.Release(w)
	}
	if b.all != nil {
		b.all.Release(w)
	}
}

// size is the most one call may hold: the smallest of the budgets (a call
// larger than it holds all of it, and waits until nothing else does).
func (b *flightBook) size(conn int64) int64 {
	w := conn
	for _, n := range []int64{b.perClient, b.total} {
		if n > 0 && (w <= 0 || n < w) {
			w = n
		}
	}
	return w
}
