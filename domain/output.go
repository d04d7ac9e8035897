package domain

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// nullText is the text sent for a tool that returns nil or nothing.
const nullText = "(null)"

// StructuredWarning says that a tool declares an outputSchema but returned a
// value that cannot be sent as structuredContent under the call's revision.
// The value still reaches the client as content. The engine logs it.
type StructuredWarning struct {
	Tool     string
	GoType   string
	Revision Revision
	shape    valueShape
}

// String is the log message.
func (w *StructuredWarning) String() string {
	return fmt.Sprintf("tool %q declares an outputSchema but returned %s (a %s), which revision %s cannot carry as structuredContent; sent as content only",
		w.Tool, w.GoType, w.shape, w.Revision)
}

// WrapOutcome is what RevisionPolicy.wrapValue decides for one call.
type WrapOutcome struct {
	// Result is ready to send (already shaped for the revision). Its
	// structuredContent, if any, must still be checked against the tool's
	// outputSchema.
	Result *CallToolResult
	// Warning is set when the outputSchema cannot be honoured.
	Warning *StructuredWarning
}

// WrapValue turns a tool's return value into its result for the revision,
// following the SDK's table:
//
//	string, number, bool        one text block ("true"/"false" for bools)
//	map, struct, slice          one text block holding its JSON
//	nil, void                   text "(null)"
//	Content                     that block
//	[]Content, []any of Content those blocks, in order
//	CallToolResult (or pointer) sent as it is
//
// and adds structuredContent where Features.allowsStructured says so.
// The JSON text block is always present next to structuredContent. Values are
// encoded with encoding/json, so json tags and Marshaler methods apply.
func (f Features) WrapValue(tool *Tool, value any) (WrapOutcome, error) {
	var out WrapOutcome
	declared := len(tool.OutputSchema) > 0
	var (
		text  string
		raw   json.RawMessage
		shape valueShape
	)
	switch v := value.(type) {
	case nil:
		shape, text = valueNull, nullText
	case *CallToolResult:
		if v == nil {
			shape, text = valueNull, nullText
			break
		}
		out.Result = f.ShapeResult(v)
		return out, nil
	case CallToolResult:
		out.Result = f.ShapeResult(&v)
		return out, nil
	case Content:
		if reflect.ValueOf(v).IsNil() {
			shape, text = valueNull, nullText
			break
		}
		out.Result = f.ShapeResult(&CallToolResult{Content: []Content{v}})
		out.Warning = f.warn(tool, value, valueContent)
		return out, nil
	case []Content:
		out.Result = f.ShapeResult(&CallToolResult{Content: v})
		out.Warning = f.warn(tool, value, valueContent)
		return out, nil
	case string:
		shape, text = valueScalar, v
	case bool:
		shape, text = valueScalar, strconv.FormatBool(v)
	case float64:
		shape, text = valueScalar, formatFloat(v, 64)
	case int:
		shape, text = valueScalar, strconv.Itoa(v)
	case json.RawMessage:
		var err error
		if shape, text, err = classifyJSON(v); err != nil {
			return out, err
		}
		raw = v
	default:
		var err error
		if blocks, ok := contentSlice(value); ok {
			out.Result = f.ShapeResult(&CallToolResult{Content: blocks})
			out.Warning = f.warn(tool, value, valueContent)
			return out, nil
		}
		if raw, err = json.Marshal(value); err != nil {
			return out, fmt.Errorf("tool %q: encoding its %T result: %w", tool.Name, value, err)
		}
		if shape, text, err = classifyJSON(raw); err != nil {
			return out, err
		}
	}
	res := &CallToolResult{Content: []Content{&TextContent{Text: text}}}
	if f.allowsStructured(shape, declared) {
		if raw == nil {
			var err error
			if raw, err = json.Marshal(value); err != nil {
				return out, fmt.Errorf("tool %q: encoding its %T result: %w", tool.Name, value, err)
			}
		}
		res.StructuredContent = raw
	} else {
		out.Warning = f.warn(tool, value, shape)
	}
	out.Result = res
	return out, nil
}

// wrapValue is [Features.WrapValue] of revision r's features.
func (p RevisionPolicy) wrapValue(tool *Tool, value any, r Revision) (WrapOutcome, error) {
	return p.Features(r).WrapValue(tool, value)
}

// warn returns a warning when tool declares an outputSchema that the client
// was told about (its revision has structuredContent) but the value cannot
// be sent as structuredContent. For older revisions the schema is not
// advertised, so nothing is promised and nothing is logged.
func (f Features) warn(tool *Tool, value any, shape valueShape) *StructuredWarning {
	if len(tool.OutputSchema) == 0 || !f.StructuredContent || f.shapeOutputSchema(tool.OutputSchema) == nil {
		return nil
	}
	typ := "nil"
	if value != nil {
		typ = fmt.Sprintf("%T", value)
	}
	return &StructuredWarning{Tool: tool.Name, GoType: typ, shape: shape, Revision: f.Revision}
}

// contentSlice recognises a slice whose every element is a Content block.
func contentSlice(value any) ([]Content, bool) {
	rv := reflect.ValueOf(value)
	if rv.Kind() != reflect.Slice || rv.Len() == 0 {
		return nil, false
	}
	et := rv.Type().Elem()
	if et.Kind() != reflect.Interface && !et.Implements(contentType) {
		return nil, false
	}
	out := make([]Content, rv.Len())
	for i := range out {
		c, ok := rv.Index(i).Interface().(Content)
		if !ok || c == nil {
			return nil, false
		}
		out[i] = c
	}
	return out, true
}

var contentType = reflect.TypeFor[Content]()

// classifyJSON finds the shape of an encoded value and its text form: the
// string itself for a JSON string, the JSON for anything else.
func classifyJSON(raw json.RawMessage) (valueShape, string, error) {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return valueObject, string(raw), nil
		case '[':
			return valueList, string(raw), nil
		case 'n':
			return valueNull, nullText, nil
		case '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return 0, "", fmt.Errorf("result is not valid JSON: %w", err)
			}
			return valueScalar, s, nil
		default:
			return valueScalar, string(raw[i:]), nil
		}
	}
	return 0, "", fmt.Errorf("result is empty JSON")
}
