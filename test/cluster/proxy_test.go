package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hexmcp/hexmcp/internal/testtools"
)

// ---------------------------------------------------------------------------
// The in-process proxy.

// goProxy is a round-robin reverse proxy (net/http/httputil) in front of
// the instances, in the test binary: every request goes to the next
// instance, whatever session it belongs to. Responses stream through as
// they come (SSE). It sets X-Forwarded-For to the client's address (the
// instances use it with -trusted-proxy). An instance marked down
// (markDown, by Cluster.Kill: the in-process stand-in for a health check)
// is skipped.
type goProxy struct {
	srv       *httptest.Server
	names     []string
	targets   []*url.URL
	transport *http.Transport
	next      atomic.Uint64
	served    []atomic.Int64
	down      []atomic.Bool
	// failed counts the requests it could not forward (answered 502).
	failed atomic.Int64
	// log keeps the last proxyLogSize requests, for a failing test to
	// show what crossed the proxy.
	logMu sync.Mutex
	log   []string
}

// proxyLogSize bounds the in-process proxy's request log.
const proxyLogSize = 256

// recorder captures the status and size of a proxied response; Unwrap
// lets ReverseProxy flush through it (SSE).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// note adds a line to the request log.
func (g *goProxy) note(line string) {
	g.logMu.Lock()
	defer g.logMu.Unlock()
	if len(g.log) == proxyLogSize {
		g.log = g.log[1:]
	}
	g.log = append(g.log, line)
}

// Journal returns the request log, oldest first: one line per request
// (when it began, the instance, the method, Mcp-Method, the session, a
// Last-Event-ID, the status, the bytes and how long it took).
func (g *goProxy) Journal() []string {
	g.logMu.Lock()
	defer g.logMu.Unlock()
	return slices.Clone(g.log)
}

type backendKey struct{}

// goProxyIdleConns bounds the idle connections the proxy keeps to each
// instance (above the tests' concurrency, so that none is redialled).
const goProxyIdleConns = 128

// startGoProxy starts the in-process proxy on a free loopback port; it is
// closed when tb ends.
//
// With fresh, each proxied request gets a connection of its own to its
// instance (no keep-alive), as the kill scenarios use: there, cancelled
// streams (a killed instance's, the client's own) were seen to close a
// connection after the Transport had handed it to the next request, which
// then read a cut reply (the first 4 KiB, then "use of closed network
// connection" on the proxy's side, never on the instance's).
func startGoProxy(tb testing.TB, instances []*Instance, fresh bool) *goProxy {
	tb.Helper()
	g := &goProxy{
		served: make([]atomic.Int64, len(instances)),
		down:   make([]atomic.Bool, len(instances)),
		transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: goProxyIdleConns,
			IdleConnTimeout:     time.Minute,
			DisableKeepAlives:   fresh,
		},
	}
	for _, in := range instances {
		g.names = append(g.names, in.Name)
		g.targets = append(g.targets, &url.URL{Scheme: "http", Host: in.Addr})
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(g.targets[pr.In.Context().Value(backendKey{}).(int)])
			pr.SetXForwarded()
		},
		ModifyResponse: func(r *http.Response) error {
			r.Header.Set(instanceHeader, g.names[r.Request.Context().Value(backendKey{}).(int)])
			return nil
		},
		FlushInterval: -1, // SSE: every write goes through at once
		Transport:     g.transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil { // not a client that went away
				g.failed.Add(1)
			}
			http.Error(w, "cluster proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, ok := g.pick()
		if !ok {
			g.failed.Add(1)
			http.Error(w, "cluster proxy: every instance is down", http.StatusServiceUnavailable)
			return
		}
		g.served[i].Add(1)
		rec := &recorder{ResponseWriter: w}
		begin := time.Now()
		what := ""
		if r.Body != nil && r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(body, &m) == nil {
				switch {
				case m.Method != "":
					what = m.Method + " id=" + string(m.ID)
				case m.Result != nil || m.Error != nil:
					what = "response to id=" + string(m.ID)
				}
			}
		}
		rp.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), backendKey{}, i)))
		sid := r.Header.Get("Mcp-Session-Id")
		if len(sid) > 8 {
			sid = sid[:8]
		}
		g.note(fmt.Sprintf("%s %s %s %q session=%s last-event=%q -> %d, %d bytes in %v (client gone: %v)",
			begin.Format("15:04:05.000"), g.names[i], r.Method, what, sid, r.Header.Get("Last-Event-ID"),
			rec.status, rec.bytes, time.Since(begin).Round(time.Millisecond), r.Context().Err() != nil))
	}))
	tb.Cleanup(func() {
		g.srv.CloseClientConnections() // open SSE streams would hold Close
		g.srv.Close()
		g.transport.CloseIdleConnections()
		if n := g.failed.Load(); n > 0 {
			tb.Errorf("the in-process proxy could not forward %d requests", n)
		}
	})
	return g
}

