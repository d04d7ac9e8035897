package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// Test types are prefixed with "sch" so they do not clash with other tests
// of the package.

type schOp string

type schBlob []byte

type schText struct{ v string }

func (t schText) MarshalText() ([]byte, error) { return []byte(t.v), nil }

type schMarshaler struct{ V int }

func (m *schMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

type schColor string

func (schColor) JSONSchema() json.RawMessage {
	return json.RawMessage(`{ "type": "string", "enum": ["red", "green"] }`)
}

type schPtrSchema struct{ X int }

func (*schPtrSchema) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"description":"by pointer","type":"object"}`)
}

type schBadSchema struct{}

func (schBadSchema) JSONSchema() json.RawMessage { return json.RawMessage(`{"type":`) }

type schPanicSchema struct{ m map[string]int }

func (p schPanicSchema) JSONSchema() json.RawMessage {
	p.m["x"] = 1 // nil map: panics
	return nil
}

type schArraySchema struct{}

func (schArraySchema) JSONSchema() json.RawMessage { return json.RawMessage(`[1]`) }

type schPoint struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type schNested struct {
	Name   string              `json:"name"`
	Origin schPoint            `json:"origin"`
	Path   []schPoint          `json:"path"`
	ByName map[string]schPoint `json:"byName"`
	Opt    *schPoint           `json:"opt"`
}

type schOptional struct {
	A string  `json:"a"`
	B string  `json:"b,omitempty"`
	C *string `json:"c"`
	D int     `json:"d,omitzero"`
	E *int    `json:"e,omitempty"`
	F []int   `json:",omitempty"`
	G string  `json:"-"`
	H string  `json:"-,"`
	I bool
	j int
}

type schBase struct {
	ID   string `json:"id"`
	Kind string
}

type schMeta struct {
	Kind    string // same depth as schBase.Kind, neither tagged: both dropped
	Version int    `json:"version"`
}

type schLink struct {
	Href string `json:"href"`
}

type schhidden struct {
	Secret string `json:"secret"`
}

type schEmbedded struct {
	schBase
	schMeta
	*schLink
	schhidden
	Own   string  `json:"own"`
	Named schBase `json:"named"`
	schOp
	ID string `json:"id"` // shallower than schBase.ID: wins
}

type schUntaggedConflict struct {
	schTaggedX
	schPlainX
}

type schTaggedX struct {
	X int `json:"X"`
}

type schPlainX struct {
	X string
}

type schDup1 struct{ schDupInner }

type schDup2 struct{ schDupInner }

type schDupInner struct{ Z int }

type schDuplicate struct {
	schDup1
	schDup2
	W int
}

type schNode struct {
	Value    int        `json:"value"`
	Children []*schNode `json:"children,omitempty"`
}

type schA struct {
	B *schB `json:"b"`
}

type schB struct {
	A    *schA `json:"a"`
	Name string
}

type schTree []schTree

type schRecursiveHolder struct {
	First  *schNode `json:"first" description:"the head"`
	Second schNode  `json:"second"`
}

type schString struct {
	N int64   `json:"n,string"`
	F float32 `json:"f,string" default:"1.5"`
	B *bool   `json:"b,string" enum:"true"`
	S string  `json:"s,string" enum:"a"`
	L []int   `json:"l,string"`
}

type schTags struct {
	Name  string         `json:"name" title:"Name" description:"Who \"you\" are <b>" minLength:"1" maxLength:"20" pattern:"^[a-z]+$" format:"hostname"`
	Age   uint8          `json:"age" minimum:"18" exclusiveMaximum:"130" multipleOf:"1"`
	Score float64        `json:"score" exclusiveMinimum:"-1.5" maximum:"1e3"`
	Mode  schOp          `json:"mode" enum:"fast, slow,safe"`
	Level int            `json:"level" enum:"1,2,3" default:"2"`
	Ratio float32        `json:"ratio" enum:"0.5,1e-1" default:"0.25"`
	On    bool           `json:"on" enum:"true" default:"true"`
	Items []string       `json:"items" minItems:"1" maxItems:"5" uniqueItems:"true" default:"[\"a\", \"b\"]"`
	Date  string         `json:"date" default:""`
	Any   any            `json:"any" default:" {\"k\": [1, 2]} "`
	Map   map[string]int `json:"map" default:"{}"`
	When  time.Time      `json:"when" format:"date"`
	Color schColor       `json:"color" title:"Color" description:"Pick one" default:"green"`
	Empty string         `json:"empty" description:"" enum:""`
}

type schEmpty struct {
	hidden int
}

type schOdd struct {
	Err   error
	Iface fmt.Stringer
	Raw   json.RawMessage
	RawP  *json.RawMessage
	Num   json.Number
	Dur   time.Duration
	Text  schText
	Marsh schMarshaler
	PP    **int
	Bytes [2]byte
	Blob  schBlob
	Keys  map[schText]int
	Ints  map[int8]bool
	Empty struct{}
	Zero  [0]int
}

type schSelfPtr *schSelfPtr

func TestInferSchemaGolden(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"bool", reflect.TypeFor[bool](), `{"type":"boolean"}`},
		{"string", reflect.TypeFor[string](), `{"type":"string"}`},
		{"int", reflect.TypeFor[int](), `{"type":"integer"}`},
		{"int8", reflect.TypeFor[int8](), `{"type":"integer"}`},
		{"uint", reflect.TypeFor[uint](), `{"type":"integer","minimum":0}`},
		{"uint16", reflect.TypeFor[uint16](), `{"type":"integer","minimum":0}`},
		{"uintptr", reflect.TypeFor[uintptr](), `{"type":"integer","minimum":0}`},
		{"float32", reflect.TypeFor[float32](), `{"type":"number"}`},
		{"float64", reflect.TypeFor[float64](), `{"type":"number"}`},
		{"pointer", reflect.TypeFor[**string](), `{"type":"string"}`},
		{"named string", reflect.TypeFor[schOp](), `{"type":"string"}`},
		{"any", reflect.TypeFor[any](), `{}`},
		{"raw message", reflect.TypeFor[json.RawMessage](), `{}`},
		{"json number", reflect.TypeFor[json.Number](), `{"type":"number"}`},
		{"time", reflect.TypeFor[time.Time](), `{"type":"string","format":"date-time"}`},
		{"bytes", reflect.TypeFor[[]byte](), `{"type":"string","contentEncoding":"base64"}`},
		{"named bytes", reflect.TypeFor[schBlob](), `{"type":"string","contentEncoding":"base64"}`},
		{"byte array", reflect.TypeFor[[4]byte](), `{"type":"array","items":{"type":"integer","minimum":0},"minItems":4,"maxItems":4}`},
		{"slice", reflect.TypeFor[[]string](), `{"type":"array","items":{"type":"string"}}`},
		{"array", reflect.TypeFor[[2]bool](), `{"type":"array","items":{"type":"boolean"},"minItems":2,"maxItems":2}`},
		{"slice of slices", reflect.TypeFor[[][]int](), `{"type":"array","items":{"type":"array","items":{"type":"integer"}}}`},
		{"map", reflect.TypeFor[map[string]int](), `{"type":"object","additionalProperties":{"type":"integer"}}`},
		{"map int key", reflect.TypeFor[map[uint64][]float64](), `{"type":"object","additionalProperties":{"type":"array","items":{"type":"number"}}}`},
		{"map text key", reflect.TypeFor[map[schText]any](), `{"type":"object","additionalProperties":{}}`},
		{"text marshaler", reflect.TypeFor[schText](), `{"type":"string"}`},
		{"json marshaler (pointer receiver)", reflect.TypeFor[schMarshaler](), `{}`},
		{"custom schema", reflect.TypeFor[schColor](), `{"type":"string","enum":["red","green"]}`},
		{"custom schema (pointer receiver)", reflect.TypeFor[*schPtrSchema](), `{"description":"by pointer","type":"object"}`},
		{"empty struct", reflect.TypeFor[schEmpty](), `{"type":"object","properties":{},"additionalProperties":false}`},
		{"nested structs", reflect.TypeFor[schNested](),
			`{"type":"object","properties":{` +
				`"name":{"type":"string"},` +
				`"origin":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false},` +
				`"path":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}},` +
				`"byName":{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}},` +
				`"opt":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}` +
				`},"required":["name","origin","path","byName"],"additionalProperties":false}`},
		{"optional fields", reflect.TypeFor[schOptional](),
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"integer"},"e":{"type":"integer"},` +
				`"F":{"type":"array","items":{"type":"integer"}},"-":{"type":"string"},"I":{"type":"boolean"}},` +
				`"required":["a","-","I"],"additionalProperties":false}`},
		{"embedded structs", reflect.TypeFor[schEmbedded](),
			`{"type":"object","properties":{` +
				`"version":{"type":"integer"},` +
				`"href":{"type":"string"},` +
				`"secret":{"type":"string"},` +
				`"own":{"type":"string"},` +
				`"named":{"type":"object","properties":{"id":{"type":"string"},"Kind":{"type":"string"}},"required":["id","Kind"],"additionalProperties":false},` +
				`"id":{"type":"string"}` +
				`},"required":["version","secret","own","named","id"],"additionalProperties":false}`},
		{"tagged field beats untagged", reflect.TypeFor[schUntaggedConflict](),
			`{"type":"object","properties":{"X":{"type":"integer"}},"required":["X"],"additionalProperties":false}`},
		{"same struct embedded twice", reflect.TypeFor[schDuplicate](),
			`{"type":"object","properties":{"W":{"type":"integer"}},"required":["W"],"additionalProperties":false}`},
		{"string option", reflect.TypeFor[schString](),
			`{"type":"object","properties":{` +
				`"n":{"type":"string"},` +
				`"f":{"type":"string","default":"1.5"},` +
				`"b":{"type":"string","enum":["true"]},` +
				`"s":{"type":"string","enum":["\"a\""]},` +
				`"l":{"type":"array","items":{"type":"integer"}}` +
				`},"required":["n","f","s","l"],"additionalProperties":false}`},
		{"tags", reflect.TypeFor[schTags](),
			`{"type":"object","properties":{` +
				`"name":{"type":"string","title":"Name","description":"Who \"you\" are <b>","format":"hostname","minLength":1,"maxLength":20,"pattern":"^[a-z]+$"},` +
				`"age":{"type":"integer","minimum":18,"exclusiveMaximum":130,"multipleOf":1},` +
				`"score":{"type":"number","exclusiveMinimum":-1.5,"maximum":1e3},` +
				`"mode":{"type":"string","enum":["fast","slow","safe"]},` +
				`"level":{"type":"integer","enum":[1,2,3],"default":2},` +
				`"ratio":{"type":"number","enum":[0.5,0.1],"default":0.25},` +
				`"on":{"type":"boolean","enum":[true],"default":true},` +
				`"items":{"type":"array","default":["a","b"],"items":{"type":"string"},"minItems":1,"maxItems":5,"uniqueItems":true},` +
				`"date":{"type":"string","default":""},` +
				`"any":{"default":{"k":[1,2]}},` +
				`"map":{"type":"object","default":{},"additionalProperties":{"type":"integer"}},` +
				`"when":{"type":"string","format":"date"},` +
				`"color":{"type":"string","title":"Color","description":"Pick one","enum":["red","green"],"default":"green"},` +
				`"empty":{"type":"string"}` +
				`},"required":["name","age","score","mode","level","ratio","on","items","date","any","map","when","color","empty"],"additionalProperties":false}`},
		{"odd types", reflect.TypeFor[schOdd](),
			`{"type":"object","properties":{` +
				`"Err":{},"Iface":{},"Raw":{},"RawP":{},` +
				`"Num":{"type":"number"},` +
				`"Dur":{"type":"integer"},` +
				`"Text":{"type":"string"},` +
				`"Marsh":{},` +
				`"PP":{"type":"integer"},` +
				`"Bytes":{"type":"array","items":{"type":"integer","minimum":0},"minItems":2,"maxItems":2},` +
				`"Blob":{"type":"string","contentEncoding":"base64"},` +
				`"Keys":{"type":"object","additionalProperties":{"type":"integer"}},` +
				`"Ints":{"type":"object","additionalProperties":{"type":"boolean"}},` +
				`"Empty":{"type":"object","properties":{},"additionalProperties":false},` +
				`"Zero":{"type":"array","items":{"type":"integer"},"minItems":0,"maxItems":0}` +
				`},"required":["Err","Iface","Raw","Num","Dur","Text","Marsh","Bytes","Blob","Keys","Ints","Empty","Zero"],"additionalProperties":false}`},
		{"recursive type", reflect.TypeFor[schNode](),
			`{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/schNode"}}},"required":["value"],"additionalProperties":false,` +
				`"$defs":{"schNode":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/schNode"}}},"required":["value"],"additionalProperties":false}}}`},
		{"recursive type used in fields", reflect.TypeFor[schRecursiveHolder](),
			`{"type":"object","properties":{"first":{"$ref":"#/$defs/schNode","description":"the head"},"second":{"$ref":"#/$defs/schNode"}},"required":["second"],"additionalProperties":false,` +
				`"$defs":{"schNode":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/schNode"}}},"required":["value"],"additionalProperties":false}}}`},
		{"mutually recursive types", reflect.TypeFor[schA](),
			`{"type":"object","properties":{"b":{"type":"object","properties":{"a":{"$ref":"#/$defs/schA"},"Name":{"type":"string"}},"required":["Name"],"additionalProperties":false}},"additionalProperties":false,` +
				`"$defs":{"schA":{"type":"object","properties":{"b":{"type":"object","properties":{"a":{"$ref":"#/$defs/schA"},"Name":{"type":"string"}},"required":["Name"],"additionalProperties":false}},"additionalProperties":false}}}`},
		{"recursive slice type", reflect.TypeFor[map[string]schTree](),
			`{"type":"object","additionalProperties":{"$ref":"#/$defs/schTree"},"$defs":{"schTree":{"type":"array","items":{"$ref":"#/$defs/schTree"}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InferSchema(tt.typ)
			if err != nil {
				t.Fatalf("InferSchema(%s): %v", tt.typ, err)
			}
			if string(got) != tt.want {
				t.Errorf("InferSchema(%s)\n got: %s\nwant: %s", tt.typ, got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("InferSchema(%s) is not valid JSON: %s", tt.typ, got)
			}
			again, _ := InferSchema(tt.typ)
			if string(again) != string(got) {
				t.Errorf("InferSchema(%s) is not deterministic:\n%s\n%s", tt.typ, got, again)
			}
		})
	}
}

func TestInferInputSchema(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"struct", reflect.TypeFor[schPoint](),
			`{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}`},
		{"pointer to struct", reflect.TypeFor[*schPoint](),
			`{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}`},
		{"empty struct", reflect.TypeFor[struct{}](), `{"type":"object","properties":{},"additionalProperties":false}`},
		{"map", reflect.TypeFor[map[string]any](), `{"type":"object","additionalProperties":{}}`},
		{"named string keys", reflect.TypeFor[map[schOp]int](), `{"type":"object","additionalProperties":{"type":"integer"}}`},
		{"custom object schema", reflect.TypeFor[schPtrSchema](), `{"description":"by pointer","type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InferInputSchema(tt.typ)
			if err != nil {
				t.Fatalf("InferInputSchema(%s): %v", tt.typ, err)
			}
			if string(got) != tt.want {
				t.Errorf("InferInputSchema(%s)\n got: %s\nwant: %s", tt.typ, got, tt.want)
			}
		})
	}
}

