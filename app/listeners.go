package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/ports"
)

// listeners holds the open subscriptions/listen streams (2026-07-28) of
// every transport: it serves a listen request within the limits on open
// streams (Options.MaxListeners, MaxListenersPerClient) and queues for
// each stream the notifications it asked for (list changes, resource
// updates, the extensions' topics), never waiting for one.
type listeners struct {
	mu       sync.Mutex
	open     map[*listener]struct{}
	byClient map[listenClient]int // open streams of each client

	max              int           // Options.MaxListeners
	maxPerClient     int           // Options.MaxListenersPerClient
	maxSubscriptions int           // Options.MaxListenSubscriptions
	maxURILength     int           // Options.MaxURILength
	idle             time.Duration // Options.ListenIdleTimeout
	// topics are the extensions' listen topics (Extension.Listen), by name.
	topics map[string]ListenTopic
	log    ports.Logger

	vis       *viewFilter
	resources *resourceCatalog
	prompts   *promptCatalog
	res       *results
}

// add registers l, unless a cap on open streams is reached.
func (ls *listeners) add(id jsontext.Value, l *listener) *rpcError {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if max := ls.max; max >= 0 && len(ls.open) >= max {
		return newRPCError(id, CodeListenLimit,
			"Too many listen streams: the server has "+strconv.Itoa(max)+" open, its limit; listen again later",
			map[string]any{"limit": "maxListeners", "max": max})
	}
	if max := ls.maxPerClient; max >= 0 && ls.byClient[l.client] >= max {
		return newRPCError(id, CodeListenLimit,
			"Too many listen streams: this client has "+strconv.Itoa(max)+" open, the limit per client; end one before listening again",
			map[string]any{"limit": "maxListenersPerClient", "max": max})
	}
	if ls.open == nil {
		ls.open = make(map[*listener]struct{})
		ls.byClient = make(map[listenClient]int)
	}
	ls.open[l] = struct{}{}
	ls.byClient[l.client]++
	return nil
}

// remove unregisters l.
func (ls *listeners) remove(l *listener) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.open, l)
	if n := ls.byClient[l.client] - 1; n > 0 {
		ls.byClient[l.client] = n
	} else {
		delete(ls.byClient, l.client)
	}
}

// forKind returns the open listen streams that asked for kind.
func (ls *listeners) forKind(kind listenKind) []*listener {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []*listener
	for l := range ls.open {
		if l.kinds[kind] {
			out = append(out, l)
		}
	}
	return out
}

// resourceUpdated queues notifications/resources/updated for the
// listen streams subscribed to uri whose caller may follow it now
// (mayFollow: visibility and scopes are decided at delivery too) and
// reports how many there were. It never waits for a stream.
func (ls *listeners) resourceUpdated(uri string) int {
	ls.mu.Lock()
	var targets []*listener
	for l := range ls.open {
		if _, ok := l.uris[uri]; ok {
			targets = append(targets, l)
		}
	}
	ls.mu.Unlock()
	told := 0
	for _, l := range targets {
		if !ls.resources.mayFollow(context.Background(), l.view, uri) {
			continue
		}
		l.push(notice{method: "notifications/resources/updated", uri: uri}, nil)
		told++
	}
	return told
}

// topicNotice is the Data of a ports.NoticeTopic: an extension's
// notification for the listen streams that listed ID under Topic.
type topicNotice struct {
	Topic  string         `json:"t"`
	ID     string         `json:"i"`
	Method string         `json:"m"`
	Params jsontext.Value `json:"p"`
}

// NotifyTopic sends the notification method, with params (a JSON object),
// to every listen stream, on every instance (Options.Bus), that listed id
// under an extension's topic ([ListenTopic]): the tasks extension tells
// the streams that listen to a task's id of its new status
// (notifications/tasks). Each stream's copy carries its subscription id in
// params._meta. A stream that has not written the previous notification
// of the same topic and id yet gets only the newest. It returns how many
// streams of this instance were told.
func (e *Engine) NotifyTopic(topic, id, method string, params []byte) (int, error) {
	if _, ok := e.listen.topics[topic]; !ok {
		return 0, fmt.Errorf("hexmcp: no extension serves the listen topic %q", topic)
	}
	if v := jsontext.Value(params); v.Kind() != '{' || !v.IsValid() {
		return 0, errors.New("hexmcp: NotifyTopic: params must be a JSON object")
	}
	data, err := json.Marshal(topicNotice{Topic: topic, ID: id, Method: method, Params: bytes.Clone(params)})
	if err != nil {
		return 0, fmt.Errorf("hexmcp: NotifyTopic: %w", err)
	}
	return e.bus.raise(ports.Notice{Kind: ports.NoticeTopic, Data: data}), nil
}

// deliverTopic queues a topic notice for the listen streams held here.
func (ls *listeners) deliverTopic(data []byte) int {
	var n topicNotice
	if json.Unmarshal(data, &n) != nil || n.Params.Kind() != '{' {
		return 0
	}
	ls.mu.Lock()
	var targets []*listener
	for l := range ls.open {
		if _, ok := l.topics[n.Topic][n.ID]; ok {
			targets = append(targets, l)
		}
	}
	ls.mu.Unlock()
	for _, l := range targets {
		l.push(notice{method: n.Method, topic: n.Topic, id: n.ID}, n.Params)
	}
	return len(targets)
}

// encodeTopicNotice encodes an extension's notification of a listen
// stream: its params with the subscription id added to their _meta.
func encodeTopicNotice(id jsontext.Value, method string, params []byte) []byte {
	var members map[string]jsontext.Value
	if json.Unmarshal(params, &members) != nil {
		return nil
	}
	meta := map[string]any{}
	if m, ok := members["_meta"]; ok {
		var own map[string]jsontext.Value
		if json.Unmarshal(m, &own) == nil {
			for k, v := range own {
				meta[k] = v
			}
		}
	}
	meta[metaSubscriptionID] = id
	out := make(map[string]any, len(members)+1)
	for k, v := range members {
		out[k] = v
	}
	out["_meta"] = meta
	msg, err := encodeNotification(method, out)
	if err != nil {
		return nil
	}
	return msg
}
