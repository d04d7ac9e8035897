package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tags := fs.String("tags", "", "comma-separated build tags, as for go build")
	verbose := fs.Bool("v", false, "print the files written or deleted")
	check := fs.Bool("check", false, "write nothing: list the generated files that are missing, out of date or stale, and exit 1 if there are any")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mcpgen [-tags list] [-v] [-check] [dir]\n\n"+
			"mcpgen writes x_mcp.go next to every x.go of the package in dir (default .)\n"+
			"that has //mcp:tool functions or methods. See go doc github.com/hexmcp/hexmcp/cmd/mcpgen.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	dir := "."
	switch fs.NArg() {
	case 0:
	case 1:
		dir = fs.Arg(0)
	default:
		fs.Usage()
		return 2
	}
	out, err := generate(config{dir: dir, tags: *tags})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *check {
		stale := out.outdated()
		for _, p := range stale {
			fmt.Fprintf(stderr, "%s is out of date: run go generate (or mcpgen)\n", relPath(p))
		}
		if len(stale) > 0 {
			return 1
		}
		return 0
	}
	touched, err := out.apply()
	if *verbose {
		for _, p := range touched {
			fmt.Fprintln(stdout, relPath(p))
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "mcpgen:", err)
		return 1
	}
	return 0
}
