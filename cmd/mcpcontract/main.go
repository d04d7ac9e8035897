// Command mcpcontract keeps an MCP server's contract with its clients: the
// names, input schemas, output schemas and annotations of its tools (and
// its prompts, resources and resource templates), which every model and
// client that learned them relies on.
//
// Usage:
//
//	mcpcontract write [-o tools.lock.json] [flags] -- CMD [ARGS...]
//	mcpcontract write [-o tools.lock.json] [flags] -url URL
//	mcpcontract check [flags] tools.lock.json -- CMD [ARGS...]
//	mcpcontract check [flags] tools.lock.json -url URL
//
// write starts the server (any MCP server speaking stdio; or, with -url, a
// Streamable HTTP endpoint), opens a session, reads every page of
// tools/list, prompts/list, resources/list and resources/templates/list,
// and writes them to a lock file: sorted, indented JSON, the same bytes for
// the same server, made to be committed and reviewed.
//
// check reads the same lists from the live server and compares them with
// the lock. It exits 1 when a change can break a client, naming each with
// its tool (prompt, resource) and a JSON Pointer into the definition: a
// tool, prompt or resource removed; a new required parameter; a parameter
// removed or renamed; a type narrowed; an enum value removed; a bound
// tightened (minimum, maxLength, …) or a pattern or format changed; an
// output schema that no longer promises what it did (removed, a property
// dropped or made optional, a type widened); an annotation that moved away
// from its safe value (read-only to not, not destructive to destructive).
// Compatible changes (a new tool, a new optional parameter, a looser bound,
// a new enum value, wording) are listed and exit 0.
//
// Flags:
//
//	-o FILE         where write puts the lock (default tools.lock.json; - for standard output)
//	-url URL        a Streamable HTTP endpoint instead of a command
//	-H "Name: v"    a header sent with every HTTP request (repeatable), e.g. Authorization
//	-json           check writes its report as JSON
//	-timeout D      how long one request may take (default 30s)
//
// Exit status: 0 no breaking change (or the lock written), 1 breaking
// changes, 2 the tool could not do its work (usage, server, lock file).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/hexmcp/hexmcp/internal/contract"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK       = 0
	exitBreaking = 1
	exitError    = 2
)

const usage = `usage:
  mcpcontract write [-o tools.lock.json] [flags] (-- CMD [ARGS...] | -url URL)
  mcpcontract check [flags] tools.lock.json (-- CMD [ARGS...] | -url URL)
flags: -url URL, -H "Name: value" (repeatable), -json (check), -timeout 30s
`

// headers is the repeatable -H flag.
type headers http.Header

func (h headers) String() string { return "" }

func (h headers) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("want \"Name: value\", got %q", v)
	}
	http.Header(h).Add(strings.TrimSpace(name), strings.TrimSpace(value))
	return nil
}

// options are the parsed command line.
type options struct {
	out     string
	url     string
	header  headers
	json    bool
	timeout time.Duration
	lock    string   // check: the lock file
	argv    []string // the server's command
}

func parse(cmd string, args []string, stderr io.Writer) (*options, error) {
	o := &options{header: headers{}}
	fs := flag.NewFlagSet("mcpcontract "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	if cmd == "write" {
		fs.StringVar(&o.out, "o", "tools.lock.json", "where to write the lock (- for standard output)")
	} else {
		fs.BoolVar(&o.json, "json", false, "write the report as JSON")
	}
	fs.StringVar(&o.url, "url", "", "a Streamable HTTP endpoint instead of a command")
	fs.Var(o.header, "H", `a header for every HTTP request, "Name: value" (repeatable)`)
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "how long one request may take")
	// Flags may come before and after the lock file; "--" starts the
	// server's command.
	before := args
	if i := slices.Index(args, "--"); i >= 0 {
		before, o.argv = args[:i], args[i+1:]
	}
	for rest := before; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		if cmd == "check" && o.lock == "" {
			o.lock, rest = rest[0], rest[1:]
			continue
		}
		return nil, fmt.Errorf("unexpected argument %q (the server's command goes after --)", rest[0])
	}
	switch {
	case cmd == "check" && o.lock == "":
		return nil, errors.New("check needs the lock file")
	case len(o.argv) == 0 && o.url == "":
		return nil, errors.New("name the server: -- CMD [ARGS...] or -url URL")
	case len(o.argv) > 0 && o.url != "":
		return nil, errors.New("name the server once: a command or -url, not both")
	case o.timeout <= 0:
		return nil, errors.New("-timeout must be positive")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "write" && args[0] != "check") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		fmt.Fprint(stderr, usage)
		return exitError
	}
	o, err := parse(args[0], args[1:], stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "mcpcontract: %v\n%s", err, usage)
		}
		return exitError
	}
	if args[0] == "write" {
		return write(ctx, o, stdout, stderr)
	}
	return check(ctx, o, stdout, stderr)
}

