package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/internal/handlerapi"
)

// RequireURLElicitation says that the request cannot go on until the user
// has completed the given URL-mode elicitations out of band (an OAuth
// consent page, a payment): return its error from the handler. The client
// opens the URLs and retries once the user is done; the retried handler
// checks on its own (its backend) that the interaction completed.
//
//   - 2025-11-25: the request is answered -32042 (URLElicitationRequired)
//     with data.elicitations.
//   - 2026-07-28: resultType "input_required" with the elicitations as
//     inputRequests, keyed by elicitation id.
//   - A client that did not declare elicitation.url, or an earlier revision
//     (no URL mode): -32021, as for any question it cannot answer.
//
// Every elicitation must be made with [hexmcp.ElicitURL] (or an [domain.ElicitParams] in url mode).
func (rc *RequestContext) RequireURLElicitation(elicitations ...domain.ElicitParams) error {
	if rc == nil {
		return errors.New("hexmcp: RequireURLElicitation outside a request")
	}
	if len(elicitations) == 0 {
		return errors.New("hexmcp: RequireURLElicitation needs at least one elicitation")
	}
	reqs := make([]question, len(elicitations))
	for i, el := range elicitations {
		if el.Mode != domain.ElicitModeURL {
			return fmt.Errorf("hexmcp: elicitation %d is not in url mode (make it with hexmcp.ElicitURL)", i)
		}
		reqs[i] = handlerapi.QuestionOf(handlerapi.ElicitInput(el.ElicitationID, el))
		if reqs[i].Err != nil {
			return fmt.Errorf("hexmcp: elicitation %d: %w", i, reqs[i].Err)
		}
	}
	if err := rc.checkCapabilities(reqs); err != nil {
		return err
	}
	if rc.info.features.InputRequired {
		in := rc.input
		if in == nil {
			return errors.New("hexmcp: only tools/call, prompts/get and resources/read may ask the client for input")
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		keys := make([]string, len(reqs))
		for i, r := range reqs {
			keys[i] = r.Key
			in.ask(r)
		}
		return &handlerapi.InputRequiredError{Keys: keys}
	}
	return &handlerapi.URLElicitationRequiredError{Elicitations: elicitations}
}

// NotifyElicitationComplete tells the client that the out-of-band
// interaction of a URL-mode elicitation has ended
// (notifications/elicitation/complete, 2025-11-25), so that it may retry
// at once. It may be called during the request or later, as long as the
// session lives (hold on to the function it returns). It returns an error
// for a request without a session (the stateless era has no such
// notification) or a revision without URL mode.
func (rc *RequestContext) NotifyElicitationComplete() (func(ctx context.Context, elicitationID string) error, error) {
	s := rc.info.session
	if rc.info.era != domain.EraHandshake || s == nil {
		return nil, errors.New("hexmcp: notifications/elicitation/complete needs a handshake-era session")
	}
	if !rc.info.features.ElicitationURL {
		return nil, fmt.Errorf("hexmcp: protocol revision %s has no URL-mode elicitation", rc.info.rev)
	}
	return func(ctx context.Context, elicitationID string) error {
		if s.base.Err() != nil {
			return handlerapi.ErrClientGone
		}
		msg, err := encodeNotification("notifications/elicitation/complete", map[string]string{"elicitationId": elicitationID})
		if err != nil {
			return err
		}
		if !s.trySend(msg) {
			return handlerapi.ErrNoClientStream
		}
		return nil
	}, nil
}
