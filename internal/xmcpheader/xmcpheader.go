// Package xmcpheader reads the x-mcp-header annotations of a tool's input
// schema (2026-07-28 Streamable HTTP, "Schema Extension"): the arguments a
// stateless-era client mirrors into Mcp-Param-{Name} headers. The HTTP
// adapter checks them and package client sends them, by one rule.
package xmcpheader

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Param is one x-mcp-header annotation of an input schema.
type Param struct {
	Name string   // the {Name} of Mcp-Param-{Name}
	Path []string // the chain of property names that leads to the argument
}

// Params finds the x-mcp-header annotations of a schema that are
// statically reachable: through a chain of "properties" keys only, in key
// order. Annotations anywhere else, and values that are not an HTTP token,
// are not header parameters.
func Params(schema json.RawMessage) []Param {
	var root map[string]any
	if len(schema) == 0 || json.Unmarshal(schema, &root) != nil {
		return nil
	}
	var out []Param
	var walk func(node map[string]any, path []string)
	walk = func(node map[string]any, path []string) {
		props, _ := node["properties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(props)) {
			sub, ok := props[k].(map[string]any)
			if !ok {
				continue
			}
			p := append(slices.Clip(path), k)
			if name, ok := sub["x-mcp-header"].(string); ok && IsToken(name) {
				out = append(out, Param{Name: name, Path: p})
			}
			walk(sub, p)
		}
	}
	walk(root, nil)
	return out
}

// ArgumentAt reads the value at a chain of property names.
func ArgumentAt(args map[string]any, path []string) (any, bool) {
	var cur any = args
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// IsToken reports whether s is an RFC 9110 token (1*tchar).
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Check reports why a tool's input schema has an x-mcp-header annotation a
// client must reject the tool for (2026-07-28, "x-mcp-header"): one that
// is not a non-empty HTTP token, one on a property whose type is not
// string, integer or boolean, or a name used twice (case-insensitively).
// Annotations are looked for where [Params] looks. nil: none.
func Check(schema json.RawMessage) error {
	var root map[string]any
	if len(schema) == 0 || json.Unmarshal(schema, &root) != nil {
		return nil
	}
	seen := map[string]bool{}
	var walk func(node map[string]any) error
	walk = func(node map[string]any) error {
		props, _ := node["properties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(props)) {
			sub, ok := props[k].(map[string]any)
			if !ok {
				continue
			}
			if v, ok := sub["x-mcp-header"]; ok {
				name, _ := v.(string)
				if !IsToken(name) {
					return fmt.Errorf("property %q: x-mcp-header %q is not an HTTP token", k, v)
				}
				if t, ok := sub["type"]; ok && t != "string" && t != "integer" && t != "boolean" {
					return fmt.Errorf("property %q: x-mcp-header on a property of type %v (string, integer or boolean only)", k, t)
				}
				lower := strings.ToLower(name)
				if seen[lower] {
					return fmt.Errorf("property %q: x-mcp-header %q used twice", k, name)
				}
				seen[lower] = true
			}
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}
