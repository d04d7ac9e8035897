package memory

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hexmcp/hexmcp/ports"
)

// Defaults of [EventStoreOptions].
const (
	DefaultMaxEventsPerStream = 1_000
	DefaultMaxStreams         = 10_000
	DefaultEventTTL           = 10 * time.Minute
)

// EventStoreOptions configures [NewEventStore]. Zero fields take their
// defaults.
type EventStoreOptions struct {
	// MaxEventsPerStream is how many of its latest events a stream keeps.
	// Default 1,000.
	MaxEventsPerStream int
	// MaxStreams bounds the number of streams kept; a new stream beyond it
	// evicts the least recently appended one. Default 10,000.
	MaxStreams int
	// TTL is how long an event is kept; a stream whose events have all
	// expired is dropped. Default 10 minutes.
	TTL time.Duration
	// Clock tells the time. Default ports.SystemClock{}.
	Clock ports.Clock
}

// EventStore is a [ports.EventStore] kept in memory, for a server that runs
// as a single instance. It is safe for concurrent use, bounded (see
// [EventStoreOptions]) and starts no goroutine: expired events and streams
// are dropped lazily, by Append and Replay.
//
// Event ids are opaque strings made of the SSE-safe characters
// [A-Za-z0-9._-]. Each names its store instance (a random epoch), its stream
// (a number the store gives to each stream it starts, never reused, so an
// id of a deleted or evicted stream never finds a new stream of the same
// name) and its place in the stream. Ids of another store instance, for
// example one from before a restart, are unknown.
//
// Replay refuses, with an error wrapping [ports.ErrEventNotFound], an id it
// cannot resume from without losing events: one it did not make, one of a
// stream that was deleted, evicted or expired, and one older than the event
// just before the oldest its stream still keeps.
//
// Use [NewEventStore]; the zero value is not ready to use.
type EventStore struct {
	maxEvents  int
	maxStreams int
	ttl        time.Duration
	clock      ports.Clock
	epoch      string

	mu      sync.Mutex
	byName  map[string]*eventStream
	byKey   map[uint64]*eventStream
	lru     list.List // of *eventStream, least recently appended first
	nextKey uint64
}

var _ ports.EventStore = (*EventStore)(nil)

// eventStream is one stream's kept events. The events are numbered from 1;
// events holds numbers last-len(events)+1 .. last.
type eventStream struct {
	name   string
	key    uint64
	elem   *list.Element
	last   uint64
	events []storedEvent
}

type storedEvent struct {
	at   time.Time
	data []byte
}

// first returns the number of the oldest kept event (last+1 when none is).
func (st *eventStream) first() uint64 { return st.last + 1 - uint64(len(st.events)) }

// lastAppend returns when the latest kept event was appended (the zero time
// when none is kept).
func (st *eventStream) lastAppend() time.Time {
	if len(st.events) == 0 {
		return time.Time{}
	}
	return st.events[len(st.events)-1].at
}

// dropFront drops the n oldest events.
func (st *eventStream) dropFront(n int) {
	clear(st.events[:n]) // let the data go
	st.events = st.events[n:]
}