// fetch connects to the server, asking for revision, and reads its lists.
func fetch(ctx context.Context, o *options, revision string) (*contract.Lock, error) {
	var ex exchange
	if o.url != "" {
		ex = &httpExchange{url: o.url, header: http.Header(o.header), hc: &http.Client{}}
	} else {
		s, err := startStdio(o.argv)
		if err != nil {
			return nil, err
		}
		ex = s
	}
	defer ex.close()
	c, err := connect(ctx, ex, revision, o.timeout)
	if err != nil {
		return nil, err
	}
	return contract.Fetch(ctx, c, c.revision)
}

func write(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	l, err := fetch(ctx, o, newestHandshake)
	if err != nil {
		fmt.Fprintf(stderr, "mcpcontract: %v\n", err)
		return exitError
	}
	b, err := l.Marshal()
	if err != nil {
		fmt.Fprintf(stderr, "mcpcontract: %v\n", err)
		return exitError
	}
	if o.out == "-" {
		_, _ = stdout.Write(b)
		return exitOK
	}
	if err := os.WriteFile(o.out, b, 0o644); err != nil {
		fmt.Fprintf(stderr, "mcpcontract: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stderr, "mcpcontract: wrote %s: %d tools, %d prompts, %d resources, %d resource templates (protocol %s)\n",
		o.out, len(l.Tools), len(l.Prompts), len(l.Resources), len(l.ResourceTemplates), l.ProtocolVersion)
	return exitOK
}

// report is check's -json output.
type report struct {
	Lock       string            `json:"lock"`
	Breaking   []contract.Change `json:"breaking"`
	Compatible []contract.Change `json:"compatible"`
}

func check(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	data, err := os.ReadFile(o.lock)
	if err != nil {
		fmt.Fprintf(stderr, "mcpcontract: %v\n", err)
		return exitError
	}
	lock, err := contract.Parse(data)
	if err != nil {
		fmt.Fprintf(stderr, "mcpcontract: %s: %v\n", o.lock, err)
		return exitError
	}
	live, err := fetch(ctx, o, lock.ProtocolVersion)
	if err != nil {
		fmt.Fprintf(stderr, "mcpcontract: %v\n", err)
		return exitError
	}
	if live.ProtocolVersion != lock.ProtocolVersion {
		fmt.Fprintf(stderr, "mcpcontract: note: the lock was written under protocol %s, the server now speaks %s\n", lock.ProtocolVersion, live.ProtocolVersion)
	}
	changes := contract.Compare(lock, live)
	rep := report{Lock: o.lock, Breaking: []contract.Change{}, Compatible: []contract.Change{}}
	for _, c := range changes {
		if c.Breaking {
			rep.Breaking = append(rep.Breaking, c)
		} else {
			rep.Compatible = append(rep.Compatible, c)
		}
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		for _, c := range changes {
			fmt.Fprintln(stdout, c)
		}
		fmt.Fprintf(stdout, "%s: %d breaking, %d compatible\n", o.lock, len(rep.Breaking), len(rep.Compatible))
	}
	if len(rep.Breaking) > 0 {
		return exitBreaking
	}
	return exitOK
}