// pick returns the next instance in turn that is not marked down.
func (g *goProxy) pick() (int, bool) {
	for range len(g.targets) {
		i := int((g.next.Add(1) - 1) % uint64(len(g.targets)))
		if !g.down[i].Load() {
			return i, true
		}
	}
	return 0, false
}

// markDown takes the instance name out of the rotation.
func (g *goProxy) markDown(name string) {
	for i, n := range g.names {
		if n == name {
			g.down[i].Store(true)
		}
	}
}

func (g *goProxy) Name() string { return "go" }
func (g *goProxy) URL() string  { return g.srv.URL + "/mcp" }

func (g *goProxy) Served(testing.TB) map[string]int64 {
	m := make(map[string]int64, len(g.names))
	for i, name := range g.names {
		m[name] = g.served[i].Load()
	}
	return m
}

// ---------------------------------------------------------------------------
// haproxy.

// haProxy is a haproxy process balancing round robin over the instances.
type haProxy struct {
	url    string
	sock   string // its stats socket
	checks bool   // it checks its servers' health (haproxyChecks)
	p      *process
}

// haproxyConfig is haproxy's configuration: %[1]s the stats socket,
// %[2]d the port, %[3]s one "server" line per instance.
//
// Keep-alive is kept on both sides (haproxy's default, written out): in
// HTTP mode haproxy picks a server for every request, not per client
// connection, unless prefer-last-server is set, which it is not; the tests
// check that one session's requests went to several instances (through
// X-Cluster-Instance, and haproxy's own per-server counts). Closing the
// server side after each request (http-server-close) would balance no
// better and cost a connection per request. The timeouts let an SSE stream
// (a GET stream, or the response of a long call) stay open for an hour of
// silence; tunnel covers upgraded connections (WebSocket). forwardfor adds
// X-Forwarded-For (the instances use it with -trusted-proxy). %[4]s is
// haproxyChecks, or nothing.
const haproxyConfig = `# Generated by test/cluster (proxy_test.go).
global
    stats socket %[1]s mode 600 level user
    maxconn 2048

defaults
    mode http
    option http-keep-alive
    option http-no-delay
    no option prefer-last-server
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    timeout http-request 30s
    timeout http-keep-alive 1m
    option forwardfor

frontend mcp
    bind 127.0.0.1:%[2]d
    default_backend showcase

backend showcase
    balance roundrobin
    http-response set-header ` + instanceHeader + ` %%[srv_name]
%[4]s%[3]s`

// haproxyCheckInter is the interval of haproxy's health checks
// (haproxyChecks).
const haproxyCheckInter = 250 * time.Millisecond

// haproxyChecks is the part of the backend that checks the servers
// (clusterOptions.healthChecks), before the server lines: every
// haproxyCheckInter, a stateless tools/list (what waitAnswers sends) that
// must be answered 200; one failed check marks a server down (a killed
// instance refuses the connection: it is down within one interval), one
// success up again; a slow answer fails only after 2 s, so a loaded
// machine does not mark a live instance down. Meanwhile a request whose
// connection to a dead server fails is sent again, to another server
// (retry-on conn-failure: nothing reached the server, so even a POST is
// safe to resend; redispatch 1: every retry goes elsewhere).
var haproxyChecks = `    option httpchk
    http-check send meth POST uri /mcp ver HTTP/1.1 hdr Host 127.0.0.1 hdr Content-Type application/json hdr Accept "application/json, text/event-stream" hdr MCP-Protocol-Version ` + revStateless + ` hdr Mcp-Method tools/list body '{"jsonrpc":"2.0","id":"check","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + revStateless + `","io.modelcontextprotocol/clientCapabilities":{}}}}'
    http-check expect status 200
    timeout check 2s
    default-server check inter ` + strconv.Itoa(int(haproxyCheckInter/time.Millisecond)) + `ms fall 1 rise 1
    retries 3
    option redispatch 1
    retry-on conn-failure
