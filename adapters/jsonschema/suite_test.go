package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// The copy of the official JSON-Schema-Test-Suite
// (github.com/json-schema-org/JSON-Schema-Test-Suite) that
// TestFastPathAgainstSuite runs by default. CUE's module vendors the suite at
// upstream commit 9fc880bfb6d8ccd093bc82431f17d13681ffae8e (2024-05-19) under
// encoding/jsonschema/testdata/external: tests/ for draft 4, 6, 7, 2019-09 and
// 2020-12 with their optional/ tests, re-indented and with CUE's own "skip"
// notes added, no remotes/. The Go module proxy serves it as a pinned,
// checksummed module zip; `make deps` puts it into the module cache (the
// Makefile names the same version) and this test reads it from there, never
// from the network. Moving to another version means changing both and
// suiteSum, the module's go.sum hash.
const (
	suiteModule  = "cuelang.org/go"
	suiteVersion = "v0.17.1"
	suiteSum     = "h1:liOkxZDqTHrzq0USJX+6bMYOZ5PSf+wzvQr15AHpDCQ="
	suiteSubdir  = "encoding/jsonschema/testdata/external"
)

// minSuiteCases is the fewest draft 2020-12 cases (tests times the two ways
// of decoding numbers) a run must see: the pinned copy has about 1,800, so
// fewer means the files were not found or not read.
const minSuiteCases = 1000

// inCI reports whether the test runs in CI (CI=true), where a missing suite
// is a failure rather than a skip.
func inCI() bool {
	ci := os.Getenv("CI")
	return ci != "" && ci != "false" && ci != "0"
}

