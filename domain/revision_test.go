package domain_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/hexmcp/hexmcp/domain"
)

// What each revision knows, as the spec of each revision has it: every
// boolean of Features that is true for it, and only those. A feature moved
// to the wrong revision fails here, whatever the engine does with it.
func TestFeaturesByRevision(t *testing.T) {
	r0326 := []string{"ToolAnnotations", "AudioContent", "CompletionsCapability", "ResourceSubscriptions"}
	r0618 := append(slices.Clone(r0326), "ToolTitle", "OutputSchema", "StructuredContent", "ResourceLink", "Elicitation", "Meta", "LastModified")
	r1125 := append(slices.Clone(r0618), "Icons", "InputErrorsAsResults", "ElicitationURL", "SamplingTools", "SSEPriming")
	r0728 := slices.DeleteFunc(slices.Clone(r1125), func(f string) bool { return f == "SSEPriming" || f == "ResourceSubscriptions" })
	r0728 = append(r0728, "AnyStructuredContent", "ResultType", "InputRequired", "Caching", "ResourceNotFoundInvalidParams")
	for _, c := range []struct {
		rev  domain.Revision
		era  domain.Era
		want []string
	}{
		{domain.Revision20241105, domain.EraHandshake, []string{"ResourceSubscriptions"}},
		{domain.Revision20250326, domain.EraHandshake, append(slices.Clone(r0326), "Batches")},
		{domain.Revision20250618, domain.EraHandshake, r0618},
		{domain.Revision20251125, domain.EraHandshake, r1125},
		{domain.Revision20260728, domain.EraStateless, r0728},
	} {
		f := domain.RevisionPolicy{}.Features(c.rev)
		if f.Revision != c.rev || f.Era != c.era {
			t.Errorf("%s: revision %s, era %v; want %s, %v", c.rev, f.Revision, f.Era, c.rev, c.era)
		}
		var got []string
		v := reflect.ValueOf(f)
		for i := range v.NumField() {
			if v.Field(i).Kind() == reflect.Bool && v.Field(i).Bool() {
				got = append(got, v.Type().Field(i).Name)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s knows %v, want %v", c.rev, got, want)
		}
	}
}
