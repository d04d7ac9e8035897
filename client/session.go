package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hexmcp/hexmcp/domain"
)

// Session is one conversation with a server over one connection. Its
// methods are safe for concurrent use. Close it when done.
type Session struct {
	c    *Client
	conn Conn
	hc   httpHooks // nil unless conn is Streamable HTTP

	mu           sync.Mutex
	era          domain.Era
	rev          domain.Revision
	meta         map[string]any // stateless era: the _meta of every request
	serverCaps   json.RawMessage
	serverInfo   domain.Implementation
	instructions string
	pending      map[string]chan reply
	progress     map[string]func(Progress)     // by the token's JSON
	handling     map[string]context.CancelFunc // the server's requests, by id
	toolSchemas  map[string]json.RawMessage    // input schemas, by tool name
	outSchemas   map[string]*outputSchema      // output schemas, by tool name
	acks         map[string]chan Subscriptions // subscriptions/listen waiting for their acknowledgment, by id
	readErr      error

	ids      atomic.Int64
	hsem     chan struct{}
	base     context.Context
	stop     context.CancelFunc
	readDone chan struct{}
	wg       sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// reply is what a call waits for: the server's response, or why none
// will come.
type reply struct {
	m   *message
	err error
}

// httpHooks is what a Streamable HTTP connection needs of its session.
type httpHooks interface {
	// setEra tells the era and the revision of the requests to come (rev
	// empty before initialize has answered).
	setEra(era domain.Era, rev domain.Revision)
	// useToolSchemas gives the connection the input schemas the session
	// knows, for the Mcp-Param headers of the stateless era.
	useToolSchemas(func(name string) json.RawMessage)
}

// streamFailure is the error of a Read that stands for no message but
// for a request whose response will not come (an HTTP stream that ended
// without it): the call fails, the session goes on.
type streamFailure struct {
	id  string
	err error
	// abandon names the server's requests that came with the call: their
	// handlers are cancelled, as no cancellation of them can come.
	abandon []string
}

func (f *streamFailure) Error() string { return f.err.Error() }

func newSession(c *Client, conn Conn) *Session {
	base, stop := context.WithCancel(context.Background())
	s := &Session{
		c: c, conn: conn,
		pending:     map[string]chan reply{},
		progress:    map[string]func(Progress){},
		handling:    map[string]context.CancelFunc{},
		toolSchemas: map[string]json.RawMessage{},
		outSchemas:  map[string]*outputSchema{},
		acks:        map[string]chan Subscriptions{},
		hsem:        make(chan struct{}, maxHandlers),
		base:        base, stop: stop,
		readDone: make(chan struct{}),
	}
	if hc, ok := conn.(httpHooks); ok {
		s.hc = hc
		hc.useToolSchemas(s.toolSchema)
	}
	go s.readLoop()
	return s
}

func (s *Session) httpConn() bool { return s.hc != nil }

// setEra records the era and revision and tells the connection.
func (s *Session) setEra(era domain.Era, rev domain.Revision) {
	s.mu.Lock()
	s.era, s.rev = era, rev
	s.meta = nil
	if era == domain.EraStateless {
		s.meta = map[string]any{
			metaProtocolVersion:    rev,
			metaClientCapabilities: s.c.capabilities(),
			metaClientInfo:         s.c.opts.ClientInfo,
		}
		if lv := s.c.opts.LogLevel; lv != "" {
			s.meta[metaLogLevel] = lv
		}
	}
	s.mu.Unlock()
	if s.hc != nil {
		s.hc.setEra(era, rev)
	}
}

func (s *Session) eraRev() (domain.Era, domain.Revision, map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.era, s.rev, s.meta
}

// Revision is the protocol revision the session speaks.
func (s *Session) Revision() domain.Revision {
	_, rev, _ := s.eraRev()
	return rev
}

// Features is what the session's revision has (Features().Era tells the
// era; Features().StructuredContent whether tools may return structured
// results, ...).
func (s *Session) Features() domain.Features { return policy.Features(s.Revision()) }

// ServerInfo names the server, as initialize (or the _meta of
// server/discover) said.
func (s *Session) ServerInfo() domain.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serverInfo
}

