package domain

import "slices"

// Revision is an MCP protocol revision, named by its date ("2025-11-25").
type Revision string

// The protocol revisions this SDK serves, oldest first.
const (
	Revision20241105 Revision = "2024-11-05"
	Revision20250326 Revision = "2025-03-26"
	Revision20250618 Revision = "2025-06-18"
	Revision20251125 Revision = "2025-11-25"
	Revision20260728 Revision = "2026-07-28"
)

// Era tells how a client opens a conversation with the server.
type Era int

const (
	// EraHandshake covers the revisions that begin with an initialize request
	// (2024-11-05 up to 2025-11-25); the revision is fixed per connection.
	EraHandshake Era = iota + 1
	// EraStateless covers the revisions whose every request carries the
	// revision, client info and capabilities in params._meta (2026-07-28 on).
	EraStateless
)

// String returns "handshake" or "stateless".
func (e Era) String() string {
	switch e {
	case EraHandshake:
		return "handshake"
	case EraStateless:
		return "stateless"
	}
	return "unknown"
}

// Features lists what one revision knows about. The zero value is a revision
// that knows nothing beyond 2024-11-05.
type Features struct {
	// Revision is the revision these are the features of.
	Revision Revision
	// Era is how the revision opens a conversation.
	Era Era
	// ToolAnnotations: Tool.annotations (2025-03-26).
	ToolAnnotations bool
	// Batches: JSON-RPC batches (2025-03-26 only; removed in 2025-06-18).
	Batches bool
	// AudioContent: content blocks of type "audio" (2025-03-26).
	AudioContent bool
	// ToolTitle: Tool.title and content titles (2025-06-18).
	ToolTitle bool
	// OutputSchema: Tool.outputSchema (2025-06-18).
	OutputSchema bool
	// StructuredContent: CallToolResult.structuredContent (2025-06-18).
	StructuredContent bool
	// ResourceLink: content blocks of type "resource_link" (2025-06-18).
	ResourceLink bool
	// Meta: _meta on tools and content blocks (2025-06-18).
	Meta bool
	// LastModified: annotations.lastModified on content (2025-06-18).
	LastModified bool
	// Icons: icons on tools and resource links (2025-11-25).
	Icons bool
	// SSEPriming: a server starts an SSE stream with an event that has an id
	// and no data, so that the client can resume it at once (2025-11-25).
	SSEPriming bool
	// InputErrorsAsResults: arguments that fail the input schema are reported
	// as a tool result with isError (SEP-1303, 2025-11-25); before, as -32602.
	InputErrorsAsResults bool
	// AnyStructuredContent: outputSchema may have any root and
	// structuredContent may be any JSON value (SEP-2106, 2026-07-28); before,
	// both had to be objects.
	AnyStructuredContent bool
	// ResultType: every result carries resultType (2026-07-28).
	ResultType bool
	// Caching: list results carry ttlMs and cacheScope (2026-07-28).
	Caching bool
	// ResourceNotFoundInvalidParams: resources/read of an unknown resource is
	// answered -32602 (SEP-2164, 2026-07-28); before, -32002.
	ResourceNotFoundInvalidParams bool
	// CompletionsCapability: the server declares completion/complete with
	// the "completions" capability (2025-03-26); 2024-11-05 had the method
	// but no capability for it.
	CompletionsCapability bool
	// ResourceSubscriptions: resources/subscribe and resources/unsubscribe
	// with notifications/resources/updated on the session (handshake era;
	// 2026-07-28 moved them to subscriptions/listen).
	ResourceSubscriptions bool
	// Elicitation: the server may ask the user for input with
	// elicitation/create (2025-06-18).
	Elicitation bool
	// ElicitationURL: url-mode elicitation (SEP-1036) and sampling with
	// tools (SEP-1577) (2025-11-25).
	ElicitationURL bool
	SamplingTools  bool
	// InputRequired: the server asks the client for input (elicitation,
	// sampling, roots) by answering tools/call, prompts/get or
	// resources/read with resultType "input_required" and the client
	// retries with inputResponses (multi round-trip requests, SEP-2322,
	// 2026-07-28); before, by sending requests of its own on the session.
	InputRequired bool
}

// RevisionPolicy is the single place that knows what each revision allows.
// Everything in the SDK that depends on the revision asks the policy; no other
// code compares revision strings. The zero value is ready to use and serves
// every revision this SDK knows.
type RevisionPolicy struct {
	// Disabled lists revisions the server refuses even though the SDK knows
	// them (for example to drop 2024-11-05 clients).
	Disabled []Revision
}

// knownRevisions is every revision the SDK implements, newest first.
var knownRevisions = []Revision{Revision20260728, Revision20251125, Revision20250618, Revision20250326, Revision20241105}

// Supported returns the revisions the server accepts, newest first.
func (p RevisionPolicy) Supported() []Revision {
	out := make([]Revision, 0, len(knownRevisions))
	for _, r := range knownRevisions {
		if !slices.Contains(p.Disabled, r) {
			out = append(out, r)
		}
	}
	return out
}

