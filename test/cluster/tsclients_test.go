package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The official TypeScript clients through the cluster: test/e2e's scripts
// (clients/v1.mjs, clients/v2.mjs), run against a proxy's URL over
// Streamable HTTP. They list every tool and call each as planned
// (test/e2e/README.md), recording the raw wire, which must be the very
// document of test/e2e's stdio goldens: a client cannot tell three
// instances behind a proxy from one server on a pipe.

// scriptTimeout bounds one Node client run.
const scriptTimeout = 60 * time.Second

// tsClients are the runs: the script, the golden it must produce, the
// revision it must negotiate and its environment.
var tsClients = []struct {
	name, script, golden, version string
	env                           []string
}{
	{"v1", "clients/v1.mjs", "testdata/stdio-v1.golden.json", revHandshake, nil},
	{"v2", "clients/v2.mjs", "testdata/stdio-v2.golden.json", revStateless, nil},
	// The v2 client left to choose must choose the stateless era.
	{"v2-auto", "clients/v2.mjs", "testdata/stdio-v2.golden.json", revStateless, []string{"E2E_V2_MODE=auto"}},
}

// nodeEnv returns node, or skips (fails under CI) when node or the
// packages test/e2e pins (installed by `make deps`) are missing; packages
// of other versions than the pins fail the test.
func nodeEnv(t *testing.T) string {
	t.Helper()
	// As in test/e2e, E2E_REQUIRED=1 (make cluster) requires node.
	required := ci() || os.Getenv("E2E_REQUIRED") == "1"
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, required, "node is not on PATH; install Node.js >= 20, then `cd test/e2e && npm ci`")
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	raw, err := os.ReadFile(filepath.Join(e2eDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("test/e2e/package.json: %v", err)
	}
	for name, want := range pkg.Dependencies {
		raw, err := os.ReadFile(filepath.Join(e2eDir, "node_modules", filepath.FromSlash(name), "package.json"))
		if errors.Is(err, os.ErrNotExist) {
			skipOrFail(t, required, "test/e2e/node_modules lacks "+name+"; run `cd test/e2e && npm ci` (or make deps)")
		}
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Version string }
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got.Version != want {
			t.Fatalf("test/e2e/node_modules has %s@%s, package.json pins %s; run `cd test/e2e && npm ci`", name, got.Version, want)
		}
	}
	return node
}

// TestClusterTSClients runs the official TypeScript clients v1
// (@modelcontextprotocol/sdk, 2025-11-25 sessions) and v2
// (@modelcontextprotocol/client, 2026-07-28) through each proxy.
func TestClusterTSClients(t *testing.T) {
	node := nodeEnv(t)
	c := startCluster(t, clusterOptions{freshUpstream: true}) // the v2 client cancels its probes
	forEachProxy(t, c, func(t *testing.T, p proxy) {
		for _, tc := range tsClients {
			t.Run(tc.name, func(t *testing.T) {
				if g, ok := p.(*goProxy); ok {
					t.Cleanup(func() {
						if t.Failed() { // what crossed the proxy, for the diagnosis
							t.Logf("in-process proxy, last requests:\n%s", strings.Join(g.Journal(), "\n"))
						}
					})
				}
				// The cluster-only tools are never called: toggleGreeting
				// would change one instance's tool list mid-run.
				skip := slices.Clone(clusterTools)
				if tc.version == revHandshake && isPending(featureClientResponses) {
					// bookTable's elicitation/create is answered by a POST
					// that round robin sends elsewhere: left out until
					// client responses are shared (the subtest says so).
					skip = append(skip, "bookTable")
					t.Run("bookTable", func(t *testing.T) { awaiting(t, featureClientResponses) })
				}
				before := p.Served(t)
				doc := runTSClient(t, node, p.URL(), tc.script, append(slices.Clone(tc.env), "E2E_SKIP_TOOLS="+strings.Join(skip, ",")))
				after := p.Served(t)
				for _, in := range c.Instances {
					if after[in.Name] == before[in.Name] {
						t.Errorf("instance %s served none of the client's requests (%s counted %v before, %v after)", in.Name, p.Name(), before, after)
					}
				}
				t.Logf("%s through %s: requests per instance before %v, after %v", tc.name, p.Name(), before, after)
				checkTSDocument(t, doc, tc.golden, tc.version, skip)
			})
		}
	})
}