// ServerCapabilities are the capabilities the server declared, as sent.
func (s *Session) ServerCapabilities() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serverCaps
}

// Instructions are the server's instructions for the model ("" when
// none).
func (s *Session) Instructions() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instructions
}

// hasCapability reports whether the server declared the capability name.
func (s *Session) hasCapability(name string) bool {
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(s.ServerCapabilities(), &caps)
	v, ok := caps[name]
	return ok && string(v) != "null"
}

// Close ends the session: the handlers still answering the server are
// cancelled (Close waits for them to return), the calls still waiting
// fail with [ErrClosed], and the connection is closed (an HTTP session is
// deleted, a server process ended). It is safe to call more than once.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		s.closeErr = s.conn.Close()
		<-s.readDone
		s.wg.Wait()
	})
	return s.closeErr
}

// Wait returns when the connection has ended (the server went away or
// Close was called), with the reason.
func (s *Session) Wait() error {
	<-s.readDone
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readErr
}

// readLoop reads the connection until it ends.
func (s *Session) readLoop() {
	defer close(s.readDone)
	for {
		b, err := s.conn.Read(s.base)
		if err != nil {
			var sf *streamFailure
			if errors.As(err, &sf) {
				s.deliver(sf.id, reply{err: sf.err})
				for _, q := range sf.abandon {
					s.cancelHandler(q)
				}
				continue
			}
			s.mu.Lock()
			s.readErr = err
			s.mu.Unlock()
			return
		}
		if len(b) > 0 && b[0] == '[' { // a batch (2025-03-26)
			var batch []json.RawMessage
			if json.Unmarshal(b, &batch) == nil {
				for _, one := range batch {
					s.dispatch(one)
				}
			}
			continue
		}
		s.dispatch(b)
	}
}

// dispatch hands one message of the server on.
func (s *Session) dispatch(b []byte) {
	var m message
	if json.Unmarshal(b, &m) != nil {
		return // not for a client to answer
	}
	switch {
	case m.isRequest():
		s.handleRequest(&m)
	case m.isNotification():
		s.handleNotification(&m)
	case len(m.ID) > 0:
		s.deliver(idKey(m.ID), reply{m: &m})
	}
}

// deliver gives the call waiting for id its reply.
func (s *Session) deliver(id string, r reply) {
	s.mu.Lock()
	ch, ok := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if ok {
		ch <- r // buffered
	}
}

// closedErr is the error of a call on a session whose connection ended.
func (s *Session) closedErr(method string) error {
	s.mu.Lock()
	err := s.readErr
	s.mu.Unlock()
	if err == nil || s.base.Err() != nil {
		return fmt.Errorf("hexmcp: %s: %w", method, ErrClosed)
	}
	return fmt.Errorf("hexmcp: %s: %w (%w)", method, ErrClosed, err)
}

// roundTrip sends one request and returns its result, or an error: an
// *RPCError when the server answered one.
func (s *Session) roundTrip(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	return s.roundTripID(ctx, s.newID(), method, params)
}

// newID returns a new request id.
func (s *Session) newID() string { return strconv.FormatInt(s.ids.Add(1), 10) }

// roundTripID is roundTrip with the request's id chosen, through the
// client's middleware.
func (s *Session) roundTripID(ctx context.Context, id, method string, params map[string]any) (json.RawMessage, error) {
	p, err := encodeParams(method, params)
	if err != nil {
		return nil, err
	}
	if len(s.c.opts.Middleware) == 0 {
		return s.send(ctx, id, method, p)
	}
	era, rev, _ := s.eraRev()
	return s.handler(func(ctx context.Context, req *Request) (json.RawMessage, error) {
		return s.send(ctx, id, req.Method, req.Params)
	})(ctx, &Request{Method: method, Params: p, Revision: rev, Era: era})
}