// NewEventStore returns an empty store.
func NewEventStore(opts EventStoreOptions) *EventStore {
	s := &EventStore{
		maxEvents:  opts.MaxEventsPerStream,
		maxStreams: opts.MaxStreams,
		ttl:        opts.TTL,
		clock:      opts.Clock,
		byName:     make(map[string]*eventStream),
		byKey:      make(map[uint64]*eventStream),
	}
	if s.maxEvents <= 0 {
		s.maxEvents = DefaultMaxEventsPerStream
	}
	if s.maxStreams <= 0 {
		s.maxStreams = DefaultMaxStreams
	}
	if s.ttl <= 0 {
		s.ttl = DefaultEventTTL
	}
	if s.clock == nil {
		s.clock = ports.SystemClock{}
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
	s.epoch = base64.RawURLEncoding.EncodeToString(b[:])
	return s
}

// Append stores a copy of data as the next event of streamID and returns its
// id. Starting a new stream when MaxStreams are kept evicts the least
// recently appended one.
func (s *EventStore) Append(_ context.Context, streamID string, data []byte) (string, error) {
	now := s.clock.Now()
	ev := storedEvent{at: now, data: slices.Clone(data)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purgeStreams(now)
	st := s.byName[streamID]
	if st == nil {
		for len(s.byName) >= s.maxStreams {
			s.remove(s.lru.Front().Value.(*eventStream))
		}
		s.nextKey++
		st = &eventStream{name: streamID, key: s.nextKey}
		st.elem = s.lru.PushBack(st)
		s.byName[streamID] = st
		s.byKey[st.key] = st
	} else {
		s.dropExpired(st, now)
		s.lru.MoveToBack(st.elem)
	}
	if len(st.events) >= s.maxEvents {
		st.dropFront(len(st.events) - s.maxEvents + 1)
	}
	st.events = append(st.events, ev)
	st.last++
	return s.id(st.key, st.last), nil
}

// Replay calls fn, in order, for every kept event of the stream of
// lastEventID that came after it, and returns that stream's id. See
// [EventStore] for the ids it refuses. fn is called without the store's lock
// held, so it may be slow (a network write); it must not modify Event.Data.
// An error from fn, or ctx's cancellation, stops the replay and is returned.
func (s *EventStore) Replay(ctx context.Context, lastEventID string, fn func(ports.Event) error) (string, error) {
	key, seq, ok := s.parse(lastEventID)
	if !ok {
		return "", fmt.Errorf("event id %q: %w", lastEventID, ports.ErrEventNotFound)
	}
	now := s.clock.Now()
	s.mu.Lock()
	s.purgeStreams(now)
	st := s.byKey[key]
	if st != nil {
		s.dropExpired(st, now)
	}
	// seq+1 is the first event to send; it must still be kept (or not yet
	// appended) for nothing to be lost.
	if st == nil || seq > st.last || seq+1 < st.first() {
		s.mu.Unlock()
		return "", fmt.Errorf("event id %q: %w", lastEventID, ports.ErrEventNotFound)
	}
	name := st.name
	from := int(seq + 1 - st.first())
	out := make([]ports.Event, 0, len(st.events)-from)
	for i, ev := range st.events[from:] {
		out = append(out, ports.Event{ID: s.id(key, seq+1+uint64(i)), StreamID: name, Data: ev.data})
	}
	s.mu.Unlock()

	for _, ev := range out {
		if err := ctx.Err(); err != nil {
			return name, err
		}
		if err := fn(ev); err != nil {
			return name, err
		}
	}
	return name, nil
}

// DeleteStream drops a stream and its events, for when its session ends.
// Later Replays of its ids fail; a later Append to the same streamID starts
// a new stream. Deleting an unknown stream does nothing.
func (s *EventStore) DeleteStream(_ context.Context, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.byName[streamID]; st != nil {
		s.remove(st)
	}
	return nil
}

// Len returns the number of streams kept (it drops the expired ones).
func (s *EventStore) Len() int {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purgeStreams(now)
	return len(s.byName)
}

// id formats an event id: epoch.key.seq.
func (s *EventStore) id(key, seq uint64) string {
	return s.epoch + "." + strconv.FormatUint(key, 10) + "." + strconv.FormatUint(seq, 10)
}

// parse reads an id made by s.id.
func (s *EventStore) parse(id string) (key, seq uint64, ok bool) {
	rest, found := strings.CutPrefix(id, s.epoch+".")
	if !found {
		return 0, 0, false
	}
	k, q, found := strings.Cut(rest, ".")
	if !found {
		return 0, 0, false
	}
	key, err := strconv.ParseUint(k, 10, 64)
	if err != nil || key == 0 {
		return 0, 0, false
	}
	seq, err = strconv.ParseUint(q, 10, 64)
	if err != nil || seq == 0 {
		return 0, 0, false
	}
	return key, seq, true
}

func (s *EventStore) expired(at, now time.Time) bool { return now.Sub(at) > s.ttl }

// purgeStreams drops the streams whose latest event has expired, from the
// front of the list. s.mu is held.
func (s *EventStore) purgeStreams(now time.Time) {
	for e := s.lru.Front(); e != nil; e = s.lru.Front() {
		st := e.Value.(*eventStream)
		if !s.expired(st.lastAppend(), now) {
			return
		}
		s.remove(st)
	}
}

// dropExpired drops st's expired events. s.mu is held.
func (s *EventStore) dropExpired(st *eventStream, now time.Time) {
	n := 0
	for n < len(st.events) && s.expired(st.events[n].at, now) {
		n++
	}
	if n > 0 {
		st.dropFront(n)
	}
}

func (s *EventStore) remove(st *eventStream) {
	delete(s.byName, st.name)
	delete(s.byKey, st.key)
	s.lru.Remove(st.elem)
}
