package app

import "github.com/hexmcp/hexmcp/domain"

// clientCapabilityOf names the top-level client capability a client must
// declare before the server may send it method ("elicitation", "sampling",
// "roots"); "" for a method that is not a client method.
func clientCapabilityOf(method string) string {
	switch method {
	case domain.MethodElicit:
		return "elicitation"
	case domain.MethodCreateMessage:
		return "sampling"
	case domain.MethodListRoots:
		return "roots"
	}
	return ""
}
