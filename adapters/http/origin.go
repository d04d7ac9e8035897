package mcphttp

import "net/http"

// originAllowed applies the Origin rule (every revision's "Security
// Warning": servers MUST validate Origin, and answer 403 to an invalid
// one). The rule is shared with the WebSocket adapter; see
// internal/httpguard for its details.
func (h *Handler) originAllowed(r *http.Request) bool {
	return h.guard.CheckOrigin(r) == nil
}

// hostAllowed is the DNS-rebinding guard: on a loopback listener, the Host
// header must name a loopback host or one of Options.AllowedHosts. The
// rule is shared with the WebSocket adapter; see internal/httpguard.
func (h *Handler) hostAllowed(r *http.Request) bool {
	return h.guard.CheckHost(r) == nil
}
