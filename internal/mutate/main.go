// Command mutate plants small faults in a package's non-test Go files, one
// at a time, runs the package's own tests against each, and lists the
// faults the tests did not notice (the survivors): places where a change of
// behaviour would pass unseen.
//
// Run it from the module root on a clean tree:
//
//	go run ./internal/mutate -pkg app -n 40 -seed 1 -out /tmp/app.tsv
//	go run ./internal/mutate -pkg app -rerun /tmp/app.tsv   # survivors again
//	go run ./internal/mutate -pkg app -n 40 -seed 1 -before a08372c
//
// The faults (one per site):
//   - a comparison flipped: == and != swapped, < to <=, <= to <, > to >=,
//     >= to >;
//   - && and || swapped;
//   - a negation dropped (!x to x);
//   - a return statement that ends an if block deleted (the error not
//     returned);
//   - the first number of a constant or variable whose name starts with
//     Default or default (or Max, max) changed (0 and 1 to n+1, n to 2n).
//
// Sites are sampled at random (-seed), spread over the files: one from each
// file in turn, as long as they last. Each mutant is written to its file,
// `go test -count=1 -timeout 120s ./<pkg>/` runs (no -race, for speed), and
// the file is restored before the next one, also on an interrupt; a file
// that does not match its original afterwards stops the run. A mutant that
// does not compile is counted apart. -before REV hides the package's test
// files added since REV during the run, to measure what the tests of REV
// noticed; they are restored afterwards. -tests names the packages whose
// tests judge the mutants instead (comma-separated directories), for a
// package that is tested through another: internal/memstore, whose stores
// adapters/memory names and tests.
//
// The result is printed, and with -out written as tab-separated lines
// (status, file:line:col, kind, the line before, the line after) that
// -rerun reads to run only the survivors again.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// site is one place to plant a fault: the bytes [off, end) of file become
// repl.
type site struct {
	file     string // relative to the module root
	line     int
	col      int
	off, end int
	repl     string
	kind     string
}

func (s site) pos() string { return fmt.Sprintf("%s:%d:%d", s.file, s.line, s.col) }

// result is a site and what the tests made of it.
type result struct {
	site
	status string // KILLED, SURVIVED, NOBUILD
	before string // the line as it is
	after  string // the line with the fault
	took   time.Duration
}

func main() {
	pkg := flag.String("pkg", "", "the package directory, relative to the module root (app, adapters/http)")
	n := flag.Int("n", 40, "how many sites to try")
	seed := flag.Uint64("seed", 1, "the seed of the sample")
	out := flag.String("out", "", "write the results there (tab-separated)")
	rerun := flag.String("rerun", "", "run again only the survivors listed in this results file")
	before := flag.String("before", "", "hide the package's test files added since this revision during the run")
	timeout := flag.Duration("timeout", 120*time.Second, "go test -timeout")
	list := flag.Bool("list", false, "only list the sampled sites")
	tests := flag.String("tests", "", "the packages whose tests judge the mutants, comma-separated directories (default -pkg)")
	flag.Parse()
	if *pkg == "" {
		fmt.Fprintln(os.Stderr, "mutate: -pkg is required")
		os.Exit(2)
	}
	judges := []string{*pkg}
	if *tests != "" {
		judges = strings.Split(*tests, ",")
	}
	if err := run(*pkg, judges, *n, *seed, *out, *rerun, *before, *timeout, *list); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(pkg string, judges []string, n int, seed uint64, out, rerun, before string, timeout time.Duration, list bool) error {
	pkg = filepath.Clean(pkg)
	if dirty, err := git("status", "--porcelain", "--untracked-files=no", "--", pkg); err != nil {
		return err
	} else if strings.TrimSpace(dirty) != "" {
		return fmt.Errorf("%s has uncommitted changes:\n%s", pkg, dirty)
	}
	all, err := findSites(pkg)
	if err != nil {
		return err
	}
	var sites []site
	if rerun != "" {
		if sites, err = survivorsOf(rerun, all); err != nil {
			return err
		}
	} else {
		sites = sample(all, n, seed)
	}
	if list {
		for _, s := range sites {
			fmt.Printf("%s\t%s\t%q\n", s.pos(), s.kind, s.repl)
		}
		return nil
	}
	if before != "" {
		restore, err := hideTestsSince(pkg, before)
		if err != nil {
			return err
		}
		defer restore()
	}
	var results []result
	for i, s := range sites {
		r, err := try(s, judges, timeout)
		if err != nil {
			return err
		}
		results = append(results, r)
		fmt.Printf("[%d/%d] %-8s %s %s (%s)\n\t- %s\n\t+ %s\n", i+1, len(sites), r.status, r.pos(), r.kind,
			r.took.Round(time.Second), strings.TrimSpace(r.before), strings.TrimSpace(r.after))
	}
	report(os.Stdout, pkg, len(all), results)
	if out != "" {
		return writeResults(out, results)
	}
	return nil
}

// findSites lists every site of the package's non-test files.
func findSites(pkg string) ([]site, error) {
	files, err := filepath.Glob(filepath.Join(pkg, "*.go"))
	if err != nil {
		return nil, err
	}
	var sites []site
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s, err := sitesOf(f, src)
		if err != nil {
			return nil, err
		}
		sites = append(sites, s...)
	}
	return sites, nil
}

