package memstore

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

	"github.com/hexmcp/hexmcp/internal/portlimits"
	"github.com/hexmcp/hexmcp/ports"
)

// DefaultMaxEventBytes bounds the bytes of all the events an in-memory
// store keeps: 64 MiB. (Its other defaults are every event store's,
// [portlimits.DefaultMaxEventsPerStream] and those after it.)
const DefaultMaxEventBytes = 64 << 20

// EventStoreOptions configures [NewEventStore]. Zero (or negative) fields
// take their defaults: no field turns a bound off.
//
// The byte budgets count each kept event as len(data) +
// 128 bytes.
// When appending an event would pass a budget, the oldest events under
// that budget are dropped first (of the stream, of its group, or of the
// whole store); a replay from the id of a dropped event then fails with
// [ports.ErrEventNotFound]. An event larger than the smallest of the
// three budgets is not kept at all: it gets its id (from which a replay
// resumes, with the events after it), but its stream's earlier events are
// dropped with it, since a replay from them would have to skip it.
type EventStoreOptions struct {
	// MaxEventsPerStream is how many of its latest events a stream keeps.
	// Default 1,000.
	MaxEventsPerStream int
	// MaxStreams bounds the number of streams kept; a new stream beyond it
	// evicts the least recently appended one. Default 10,000.
	MaxStreams int
	// MaxBytes bounds the bytes of all the events kept. Default 64 MiB
	// ([DefaultMaxEventBytes]).
	MaxBytes int64
	// MaxBytesPerGroup bounds the bytes of the events of the streams of one
	// group (the stream id up to its first '/'; for
	// the Streamable HTTP transport, one session). Default 16 MiB.
	MaxBytesPerGroup int64
	// MaxBytesPerStream bounds the bytes of the events of one stream.
	// Default 8 MiB.
	MaxBytesPerStream int64
	// TTL is how long an event is kept; a stream without an event appended
	// for that long is dropped. Default 10 minutes.
	TTL time.Duration
	// Clock tells the time. Default ports.SystemClock{}.
	Clock ports.Clock
}

// EventStore is a [ports.EventStore] kept in memory, for a server that runs
// as a single instance. It is safe for concurrent use, bounded in events,
// streams and bytes (see [EventStoreOptions]) and starts no goroutine:
// expired events and streams are dropped lazily, by every call.
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
	maxEvents      int
	maxStreams     int
	maxBytes       int64
	maxGroupBytes  int64
	maxStreamBytes int64
	ttl            time.Duration
	clock          ports.Clock
	epoch          string

	mu      sync.Mutex
	byName  map[string]*eventStream
	byKey   map[uint64]*eventStream
	groups  map[string]*eventGroup
	lru     list.List // of *eventStream, least recently appended first
	all     eventList // every kept event, oldest first
	bytes   int64     // of every kept event
	nextKey uint64
}

var _ ports.EventStore = (*EventStore)(nil)

// eventStream is one stream's kept events. The events are numbered from 1;
// events holds numbers last-len(events)+1 .. last: always the latest ones,
// so that a replay never skips an event.
type eventStream struct {
	name   string
	key    uint64
	group  *eventGroup
	elem   *list.Element
	last   uint64
	lastAt time.Time // when event number last was appended
	events []*storedEvent
	bytes  int64
}

// eventGroup is the streams of one group ([portlimits.StreamGroup]).
type eventGroup struct {
	name    string
	streams int
	events  eventList // its streams' kept events, oldest first
	bytes   int64
}

// storedEvent is one kept event, on two lists: the store's and its group's.
type storedEvent struct {
	at       time.Time
	data     []byte
	st       *eventStream
	all, grp eventLinks
}

// size is what the event counts against the byte budgets.
func (e *storedEvent) size() int64 { return int64(len(e.data)) + portlimits.EventOverhead }

type eventLinks struct{ prev, next *storedEvent }

