package jsonschema

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"sort"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaFields classifies every exported field of the library's compiled
// schema (sjs.Schema) for the fast path: checked (fast.go and rules.go
// mirror it), fallback (fast.go gives up and the library validates) or
// ignored (it holds an annotation, an identifier or bookkeeping that never
// changes whether a value is valid). A library upgrade that adds a field fails
// TestFastPathKnowsEveryLibraryField until the field is classified here and,
// if it asserts anything, handled in fast.go and rules.go.
var schemaFields = map[string]string{
	"DraftVersion": "ignored", "Location": "ignored",
	"ID": "ignored", "Anchor": "ignored", "RecursiveAnchor": "ignored", "DynamicAnchor": "ignored",
	"Title": "ignored", "Description": "ignored", "Default": "ignored", "Comment": "ignored",
	"ReadOnly": "ignored", "WriteOnly": "ignored", "Examples": "ignored", "Deprecated": "ignored",

	"Bool": "checked", "Ref": "checked", "Types": "checked", "Enum": "checked", "Const": "checked",
	"Not": "checked", "AllOf": "checked", "AnyOf": "checked", "OneOf": "checked",
	"If": "checked", "Then": "checked", "Else": "checked", "Format": "checked",
	"MaxProperties": "checked", "MinProperties": "checked", "Required": "checked",
	"PropertyNames": "checked", "Properties": "checked", "PatternProperties": "checked",
	"AdditionalProperties": "checked", "Dependencies": "checked", "DependentRequired": "checked",
	"DependentSchemas": "checked",
	"MinItems":         "checked", "MaxItems": "checked", "UniqueItems": "checked", "Contains": "checked",
	"MinContains": "checked", "MaxContains": "checked", "Items": "checked", "AdditionalItems": "checked",
	"PrefixItems": "checked", "Items2020": "checked",
	"MinLength": "checked", "MaxLength": "checked", "Pattern": "checked",
	"Maximum": "checked", "Minimum": "checked", "ExclusiveMaximum": "checked", "ExclusiveMinimum": "checked",
	"MultipleOf": "checked",

	"RecursiveRef": "fallback", "DynamicRef": "fallback", "Extensions": "fallback",
	"UnevaluatedProperties": "fallback", "UnevaluatedItems": "fallback",
	"ContentEncoding": "fallback", "ContentMediaType": "fallback", "ContentSchema": "fallback",
}

func TestFastPathKnowsEveryLibraryField(t *testing.T) {
	typ := reflect.TypeFor[sjs.Schema]()
	seen := map[string]bool{}
	for f := range typ.Fields() {
		if !f.IsExported() {
			continue
		}
		seen[f.Name] = true
		if _, ok := schemaFields[f.Name]; !ok {
			t.Errorf("sjs.Schema has field %s (%s) that the fast path does not know: handle it in fast.go and rules.go "+
				"(or make buildFast return nil when it is set) and classify it in schemaFields", f.Name, f.Type)
		}
	}
	for name := range schemaFields {
		if !seen[name] {
			t.Errorf("schemaFields lists %s, which sjs.Schema no longer has", name)
		}
	}
}

