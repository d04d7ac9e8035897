package cluster

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The HTTP+SSE transport of 2024-11-05 behind a round-robin proxy: the
// stream lives on the instance the GET reached, the POSTs go to every
// instance in turn, and those that do not hold the stream hand each
// message to the one that does over the shared bus (Redis).

// sseURL is the stream URL of a proxy whose MCP endpoint is mcpURL.
func sseURL(mcpURL string) string { return strings.TrimSuffix(mcpURL, "/mcp") + "/sse" }

// TestClusterSSEClient runs the TypeScript SDK v1's SSEClientTransport
// (test/e2e's clients/v1.mjs with E2E_TRANSPORT=sse) through each proxy:
// its wire must be test/e2e's stdio golden, bookTable's elicitation and
// resetCounter's confirmations answered through whichever instance the
// proxy picks, and every instance must have served some of its requests.
func TestClusterSSEClient(t *testing.T) {
	node := nodeEnv(t)
	c := startCluster(t, clusterOptions{freshUpstream: true})
	forEachProxy(t, c, func(t *testing.T, p proxy) {
		skip := slices.Clone(clusterTools)
		before := p.Served(t)
		doc := runTSClient(t, node, sseURL(p.URL()), "clients/v1.mjs",
			[]string{"E2E_TRANSPORT=sse", "E2E_SKIP_TOOLS=" + strings.Join(skip, ",")})
		after := p.Served(t)
		for _, in := range c.Instances {
			if after[in.Name] == before[in.Name] {
				t.Errorf("instance %s served none of the client's requests (%s counted %v before, %v after)", in.Name, p.Name(), before, after)
			}
		}
		t.Logf("v1 over SSE through %s: requests per instance before %v, after %v", p.Name(), before, after)
		checkTSDocument(t, doc, "testdata/stdio-v1.golden.json", revHandshake, skip)
	})
}

// Without shared state (each instance on its own memory), a POST that
// round robin sends to an instance that does not hold the stream is
// refused with a 404 that says so.
func TestClusterSSEWithoutSharedState(t *testing.T) {
	c := startCluster(t, clusterOptions{memory: true, noHAProxy: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, sseURL(c.Go.URL()), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 4096)
	var head string
	for !strings.Contains(head, "\n\n") {
		n, err := resp.Body.Read(buf)
		head += string(buf[:n])
		if err != nil {
			t.Fatalf("reading the endpoint event: %v (%q)", err, head)
		}
	}
	_, data, ok := strings.Cut(head, "data: ")
	if !ok {
		t.Fatalf("no endpoint event: %q", head)
	}
	endpoint := strings.TrimSuffix(strings.SplitN(data, "\n", 2)[0], "\r")
	post := strings.TrimSuffix(c.Go.URL(), "/mcp") + endpoint
	statuses := map[int]int{}
	for range len(c.Instances) {
		r, err := http.Post(post, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		statuses[r.StatusCode]++
		if r.StatusCode == http.StatusNotFound && !strings.Contains(string(body), "another instance") {
			t.Errorf("404 without the reason: %s", body)
		}
	}
	// One of the three POSTs reached the stream's instance.
	if statuses[http.StatusAccepted] != 1 || statuses[http.StatusNotFound] != len(c.Instances)-1 {
		t.Fatalf("statuses of %d POSTs through round robin: %v, want one 202 and 404s", len(c.Instances), statuses)
	}
}