// Error cases.

type schBadEnumInt struct {
	N int `enum:"1,two"`
}

type schEnumRange struct {
	N int8 `enum:"1,300"`
}

type schEnumUint struct {
	N uint `enum:"-1"`
}

type schEnumDup struct {
	S string `enum:"a,b,a"`
}

type schEnumSlice struct {
	S []string `enum:"a"`
}

type schEnumBool struct {
	B bool `enum:"yes"`
}

type schMinString struct {
	S string `minimum:"1"`
}

type schMinBad struct {
	N int `minimum:"one"`
}

type schMinInf struct {
	N float64 `maximum:"1e999"`
}

type schMultipleZero struct {
	N int `multipleOf:"0"`
}

type schMinMax struct {
	N int `minimum:"10" maximum:"1"`
}

type schLenRange struct {
	S string `minLength:"5" maxLength:"2"`
}

type schLenNegative struct {
	S string `minLength:"-1"`
}

type schLenOnInt struct {
	N int `maxLength:"3"`
}

type schBadPattern struct {
	S string `pattern:"a(b"`
}

type schPatternInt struct {
	N int `pattern:"^1$"`
}

type schFormatInt struct {
	N int `format:"email"`
}

type schItemsOnString struct {
	S string `minItems:"1"`
}

type schItemsFixed struct {
	A [3]int `maxItems:"2"`
}