// send sends one request with the id and waits for its result.
func (s *Session) send(ctx context.Context, id, method string, params json.RawMessage) (json.RawMessage, error) {
	var pv any
	if params != nil {
		pv = params
	}
	body, err := encodeRequest(json.RawMessage(id), method, pv)
	if err != nil {
		return nil, err
	}
	ch := make(chan reply, 1)
	s.mu.Lock()
	if s.base.Err() != nil {
		s.mu.Unlock()
		return nil, s.closedErr(method)
	}
	s.pending[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	select {
	case <-s.readDone:
		return nil, s.closedErr(method)
	default:
	}
	if err := s.conn.Write(ctx, body); err != nil {
		if ctx.Err() != nil {
			s.cancelRequest(method, id, ctx)
			return nil, fmt.Errorf("hexmcp: %s: %w", method, context.Cause(ctx))
		}
		if s.base.Err() != nil {
			return nil, s.closedErr(method)
		}
		return nil, fmt.Errorf("hexmcp: %s: %w", method, err)
	}
	select {
	case r := <-ch:
		return outcome(method, r)
	case <-s.readDone:
		select {
		case r := <-ch:
			return outcome(method, r)
		default:
		}
		return nil, s.closedErr(method)
	case <-ctx.Done():
		s.cancelRequest(method, id, ctx)
		return nil, fmt.Errorf("hexmcp: %s: %w", method, context.Cause(ctx))
	}
}

func outcome(method string, r reply) (json.RawMessage, error) {
	if r.err != nil {
		return nil, fmt.Errorf("hexmcp: %s: %w", method, r.err)
	}
	if r.m.Error != nil {
		return nil, fmt.Errorf("hexmcp: %s: %w", method, r.m.Error)
	}
	if len(r.m.Result) == 0 || string(r.m.Result) == "null" {
		return nil, fmt.Errorf("hexmcp: the server answered %s with neither a result nor an error", method)
	}
	return r.m.Result, nil
}

// cancelRequest tells the server the client no longer waits for request
// id (notifications/cancelled), unless closing the request's HTTP stream
// says it (the stateless era), or the request is initialize or the
// server/discover probe (a server of the handshake era expects nothing
// before initialize).
func (s *Session) cancelRequest(method, id string, ctx context.Context) {
	era, _, _ := s.eraRev()
	if method == "initialize" || method == "server/discover" || (s.hc != nil && era == domain.EraStateless) {
		return
	}
	reason := "the client stopped waiting"
	if c := context.Cause(ctx); c != nil {
		reason = c.Error()
	}
	cctx, cancel := context.WithTimeout(s.base, time.Second)
	defer cancel()
	_ = s.notify(cctx, "notifications/cancelled", map[string]any{"requestId": json.RawMessage(id), "reason": reason})
}

// notify sends a notification.
func (s *Session) notify(ctx context.Context, method string, params map[string]any) error {
	var p any
	if params != nil {
		p = params
	}
	body, err := encodeRequest(nil, method, p)
	if err != nil {
		return err
	}
	return s.conn.Write(ctx, body)
}

// progressKey is the context key of WithProgress.
type progressKey struct{}

// WithProgress returns a context whose requests ask the server for
// progress notifications (a progressToken in _meta) and hand them to fn,
// on the goroutine that reads the connection: fn must return quickly.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// request sends a request with the session's _meta and returns its final
// result: in the stateless era it answers input_required results with the
// handlers, round after round.
func (s *Session) request(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{}
	}
	era, _, base := s.eraRev()
	meta := maps.Clone(base)
	if meta == nil {
		meta = map[string]any{}
	}
	if own, err := metaOf(params["_meta"]); err != nil {
		return nil, fmt.Errorf("hexmcp: the _meta of %s: %w", method, err)
	} else {
		for k, v := range own {
			if _, ours := meta[k]; !ours {
				meta[k] = v
			}
		}
	}
	if fn, ok := ctx.Value(progressKey{}).(func(Progress)); ok && fn != nil {
		token := "p" + strconv.FormatInt(s.ids.Add(1), 10)
		key := string(mustJSON(token))
		s.mu.Lock()
		s.progress[key] = fn
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.progress, key)
			s.mu.Unlock()
		}()
		meta["progressToken"] = token
	}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	if era != domain.EraStateless {
		return s.roundTrip(ctx, method, params)
	}
	var (
		answers map[string]any
		state   string
	)
	for round := 0; ; round++ {
		p := maps.Clone(params)
		if len(answers) > 0 {
			p["inputResponses"] = answers
		}
		if state != "" {
			p["requestState"] = state
		}
		raw, err := s.roundTrip(ctx, method, p)
		if err != nil {
			return nil, err
		}
		var head struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
			RequestState string `json:"requestState"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("hexmcp: decoding the result of %s: %w", method, err)
		}
		if head.ResultType != "input_required" {
			return raw, nil
		}
		if len(head.InputRequests) == 0 {
			return nil, fmt.Errorf("hexmcp: %s answered input_required without inputRequests", method)
		}
		if round+1 >= s.c.opts.MaxInputRounds {
			return nil, fmt.Errorf("hexmcp: %s still asks for input after %d rounds", method, s.c.opts.MaxInputRounds)
		}
		// The answers of earlier rounds travel in the requestState; a
		// server that keeps none gets them all again.
		if head.RequestState != "" || answers == nil {
			answers = map[string]any{}
		}
		state = head.RequestState
		for _, key := range slices.Sorted(maps.Keys(head.InputRequests)) {
			q := head.InputRequests[key]
			res, err := s.answer(ctx, q.Method, q.Params)
			if err != nil {
				return nil, fmt.Errorf("hexmcp: answering %s %q of %s: %w", q.Method, key, method, err)
			}
			answers[key] = res
		}
	}
}

// handleRequest answers a request of the server in a goroutine of its
// own, unless the server cancels it first.
func (s *Session) handleRequest(m *message) {
	id := idKey(m.ID)
	select {
	case s.hsem <- struct{}{}:
	default:
		s.wg.Go(func() {
			ctx, cancel := context.WithTimeout(s.base, 5*time.Second)
			defer cancel()
			_ = s.conn.Write(ctx, encodeResponse(m.ID, nil, &RPCError{Code: domain.CodeInternalError, Message: "the client answers too many requests at once"}))
		})
		return
	}
	ctx, cancel := context.WithCancel(s.base)
	s.mu.Lock()
	s.handling[id] = cancel
	s.mu.Unlock()
	s.wg.Go(func() {
		defer func() { <-s.hsem }()
		defer cancel()
		res, err := s.answer(ctx, m.Method, m.Params)
		s.mu.Lock()
		_, live := s.handling[id]
		delete(s.handling, id)
		s.mu.Unlock()
		if !live || s.base.Err() != nil {
			return // cancelled: no answer
		}
		_ = s.conn.Write(s.base, encodeResponse(m.ID, res, err))
	})
}

// handleNotification runs the callbacks of a notification of the server.
func (s *Session) handleNotification(m *message) {
	o := &s.c.opts
	switch m.Method {
	case "notifications/progress":
		var p struct {
			Token json.RawMessage `json:"progressToken"`
			Progress
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.mu.Lock()
			fn := s.progress[idKey(p.Token)]
			s.mu.Unlock()
			if fn != nil {
				fn(p.Progress)
			}
		}
	case "notifications/message":
		var lm LogMessage
		if o.Logging != nil && json.Unmarshal(m.Params, &lm) == nil {
			o.Logging(lm)
		}
	case "notifications/tools/list_changed":
		s.mu.Lock()
		clear(s.toolSchemas)
		clear(s.outSchemas)
		s.mu.Unlock()
		if o.ToolListChanged != nil {
			o.ToolListChanged()
		}
	case "notifications/prompts/list_changed":
		if o.PromptListChanged != nil {
			o.PromptListChanged()
		}
	case "notifications/resources/list_changed":
		if o.ResourceListChanged != nil {
			o.ResourceListChanged()
		}
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if o.ResourceUpdated != nil && json.Unmarshal(m.Params, &p) == nil {
			o.ResourceUpdated(p.URI)
		}
	case "notifications/tasks":
		t := Task{Raw: m.Params}
		if o.TaskStatus != nil && json.Unmarshal(m.Params, &t) == nil {
			o.TaskStatus(t)
		}
	case "notifications/subscriptions/acknowledged":
		var p struct {
			Meta struct {
				ID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
			} `json:"_meta"`
			Notifications Subscriptions `json:"notifications"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.mu.Lock()
			ch, ok := s.acks[idKey(p.Meta.ID)]
			delete(s.acks, idKey(p.Meta.ID))
			s.mu.Unlock()
			if ok {
				ch <- p.Notifications // buffered
			}
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.cancelHandler(idKey(p.RequestID))
		}
	}
	if o.Notification != nil {
		o.Notification(Notification{Method: m.Method, Params: m.Params})
	}
}