// findSuite returns the directory holding the suite's tests/: the one
// JSON_SCHEMA_TEST_SUITE names (a checkout of the suite), else the pinned
// module in the module cache. Without either it skips the test, or fails it
// in CI.
func findSuite(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("JSON_SCHEMA_TEST_SUITE"); dir != "" {
		return dir
	}
	dir, sum, err := cachedModule(t.TempDir(), suiteModule, suiteVersion)
	if err != nil {
		msg := fmt.Sprintf("JSON-Schema-Test-Suite not found: %v; run `make deps` (go mod download %s@%s) "+
			"or set JSON_SCHEMA_TEST_SUITE to a checkout of the suite", err, suiteModule, suiteVersion)
		if inCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if sum != suiteSum {
		t.Fatalf("%s@%s in the module cache has hash %s, want %s", suiteModule, suiteVersion, sum, suiteSum)
	}
	return filepath.Join(dir, suiteSubdir)
}

// cachedModule returns the directory and hash of module@version if the
// module cache has it. It never downloads (GOPROXY=off).
func cachedModule(tmp, module, version string) (dir, sum string, err error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = tmp // outside any module: the main go.mod is not involved
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=", "GOWORK=off", "GO111MODULE=on")
	out, runErr := cmd.Output()
	var m struct{ Dir, Sum, Error string }
	if jerr := json.Unmarshal(out, &m); jerr != nil {
		if runErr == nil {
			runErr = jerr
		}
		return "", "", fmt.Errorf("go mod download: %w", runErr)
	}
	if m.Error != "" {
		return "", "", errors.New(m.Error)
	}
	if runErr != nil {
		return "", "", fmt.Errorf("go mod download: %w", runErr)
	}
	return m.Dir, m.Sum, nil
}

// suiteCounts counts one run over a draft's files.
type suiteCounts struct {
	files, groups, notCompiled    int // groups whose schema does not compile (remote $refs, ...)
	cases                         int // tests times the two ways of decoding numbers
	suiteValid, libValid          int
	libDiffers                    int // the library's answer is not the suite's
	noFast                        int // cases whose schema has no fast checker
	fastValid, fastInv, fastUnk   int
	fastValidSuiteInvalid         int // fast path and library say valid, the suite does not
	wrongValid, wrongInvalid, bad int // fast path contradicts the library; Validate contradicts it

	// the fast path over encoded JSON (numbers as float64 only)
	jsonCases, jsonUnsure int // cases; those it leaves unknown where check decides (a failure)
	jsonDiffers, jsonBad  int // it decides otherwise than check; ValidateJSON differs from Validate
}

func (c *suiteCounts) add(o suiteCounts) {
	c.files += o.files
	c.groups += o.groups
	c.notCompiled += o.notCompiled
	c.cases += o.cases
	c.suiteValid += o.suiteValid
	c.libValid += o.libValid
	c.libDiffers += o.libDiffers
	c.noFast += o.noFast
	c.fastValid += o.fastValid
	c.fastInv += o.fastInv
	c.fastUnk += o.fastUnk
	c.fastValidSuiteInvalid += o.fastValidSuiteInvalid
	c.wrongValid += o.wrongValid
	c.wrongInvalid += o.wrongInvalid
	c.bad += o.bad
	c.jsonCases += o.jsonCases
	c.jsonUnsure += o.jsonUnsure
	c.jsonDiffers += o.jsonDiffers
	c.jsonBad += o.jsonBad
}

func (c suiteCounts) String() string {
	return fmt.Sprintf("%d files, %d groups (%d not compiled), %d cases: suite valid %d, library valid %d, "+
		"library differs from the suite %d; fast path: valid %d, invalid %d, unknown %d, no checker %d; "+
		"fast path and library valid where the suite says invalid %d; "+
		"FAILURES: fast path valid where the library says invalid %d, invalid where it says valid %d, Validate differs from the library %d; "+
		"encoded: %d cases, FAILURES: unknown where check decides %d, decides otherwise than check %d, ValidateJSON differs from Validate %d",
		c.files, c.groups, c.notCompiled, c.cases, c.suiteValid, c.libValid, c.libDiffers,
		c.fastValid, c.fastInv, c.fastUnk, c.noFast, c.fastValidSuiteInvalid, c.wrongValid, c.wrongInvalid, c.bad,
		c.jsonCases, c.jsonUnsure, c.jsonDiffers, c.jsonBad)
}

// TestFastPathAgainstSuite runs the fast path and the library on every case
// of the official JSON-Schema-Test-Suite (findSuite says where it comes
// from), for each draft the package supports and with format assertions on
// and off. Wherever the fast path says valid, the library must say valid too
// (only valid is trusted; Validate returns it without asking the library);
// wherever the fast path says invalid, the library must agree; and Validate
// must give the library's answer. On the encoded value (numbers as
// float64), checkJSON must answer as check and ValidateJSON as Validate
// (see checkEncodedCase). Where the library itself differs from the
// suite (format assertions, optional tests) the cases are counted, not
// failed: the fast path mirrors the library, not the suite.
func TestFastPathAgainstSuite(t *testing.T) {
	dir := findSuite(t)
	drafts := []struct {
		name  string
		draft Draft
	}{
		{"draft2020-12", Draft202012}, {"draft2019-09", Draft201909},
		{"draft7", Draft7}, {"draft6", Draft6}, {"draft4", Draft4},
	}
	var total suiteCounts
	for _, d := range drafts {
		for _, formats := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/formats=%v", d.name, formats), func(t *testing.T) {
				v := newValidator(WithDefaultDraft(d.draft), WithFormatAssertions(formats))
				c := runSuiteDir(t, v, filepath.Join(dir, "tests", d.name))
				t.Log(c)
				total.add(c)
				if d.name == "draft2020-12" && c.cases < minSuiteCases {
					t.Errorf("only %d cases in %s: want at least %d", c.cases, d.name, minSuiteCases)
				}
				if c.cases-c.noFast == 0 {
					t.Errorf("the fast path ran on no case of %s", d.name)
				}
			})
		}
	}
	t.Logf("all drafts: %s", total)
}