// runTSClient runs one of test/e2e's client scripts against url and
// returns the document it printed.
func runTSClient(t *testing.T, node, url, script string, env []string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = e2eDir // the scripts resolve their packages from test/e2e/node_modules
	cmd.Env = append(os.Environ(), append([]string{"SHOWCASE_URL=" + url, "E2E_TRANSPORT=http"}, env...)...)
	cmd.WaitDelay = 5 * time.Second
	setPdeathsig(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("node %s ran in %v", script, time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("node %s: timed out after %v\nstderr:\n%s", script, scriptTimeout, &stderr)
	}
	if err != nil {
		t.Fatalf("node %s: %v\nstderr:\n%s\nstdout:\n%s", script, err, &stderr, &stdout)
	}
	return stdout.Bytes()
}

// checkTSDocument compares a client's document with test/e2e's golden
// (the calls of the skipped tools left out of the golden), and checks the
// essentials explicitly, so that a golden regenerated by mistake cannot
// hide them.
func checkTSDocument(t *testing.T, raw []byte, golden, version string, skip []string) {
	t.Helper()
	var doc struct {
		ProtocolVersion string `json:"protocolVersion"`
		Tools           []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Calls []struct {
			Name        string          `json:"name"`
			Result      json.RawMessage `json:"result"`
			Error       json.RawMessage `json:"error"`
			ClientError json.RawMessage `json:"clientError"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the client printed no JSON document: %v\n%s", err, raw)
	}
	if doc.ProtocolVersion != version {
		t.Errorf("negotiated %q, want %q", doc.ProtocolVersion, version)
	}
	var names []string
	for _, tl := range doc.Tools {
		names = append(names, tl.Name)
	}
	// The 25 tools of every showcase (the golden checks which), and
	// toggleGreeting (with -redis), not greet (nobody toggled it).
	if len(names) != showcaseToolCount+1 || !slices.Contains(names, "toggleGreeting") || slices.Contains(names, "greet") {
		t.Errorf("tools listed: %v, want the showcase's %d and toggleGreeting", names, showcaseToolCount)
	}
	for _, c := range doc.Calls {
		if c.ClientError != nil || (c.Result == nil && c.Error == nil) || bytes.Contains(c.Error, []byte(`"clientSide"`)) {
			t.Errorf("call of %s: result %s, error %s, client error %s", c.Name, c.Result, c.Error, c.ClientError)
		}
		if slices.Contains(skip, c.Name) {
			t.Errorf("%s was called although skipped", c.Name)
		}
	}

	wantRaw, err := os.ReadFile(filepath.Join(e2eDir, golden))
	if err != nil {
		t.Fatal(err)
	}
	want, err := canonical(wantRaw, skip, nil)
	if err != nil {
		t.Fatalf("%s: %v", golden, err)
	}
	got, err := canonical(raw, nil, clusterTools)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the wire through the cluster differs from test/e2e/%s (calls of %v, and the listing of %v, left out):\n%s",
			golden, skip, clusterTools, firstDifference(string(want), string(got)))
	}
}

// showcaseToolCount is the number of the showcase's tools on every
// transport (test/e2e checks each by name).
const showcaseToolCount = 25

// clusterTools are the tools the showcase adds with -redis
// (examples/showcase/tools/cluster.go): toggleGreeting, which adds greet
// to the instance that serves it, or removes it. The stdio goldens have
// neither.
var clusterTools = []string{"toggleGreeting", "greet"}

// canonical re-encodes a client document as test/e2e's goldens are
// written (2-space indentation, members sorted, numbers as sent), without
// the calls of the tools in skip, and without the tools in hide in the
// listing (tools, and the names of toolsListPages).
func canonical(raw []byte, skip, hide []string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	named := func(v any, key string, names []string) bool {
		switch v := v.(type) {
		case string:
			return slices.Contains(names, v)
		case map[string]any:
			name, _ := v[key].(string)
			return slices.Contains(names, name)
		}
		return false
	}
	if calls, ok := doc["calls"].([]any); ok && len(skip) > 0 {
		doc["calls"] = slices.DeleteFunc(calls, func(v any) bool { return named(v, "name", skip) })
	}
	if tools, ok := doc["tools"].([]any); ok && len(hide) > 0 {
		doc["tools"] = slices.DeleteFunc(tools, func(v any) bool { return named(v, "name", hide) })
	}
	if pages, ok := doc["toolsListPages"].([]any); ok && len(hide) > 0 {
		for _, p := range pages {
			if page, ok := p.(map[string]any); ok {
				if names, ok := page["tools"].([]any); ok {
					page["tools"] = slices.DeleteFunc(names, func(v any) bool { return named(v, "", hide) })
				}
			}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// firstDifference shows the first line where a and b differ, with
// context.
func firstDifference(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	const context = 6
	from := max(0, i-context)
	part := func(lines []string) string {
		return strings.Join(lines[min(from, len(lines)):min(i+context, len(lines))], "\n")
	}
	return fmt.Sprintf("at line %d; want:\n%s\ngot:\n%s", i+1, part(x), part(y))
}
