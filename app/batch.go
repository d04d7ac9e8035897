package app

import (
	"context"
	"sync"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// batch serves the members of a JSON-RPC batch of a handshake-era
// session (2025-03-26, the one revision with batches; the transport checks
// that, and that the batch is a non-empty array), each as [inspect]
// decoded it, and returns their responses in order (nil where a member has
// none: a notification, a client's response). The requests run
// concurrently, as a batch's members may; every transport serves batches
// through it, with the same rules: initialize is refused inside a batch,
// and so is a stateless-era request (its _meta names a protocol version:
// it must be sent on its own), each with its id, while the other members
// are served; a stateless-era notification is served outside the session.
// slot, when not nil, is the connection-loop call
// that serves the batch (its requests may wait for the client).
func (e *Engine) batch(ctx context.Context, s *session, members []messageInfo, related ports.MessageWriter, slot *callSlot) [][]byte {
	out := make([][]byte, len(members))
	if related != nil {
		ctx = context.WithValue(ctx, relatedKey{}, related)
	}
	ctx = e.fwd.withBudget(ctx) // one budget for the batch
	var wg sync.WaitGroup
	for i, mi := range members {
		m := mi.msg
		switch {
		case mi.rerr != nil:
			if m.method == "" || m.id != nil { // a notification gets no answer, even an error
				out[i] = encodeError(mi.rerr)
			}
		case m.isResponse:
			e.fwd.clientResponse(ctx, s, m)
		case m.id == nil && mi.Stateless():
			e.notification(ctx, nil, m)
		case m.id == nil:
			e.notification(ctx, s, m)
		case m.method == domain.MethodInitialize:
			out[i] = encodeError(newRPCError(m.id, domain.CodeInvalidRequest, "Invalid Request: initialize must not be part of a batch", nil))
		case mi.Stateless():
			// Batches belong to 2025-03-26; a stateless-era request stands
			// alone (over HTTP its headers describe one body).
			out[i] = encodeError(newRPCError(m.id, domain.CodeInvalidRequest, "Invalid Request: stateless requests cannot be batched: a request naming a protocol version in _meta must be sent on its own", nil))
		case s == nil:
			out[i], _ = e.requestWith(ctx, nil, m, mi.params)
		default:
			call, rerr := s.register(ctx, m.id)
			if rerr != nil {
				out[i] = encodeError(rerr)
				continue
			}
			wg.Go(func() {
				m.slot = slot
				resp, _ := e.requestWith(call.ctx, s, m, mi.params)
				out[i] = call.end(resp)
			})
		}
	}
	wg.Wait()
	return out
}