// keywordSamples is a small schema for every keyword of the draft 2020-12
// vocabularies (and the legacy keywords its meta-schema still lists), with
// what the fast path must do with it: "checked" (a checker is built),
// "fallback" (no checker: the library alone validates) or "ignored" (an
// annotation; a checker is built and the keyword changes nothing).
var keywordSamples = map[string]struct{ schema, want string }{
	"$id":              {`{"$id":"https://example.com/s","type":"string"}`, "ignored"},
	"$schema":          {`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string"}`, "ignored"},
	"$ref":             {`{"$defs":{"a":{"type":"string"}},"$ref":"#/$defs/a"}`, "checked"},
	"$anchor":          {`{"$defs":{"a":{"$anchor":"x","type":"string"}},"$ref":"#x"}`, "ignored"},
	"$dynamicRef":      {`{"$dynamicAnchor":"n","$defs":{"a":{"$dynamicRef":"#n"}},"properties":{"p":{"$ref":"#/$defs/a"}}}`, "fallback"},
	"$dynamicAnchor":   {`{"$dynamicAnchor":"n","type":"object"}`, "ignored"},
	"$vocabulary":      {`{"$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/core":true},"type":"object"}`, "ignored"},
	"$comment":         {`{"$comment":"c","type":"string"}`, "ignored"},
	"$defs":            {`{"$defs":{"a":{"type":"string"}},"type":"string"}`, "ignored"},
	"definitions":      {`{"definitions":{"a":{"type":"string"}},"$ref":"#/definitions/a"}`, "checked"},
	"dependencies":     {`{"dependencies":{"a":["b"]}}`, "checked"},
	"$recursiveAnchor": {`{"$recursiveAnchor":"a","type":"object"}`, "ignored"},
	"$recursiveRef":    {`{"$recursiveRef":"#"}`, "fallback"},

	"prefixItems":          {`{"prefixItems":[{"type":"string"}]}`, "checked"},
	"items":                {`{"items":{"type":"string"}}`, "checked"},
	"contains":             {`{"contains":{"type":"string"}}`, "checked"},
	"additionalProperties": {`{"additionalProperties":false}`, "checked"},
	"properties":           {`{"properties":{"a":{"type":"string"}}}`, "checked"},
	"patternProperties":    {`{"patternProperties":{"^a":{"type":"string"}}}`, "checked"},
	"dependentSchemas":     {`{"dependentSchemas":{"a":{"required":["b"]}}}`, "checked"},
	"propertyNames":        {`{"propertyNames":{"maxLength":3}}`, "checked"},
	"if":                   {`{"if":{"type":"string"},"then":{"minLength":1},"else":{"type":"number"}}`, "checked"},
	"then":                 {`{"if":{"type":"string"},"then":{"minLength":1}}`, "checked"},
	"else":                 {`{"if":{"type":"string"},"else":{"type":"number"}}`, "checked"},
	"allOf":                {`{"allOf":[{"type":"string"}]}`, "checked"},
	"anyOf":                {`{"anyOf":[{"type":"string"}]}`, "checked"},
	"oneOf":                {`{"oneOf":[{"type":"string"}]}`, "checked"},
	"not":                  {`{"not":{"type":"string"}}`, "checked"},

	"unevaluatedItems":      {`{"unevaluatedItems":false}`, "fallback"},
	"unevaluatedProperties": {`{"unevaluatedProperties":false}`, "fallback"},

	"type":              {`{"type":"string"}`, "checked"},
	"const":             {`{"const":1}`, "checked"},
	"enum":              {`{"enum":[1,2]}`, "checked"},
	"multipleOf":        {`{"multipleOf":2}`, "checked"},
	"maximum":           {`{"maximum":2}`, "checked"},
	"exclusiveMaximum":  {`{"exclusiveMaximum":2}`, "checked"},
	"minimum":           {`{"minimum":2}`, "checked"},
	"exclusiveMinimum":  {`{"exclusiveMinimum":2}`, "checked"},
	"maxLength":         {`{"maxLength":2}`, "checked"},
	"minLength":         {`{"minLength":2}`, "checked"},
	"pattern":           {`{"pattern":"^a"}`, "checked"},
	"maxItems":          {`{"maxItems":2}`, "checked"},
	"minItems":          {`{"minItems":2}`, "checked"},
	"uniqueItems":       {`{"uniqueItems":true}`, "checked"},
	"maxContains":       {`{"contains":{"type":"string"},"maxContains":2}`, "checked"},
	"minContains":       {`{"contains":{"type":"string"},"minContains":2}`, "checked"},
	"maxProperties":     {`{"maxProperties":2}`, "checked"},
	"minProperties":     {`{"minProperties":2}`, "checked"},
	"required":          {`{"required":["a"]}`, "checked"},
	"dependentRequired": {`{"dependentRequired":{"a":["b"]}}`, "checked"},

	"title":       {`{"title":"t","type":"string"}`, "ignored"},
	"description": {`{"description":"d","type":"string"}`, "ignored"},
	"default":     {`{"default":"x","type":"string"}`, "ignored"},
	"deprecated":  {`{"deprecated":true,"type":"string"}`, "ignored"},
	"readOnly":    {`{"readOnly":true,"type":"string"}`, "ignored"},
	"writeOnly":   {`{"writeOnly":true,"type":"string"}`, "ignored"},
	"examples":    {`{"examples":["x"],"type":"string"}`, "ignored"},

	"format": {`{"format":"email"}`, "checked"},

	// The validator does not assert content (annotations in 2020-12), so
	// the library leaves these fields unset and the fast path is built.
	"contentEncoding":  {`{"contentEncoding":"base64"}`, "ignored"},
	"contentMediaType": {`{"contentMediaType":"application/json"}`, "ignored"},
	"contentSchema":    {`{"contentMediaType":"application/json","contentSchema":{"type":"object"}}`, "ignored"},
}

// metaKeywords returns the keywords the library's draft 2020-12 meta-schema
// and its vocabulary meta-schemas (embedded in the library) declare.
func metaKeywords(t *testing.T) []string {
	t.Helper()
	c := sjs.NewCompiler()
	meta, err := c.Compile("https://json-schema.org/draft/2020-12/schema")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	var walk func(s *sjs.Schema)
	seen := map[*sjs.Schema]bool{}
	walk = func(s *sjs.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		for k := range s.Properties {
			set[k] = true
		}
		for _, sub := range s.AllOf {
			walk(sub)
		}
		walk(s.Ref)
	}
	walk(meta)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestFastPathCoversDraft202012Vocabulary(t *testing.T) {
	kws := metaKeywords(t)
	if len(kws) < 50 {
		t.Fatalf("only %d keywords found in the 2020-12 meta-schemas: %v", len(kws), kws)
	}
	for _, kw := range kws {
		if _, ok := keywordSamples[kw]; !ok {
			t.Errorf("the draft 2020-12 meta-schema declares %q, which the fast path's keyword table does not know: "+
				"add a sample to keywordSamples and handle it in fast.go and rules.go, or make buildFast fall back on it", kw)
		}
	}
	v := newValidator(WithDefaultDraft(Draft202012))
	for _, kw := range slices.Sorted(maps.Keys(keywordSamples)) {
		sample := keywordSamples[kw]
		s, err := v.compile(json.RawMessage(sample.schema))
		if err != nil {
			t.Errorf("%s: %s does not compile: %v", kw, sample.schema, err)
			continue
		}
		switch sample.want {
		case "fallback":
			if s.fast != nil {
				t.Errorf("%s: %s got a fast-path checker; it must fall back to the library", kw, sample.schema)
			}
		default:
			if s.fast == nil {
				t.Errorf("%s: %s got no fast-path checker (want %s)", kw, sample.schema, sample.want)
			}
		}
	}
}