// eventList is a doubly linked list of events through one of their
// eventLinks (the store's or the group's).
type eventList struct {
	head, tail *storedEvent
	links      func(*storedEvent) *eventLinks
}

func allLinks(e *storedEvent) *eventLinks   { return &e.all }
func groupLinks(e *storedEvent) *eventLinks { return &e.grp }

func (l *eventList) pushBack(e *storedEvent) {
	el := l.links(e)
	el.prev, el.next = l.tail, nil
	if l.tail != nil {
		l.links(l.tail).next = e
	} else {
		l.head = e
	}
	l.tail = e
}

func (l *eventList) remove(e *storedEvent) {
	el := l.links(e)
	if el.prev != nil {
		l.links(el.prev).next = el.next
	} else {
		l.head = el.next
	}
	if el.next != nil {
		l.links(el.next).prev = el.prev
	} else {
		l.tail = el.prev
	}
	el.prev, el.next = nil, nil
}

// first returns the number of the oldest kept event (last+1 when none is).
func (st *eventStream) first() uint64 { return st.last + 1 - uint64(len(st.events)) }

// NewEventStore returns an empty store.
func NewEventStore(opts EventStoreOptions) *EventStore {
	s := &EventStore{
		maxEvents:      portlimits.Positive(opts.MaxEventsPerStream, portlimits.DefaultMaxEventsPerStream),
		maxStreams:     portlimits.Positive(opts.MaxStreams, portlimits.DefaultMaxEventStreams),
		maxBytes:       portlimits.Positive(opts.MaxBytes, DefaultMaxEventBytes),
		maxGroupBytes:  portlimits.Positive(opts.MaxBytesPerGroup, portlimits.DefaultMaxEventBytesPerGroup),
		maxStreamBytes: portlimits.Positive(opts.MaxBytesPerStream, portlimits.DefaultMaxEventBytesPerStream),
		ttl:            portlimits.Positive(opts.TTL, portlimits.DefaultEventTTL),
		clock:          opts.Clock,
		byName:         make(map[string]*eventStream),
		byKey:          make(map[uint64]*eventStream),
		groups:         make(map[string]*eventGroup),
		all:            eventList{links: allLinks},
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
// recently appended one; the byte budgets drop the oldest events they bound
// (see [EventStoreOptions]). An event too large for the budgets is not kept
// but still gets its id.
func (s *EventStore) Append(_ context.Context, streamID string, data []byte) (string, error) {
	now := s.clock.Now()
	size := int64(len(data)) + portlimits.EventOverhead
	keep := size <= min(s.maxStreamBytes, s.maxGroupBytes, s.maxBytes)
	var ev *storedEvent
	if keep {
		ev = &storedEvent{at: now, data: slices.Clone(data)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(now)
	st := s.byName[streamID]
	if st == nil {
		for len(s.byName) >= s.maxStreams {
			s.removeStream(s.lru.Front().Value.(*eventStream))
		}
		st = s.newStream(streamID)
	} else {
		s.lru.MoveToBack(st.elem)
	}
	st.last++
	st.lastAt = now
	id := s.id(st.key, st.last)
	if !keep {
		// A replay from an earlier event would have to skip this one:
		// those ids must fail, so the earlier events go too.
		s.dropFront(st, len(st.events))
		return id, nil
	}
	if len(st.events) >= s.maxEvents {
		s.dropFront(st, len(st.events)-s.maxEvents+1)
	}
	for st.bytes+size > s.maxStreamBytes {
		s.dropFront(st, 1)
	}
	g := st.group
	for g.bytes+size > s.maxGroupBytes {
		s.dropOldest(g.events.head)
	}
	for s.bytes+size > s.maxBytes {
		s.dropOldest(s.all.head)
	}
	ev.st = st
	st.events = append(st.events, ev)
	s.all.pushBack(ev)
	g.events.pushBack(ev)
	st.bytes += size
	g.bytes += size
	s.bytes += size
	return id, nil
}

// Replay calls fn, in order, for every kept event of the stream of
// lastEventID that came after it, and returns that stream's id. See
// [EventStore] for the ids it refuses. fn is called without the store's lock
// held, so it may be slow (a network write); it must not modify Event.Data.
// An error from fn, or ctx's cancellation, stops the replay and is returned.
func (s *EventStore) Replay(ctx context.Context, lastEventID string, fn func(ports.Event) error) (string, error) {
	key, seq, ok := s.parse(lastEventID)
	if !ok {
		return "", fmt.Errorf("hexmcp: memory event store: event id %q: %w", lastEventID, ports.ErrEventNotFound)
	}
	now := s.clock.Now()
	s.mu.Lock()
	s.purge(now)
	st := s.byKey[key]
	// seq+1 is the first event to send; it must still be kept (or not yet
	// appended) for nothing to be lost.
	if st == nil || seq > st.last || seq+1 < st.first() {
		s.mu.Unlock()
		return "", fmt.Errorf("hexmcp: memory event store: event id %q: %w", lastEventID, ports.ErrEventNotFound)
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

// DeleteStream drops a stream and its events, for when its session ends,
// and releases their bytes. Later Replays of its ids fail; a later Append
// to the same streamID starts a new stream. Deleting an unknown stream does
// nothing.
func (s *EventStore) DeleteStream(_ context.Context, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.byName[streamID]; st != nil {
		s.removeStream(st)
	}
	return nil
}

// Len returns the number of streams kept (it drops the expired ones).
func (s *EventStore) Len() int {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(now)
	return len(s.byName)
}

// Bytes returns what the kept events count against MaxBytes: the length of
// their data plus 128 bytes each (it drops the expired ones first).
func (s *EventStore) Bytes() int64 {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(now)
	return s.bytes
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

// purge drops the expired events, oldest first, and the streams whose
// latest append has expired, least recently appended first. s.mu is held.
func (s *EventStore) purge(now time.Time) {
	for e := s.all.head; e != nil && s.expired(e.at, now); e = s.all.head {
		s.dropOldest(e)
	}
	for e := s.lru.Front(); e != nil; e = s.lru.Front() {
		st := e.Value.(*eventStream)
		if !s.expired(st.lastAt, now) {
			return
		}
		s.removeStream(st)
	}
}

// newStream starts a stream named name. s.mu is held.
func (s *EventStore) newStream(name string) *eventStream {
	s.nextKey++
	st := &eventStream{name: name, key: s.nextKey}
	st.elem = s.lru.PushBack(st)
	s.byName[name] = st
	s.byKey[st.key] = st
	gname := portlimits.StreamGroup(name)
	g := s.groups[gname]
	if g == nil {
		g = &eventGroup{name: gname, events: eventList{links: groupLinks}}
		s.groups[gname] = g
	}
	g.streams++
	st.group = g
	return st
}

// dropOldest drops e, the oldest event of a list (the store's or a
// group's). Lists and streams hold events in the order they were appended,
// so e is the oldest of its stream too. s.mu is held.
func (s *EventStore) dropOldest(e *storedEvent) { s.dropFront(e.st, 1) }

// dropFront drops the n oldest events of st. s.mu is held.
func (s *EventStore) dropFront(st *eventStream, n int) {
	for _, e := range st.events[:n] {
		size := e.size()
		s.all.remove(e)
		st.group.events.remove(e)
		st.bytes -= size
		st.group.bytes -= size
		s.bytes -= size
		e.st = nil
	}
	clear(st.events[:n]) // let the data go
	st.events = st.events[n:]
	if len(st.events) == 0 {
		st.events = nil // and the array that held them
	}
}

// removeStream drops st and its events. s.mu is held.
func (s *EventStore) removeStream(st *eventStream) {
	s.dropFront(st, len(st.events))
	delete(s.byName, st.name)
	delete(s.byKey, st.key)
	s.lru.Remove(st.elem)
	if g := st.group; g != nil {
		if g.streams--; g.streams == 0 {
			delete(s.groups, g.name)
		}
	}
}
