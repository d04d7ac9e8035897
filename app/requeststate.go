package app

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/ports"
)

// The requestState of a multi round-trip request (2026-07-28) is
//
//	base64url(payload) "." base64url(HMAC-SHA256(key, label + base64url(payload)))
//
// where payload is the JSON of stateV1: the answers the handler has used so
// far, bound to the request (method, target, digest of the arguments), to
// the authenticated principal and to an expiry. The client cannot read it
// usefully nor change it: a state that does not verify with one of the
// StateKeys, belongs to another request or principal, or has expired is
// refused with -32602 before any handler runs.
//
// What the signature does not do: it does not make the answers more than
// the client's word. They are the client's own (an answer of inputResponses
// a round ago, carried along), so a handler checks them as it checks any
// input. And a state is not a one-time token: until it expires
// (Options.RequestStateTTL) the client may send it again as often as it
// likes, with the same or other inputResponses, and the handler runs again
// each time. Nothing in a state is trusted more than what the client could
// send anyway.
const stateLabel = "hexmcp/requestState/v1\x00"

// stateEncoding decodes the halves of a requestState strictly: unpadded
// base64url whose unused final bits are zero (non-strict decoding lets
// three other final characters of the signature verify too).
var stateEncoding = base64.RawURLEncoding.Strict()

// decodeStatePart decodes one half of a requestState so that each state
// has one spelling: strictly, and without the line breaks that even strict
// decoding skips.
func decodeStatePart(s string) ([]byte, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errStateForged
	}
	return stateEncoding.DecodeString(s)
}

type stateV1 struct {
	Method  string `json:"m"`
	Target  string `json:"t"`
	Digest  string `json:"d"`
	Subject string `json:"s,omitempty"`
	// Expires is in Unix milliseconds.
	Expires   int64                     `json:"x"`
	Responses map[string]jsontext.Value `json:"r,omitempty"`
}

// Reasons a requestState is refused.
var (
	errStateForged   = errors.New("requestState does not verify (it was altered, or signed with a key this server does not hold)")
	errStateExpired  = errors.New("requestState has expired; call again without it")
	errStateMismatch = errors.New("requestState belongs to another request")
)

// randomKeys is the engine's default StateKeys: one random key.
type randomKeys [][]byte

func (k randomKeys) Keys(context.Context) ([][]byte, error) { return k, nil }

func randomStateKeys() ports.StateKeys {
	k := make([]byte, ports.MinStateKeyLen)
	_, _ = rand.Read(k)
	return randomKeys{k}
}

// argumentsDigest identifies a request's arguments independently of how
// the client spelled them (RFC 8785 canonical JSON, then SHA-256).
func argumentsDigest(args jsontext.Value) string {
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	c := args.Clone()
	if err := c.Canonicalize(); err != nil {
		c = args
	}
	sum := sha256.Sum256(c)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

func (ir *inputRounds) stateKeys(ctx context.Context) ([][]byte, error) {
	keys, err := ir.keys.Keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: state keys: %w", err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("hexmcp: state keys: %w", ports.ErrNoStateKey)
	}
	for i, k := range keys {
		if len(k) < ports.MinStateKeyLen {
			return nil, fmt.Errorf("hexmcp: state key %d is shorter than %d bytes", i, ports.MinStateKeyLen)
		}
	}
	return keys, nil
}

func stateMAC(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(stateLabel))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// sign encodes and signs st with the current key.
func (ir *inputRounds) sign(ctx context.Context, st stateV1) (string, error) {
	keys, err := ir.stateKeys(ctx)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(st, json.Deterministic(true))
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + base64.RawURLEncoding.EncodeToString(stateMAC(keys[0], payload)), nil
}

// open verifies a requestState and checks that it belongs to want
// (method, target, digest, subject) and has not expired.
func (ir *inputRounds) open(ctx context.Context, s string, want stateV1) (stateV1, error) {
	payload, sig, ok := strings.Cut(s, ".")
	if !ok || payload == "" {
		return stateV1{}, errStateForged
	}
	mac, err := decodeStatePart(sig)
	if err != nil {
		return stateV1{}, errStateForged
	}
	keys, err := ir.stateKeys(ctx)
	if err != nil {
		return stateV1{}, err
	}
	verified := false
	for _, k := range keys {
		if hmac.Equal(mac, stateMAC(k, payload)) {
			verified = true
			break
		}
	}
	if !verified {
		return stateV1{}, errStateForged
	}
	raw, err := decodeStatePart(payload)
	if err != nil {
		return stateV1{}, errStateForged
	}
	var st stateV1
	if err := json.Unmarshal(raw, &st); err != nil {
		return stateV1{}, errStateForged
	}
	if st.Method != want.Method || st.Target != want.Target || st.Digest != want.Digest || st.Subject != want.Subject {
		return stateV1{}, errStateMismatch
	}
	if ir.clock.Now().UnixMilli() >= st.Expires {
		return stateV1{}, errStateExpired
	}
	return st, nil
}