type schUniqueBad struct {
	A []int `uniqueItems:"yes"`
}

type schBadDefaultJSON struct {
	M map[string]int `default:"{a:1}"`
}

type schDefaultNotArray struct {
	L []int `default:"{}"`
}

type schDefaultInt struct {
	N int `default:"1.5"`
}

type schDefaultFloat struct {
	F float32 `default:"1e40"`
}

type schDefaultBool struct {
	B bool `default:"1"`
}

type schDefaultEmptyInt struct {
	N int `default:""`
}

type schStringOptionMin struct {
	N int `json:",string" minimum:"1"`
}

type schCustomEnum struct {
	C schColor `enum:"red"`
}

type schLevel int

func (schLevel) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type":"integer","minimum":1}`)
}

type schCustomBadDefault struct {
	L schLevel `default:"high"`
}

type schChanField struct {
	C chan int
}

type schFuncField struct {
	F func()
}

type schComplexField struct {
	C complex128
}

type schUnsafeField struct {
	P unsafe.Pointer
}

type schBadKey struct {
	M map[float64]string
}

type schDeepInner struct {
	X chan string
}

type schDeepMiddle struct {
	Inner []schDeepInner
}

type schDeepOuter struct {
	Outer map[string]schDeepMiddle
}

type schEmbeddedBad struct {
	schDeepInner
}

