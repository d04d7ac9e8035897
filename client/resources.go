package client

import (
	"context"
	"fmt"

	"github.com/hexmcp/hexmcp/domain"
)

// SubscribeResource asks the server to tell of changes to the resource at
// uri (resources/subscribe, the handshake era): each change reaches
// [Options.ResourceUpdated] (over Streamable HTTP, on the GET stream). The
// server must declare resources.subscribe. In the stateless era, use
// [Session.Subscribe] with ResourceSubscriptions.
func (s *Session) SubscribeResource(ctx context.Context, uri string) error {
	return s.resourceSubscription(ctx, "resources/subscribe", uri)
}

// UnsubscribeResource ends a subscription of [Session.SubscribeResource]
// (resources/unsubscribe).
func (s *Session) UnsubscribeResource(ctx context.Context, uri string) error {
	return s.resourceSubscription(ctx, "resources/unsubscribe", uri)
}

func (s *Session) resourceSubscription(ctx context.Context, method, uri string) error {
	if s.Features().Era != domain.EraHandshake {
		return fmt.Errorf("hexmcp: %s needs the handshake era (this session speaks %s): use Subscribe", method, s.Revision())
	}
	_, err := s.request(ctx, method, map[string]any{"uri": uri})
	return err
}
