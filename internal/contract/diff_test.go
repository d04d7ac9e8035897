package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// lockOf builds a lock from a tools/list-like JSON text of tools.
func lockOf(t *testing.T, tools string) *Lock {
	t.Helper()
	l, err := Parse([]byte(`{"lockVersion":1,"protocolVersion":"2025-11-25","tools":` + tools + `}`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return l
}

// tool writes one tool with the given input schema properties and required
// list, and optional extra fields.
func tool(props, required, extra string) string {
	if required == "" {
		required = "[]"
	}
	s := `{"name":"t","inputSchema":{"type":"object","properties":` + props + `,"required":` + required + `}`
	if extra != "" {
		s += "," + extra
	}
	return "[" + s + "}]"
}

func TestCompareSchemas(t *testing.T) {
	base := `{"n":{"type":"integer","minimum":0,"maximum":10},"s":{"type":"string","enum":["a","b"],"maxLength":5}}`
	cases := []struct {
		name     string
		old, cur string
		want     []string // "B /ptr" (breaking) or "C /ptr" (compatible)
	}{
		{"same", tool(base, `["n"]`, ""), tool(base, `["n"]`, ""), nil},
		{"new required parameter",
			tool(base, `["n"]`, ""),
			tool(`{"n":{"type":"integer","minimum":0,"maximum":10},"s":{"type":"string","enum":["a","b"],"maxLength":5},"x":{"type":"string"}}`, `["n","x"]`, ""),
			[]string{"B /inputSchema/required"}},
		{"new optional parameter",
			tool(base, `["n"]`, ""),
			tool(`{"n":{"type":"integer","minimum":0,"maximum":10},"s":{"type":"string","enum":["a","b"],"maxLength":5},"x":{"type":"string"}}`, `["n"]`, ""),
			[]string{"C /inputSchema/properties/x"}},
		{"parameter removed",
			tool(base, `["n"]`, ""),
			tool(`{"n":{"type":"integer","minimum":0,"maximum":10}}`, `["n"]`, ""),
			[]string{"B /inputSchema/properties/s"}},
		{"parameter made required",
			tool(base, `["n"]`, ""), tool(base, `["n","s"]`, ""),
			[]string{"B /inputSchema/required"}},
		{"parameter made optional",
			tool(base, `["n"]`, ""), tool(base, `[]`, ""),
			[]string{"C /inputSchema/required"}},
		{"type narrowed",
			tool(`{"n":{"type":"number"}}`, "", ""), tool(`{"n":{"type":"integer"}}`, "", ""),
			[]string{"B /inputSchema/properties/n/type"}},
		{"type widened",
			tool(`{"n":{"type":"integer"}}`, "", ""), tool(`{"n":{"type":["integer","string"]}}`, "", ""),
			[]string{"C /inputSchema/properties/n/type"}},
		{"enum value removed",
			tool(base, "", ""),
			tool(`{"n":{"type":"integer","minimum":0,"maximum":10},"s":{"type":"string","enum":["a"],"maxLength":5}}`, "", ""),
			[]string{"B /inputSchema/properties/s/enum"}},
		{"enum value added",
			tool(base, "", ""),
			tool(`{"n":{"type":"integer","minimum":0,"maximum":10},"s":{"type":"string","enum":["a","b","c"],"maxLength":5}}`, "", ""),
			[]string{"C /inputSchema/properties/s/enum"}},
		{"bounds tightened",
			tool(base, "", ""),
			tool(`{"n":{"type":"integer","minimum":1,"maximum":9},"s":{"type":"string","enum":["a","b"],"maxLength":4}}`, "", ""),
			[]string{"B /inputSchema/properties/n/minimum", "B /inputSchema/properties/n/maximum", "B /inputSchema/properties/s/maxLength"}},
		{"bounds loosened",
			tool(base, "", ""),
			tool(`{"n":{"type":"integer","minimum":-1,"maximum":10.0},"s":{"type":"string","enum":["a","b"]}}`, "", ""),
			[]string{"C /inputSchema/properties/n/minimum", "C /inputSchema/properties/s/maxLength"}},
		{"bound added",
			tool(`{"q":{"type":"string"}}`, "", ""), tool(`{"q":{"type":"string","minLength":1}}`, "", ""),
			[]string{"B /inputSchema/properties/q/minLength"}},
		{"pattern changed",
			tool(`{"q":{"type":"string","pattern":"^a"}}`, "", ""), tool(`{"q":{"type":"string","pattern":"^b"}}`, "", ""),
			[]string{"B /inputSchema/properties/q/pattern"}},
		{"pattern removed",
			tool(`{"q":{"type":"string","pattern":"^a"}}`, "", ""), tool(`{"q":{"type":"string"}}`, "", ""),
			[]string{"C /inputSchema/properties/q/pattern"}},
		{"wording",
			tool(`{"q":{"type":"string","description":"a"}}`, "", `"description":"old"`),
			tool(`{"q":{"type":"string","description":"b"}}`, "", `"description":"new"`),
			[]string{"C /description", "C /inputSchema/properties/q/description"}},
		{"additional properties closed",
			tool(`{}`, "", ""), `[{"name":"t","inputSchema":{"type":"object","properties":{},"required":[],"additionalProperties":false}}]`,
			[]string{"B /inputSchema/additionalProperties"}},
		{"nested array item narrowed",
			tool(`{"l":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}}}}`, "", ""),
			tool(`{"l":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string","enum":["x"]}}}}}`, "", ""),
			[]string{"B /inputSchema/properties/l/items/properties/k/enum"}},
		{"ref followed",
			`[{"name":"t","inputSchema":{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"integer","maximum":5}}}}]`,
			`[{"name":"t","inputSchema":{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"integer","maximum":4}}}}]`,
			[]string{"B /inputSchema/properties/p/maximum"}},
		{"self-referencing ref ends",
			`[{"name":"t","inputSchema":{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}}}}]`,
			`[{"name":"t","inputSchema":{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}},"required":["next"]}}}}]`,
			[]string{"B /inputSchema/required"}},
		{"anyOf changed",
			tool(`{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}}`, "", ""),
			tool(`{"v":{"anyOf":[{"type":"string"}]}}`, "", ""),
			[]string{"B /inputSchema/properties/v/anyOf"}},
		{"anyOf wording only",
			tool(`{"v":{"anyOf":[{"type":"string","description":"x"}]}}`, "", ""),
			tool(`{"v":{"anyOf":[{"type":"string","description":"y"}]}}`, "", ""),
			nil},
		{"output schema removed",
			tool(`{}`, "", `"outputSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
			tool(`{}`, "", ""),
			[]string{"B /outputSchema"}},
		{"output schema added",
			tool(`{}`, "", ""),
			tool(`{}`, "", `"outputSchema":{"type":"object"}`),
			[]string{"C /outputSchema"}},
		{"output property made optional, another added",
			tool(`{}`, "", `"outputSchema":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
			tool(`{}`, "", `"outputSchema":{"type":"object","properties":{"id":{"type":"string"},"at":{"type":"string"}}}`),
			[]string{"B /outputSchema/required", "C /outputSchema/properties/at"}},
		{"output type widened, enum grown, bound loosened",
			tool(`{}`, "", `"outputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":5},"e":{"enum":["a"]}}}`),
			tool(`{}`, "", `"outputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":6},"e":{"enum":["a","b"]}}}`),
			[]string{"B /outputSchema/properties/e/enum", "B /outputSchema/properties/n/maximum", "B /outputSchema/properties/n/type"}},
		{"output narrowed is compatible",
			tool(`{}`, "", `"outputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":6}}}`),
			tool(`{}`, "", `"outputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":5}},"required":["n"]}`),
			[]string{"C /outputSchema/properties/n/maximum", "C /outputSchema/properties/n/type", "C /outputSchema/required"}},
		{"read-only to destructive",
			tool(`{}`, "", `"annotations":{"readOnlyHint":true}`),
			tool(`{}`, "", `"annotations":{"readOnlyHint":false,"destructiveHint":true}`),
			[]string{"B /annotations/readOnlyHint"}},
		{"destructive by default",
			tool(`{}`, "", `"annotations":{"readOnlyHint":false,"destructiveHint":false}`),
			tool(`{}`, "", `"annotations":{"readOnlyHint":false}`),
			[]string{"B /annotations/destructiveHint"}},
		{"made read-only",
			tool(`{}`, "", ``),
			tool(`{}`, "", `"annotations":{"readOnlyHint":true}`),
			[]string{"C /annotations/readOnlyHint"}},
		{"no longer idempotent, now open world",
			tool(`{}`, "", `"annotations":{"idempotentHint":true,"destructiveHint":false,"openWorldHint":false}`),
			tool(`{}`, "", `"annotations":{"destructiveHint":false}`),
			[]string{"B /annotations/idempotentHint", "B /annotations/openWorldHint"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(Compare(lockOf(t, tc.old), lockOf(t, tc.cur)))
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("changes = %q, want %q\n%s", got, want, describe(Compare(lockOf(t, tc.old), lockOf(t, tc.cur))))
			}
		})
	}
}

// summarize writes each change as "B /ptr" or "C /ptr", sorted and
// without repeats.
func summarize(cs []Change) []string {
	var out []string
	for _, c := range cs {
		tag := "C"
		if c.Breaking {
			tag = "B"
		}
		s := tag + " " + c.Pointer
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func describe(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintln(&b, c)
	}
	return b.String()
}

func TestCompareDefinitions(t *testing.T) {
	parse := func(s string) *Lock {
		l, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	old := parse(`{"lockVersion":1,"protocolVersion":"2025-11-25",
		"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}],
		"prompts":[{"name":"p","arguments":[{"name":"x","required":true},{"name":"y"},{"name":"z"}]}],
		"resources":[{"uri":"mem://r","name":"r","mimeType":"text/plain"},{"uri":"mem://gone","name":"g"}],
		"resourceTemplates":[{"uriTemplate":"mem://{id}","name":"t"}]}`)
	cur := parse(`{"lockVersion":1,"protocolVersion":"2025-11-25",
		"tools":[{"name":"b","inputSchema":{"type":"object"}},{"name":"c","inputSchema":{"type":"object"}}],
		"prompts":[{"name":"p","arguments":[{"name":"x"},{"name":"y","required":true},{"name":"w","required":true},{"name":"v"}]},{"name":"q"}],
		"resources":[{"uri":"mem://r","name":"r","mimeType":"application/json"}],
		"resourceTemplates":[]}`)
	got := Compare(old, cur)
	var lines []string
	for _, c := range got {
		lines = append(lines, fmt.Sprintf("%v %s %s %s", c.Breaking, c.Kind, c.Name, c.Pointer))
	}
	want := []string{
		"true tool a ",
		"true prompt p /arguments/w",
		"true prompt p /arguments/y/required",
		"true prompt p /arguments/z",
		"true resource mem://gone ",
		"true resource mem://r /mimeType",
		"true resourceTemplate mem://{id} ",
		"false tool c ",
		"false prompt p /arguments/v",
		"false prompt p /arguments/x/required",
		"false prompt q ",
	}
	slices.Sort(lines)
	slices.Sort(want)
	if !slices.Equal(lines, want) {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// Breaking changes come first.
	for i := 1; i < len(got); i++ {
		if got[i].Breaking && !got[i-1].Breaking {
			t.Errorf("a breaking change after a compatible one: %v", got)
		}
	}
	if n := len(Breaking(got)); n != 7 {
		t.Errorf("Breaking = %d, want 7", n)
	}
}

// pages serves list pages from a table.
type pages map[string][]string

func (p pages) List(_ context.Context, method, cursor string) (json.RawMessage, error) {
	ps, ok := p[method]
	if !ok {
		return nil, fmt.Errorf("%w (test)", ErrNoMethod)
	}
	i := 0
	if cursor != "" {
		fmt.Sscanf(cursor, "c%d", &i)
	}
	if i >= len(ps) {
		return nil, fmt.Errorf("cursor %q past the end", cursor)
	}
	return json.RawMessage(ps[i]), nil
}

func TestFetchPagesSortsAndMarshalsStably(t *testing.T) {
	src := pages{
		"tools/list": {
			`{"tools":[{"name":"z","inputSchema":{"type":"object"},"_meta":{"x":1},"icons":[{"src":"a"}]}],"nextCursor":"c1"}`,
			`{"tools":[{"name":"a","description":"<b>","inputSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1.50}}}}]}`,
		},
		"resources/list": {`{"resources":[]}`},
	}
	l, err := Fetch(t.Context(), src, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "lockVersion": 1,
  "protocolVersion": "2025-11-25",
  "tools": [
    {
      "description": "<b>",
      "inputSchema": {
        "properties": {
          "n": {
            "maximum": 1.50,
            "type": "number"
          }
        },
        "type": "object"
      },
      "name": "a"
    },
    {
      "inputSchema": {
        "type": "object"
      },
      "name": "z"
    }
  ],
  "prompts": [],
  "resources": [],
  "resourceTemplates": []
}
`
	if string(b) != want {
		t.Errorf("lock:\n%s\nwant:\n%s", b, want)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := again.Marshal(); string(b2) != string(b) {
		t.Errorf("a parsed lock marshals to other bytes:\n%s", b2)
	}
	if cs := Compare(l, again); len(cs) != 0 {
		t.Errorf("a lock differs from itself: %v", cs)
	}
}

func TestFetchRefusesBadServers(t *testing.T) {
	cases := map[string]pages{
		"cursor loop":   {"tools/list": {`{"tools":[],"nextCursor":"c0"}`}},
		"not an object": {"tools/list": {`[]`}},
		"nameless tool": {"tools/list": {`{"tools":[{"inputSchema":{}}]}`}},
		"not a tool":    {"tools/list": {`{"tools":[1]}`}},
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Fetch(t.Context(), src, "2025-11-25"); err == nil {
				t.Error("Fetch succeeded")
			}
		})
	}
}

func TestParseRefusesOtherFormats(t *testing.T) {
	for _, s := range []string{
		`{"lockVersion":2,"tools":[]}`,
		`{"lockVersion":1,"tools":[{"inputSchema":{}}]}`,
		`{"lockVersion":1} {}`,
		`not json`,
	} {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("Parse(%s) succeeded", s)
		}
	}
}