type schCustomBadField struct {
	B schBadSchema
}

type schCustomPanicField struct {
	P *schPanicSchema `json:"p"`
}

type schCustomArrayField struct {
	A schArraySchema
}

type schSelfPtrField struct {
	P schSelfPtr
}

func TestInferSchemaErrors(t *testing.T) {
	tests := []struct {
		name   string
		typ    reflect.Type
		input  bool // use InferInputSchema
		field  string
		reason string // a part of the reason
	}{
		{"bad enum for int", reflect.TypeFor[schBadEnumInt](), false, "N", `tag enum: "two" is not an integer`},
		{"enum out of range", reflect.TypeFor[schEnumRange](), false, "N", "300 is out of range for int8"},
		{"negative enum for uint", reflect.TypeFor[schEnumUint](), false, "N", "-1 is out of range for uint"},
		{"duplicate enum", reflect.TypeFor[schEnumDup](), false, "S", `tag enum lists "a" twice`},
		{"enum on slice", reflect.TypeFor[schEnumSlice](), false, "S", "tag enum is only allowed on string, integer, number or boolean fields, not on an array field"},
		{"bad bool enum", reflect.TypeFor[schEnumBool](), false, "B", `"yes" is not true or false`},
		{"minimum on string", reflect.TypeFor[schMinString](), false, "S", "tag minimum is only allowed on integer or number fields, not on a string field"},
		{"unparsable minimum", reflect.TypeFor[schMinBad](), false, "N", `tag minimum: "one" is not a finite JSON number`},
		{"infinite maximum", reflect.TypeFor[schMinInf](), false, "N", `tag maximum: "1e999" is not a finite JSON number`},
		{"multipleOf zero", reflect.TypeFor[schMultipleZero](), false, "N", "multipleOf must be greater than 0"},
		{"minimum above maximum", reflect.TypeFor[schMinMax](), false, "N", "minimum 10 is greater than maximum 1"},
		{"minLength above maxLength", reflect.TypeFor[schLenRange](), false, "S", "minLength 5 is greater than maxLength 2"},
		{"negative minLength", reflect.TypeFor[schLenNegative](), false, "S", `tag minLength: "-1" is not a non-negative integer`},
		{"maxLength on int", reflect.TypeFor[schLenOnInt](), false, "N", "tag maxLength is only allowed on string fields, not on an integer field"},
		{"bad pattern", reflect.TypeFor[schBadPattern](), false, "S", "tag pattern: error parsing regexp"},
		{"pattern on int", reflect.TypeFor[schPatternInt](), false, "N", "tag pattern is only allowed on string fields"},
		{"format on int", reflect.TypeFor[schFormatInt](), false, "N", "tag format is only allowed on string fields"},
		{"minItems on string", reflect.TypeFor[schItemsOnString](), false, "S", "tag minItems is only allowed on array fields, not on a string field"},
		{"maxItems on fixed array", reflect.TypeFor[schItemsFixed](), false, "A", "tag maxItems is not allowed on the fixed-size array [3]int"},
		{"bad uniqueItems", reflect.TypeFor[schUniqueBad](), false, "A", `tag uniqueItems: "yes" is not true or false`},
		{"bad default JSON", reflect.TypeFor[schBadDefaultJSON](), false, "M", `tag default: "{a:1}" is not valid JSON`},
		{"default of the wrong JSON type", reflect.TypeFor[schDefaultNotArray](), false, "L", "tag default: {} is not a JSON array"},
		{"fractional default for int", reflect.TypeFor[schDefaultInt](), false, "N", `tag default: "1.5" is not an integer`},
		{"default out of float32 range", reflect.TypeFor[schDefaultFloat](), false, "F", "1e40 is out of range for float32"},
		{"bad bool default", reflect.TypeFor[schDefaultBool](), false, "B", `tag default: "1" is not true or false`},
		{"empty default for int", reflect.TypeFor[schDefaultEmptyInt](), false, "N", `tag default: "" is not an integer`},
		{"numeric tag with string option", reflect.TypeFor[schStringOptionMin](), false, "N", "not on a string field (the ,string option makes it a string)"},
		{"enum on custom schema", reflect.TypeFor[schCustomEnum](), false, "C", "provides its own schema with a JSONSchema method"},
		{"bad default on custom schema", reflect.TypeFor[schCustomBadDefault](), false, "L", `tag default: "high" is not an integer`},
		{"chan field", reflect.TypeFor[schChanField](), false, "C", "unsupported type chan int (channel values cannot be represented in JSON)"},
		{"func field", reflect.TypeFor[schFuncField](), false, "F", "unsupported type func() (function values"},
		{"complex field", reflect.TypeFor[schComplexField](), false, "C", "unsupported type complex128 (complex number values"},
		{"unsafe pointer field", reflect.TypeFor[schUnsafeField](), false, "P", "unsupported type unsafe.Pointer"},
		{"bad map key", reflect.TypeFor[schBadKey](), false, "M", "unsupported map key type float64 in map[float64]string"},
		{"field path", reflect.TypeFor[schDeepOuter](), false, "Outer.Inner.X", "unsupported type chan string"},
		{"field path through embedding", reflect.TypeFor[schEmbeddedBad](), false, "schDeepInner.X", "unsupported type chan string"},
		{"invalid custom schema", reflect.TypeFor[schCustomBadField](), false, "B", "domain.schBadSchema.JSONSchema must return a JSON object"},
		{"panicking custom schema", reflect.TypeFor[schCustomPanicField](), false, "P", "domain.schPanicSchema.JSONSchema panicked: assignment to entry in nil map"},
		{"custom schema not an object", reflect.TypeFor[schCustomArrayField](), false, "A", "must return a JSON object, got \"[1]\""},
		{"pointer cycle", reflect.TypeFor[schSelfPtrField](), false, "P", "pointer type domain.schSelfPtr points to itself"},
		{"root chan", reflect.TypeFor[chan int](), false, "", "unsupported type chan int"},
		{"root func", reflect.TypeFor[func() error](), false, "", "unsupported type func() error"},
		{"non-struct input: string", reflect.TypeFor[string](), true, "", "tool input must be a struct or a map with string keys, not string"},
		{"non-struct input: slice", reflect.TypeFor[[]schPoint](), true, "", "tool input must be a struct or a map with string keys, not []domain.schPoint"},
		{"non-struct input: int map", reflect.TypeFor[map[int]string](), true, "", "tool input must be a struct or a map with string keys"},
		{"non-struct input: pointer cycle", reflect.TypeFor[schSelfPtr](), true, "", "points to itself"},
		{"input marshaler", reflect.TypeFor[schMarshaler](), true, "", "tool input must be described by an object schema, but domain.schMarshaler is described as {}"},
		{"input custom non-object", reflect.TypeFor[schColor](), true, "", "tool input must be a struct or a map with string keys, not domain.schColor"},
		{"input time", reflect.TypeFor[time.Time](), true, "", `is described as {"type":"string","format":"date-time"}`},
		{"input with bad field", reflect.TypeFor[*schChanField](), true, "C", "unsupported type chan int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			infer := InferSchema
			if tt.input {
				infer = InferInputSchema
			}
			got, err := infer(tt.typ)
			if err == nil {
				t.Fatalf("no error for %s, got schema %s", tt.typ, got)
			}
			if got != nil {
				t.Errorf("schema %s returned with the error", got)
			}
			var se *SchemaError
			if !errors.As(fmt.Errorf("wrapped: %w", err), &se) {
				t.Fatalf("error %v (%T) is not a *SchemaError", err, err)
			}
			if se.Type != tt.typ.String() {
				t.Errorf("Type = %q, want %q", se.Type, tt.typ.String())
			}
			if se.Field != tt.field {
				t.Errorf("Field = %q, want %q (reason %q)", se.Field, tt.field, se.Reason)
			}
			if !strings.Contains(se.Reason, tt.reason) {
				t.Errorf("Reason = %q, want it to contain %q", se.Reason, tt.reason)
			}
			if !strings.Contains(err.Error(), se.Reason) || !strings.Contains(err.Error(), se.Type) {
				t.Errorf("Error() = %q does not name the type and reason", err.Error())
			}
		})
	}
}

