package hexmcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/hexmcp/hexmcp/domain"
)

// message is any JSON-RPC message, as the client reads it.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

// isRequest reports whether m is a request of the server.
func (m *message) isRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// isNotification reports whether m is a notification of the server.
func (m *message) isNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// outcome returns the result of a response, or its error.
func (m *message) outcome(method string) (json.RawMessage, error) {
	if m.Error != nil {
		return nil, m.Error
	}
	if m.Result == nil {
		return nil, fmt.Errorf("hexmcptest: the server answered %s with neither a result nor an error", method)
	}
	return m.Result, nil
}

// encodeRequest returns a request (id not nil) or a notification.
func encodeRequest(id json.RawMessage, method string, params map[string]any) ([]byte, error) {
	m := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method"`
		Params  map[string]any  `json:"params,omitempty"`
	}{"2.0", id, method, params}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("hexmcptest: encoding %s: %w", method, err)
	}
	return b, nil
}

// encodeResponse returns the client's answer to the server's request id: a
// result, or the error err stands for.
func encodeResponse(id json.RawMessage, result any, err error) []byte {
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *RPCError       `json:"error,omitempty"`
	}
	r := response{JSONRPC: "2.0", ID: id}
	if err == nil {
		var b []byte
		if b, err = json.Marshal(result); err == nil {
			r.Result = json.RawMessage(b)
		}
	}
	if err != nil {
		var re *RPCError
		if !errors.As(err, &re) {
			re = &RPCError{Code: domain.CodeInternalError, Message: err.Error()}
		}
		r.Error = re
	}
	b, _ := json.Marshal(r) // every member is JSON already
	return b
}

// inbound runs the client's handlers on the server's requests (handshake
// era) and hands its notifications on.
type inbound struct {
	answer   func(ctx context.Context, method string, params json.RawMessage) (any, error)
	onNotify func(Notification)
	base     context.Context
	cancel   context.CancelFunc
	mu       sync.Mutex
	running  map[string]context.CancelFunc // by the request's id
	wg       sync.WaitGroup
}

func newInbound(answer func(context.Context, string, json.RawMessage) (any, error), onNotify func(Notification)) *inbound {
	base, cancel := context.WithCancel(context.Background())
	return &inbound{answer: answer, onNotify: onNotify, base: base, cancel: cancel, running: map[string]context.CancelFunc{}}
}

// request answers the server's request m in a goroutine of its own, with
// reply, unless the server cancels it first.
func (in *inbound) request(m message, reply func(ctx context.Context, b []byte) error) {
	id := string(bytes.TrimSpace(m.ID))
	ctx, cancel := context.WithCancel(in.base)
	in.mu.Lock()
	in.running[id] = cancel
	in.mu.Unlock()
	in.wg.Go(func() {
		defer cancel()
		res, err := in.answer(ctx, m.Method, m.Params)
		in.mu.Lock()
		_, live := in.running[id]
		delete(in.running, id)
		in.mu.Unlock()
		if !live || in.base.Err() != nil {
			return // cancelled: no answer
		}
		_ = reply(in.base, encodeResponse(m.ID, res, err))
	})
}

// abandon cancels the handler of the server's request id, which is
// answered no more: the client gave up the call the request belongs to.
func (in *inbound) abandon(id string) {
	in.mu.Lock()
	cancel, ok := in.running[id]
	delete(in.running, id)
	in.mu.Unlock()
	if ok {
		cancel()
	}
}

// notification hands m on; notifications/cancelled also cancels the
// handler of the request it names.
func (in *inbound) notification(m message) {
	if m.Method == "notifications/cancelled" {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			in.abandon(string(bytes.TrimSpace(p.RequestID)))
		}
	}
	if in.onNotify != nil {
		in.onNotify(Notification{Method: m.Method, Params: m.Params})
	}
}

// stop cancels the handlers still running.
func (in *inbound) stop() { in.cancel() }

// wait waits for the handlers to return.
func (in *inbound) wait() { in.wg.Wait() }
