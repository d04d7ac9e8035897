package app

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/hexmcp/hexmcp/domain"
	"github.com/hexmcp/hexmcp/ports"
)

// results shapes what the engine's results carry besides their content:
// the JSON-RPC envelope, the result _meta of the stateless era
// (serverInfo) and the caching attributes (ttlMs, cacheScope). Every
// method of the method table, the extensions' and middleware's answers
// use it.
type results struct {
	policy domain.RevisionPolicy
	info   domain.Implementation // Options.Info
	ttlMs  int64                 // Options.ListTTL, in milliseconds
	// pageSize is the number of entries per page of a list.
	pageSize int
	// scope is the cacheScope of the lists: "private" when they depend on
	// who asks (Options.PrivateCache, or a Visibility filter).
	scope string
	log   ports.Logger

	metaCache sync.Map // domain.Revision -> encoded result _meta
}

// cacheScope is the cacheScope of the lists.
func (r *results) cacheScope() string { return r.scope }

// meta is the _meta of a stateless-era result.
func (r *results) meta(rev domain.Revision) map[string]any {
	return map[string]any{metaServerInfo: r.policy.ShapeImplementation(r.info, rev)}
}

// metaJSON is the encoded _meta of a stateless result, made once per
// revision.
func (r *results) metaJSON(rev domain.Revision) []byte {
	if b, ok := r.metaCache.Load(rev); ok {
		return b.([]byte)
	}
	b, err := json.Marshal(r.meta(rev), json.Deterministic(true))
	if err != nil {
		b = []byte("{}")
	}
	r.metaCache.Store(rev, b)
	return b
}

// appendMeta appends ,"_meta":{serverInfo} for a stateless result.
func (r *results) appendMeta(b []byte, rev domain.Revision) []byte {
	b = append(b, `,"_meta":`...)
	return append(b, r.metaJSON(rev)...)
}

// appendStatelessTail appends ttlMs and cacheScope where the revision has
// caching (cacheScope "private" when private, as for a read that depends
// on the caller's scopes), and _meta in the stateless era.
func (r *results) appendStatelessTail(b []byte, ci callInfo, private bool) []byte {
	if ci.features.Caching {
		b = append(b, `,"ttlMs":`...)
		b = strconv.AppendInt(b, r.ttlMs, 10)
		b = append(b, `,"cacheScope":"`...)
		if private {
			b = append(b, "private"...)
		} else {
			b = append(b, r.scope...)
		}
		b = append(b, '"')
	}
	if ci.era == domain.EraStateless {
		b = r.appendMeta(b, ci.rev)
	}
	return b
}

// addMeta adds the revision's result _meta (serverInfo) to the result
// obj, keeping the members of its own _meta; an error when that is not an
// object.
func (r *results) addMeta(obj map[string]jsontext.Value, rev domain.Revision) error {
	meta := map[string]jsontext.Value{}
	if raw, ok := obj["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
			return errors.New("the result _meta is not an object")
		}
	}
	for k, v := range r.meta(rev) {
		if _, ok := meta[k]; !ok {
			vb, err := json.Marshal(v, json.Deterministic(true))
			if err != nil {
				return err
			}
			meta[k] = vb
		}
	}
	mb, err := json.Marshal(meta, json.Deterministic(true))
	if err != nil {
		return err
	}
	obj["_meta"] = mb
	return nil
}

// encode encodes the response of request id with the result res.
func (r *results) encode(id jsontext.Value, res any) ([]byte, *rpcError) {
	body, err := json.Marshal(res, json.Deterministic(true))
	if err != nil {
		logf(r.log, context.Background(), slog.LevelError, "hexmcp: encoding a result failed", slog.Any("error", err))
		return nil, newRPCError(id, domain.CodeInternalError, "Internal error", nil)
	}
	out := appendResponseHead(make([]byte, 0, len(body)+48), id)
	out = append(out, body...)
	return append(out, '}'), nil
}