func TestInferSchemaNil(t *testing.T) {
	for _, infer := range []func(reflect.Type) (json.RawMessage, error){InferSchema, InferInputSchema} {
		_, err := infer(nil)
		var se *SchemaError
		if !errors.As(err, &se) || se.Reason != "the type is nil" {
			t.Errorf("nil type: got %v", err)
		}
	}
}

func TestSchemaErrorMessage(t *testing.T) {
	e := &SchemaError{Type: "main.Args", Field: "Filter.Min", Reason: "bad"}
	if got, want := e.Error(), "cannot infer JSON Schema for main.Args field Filter.Min: bad"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e.Field = ""
	if got, want := e.Error(), "cannot infer JSON Schema for main.Args: bad"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestInferSchemaValidJSON checks that every schema produced for a wide range
// of types, odd ones included, is valid JSON or a *SchemaError, and that
// nothing panics.
func TestInferSchemaValidJSON(t *testing.T) {
	types := []reflect.Type{
		reflect.TypeFor[schNested](), reflect.TypeFor[schOptional](), reflect.TypeFor[schEmbedded](),
		reflect.TypeFor[schTags](), reflect.TypeFor[schOdd](), reflect.TypeFor[schNode](), reflect.TypeFor[schA](),
		reflect.TypeFor[schB](), reflect.TypeFor[schTree](), reflect.TypeFor[schRecursiveHolder](),
		reflect.TypeFor[schString](), reflect.TypeFor[schDuplicate](), reflect.TypeFor[schUntaggedConflict](),
		reflect.TypeFor[[]map[string][2]*schNode](), reflect.TypeFor[map[schText][]schA](),
		reflect.TypeFor[error](), reflect.TypeFor[fmt.Stringer](), reflect.TypeFor[*any](),
		reflect.TypeFor[struct {
			A struct {
				B struct{ C []struct{ D *int } }
			}
		}](),
		reflect.TypeFor[struct {
			X string `json:"a\"b"`
			Y string `json:"\u00e9t\u00e9"`
			Z string `json:"tab\there"`
		}](),
		reflect.TypeFor[struct {
			T string `description:"line\nbreak \u2028 \x01 and bad utf8 \xff"`
		}](),
		reflect.TypeFor[chan int](), reflect.TypeFor[func()](), reflect.TypeFor[unsafe.Pointer](),
		reflect.TypeFor[complex64](), reflect.TypeFor[schSelfPtr](), reflect.TypeFor[map[[2]int]int](),
		reflect.TypeFor[map[*schText]int](), reflect.TypeFor[[]chan int](), reflect.TypeFor[struct{ c chan int }](),
	}
	for _, typ := range types {
		for _, infer := range []func(reflect.Type) (json.RawMessage, error){InferSchema, InferInputSchema} {
			got, err := infer(typ)
			if err != nil {
				var se *SchemaError
				if !errors.As(err, &se) {
					t.Errorf("%s: error %v is not a *SchemaError", typ, err)
				}
				continue
			}
			if !json.Valid(got) {
				t.Errorf("%s: invalid JSON %s", typ, got)
			}
			var root map[string]any
			if err := json.Unmarshal(got, &root); err != nil {
				t.Errorf("%s: schema is not an object: %s", typ, got)
			}
		}
	}
}

// TestInferSchemaTooLarge builds a type whose inline schema doubles at each
// of 16 levels: InferSchema must give up with a *SchemaError.
func TestInferSchemaTooLarge(t *testing.T) {
	typ := reflect.TypeFor[int]()
	for range 16 {
		typ = reflect.StructOf([]reflect.StructField{{Name: "L", Type: typ}, {Name: "R", Type: typ}})
	}
	_, err := InferSchema(typ)
	var se *SchemaError
	if !errors.As(err, &se) || !strings.Contains(se.Reason, "the schema is too large") {
		t.Fatalf("got %v, want a schema too large error", err)
	}
}

// TestInferSchemaMatchesEncodingJSON fills structs with non-zero values,
// marshals them with encoding/json and checks that the object keys are the
// schema's properties, in the same order.
func TestInferSchemaMatchesEncodingJSON(t *testing.T) {
	for _, value := range []any{
		// schFill cannot set unexported fields, such as the embedded
		// *schLink, so it is set here.
		&schEmbedded{schLink: &schLink{}}, &schOptional{}, &schNested{},
		&schUntaggedConflict{}, &schDuplicate{}, &schTags{}, &schString{},
	} {
		v := reflect.ValueOf(value)
		typ := v.Type().Elem()
		schFill(v.Elem(), 0)
		data, err := json.Marshal(v.Interface())
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		keys := schObjectKeys(t, data)
		schema, err := InferSchema(typ)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		var s struct {
			Properties json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(schema, &s); err != nil {
			t.Fatal(err)
		}
		props := schObjectKeys(t, s.Properties)
		if !slices.Equal(keys, props) {
			t.Errorf("%s: encoding/json keys %q, schema properties %q", typ, keys, props)
		}
	}
}

func schObjectKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// schFill sets v to a non-zero value, so that omitempty drops nothing.
func schFill(v reflect.Value, depth int) {
	if depth > 4 || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		schFill(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(1, 0).UTC()))
			return
		}
		for i := range v.NumField() {
			schFill(v.Field(i), depth+1)
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		schFill(v.Index(0), depth+1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case reflect.Interface:
		if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf(1))
		}
	}
}