`

// haproxyBinary finds haproxy: on the PATH, or where Debian puts it
// (/usr/sbin is not on every user's PATH).
func haproxyBinary() (string, bool) {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p, true
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
		return "/usr/sbin/haproxy", true
	}
	return "", false
}

// startHAProxy starts haproxy in front of the instances, on a free
// loopback port, and waits until a request through it is answered; with
// checks, it checks its servers' health (haproxyChecks). It returns nil
// and why when haproxy is not installed. It is stopped (SIGTERM: a hard
// stop, open streams are cut) when tb ends.
func startHAProxy(tb testing.TB, instances []*Instance, checks bool) (*haProxy, string) {
	tb.Helper()
	bin, ok := haproxyBinary()
	if !ok {
		return nil, "haproxy is not installed (apt-get install haproxy); CI runs this test"
	}
	dir := tb.TempDir()
	var servers strings.Builder
	for _, in := range instances {
		fmt.Fprintf(&servers, "    server %s %s\n", in.Name, in.Addr)
	}
	h := &haProxy{sock: filepath.Join(dir, "stats.sock"), checks: checks}
	checking := ""
	if checks {
		checking = haproxyChecks
	}
	var err error
	for attempt := 0; attempt < startAttempts; attempt++ {
		var port int
		if port, err = testtools.FreePort(); err != nil {
			continue
		}
		cfg := filepath.Join(dir, "haproxy.cfg")
		if err = os.WriteFile(cfg, fmt.Appendf(nil, haproxyConfig, h.sock, port, servers.String(), checking), 0o600); err != nil {
			tb.Fatal(err)
		}
		// -db: stay in the foreground; -f: this configuration only.
		if h.p, err = startProcess("haproxy", bin, []string{"-db", "-f", cfg}, nil); err != nil {
			tb.Fatal(err)
		}
		h.url = "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
		if err = waitAnswers(h.url, h.p); err == nil {
			break
		}
		err = fmt.Errorf("%w\n%s", err, h.p.logs)
		_ = h.p.stop()
	}
	if err != nil {
		tb.Fatalf("starting haproxy: %v", err)
	}
	tb.Cleanup(func() {
		// SIGTERM is haproxy's hard stop: it dies of it. Only a haproxy
		// that had to be killed, or had exited before, is an error.
		var exit *exec.ExitError
		if err := h.p.stop(); err != nil && !errors.As(err, &exit) {
			tb.Errorf("haproxy: %v\n%s", err, h.p.logs)
		}
	})
	return h, ""
}

func (h *haProxy) Name() string { return "haproxy" }
func (h *haProxy) URL() string  { return h.url }

// Served reads haproxy's per-server request counts (req_tot of "show
// stat" on the stats socket).
func (h *haProxy) Served(tb testing.TB) map[string]int64 {
	tb.Helper()
	m := map[string]int64{}
	for sv, row := range h.stat(tb) {
		n, err := strconv.ParseInt(row["req_tot"], 10, 64)
		if err != nil {
			tb.Fatalf("haproxy show stat: req_tot of %s: %v", sv, err)
		}
		m[sv] = n
	}
	return m
}

// waitDown waits until haproxy's health checks mark the server name down
// (status DOWN in "show stat"), within downTimeout. It fails tb at once
// when haproxy does not check its servers: it would never mark it down.
func (h *haProxy) waitDown(tb testing.TB, name string) {
	tb.Helper()
	if !h.checks {
		tb.Fatalf("haproxy does not check its servers (clusterOptions.healthChecks): it keeps sending to %s", name)
	}
	deadline := time.Now().Add(downTimeout)
	for {
		status := h.stat(tb)[name]["status"]
		if strings.HasPrefix(status, "DOWN") {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("haproxy still has %s %q %v after it was killed", name, status, downTimeout)
		}
		time.Sleep(haproxyCheckInter / 5)
	}
}

// stat reads "show stat" on the stats socket: the columns of each server
// of the backend, by server name.
func (h *haProxy) stat(tb testing.TB) map[string]map[string]string {
	tb.Helper()
	c, err := net.DialTimeout("unix", h.sock, time.Second)
	if err != nil {
		tb.Fatalf("haproxy stats socket: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "show stat\n"); err != nil {
		tb.Fatalf("haproxy stats socket: %v", err)
	}
	r := csv.NewReader(bufio.NewReader(c))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 2 {
		tb.Fatalf("haproxy show stat: %v (%d rows)", err, len(rows))
	}
	var names []string
	for _, name := range rows[0] {
		names = append(names, strings.TrimPrefix(name, "# "))
	}
	m := map[string]map[string]string{}
	for _, row := range rows[1:] {
		cols := map[string]string{}
		for i, v := range row {
			if i < len(names) {
				cols[names[i]] = v
			}
		}
		if sv := cols["svname"]; cols["pxname"] == "showcase" && sv != "FRONTEND" && sv != "BACKEND" {
			m[sv] = cols
		}
	}
	return m
}
