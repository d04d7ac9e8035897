package decl

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DescribeDecodeError says where a semantic decode error happened, without
// echoing internal type names.
func DescribeDecodeError(err error) string {
	var se *json.SemanticError
	if ok := asSemantic(err, &se); ok && se.JSONPointer != "" {
		kind := KindName(se.JSONKind)
		return "unexpected " + kind + " at " + string(se.JSONPointer)
	}
	return "malformed params"
}

func asSemantic(err error, target **json.SemanticError) bool {
	for err != nil {
		if se, ok := err.(*json.SemanticError); ok {
			*target = se
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// KindName names a JSON kind in words.
func KindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "value"
}
