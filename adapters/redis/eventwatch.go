package mcpredis

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// watchPollInterval is how often a watcher past MaxWatchers is woken (see
// [EventStore.Watch]), and how often subscriptions that Redis refused are
// tried again.
const watchPollInterval = time.Second

// Watch returns a channel that gets a value (it holds one; later ones
// merge) whenever an event is appended to streamID, through any instance
// on the same Redis and Prefix, after Watch returned; stop releases it
// ([ports.EventWatcher]). It never blocks on Redis.
//
// Every append publishes on the Pub/Sub channel "<Prefix>ev:<streamID>"
// in the round trip that stores it; a store value keeps one Pub/Sub
// connection for all its watchers, subscribed to the channels of the
// streams watched (once each, however many watchers). A watcher also
// wakes when its channel's subscription is confirmed, just after Watch
// (an event appended before the subscription took effect is then seen by
// the caller's replay), again whenever the connection is re-established
// after Redis was unreachable (events may have been missed), and when the
// stream is deleted: the caller replays to see.
//
// Past MaxWatchers watchers at once, Watch returns a channel woken every
// watchPollInterval instead (the caller polls), so that a flood of
// watchers costs this instance one timer, not Redis subscriptions. After
// Close, Watch returns a channel that is never woken.
func (s *EventStore) Watch(streamID string) (wake <-chan struct{}, stop func()) {
	return s.watch.add(s.watch.prefix + streamID)
}

// Close stops the Pub/Sub connection of the store's watchers and its
// goroutine (watchers are not woken any more); the store's other methods
// keep working. Close is idempotent and returns nil.
func (s *EventStore) Close() error {
	s.watch.close()
	return nil
}

// watchHub fans the messages of one Pub/Sub connection out to watchers. Its
// goroutine starts with the first watcher.
type watchHub struct {
	c       redis.UniversalClient
	prefix  string // of the channels
	max     int
	timeout time.Duration

	mu       sync.Mutex
	closed   bool
	ps       *redis.PubSub
	done     chan struct{} // closed when run returns
	kick     chan struct{} // pending has news
	byChan   map[string]map[*watcher]struct{}
	overflow map[*watcher]struct{}
	pending  map[string]struct{} // channels whose subscription may have to change
	n        int                 // watchers in byChan
}

type watcher struct{ ch chan struct{} }

func (w *watcher) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

func (h *watchHub) init(c redis.UniversalClient, prefix string, max int, timeout time.Duration) {
	h.c, h.prefix, h.max, h.timeout = c, prefix, max, timeout
	h.byChan = make(map[string]map[*watcher]struct{})
	h.overflow = make(map[*watcher]struct{})
	h.pending = make(map[string]struct{})
	h.kick = make(chan struct{}, 1)
}

func (h *watchHub) add(channel string) (<-chan struct{}, func()) {
	w := &watcher{ch: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return w.ch, func() {}
	}
	if h.ps == nil {
		// No I/O here: the connection is made by go-redis's receiving
		// goroutine, and subscriptions by ours.
		h.ps = newPubSub(h.c, h.prefix)
		h.done = make(chan struct{})
		go h.run(h.ps.ChannelWithSubscriptions())
		followLayout(h.c, h.done)
	}
	if h.n >= h.max {
		h.overflow[w] = struct{}{}
		return w.ch, sync.OnceFunc(func() {
			h.mu.Lock()
			delete(h.overflow, w)
			h.mu.Unlock()
		})
	}
	set := h.byChan[channel]
	if set == nil {
		set = make(map[*watcher]struct{})
		h.byChan[channel] = set
		h.changed(channel)
	}
	set[w] = struct{}{}
	h.n++
	return w.ch, sync.OnceFunc(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := set[w]; !ok {
			return
		}
		delete(set, w)
		h.n--
		if len(set) == 0 && h.byChan[channel] != nil {
			delete(h.byChan, channel)
			h.changed(channel)
		}
	})
}

// changed notes that channel's subscription may have to change. h.mu is
// held.
func (h *watchHub) changed(channel string) {
	h.pending[channel] = struct{}{}
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// wakeChannel wakes the watchers of channel.
func (h *watchHub) wakeChannel(channel string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.byChan[channel] {
		w.wake()
	}
}

func (h *watchHub) wakeOverflow() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.overflow {
		w.wake()
	}
}

// run delivers the messages of the Pub/Sub connection and keeps its
// subscriptions in line with the watched channels, until the connection
// is closed.
func (h *watchHub) run(msgs <-chan any) {
	defer close(h.done)
	subscribed := make(map[string]bool)
	retry := make(map[string]struct{}) // channels whose subscription failed
	tick := time.NewTicker(watchPollInterval)
	defer tick.Stop()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return
			}
			switch m := m.(type) {
			case *redis.Message:
				h.wakeChannel(m.Channel)
			case *redis.Subscription:
				// Also sent when go-redis re-subscribes on a new
				// connection: what was published meanwhile was lost.
				if m.Kind == confirmKind(h.c) {
					h.wakeChannel(m.Channel)
				}
			}
		case <-h.kick:
			h.sync(subscribed, retry, nil)
		case <-tick.C:
			h.wakeOverflow()
			if len(retry) > 0 {
				h.sync(subscribed, retry, retry)
			}
		}
	}
}

// sync subscribes to the pending channels that have watchers and
// unsubscribes from those that have none any more; again marks channels
// to subscribe to even if they were (a subscription that failed). A
// failed subscription is noted in retry. Run's goroutine only.
func (h *watchHub) sync(subscribed map[string]bool, retry, again map[string]struct{}) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	var sub, unsub []string
	for ch := range h.pending {
		want := h.byChan[ch] != nil
		switch {
		case want && !subscribed[ch]:
			sub = append(sub, ch)
		case !want && subscribed[ch]:
			unsub = append(unsub, ch)
		}
	}
	clear(h.pending)
	for ch := range again {
		if h.byChan[ch] != nil && !slices.Contains(sub, ch) {
			sub = append(sub, ch)
		}
		delete(again, ch)
	}
	ps := h.ps
	h.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	if len(unsub) > 0 {
		// go-redis forgets them even when the command fails; a channel
		// left subscribed only brings messages nobody waits for.
		_ = unsubscribe(ctx, h.c, ps, unsub...)
		for _, ch := range unsub {
			delete(subscribed, ch)
			delete(retry, ch)
		}
	}
	if len(sub) > 0 {
		// go-redis remembers them even when the command fails, and
		// subscribes on every new connection; a failure on the current
		// one is retried, since a reconnection during the command would
		// not know of them yet.
		err := subscribe(ctx, h.c, ps, sub...)
		for _, ch := range sub {
			subscribed[ch] = true
			if err != nil {
				retry[ch] = struct{}{}
			} else {
				delete(retry, ch)
			}
		}
	}
}

func (h *watchHub) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	ps, done := h.ps, h.done
	h.mu.Unlock()
	if ps != nil {
		_ = ps.Close()
		<-done
	}
}
