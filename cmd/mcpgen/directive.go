package main

import (
	"fmt"
	"strconv"
	"strings"
)

// directivePrefix starts every directive line this generator reads.
const directivePrefix = "//mcp:"

// toolDirective is the one directive it knows.
const toolDirective = "//mcp:tool"

// option is one word of a directive: key, or key=value.
type option struct {
	key      string
	value    string
	hasValue bool
	quoted   bool
}

// splitOptions splits the text after //mcp:tool into options. Words are
// separated by spaces or tabs; a value is either bare (up to the next space,
// without quotes) or a Go double-quoted string (escapes as in Go).
func splitOptions(s string) ([]option, error) {
	var opts []option
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			return opts, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' && s[i] != '\t' {
			if s[i] == '"' {
				return nil, fmt.Errorf("unexpected quote in option name %q: only values may be quoted (key=\"value\")", s[start:i+1])
			}
			i++
		}
		o := option{key: s[start:i]}
		if o.key == "" {
			return nil, fmt.Errorf("option with no name before %q", rest(s[i:]))
		}
		if i < len(s) && s[i] == '=' {
			i++
			o.hasValue = true
			if i < len(s) && s[i] == '"' {
				end, err := quotedEnd(s[i:])
				if err != nil {
					return nil, fmt.Errorf("option %s: %v", o.key, err)
				}
				v, err := strconv.Unquote(s[i : i+end])
				if err != nil {
					return nil, fmt.Errorf("option %s: bad quoted value %s: %v", o.key, s[i:i+end], err)
				}
				o.value, o.quoted = v, true
				i += end
				if i < len(s) && s[i] != ' ' && s[i] != '\t' {
					return nil, fmt.Errorf("option %s: a space must follow the closing quote, not %q", o.key, rest(s[i:]))
				}
			} else {
				vs := i
				for i < len(s) && s[i] != ' ' && s[i] != '\t' {
					if s[i] == '"' {
						return nil, fmt.Errorf("option %s: unexpected quote in value %q: quote the whole value (%s=\"...\")", o.key, rest(s[vs:]), o.key)
					}
					i++
				}
				o.value = s[vs:i]
			}
		}
		opts = append(opts, o)
	}
}

// quotedEnd returns the length of the Go string literal at the start of s.
func quotedEnd(s string) (int, error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated quoted value %s", s)
}

// rest shortens s for an error message.
func rest(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// knownOptions lists the options for error messages.
const knownOptions = "name, title, description, readOnly, destructive, idempotent, openWorld, icon, meta.<key>, outputSchema, default.<param>"

// toolOptions are the parsed options of one tool's directive lines.
type toolOptions struct {
	name, title, description string
	hasName                  bool
	hasDescription           bool
	hints                    [4]*bool // readOnly, destructive, idempotent, openWorld
	icons                    []string
	meta                     []metaEntry
	outputSchema             string
	defaults                 map[string]string
	defaultOrder             []string
}

type metaEntry struct {
	key, value string
	quoted     bool
}

// hintNames are the annotation options, in ToolAnnotations field order.
var hintNames = [4]string{"readOnly", "destructive", "idempotent", "openWorld"}

// hintFields are the matching fields of domain.ToolAnnotations.
var hintFields = [4]string{"ReadOnlyHint", "DestructiveHint", "IdempotentHint", "OpenWorldHint"}

// parseOptions interprets a directive's text (after //mcp:tool) into o.
// seen records the single-valued options already given, across the lines
// of one doc comment.
func parseOptions(text string, o *toolOptions, seen map[string]bool) error {
	opts, err := splitOptions(text)
	if err != nil {
		return err
	}
	for _, op := range opts {
		key := op.key
		if key != "icon" {
			if seen[key] {
				return fmt.Errorf("option %s given twice", key)
			}
			seen[key] = true
		}
		needValue := func() error {
			if !op.hasValue {
				return fmt.Errorf("option %s needs a value (%s=...)", op.key, op.key)
			}
			return nil
		}
		switch {
		case op.key == "name":
			if err := needValue(); err != nil {
				return err
			}
			o.name, o.hasName = op.value, true
		case op.key == "title":
			if err := needValue(); err != nil {
				return err
			}
			o.title = op.value
		case op.key == "description":
			if err := needValue(); err != nil {
				return err
			}
			o.description, o.hasDescription = op.value, true
		case op.key == "icon":
			if err := needValue(); err != nil {
				return err
			}
			if op.value == "" {
				return fmt.Errorf("option icon needs a URL or the name of a variable or constant")
			}
			o.icons = append(o.icons, op.value)
		case op.key == "outputSchema":
			if err := needValue(); err != nil {
				return err
			}
			if op.value == "" {
				return fmt.Errorf("option outputSchema needs a type")
			}
			o.outputSchema = op.value
		case strings.HasPrefix(op.key, "meta."):
			k := strings.TrimPrefix(op.key, "meta.")
			if k == "" {
				return fmt.Errorf("option meta.<key> needs a key: meta.example.com/category=math")
			}
			if err := needValue(); err != nil {
				return err
			}
			o.meta = append(o.meta, metaEntry{key: k, value: op.value, quoted: op.quoted})
		case strings.HasPrefix(op.key, "default."):
			p := strings.TrimPrefix(op.key, "default.")
			if p == "" {
				return fmt.Errorf("option default.<param> needs a parameter name: default.limit=10")
			}
			if err := needValue(); err != nil {
				return err
			}
			if o.defaults == nil {
				o.defaults = map[string]string{}
			}
			o.defaults[p] = op.value
			o.defaultOrder = append(o.defaultOrder, p)
		default:
			idx := -1
			for i, h := range hintNames {
				if op.key == h {
					idx = i
				}
			}
			if idx < 0 {
				return fmt.Errorf("unknown option %q (known options: %s)", op.key, knownOptions)
			}
			b := true
			if op.hasValue {
				switch op.value {
				case "true":
				case "false":
					b = false
				default:
					return fmt.Errorf("option %s takes true or false, not %q", op.key, op.value)
				}
			}
			o.hints[idx] = &b
		}
	}
	return nil
}