var flips = map[token.Token]string{
	token.EQL: "!=", token.NEQ: "==",
	token.LSS: "<=", token.LEQ: "<", token.GTR: ">=", token.GEQ: ">",
	token.LAND: "||", token.LOR: "&&",
}

// sitesOf finds the sites of one file.
func sitesOf(name string, src []byte) ([]site, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var sites []site
	add := func(pos token.Pos, end token.Pos, repl, kind string) {
		p := fset.Position(pos)
		sites = append(sites, site{file: name, line: p.Line, col: p.Column, off: p.Offset, end: fset.Position(end).Offset, repl: repl, kind: kind})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BinaryExpr:
			if r, ok := flips[x.Op]; ok {
				kind := "flip " + x.Op.String()
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "err" {
					kind = "error check"
				}
				add(x.OpPos, x.OpPos+token.Pos(len(x.Op.String())), r, kind)
			}
		case *ast.UnaryExpr:
			if x.Op == token.NOT {
				add(x.OpPos, x.OpPos+1, "", "drop !")
			}
		case *ast.IfStmt:
			if l := len(x.Body.List); l > 0 {
				if ret, ok := x.Body.List[l-1].(*ast.ReturnStmt); ok && len(ret.Results) > 0 && returnsError(ret) {
					add(ret.Pos(), ret.End(), "", "delete return")
				}
			}
		case *ast.GenDecl:
			if x.Tok != token.CONST && x.Tok != token.VAR {
				return true
			}
			for _, spec := range x.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if i >= len(vs.Values) || !isDefaultName(id.Name) {
						continue
					}
					if lit := firstNumber(vs.Values[i]); lit != nil {
						add(lit.Pos(), lit.End(), changed(lit.Value), "default "+id.Name)
					}
				}
			}
		}
		return true
	})
	return sites, nil
}

// returnsError reports whether a return statement returns an error, by its
// last result: an identifier named err or ending in Err, or a call whose
// name says it makes one (Errorf, New…Error, newErr…).
func returnsError(ret *ast.ReturnStmt) bool {
	switch e := ret.Results[len(ret.Results)-1].(type) {
	case *ast.Ident:
		return e.Name == "err" || strings.HasSuffix(e.Name, "Err") || strings.HasPrefix(e.Name, "err")
	case *ast.CallExpr:
		name := ""
		switch fn := e.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		}
		return strings.Contains(name, "Err") || strings.Contains(name, "err") || name == "New"
	case *ast.SelectorExpr:
		return strings.HasPrefix(e.Sel.Name, "Err")
	}
	return false
}

