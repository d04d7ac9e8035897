// Package contract is a server's contract with its clients: the tools,
// prompts, resources and resource templates it lists, as a client learns
// them, written to a stable lock file, and the comparison of a live server
// with a lock that tells the changes that break a client from those that do
// not. cmd/mcpcontract and hexmcptest.CheckContract share it.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hexmcp/hexmcp/domain"
)

// FormatVersion is the version of the lock file's format.
const FormatVersion = 1

// Revision is the revision a lock is read under for a server whose
// revisions p says: the newest that opens a session with initialize (what
// any MCP server up to the handshake era serves), else the newest.
func Revision(p domain.RevisionPolicy) domain.Revision {
	revs := p.Supported() // newest first
	for _, r := range revs {
		if p.Features(r).Era == domain.EraHandshake {
			return r
		}
	}
	if len(revs) > 0 {
		return revs[0]
	}
	return ""
}

// maxPages bounds the pages read from one list method: a server whose
// cursors never end is an error, not a hang.
const maxPages = 10_000

// Lock is the contract of a server: every definition of its lists, as the
// server sent it (less _meta and icons, which are presentation), sorted by
// its key (a tool's or prompt's name, a resource's uri, a template's
// uriTemplate). Numbers keep their text (json.Number).
type Lock struct {
	LockVersion int `json:"lockVersion"`
	// ProtocolVersion is the revision the lists were read under: a check
	// asks the server for the same one, since what a definition carries
	// depends on it (outputSchema from 2025-06-18 on, for one).
	ProtocolVersion   string           `json:"protocolVersion"`
	Tools             []map[string]any `json:"tools"`
	Prompts           []map[string]any `json:"prompts"`
	Resources         []map[string]any `json:"resources"`
	ResourceTemplates []map[string]any `json:"resourceTemplates"`
}

// list is one list method: where its definitions are in a page and in the
// lock, and the field that names each.
type list struct {
	method, field, key, kind string
	get                      func(*Lock) *[]map[string]any
}

var lists = []list{
	{"tools/list", "tools", "name", "tool", func(l *Lock) *[]map[string]any { return &l.Tools }},
	{"prompts/list", "prompts", "name", "prompt", func(l *Lock) *[]map[string]any { return &l.Prompts }},
	{"resources/list", "resources", "uri", "resource", func(l *Lock) *[]map[string]any { return &l.Resources }},
	{"resources/templates/list", "resourceTemplates", "uriTemplate", "resourceTemplate", func(l *Lock) *[]map[string]any { return &l.ResourceTemplates }},
}

// Lister reads one page of a list method: the result of method called with
// cursor (none when empty).
type Lister interface {
	List(ctx context.Context, method, cursor string) (json.RawMessage, error)
}

// ErrNoMethod is what a Lister's error wraps (or is) when the server does
// not serve the list method at all (JSON-RPC -32601): Fetch takes that list
// as empty.
var ErrNoMethod = errors.New("hexmcp: contract: the server does not serve this list method")

// Fetch reads every page of the four lists from src into a Lock, under
// protocolVersion.
func Fetch(ctx context.Context, src Lister, protocolVersion string) (*Lock, error) {
	l := &Lock{LockVersion: FormatVersion, ProtocolVersion: protocolVersion}
	for _, li := range lists {
		defs, err := fetchList(ctx, src, li)
		if err != nil {
			return nil, err
		}
		*li.get(l) = defs
	}
	l.normalize()
	return l, nil
}

func fetchList(ctx context.Context, src Lister, li list) ([]map[string]any, error) {
	var defs []map[string]any
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		raw, err := src.List(ctx, li.method, cursor)
		if errors.Is(err, ErrNoMethod) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("hexmcp: contract: %s: %w", li.method, err)
		}
		var page map[string]any
		if err := decode(raw, &page); err != nil {
			return nil, fmt.Errorf("hexmcp: contract: %s: the result is not an object: %w", li.method, err)
		}
		items, _ := page[li.field].([]any)
		for i, it := range items {
			d, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("hexmcp: contract: %s: %s[%d] is not an object", li.method, li.field, i)
			}
			if k, _ := d[li.key].(string); k == "" {
				return nil, fmt.Errorf("hexmcp: contract: %s: %s[%d] has no %s", li.method, li.field, i, li.key)
			}
			defs = append(defs, d)
		}
		next, _ := page["nextCursor"].(string)
		if next == "" {
			return defs, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("hexmcp: contract: %s: the server gave the cursor %q twice", li.method, next)
		}
		seen[next] = true
		cursor = next
	}
	return nil, fmt.Errorf("hexmcp: contract: %s: more than %d pages", li.method, maxPages)
}

// normalize drops what is presentation, not contract, and sorts each list by
// its key.
func (l *Lock) normalize() {
	for _, li := range lists {
		defs := *li.get(l)
		for _, d := range defs {
			delete(d, "_meta")
			delete(d, "icons")
		}
		slices.SortStableFunc(defs, func(a, b map[string]any) int {
			return strings.Compare(keyOf(a, li.key), keyOf(b, li.key))
		})
		if defs == nil {
			defs = []map[string]any{}
		}
		*li.get(l) = defs
	}
}

func keyOf(d map[string]any, key string) string {
	s, _ := d[key].(string)
	return s
}

// Marshal writes the lock as indented JSON with sorted keys, HTML characters
// as they are, and a final newline: the same server gives the same bytes.
func (l *Lock) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("hexmcp: contract: %w", err)
	}
	return b.Bytes(), nil
}

// Parse reads a lock file.
func Parse(data []byte) (*Lock, error) {
	var l Lock
	if err := decode(data, &l); err != nil {
		return nil, fmt.Errorf("hexmcp: contract: not a lock file: %w", err)
	}
	if l.LockVersion != FormatVersion {
		return nil, fmt.Errorf("hexmcp: contract: lock file format %d, this tool reads %d", l.LockVersion, FormatVersion)
	}
	for _, li := range lists {
		for i, d := range *li.get(&l) {
			if keyOf(d, li.key) == "" {
				return nil, fmt.Errorf("hexmcp: contract: lock file: %s[%d] has no %s", li.field, i, li.key)
			}
		}
	}
	l.normalize()
	return &l, nil
}

// decode decodes JSON keeping numbers as their text.
func decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}