// cancelHandler cancels the handler of the server's request id, which is
// answered no more.
func (s *Session) cancelHandler(id string) {
	s.mu.Lock()
	cancel, ok := s.handling[id]
	delete(s.handling, id)
	s.mu.Unlock()
	if ok {
		cancel()
	}
}

// answer runs the handler of one of the server's questions and returns
// its answer.
// handlerResult is the answer of an Options handler (named so in the
// error) to a server request: its error, or its result, which must not be
// nil.
func handlerResult[R any](res *R, err error, named string) (any, error) {
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("hexmcp: the " + named + " handler returned no result")
	}
	return res, nil
}

func (s *Session) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	o := &s.c.opts
	switch method {
	case domain.MethodElicit:
		if o.Elicitation == nil {
			return nil, methodNotFound(method)
		}
		p, err := decodeElicit(params)
		if err != nil {
			return nil, &RPCError{Code: domain.CodeInvalidParams, Message: "Invalid params: " + err.Error()}
		}
		res, err := o.Elicitation(ctx, p)
		return handlerResult(res, err, "Elicitation")
	case domain.MethodCreateMessage:
		if o.Sampling == nil {
			return nil, methodNotFound(method)
		}
		var p domain.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &RPCError{Code: domain.CodeInvalidParams, Message: "Invalid params: " + err.Error()}
		}
		res, err := o.Sampling(ctx, p)
		return handlerResult(res, err, "Sampling")
	case domain.MethodListRoots:
		if o.Roots == nil {
			return nil, methodNotFound(method)
		}
		roots, err := o.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []domain.Root{}
		}
		return &domain.ListRootsResult{Roots: roots}, nil
	case "ping":
		return struct{}{}, nil
	}
	return nil, methodNotFound(method)
}

