package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
	"github.com/hexmcp/hexmcp/ports"
)

// outbound tracks a session's requests to the client, correlated by id.
type outbound struct {
	mu   sync.Mutex
	next int64
	// prefix, when set (Options.Bus), makes the ids strings
	// "<prefix>-<n>", unique across the instances that hold the session:
	// the prefix is the engine's instance name, so that a response that
	// reaches another instance is forwarded to this one alone
	// (requestOrigin).
	prefix  string
	pending map[string]chan clientReply
}

type clientReply struct {
	result jsontext.Value
	err    *handlerapi.ClientError
}

// open registers a new request and returns its id (as JSON) and the
// channel its reply arrives on.
func (o *outbound) open() (jsontext.Value, chan clientReply) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	var id jsontext.Value
	if o.prefix != "" {
		id = jsontext.Value(`"` + o.prefix + "-" + strconv.FormatInt(o.next, 10) + `"`)
	} else {
		id = jsontext.Value(strconv.FormatInt(o.next, 10))
	}
	if o.pending == nil {
		o.pending = make(map[string]chan clientReply)
	}
	ch := make(chan clientReply, 1)
	o.pending[string(id)] = ch
	return id, ch
}

func (o *outbound) close(id jsontext.Value) {
	o.mu.Lock()
	delete(o.pending, string(id))
	o.mu.Unlock()
}

// deliver hands a client's response to the request waiting for it; it
// reports false for an id no request waits for (answered already, timed
// out, or never sent).
func (o *outbound) deliver(m message) bool {
	key := string(canonicalID(m.id))
	o.mu.Lock()
	ch, ok := o.pending[key]
	delete(o.pending, key)
	o.mu.Unlock()
	if !ok {
		return false
	}
	var r clientReply
	if m.isError {
		var we struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    jsontext.Value `json:"data"`
		}
		if err := json.Unmarshal(m.payload, &we); err != nil {
			we.Code, we.Message = domain.CodeInternalError, "malformed error response"
		}
		r.err = &handlerapi.ClientError{Code: we.Code, Message: we.Message, Data: we.Data}
	} else {
		r.result = m.payload
	}
	ch <- r
	return true
}

// callClient sends a request to the client of a handshake-era session and
// waits for its answer, the handler's context to end, the session to end or
// timeout (Options.ClientRequestTimeout), whichever comes first. A request
// given up is cancelled with notifications/cancelled. w is the stream of
// the request being served (nil: the session's own).
func (s *session) callClient(ctx context.Context, timeout time.Duration, w ports.MessageWriter, wmu *sync.Mutex, slot *callSlot, method string, params any) (jsontext.Value, error) {
	id, ch := s.out.open()
	defer s.out.close(id)
	p, err := json.Marshal(params, json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("hexmcp: %s params cannot be encoded: %w", method, err)
	}
	msg := make([]byte, 0, len(p)+64)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, id...)
	msg = append(msg, `,"method":`...)
	msg = domain.AppendJSONString(msg, method)
	msg = append(msg, `,"params":`...)
	msg = append(msg, p...)
	msg = append(msg, '}')

	write := func(ctx context.Context, msg []byte) error {
		if w != nil {
			wmu.Lock()
			err := w.WriteMessage(ctx, msg)
			wmu.Unlock()
			if !errors.Is(err, ports.ErrNoStream) {
				return err
			}
		}
		if !s.trySend(msg) {
			return handlerapi.ErrNoClientStream
		}
		return nil
	}
	if s.unread != nil {
		select {
		case <-s.unread:
			return nil, fmt.Errorf("hexmcp: %s: %w", method, handlerapi.ErrClientGone)
		default:
		}
	}
	if slot != nil {
		// The connection must go on reading while this waits: the call
		// counts among those waiting for the client instead (bounded).
		if err := slot.awaitClient(); err != nil {
			return nil, fmt.Errorf("hexmcp: %s not sent: %w", method, err)
		}
	}
	if err := write(ctx, msg); err != nil {
		return nil, fmt.Errorf("hexmcp: sending %s to the client: %w", method, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var cause error
	select {
	case r := <-ch:
		if r.err != nil {
			r.err.Method = method
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		cause = ctx.Err()
		if s.base.Err() != nil {
			return nil, fmt.Errorf("hexmcp: %s: %w", method, handlerapi.ErrClientGone)
		}
	case <-timer.C:
		cause = fmt.Errorf("no answer within %s: %w", timeout, context.DeadlineExceeded)
	case <-s.unread: // nil on HTTP: never
		return nil, fmt.Errorf("hexmcp: %s: %w", method, handlerapi.ErrClientGone)
	}
	reason := "the server no longer needs the answer"
	if errors.Is(cause, context.DeadlineExceeded) {
		reason = "the server stopped waiting for the answer"
	}
	cancel, _ := encodeNotification("notifications/cancelled", struct {
		RequestID jsontext.Value `json:"requestId"`
		Reason    string         `json:"reason"`
	}{id, reason})
	_ = write(context.WithoutCancel(ctx), cancel)
	return nil, fmt.Errorf("hexmcp: %s was not answered: %w", method, cause)
}