// suiteGroup is one entry of a suite file: a schema and values to check.
type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// runSuiteDir checks every *.json file under root (optional/ included).
func runSuiteDir(t *testing.T, v *validator, root string) suiteCounts {
	t.Helper()
	var c suiteCounts
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var groups []suiteGroup
		if err := json.Unmarshal(data, &groups); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		c.files++
		rel, _ := filepath.Rel(root, path)
		for _, g := range groups {
			runSuiteGroup(t, v, rel, g, &c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runSuiteGroup(t *testing.T, v *validator, file string, g suiteGroup, c *suiteCounts) {
	t.Helper()
	c.groups++
	s, err := v.compile(g.Schema)
	if err != nil {
		c.notCompiled++ // remote $refs (never loaded) and the like
		if os.Getenv("SHOW") != "" {
			t.Logf("not compiled: %s: %s: %v", file, g.Description, err)
		}
		return
	}
	for _, tc := range g.Tests {
		for _, useNumber := range []bool{false, true} {
			where := fmt.Sprintf("%s: %s / %s (numbers as json.Number: %v)", file, g.Description, tc.Description, useNumber)
			d := json.NewDecoder(bytes.NewReader(tc.Data))
			if useNumber {
				d.UseNumber()
			}
			var val any
			if err := d.Decode(&val); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			c.cases++
			if tc.Valid {
				c.suiteValid++
			}
			lib := s.s.Validate(val) == nil
			if lib {
				c.libValid++
			}
			if lib != tc.Valid {
				c.libDiffers++
				if os.Getenv("SHOW") != "" {
					t.Logf("library differs from the suite: %s", where)
				}
			}
			verr := s.Validate(val)
			if (verr == nil) != lib {
				c.bad++
				t.Errorf("%s: Validate says %v, the library %v", where, verr, lib)
			} else if verr != nil {
				checkMessage(t, verr)
			}
			if !useNumber {
				checkEncodedCase(t, s, tc.Data, val, verr, where, c)
			}
			if s.fast == nil {
				c.noFast++
				continue
			}
			switch s.fast.check(val, 0) {
			case valid:
				c.fastValid++
				if !lib {
					c.wrongValid++
					t.Errorf("%s: fast path says valid, the library does not", where)
				} else if !tc.Valid {
					c.fastValidSuiteInvalid++
					if os.Getenv("SHOW") != "" {
						t.Logf("fast path and library valid, suite invalid: %s", where)
					}
				}
			case invalid:
				c.fastInv++
				if lib {
					c.wrongInvalid++
					t.Errorf("%s: fast path says invalid, the library says valid", where)
				}
			default:
				c.fastUnk++
			}
		}
	}
}

// checkEncodedCase checks ValidateJSON and the fast path over encoded JSON
// on one case (data, and val its value with numbers as float64): ValidateJSON
// answers as Validate does (verr), message included, and checkJSON answers
// as check does: never otherwise, and not unknown where check decides (the
// suite's numbers are all finite float64s, the one thing checkJSON may
// leave unknown).
func checkEncodedCase(t *testing.T, s *compiledSchema, data []byte, val any, verr error, where string, c *suiteCounts) {
	t.Helper()
	c.jsonCases++
	jerr := s.ValidateJSON(data)
	if (jerr == nil) != (verr == nil) || jerr != nil && jerr.Error() != verr.Error() {
		c.jsonBad++
		t.Errorf("%s: ValidateJSON says %v, Validate %v", where, jerr, verr)
	}
	if s.fast == nil {
		return
	}
	got, want := s.fast.checkJSON(data), s.fast.check(val, 0)
	switch {
	case got == want:
	case got == unknown:
		c.jsonUnsure++
		t.Errorf("%s: fast path on the encoded value says unknown, on the decoded one %v", where, want)
	default:
		c.jsonDiffers++
		t.Errorf("%s: fast path on the encoded value says %v, on the decoded one %v", where, got, want)
	}
}

// TestSuitePinMatchesMakefile checks that make deps downloads the version of
// the suite that findSuite looks for.
func TestSuitePinMatchesMakefile(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	want := "SCHEMA_SUITE_MODULE = " + suiteModule + "@" + suiteVersion + "\n"
	if !bytes.Contains(mk, []byte(want)) {
		t.Errorf("the Makefile does not say %q: make deps would download another version of the suite", strings.TrimSpace(want))
	}
}