func methodNotFound(method string) *RPCError {
	return &RPCError{Code: domain.CodeMethodNotFound, Message: "Method not found: the client has no handler for " + method}
}

// decodeElicit decodes the params of elicitation/create.
func decodeElicit(raw json.RawMessage) (domain.ElicitParams, error) {
	var w struct {
		Meta            map[string]any    `json:"_meta"`
		Mode            domain.ElicitMode `json:"mode"`
		Message         string            `json:"message"`
		RequestedSchema json.RawMessage   `json:"requestedSchema"`
		URL             string            `json:"url"`
		ElicitationID   string            `json:"elicitationId"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return domain.ElicitParams{}, err
	}
	if w.Mode == "" {
		w.Mode = domain.ElicitModeForm
	}
	return domain.ElicitParams{Mode: w.Mode, Message: w.Message, RequestedSchema: w.RequestedSchema,
		URL: w.URL, ElicitationID: w.ElicitationID, Meta: w.Meta}, nil
}

// toolSchema returns the input schema of the tool name, when a list gave
// it.
func (s *Session) toolSchema(name string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.toolSchemas[name]
}

// metaOf returns the _meta a caller gave (nil, a map, or JSON of an
// object).
func metaOf(v any) (map[string]any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("must be an object: %w", err)
	}
	return m, nil
}
