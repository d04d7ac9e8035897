package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hexmcp/hexmcp/domain"
)

// Subscriptions are the notifications a subscriptions/listen asks for (and
// those the server agreed to send).
type Subscriptions struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs are tasks of the tasks extension whose changes of status
	// reach [Options.TaskStatus] (notifications/tasks; [Options.Tasks]
	// must declare the extension).
	TaskIDs []string `json:"taskIds,omitempty"`
}

// Subscription is an open subscriptions/listen stream (2026-07-28): the
// server's notifications on it reach the callbacks of [Options]
// (ToolListChanged, PromptListChanged, ResourceListChanged,
// ResourceUpdated). Close it when done.
type Subscription struct {
	// Acknowledged is what the server agreed to send: a part of what was
	// asked.
	Acknowledged Subscriptions
	cancel       context.CancelFunc
	done         chan struct{}
	err          error
	once         sync.Once
}

// Subscribe opens a subscriptions/listen stream for the notifications of
// sub and returns once the server has acknowledged it, so that no change
// after Subscribe returns is missed. The stream lasts until ctx ends,
// Close is called, the server ends it, or the session ends. It needs the
// stateless era: in the handshake era the server sends its notifications
// on the session (over HTTP, on its GET stream), and
// [Session.SubscribeResource] asks for a resource's updates.
func (s *Session) Subscribe(ctx context.Context, sub Subscriptions) (*Subscription, error) {
	if s.Features().Era != domain.EraStateless {
		return nil, fmt.Errorf("hexmcp: subscriptions/listen needs the stateless era; this session speaks %s", s.Revision())
	}
	_, _, base := s.eraRev()
	params := map[string]any{"_meta": base, "notifications": sub}
	id := s.newID()
	ack := make(chan Subscriptions, 1)
	s.mu.Lock()
	s.acks[id] = ack
	s.mu.Unlock()
	lctx, cancel := context.WithCancel(ctx)
	sn := &Subscription{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(sn.done)
		_, err := s.roundTripID(lctx, id, "subscriptions/listen", params)
		if errors.Is(err, context.Canceled) && lctx.Err() != nil && ctx.Err() == nil {
			err = nil // Close
		}
		sn.err = err
	}()
	defer func() {
		s.mu.Lock()
		delete(s.acks, id)
		s.mu.Unlock()
	}()
	select {
	case got := <-ack:
		sn.Acknowledged = got
		return sn, nil
	case <-sn.done:
		cancel()
		if sn.err == nil {
			sn.err = errors.New("hexmcp: the server ended subscriptions/listen before acknowledging it")
		}
		return nil, sn.err
	case <-ctx.Done():
		cancel()
		<-sn.done
		return nil, fmt.Errorf("hexmcp: subscriptions/listen: %w", context.Cause(ctx))
	}
}

// Close ends the subscription (closing its HTTP stream, or with
// notifications/cancelled) and waits for it to end.
func (sn *Subscription) Close() error {
	sn.once.Do(sn.cancel)
	<-sn.done
	return nil
}

// Wait returns when the subscription has ended: nil when Close ended it
// or the server ended it gracefully, else why.
func (sn *Subscription) Wait() error {
	<-sn.done
	return sn.err
}