func isDefaultName(name string) bool {
	for _, p := range []string{"Default", "default", "Max", "max"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// firstNumber is the first integer or float literal of e.
func firstNumber(e ast.Expr) *ast.BasicLit {
	var lit *ast.BasicLit
	ast.Inspect(e, func(n ast.Node) bool {
		if b, ok := n.(*ast.BasicLit); ok && lit == nil && (b.Kind == token.INT || b.Kind == token.FLOAT) {
			lit = b
		}
		return lit == nil
	})
	return lit
}

// changed is a number changed: 0 and 1 to n+1, n to 2n.
func changed(v string) string {
	clean := strings.ReplaceAll(v, "_", "")
	if i, err := strconv.ParseInt(clean, 0, 64); err == nil {
		if i <= 1 {
			return strconv.FormatInt(i+1, 10)
		}
		return strconv.FormatInt(2*i, 10)
	}
	if f, err := strconv.ParseFloat(clean, 64); err == nil {
		return strconv.FormatFloat(2*f+1, 'g', -1, 64)
	}
	return v + "+1"
}

// sample picks n sites at random, one from each file in turn.
func sample(all []site, n int, seed uint64) []site {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	byFile := map[string][]site{}
	var files []string
	for _, s := range all {
		if byFile[s.file] == nil {
			files = append(files, s.file)
		}
		byFile[s.file] = append(byFile[s.file], s)
	}
	sort.Strings(files)
	rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	for _, f := range files {
		s := byFile[f]
		rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	}
	var out []site
	for len(out) < n {
		took := false
		for _, f := range files {
			if len(out) == n {
				break
			}
			if s := byFile[f]; len(s) > 0 {
				out = append(out, s[0])
				byFile[f] = s[1:]
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// restoring is the file under mutation and its original content, for the
// interrupt handler.
var restoring struct {
	sync.Mutex
	file string
	orig []byte
}

func init() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		restoring.Lock()
		if restoring.file != "" {
			_ = os.WriteFile(restoring.file, restoring.orig, 0o644)
			fmt.Fprintln(os.Stderr, "mutate: interrupted; restored", restoring.file)
		}
		os.Exit(130)
	}()
}

// try plants s, runs the judges' tests and restores the file.
func try(s site, judges []string, timeout time.Duration) (result, error) {
	orig, err := os.ReadFile(s.file)
	if err != nil {
		return result{}, err
	}
	mut := make([]byte, 0, len(orig)+len(s.repl))
	mut = append(mut, orig[:s.off]...)
	mut = append(mut, s.repl...)
	mut = append(mut, orig[s.end:]...)
	r := result{site: s, before: lineAt(orig, s.off), after: lineAt(mut, s.off)}

	restoring.Lock()
	restoring.file, restoring.orig = s.file, orig
	err = os.WriteFile(s.file, mut, 0o644)
	restoring.Unlock()
	if err != nil {
		return r, err
	}
	start := time.Now()
	status, testErr := runTests(judges, timeout)
	r.took = time.Since(start)
	r.status = status

	restoring.Lock()
	err = os.WriteFile(s.file, orig, 0o644)
	restoring.file = ""
	restoring.Unlock()
	if err != nil {
		return r, err
	}
	if back, err := os.ReadFile(s.file); err != nil || !bytes.Equal(back, orig) {
		return r, fmt.Errorf("%s was not restored", s.file)
	}
	return r, testErr
}

// runTests runs the tests of the judges (package directories) and tells
// what they made of the mutant.
func runTests(judges []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout+time.Minute)
	defer cancel()
	args := []string{"test", "-count=1", "-timeout", timeout.String()}
	for _, j := range judges {
		args = append(args, "./"+filepath.Clean(strings.TrimSpace(j))+"/")
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	outp, err := cmd.CombinedOutput()
	switch {
	case err == nil:
		return "SURVIVED", nil
	case bytes.Contains(outp, []byte("[build failed]")) || bytes.Contains(outp, []byte("[setup failed]")):
		return "NOBUILD", nil
	}
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) && ctx.Err() == nil {
		return "", fmt.Errorf("go test: %w", err)
	}
	return "KILLED", nil // failed, or timed out
}

func lineAt(b []byte, off int) string {
	start := bytes.LastIndexByte(b[:off], '\n') + 1
	end := bytes.IndexByte(b[off:], '\n')
	if end < 0 {
		return string(b[start:])
	}
	return string(b[start : off+end])
}

// hideTestsSince moves the package's test files added since rev aside,
// and returns the function that puts them back.
func hideTestsSince(pkg, rev string) (func(), error) {
	names, err := git("diff", "--name-only", "--diff-filter=A", rev, "--", pkg)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mutate-hidden-")
	if err != nil {
		return nil, err
	}
	var moved []string
	restore := func() {
		for _, f := range moved {
			if err := os.Rename(filepath.Join(dir, filepath.Base(f)), f); err != nil {
				fmt.Fprintln(os.Stderr, "mutate: restoring", f, ":", err)
			}
		}
		_ = os.Remove(dir)
	}
	for _, f := range strings.Fields(names) {
		if !strings.HasSuffix(f, "_test.go") || filepath.Dir(f) != pkg {
			continue
		}
		if err := os.Rename(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			restore()
			return nil, err
		}
		moved = append(moved, f)
	}
	fmt.Printf("hidden while mutating (added since %s): %s\n", rev, strings.Join(moved, " "))
	return restore, nil
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

func report(w *os.File, pkg string, total int, results []result) {
	count := map[string]int{}
	for _, r := range results {
		count[r.status]++
	}
	viable := len(results) - count["NOBUILD"]
	fmt.Fprintf(w, "\n%s: %d sites in all, %d tried, %d did not build; of the %d that built: %d killed, %d survived\n",
		pkg, total, len(results), count["NOBUILD"], viable, count["KILLED"], count["SURVIVED"])
	for _, r := range results {
		if r.status == "SURVIVED" {
			fmt.Fprintf(w, "  survived %s %s: %s => %s\n", r.pos(), r.kind, strings.TrimSpace(r.before), strings.TrimSpace(r.after))
		}
	}
}

func writeResults(name string, results []result) error {
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", r.status, r.pos(), r.kind, strings.TrimSpace(r.before), strings.TrimSpace(r.after))
	}
	return os.WriteFile(name, []byte(b.String()), 0o644)
}

// survivorsOf reads a results file and returns the sites that survived
// there (matched by position and kind among all).
func survivorsOf(name string, all []site) ([]site, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byKey := map[string]site{}
	for _, s := range all {
		byKey[s.pos()+"\t"+s.kind] = s
	}
	var out []site
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 3 || fields[0] != "SURVIVED" {
			continue
		}
		s, ok := byKey[fields[1]+"\t"+fields[2]]
		if !ok {
			return nil, fmt.Errorf("%s %s is no longer a site (the file changed)", fields[1], fields[2])
		}
		out = append(out, s)
	}
	return out, sc.Err()
}
