package e2e

import "testing"

// The stdio suite, unchanged, over the network transports: the same clients,
// the same tools, the same golden files (the wire results do not depend on
// the transport).

func TestHTTPV1(t *testing.T) { checkV1(t, runClientOver(t, "v1", "http", "")) }

func TestHTTPV2Pinned(t *testing.T) { checkV2(t, runClientOver(t, "v2", "http", "")) }

// TestHTTPV2Auto lets the v2 client choose: it must pick the stateless era.
func TestHTTPV2Auto(t *testing.T) { checkV2(t, runClientOver(t, "v2", "http", "auto")) }

func TestWebSocketV1(t *testing.T) { checkV1(t, runClientOver(t, "v1", "ws", "")) }
