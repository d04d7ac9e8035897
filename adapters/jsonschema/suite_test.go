package jsonschema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkMessage checks that a validation error is fit for a client.
func checkMessage(t *testing.T, err error) {
	t.Helper()
	ve, ok := err.(*ValidationError)
	if !ok || len(ve.Problems) == 0 {
		t.Errorf("error %T %v: want *ValidationError with problems", err, err)
		return
	}
	msg := err.Error()
	if os.Getenv("SHOWMSG") != "" {
		t.Logf("MSG %s", msg)
	}
	for _, bad := range []string{"mem:", "file:", "%!", "jsonschema", "map[", "interface", "<nil>"} {
		if strings.Contains(msg, bad) {
			t.Errorf("message %q contains %q", msg, bad)
		}
	}
	for _, p := range ve.Problems {
		if p.Message == "" || (p.Path != "" && !strings.HasPrefix(p.Path, "/")) {
			t.Errorf("bad problem %+v", p)
		}
	}
}

// TestFastPathAgainstSuite checks the fast path against the library on the
// official JSON-Schema-Test-Suite, when JSON_SCHEMA_TEST_SUITE names a
// checkout of https://github.com/json-schema-org/JSON-Schema-Test-Suite:
// whenever the fast path says valid, the library must say valid too.
func TestFastPathAgainstSuite(t *testing.T) {
	dir := os.Getenv("JSON_SCHEMA_TEST_SUITE")
	if dir == "" {
		t.Skip("JSON_SCHEMA_TEST_SUITE not set")
	}
	drafts := map[string]Draft{
		"draft4": Draft4, "draft6": Draft6, "draft7": Draft7,
		"draft2019-09": Draft201909, "draft2020-12": Draft202012,
	}
	var cases, fastValid, libValid, noFast, wrongExpect int
	for name, d := range drafts {
		v := New(WithDefaultDraft(d))
		root := filepath.Join(dir, "tests", name)
		err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(path, ".json") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var groups []struct {
				Description string          `json:"description"`
				Schema      json.RawMessage `json:"schema"`
				Tests       []struct {
					Description string          `json:"description"`
					Data        json.RawMessage `json:"data"`
					Valid       bool            `json:"valid"`
				} `json:"tests"`
			}
			if err := json.Unmarshal(data, &groups); err != nil {
				return err
			}
			for _, g := range groups {
				s, err := v.compile(g.Schema)
				if err != nil {
					continue // remote refs and the like
				}
				if s.fast == nil {
					noFast += len(g.Tests)
				}
				for _, tc := range g.Tests {
					for _, useNumber := range []bool{false, true} {
						d := json.NewDecoder(bytes.NewReader(tc.Data))
						if useNumber {
							d.UseNumber()
						}
						var val any
						if err := d.Decode(&val); err != nil {
							t.Fatal(err)
						}
						cases++
						lib := s.s.Validate(val) == nil
						if err := s.Validate(val); (err == nil) != lib {
							t.Errorf("%s: %s / %s: Validate disagrees with the library", path, g.Description, tc.Description)
						} else if err != nil {
							checkMessage(t, err)
						}
						if lib {
							libValid++
						}
						if lib != tc.Valid && !useNumber {
							wrongExpect++
							if os.Getenv("SHOW") != "" {
								t.Logf("differs: %s: %s / %s", path, g.Description, tc.Description)
							}
						}
						if s.fast == nil {
							continue
						}
						fast := s.fast.check(val, 0)
						if fast == valid {
							fastValid++
						}
						if fast == valid && !lib {
							t.Errorf("%s: %s / %s (useNumber=%v): fast path says valid, library does not", path, g.Description, tc.Description, useNumber)
						}
						if fast == invalid && lib {
							t.Errorf("%s: %s / %s (useNumber=%v): fast path says invalid, library says valid", path, g.Description, tc.Description, useNumber)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d cases: library valid %d, fast path valid %d; %d without fast path; library differs from the suite on %d", cases, libValid, fastValid, noFast, wrongExpect)
}