// SupportedStrings is Supported as strings, for wire messages.
func (p RevisionPolicy) SupportedStrings() []string {
	revs := p.Supported()
	out := make([]string, len(revs))
	for i, r := range revs {
		out[i] = string(r)
	}
	return out
}

// Supports reports whether r is a revision the server accepts.
func (p RevisionPolicy) Supports(r Revision) bool {
	return slices.Contains(knownRevisions, r) && !slices.Contains(p.Disabled, r)
}

// Negotiate answers an initialize request asking for requested: the same
// revision when the server supports it in the handshake era, else the latest
// handshake-era revision the server supports (the client then decides whether
// to go on). ok is false when the server supports no handshake revision.
func (p RevisionPolicy) Negotiate(requested string) (r Revision, ok bool) {
	req := Revision(requested)
	if p.Supports(req) && p.Features(req).Era == EraHandshake {
		return req, true
	}
	for _, r := range p.Supported() {
		if p.Features(r).Era == EraHandshake {
			return r, true
		}
	}
	return "", false
}

// AcceptsStateless reports whether a request whose _meta names requested can
// be served statelessly.
func (p RevisionPolicy) AcceptsStateless(requested string) bool {
	r := Revision(requested)
	return p.Supports(r) && p.Features(r).Era == EraStateless
}

// Features returns what revision r knows. An unknown revision newer than all
// known ones is treated as the newest known one; an older unknown one as
// 2024-11-05.
func (p RevisionPolicy) Features(r Revision) Features {
	// Each feature with the revisions that have it (see its field's doc).
	since := func(first Revision) bool { return r >= first }
	stateless := since(Revision20260728)
	era := EraHandshake
	if stateless {
		era = EraStateless
	}
	return Features{
		Revision:                      r,
		Era:                           era,
		ToolAnnotations:               since(Revision20250326),
		AudioContent:                  since(Revision20250326),
		CompletionsCapability:         since(Revision20250326),
		Batches:                       r == Revision20250326,
		ToolTitle:                     since(Revision20250618),
		OutputSchema:                  since(Revision20250618),
		StructuredContent:             since(Revision20250618),
		ResourceLink:                  since(Revision20250618),
		Elicitation:                   since(Revision20250618),
		Meta:                          since(Revision20250618),
		LastModified:                  since(Revision20250618),
		Icons:                         since(Revision20251125),
		InputErrorsAsResults:          since(Revision20251125),
		ElicitationURL:                since(Revision20251125),
		SamplingTools:                 since(Revision20251125),
		SSEPriming:                    since(Revision20251125) && !stateless, // no resumability without sessions
		AnyStructuredContent:          stateless,
		ResultType:                    stateless,
		InputRequired:                 stateless,
		Caching:                       stateless,
		ResourceNotFoundInvalidParams: stateless,
		ResourceSubscriptions:         !stateless, // subscriptions/listen instead
	}
}

// ResourceNotFoundCode is the JSON-RPC error code of a resources/read for a
// resource that does not exist: -32002 up to 2025-11-25, -32602 (Invalid
// Params) from 2026-07-28 on (SEP-2164).
func (p RevisionPolicy) ResourceNotFoundCode(r Revision) int {
	if p.Features(r).ResourceNotFoundInvalidParams {
		return CodeInvalidParams
	}
	return CodeResourceNotFound
}

// ClientMethodExists reports whether the server may ask a client of
// revision r to run method (elicitation/create from 2025-06-18;
// sampling/createMessage and roots/list in every revision).
func (p RevisionPolicy) ClientMethodExists(r Revision, method string) bool {
	switch method {
	case MethodElicit:
		return p.Features(r).Elicitation
	case MethodCreateMessage, MethodListRoots:
		return true
	}
	return false
}

// valueShape classifies a tool's return value for the structured-output rule.
type valueShape int

// The shapes a return value can have.
const (
	valueNull    valueShape = iota // nil, void
	valueScalar                    // string, number, bool
	valueObject                    // map, struct, JSON object
	valueList                      // slice, array, JSON array
	valueContent                   // a content block or a slice of them
)

// String names the shape for log messages.
func (s valueShape) String() string {
	switch s {
	case valueNull:
		return "null"
	case valueScalar:
		return "scalar"
	case valueObject:
		return "object"
	case valueList:
		return "list"
	case valueContent:
		return "content"
	}
	return "unknown"
}

// allowsStructured reports whether a value of the given shape may be sent as
// structuredContent under the revision, for a tool that declares an output
// schema (declared) or not:
//   - objects: from 2025-06-18 on;
//   - lists: from 2026-07-28 on (before, structuredContent had to be an object);
//   - scalars: from 2026-07-28 on, and only when an outputSchema is declared;
//   - null and content values: never.
func (f Features) allowsStructured(shape valueShape, declared bool) bool {
	switch shape {
	case valueObject:
		return f.StructuredContent
	case valueList:
		return f.AnyStructuredContent
	case valueScalar:
		return f.AnyStructuredContent && declared
	}
	return false
}

// MethodInitialize is the request that opens a handshake-era session.
const MethodInitialize = "initialize"
