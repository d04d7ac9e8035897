package testtools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// NodeEnv returns the node executable for the Node clients of the tests
// whose npm manifest is dir/package.json: node must be on PATH and every
// dependency it pins installed in dir/node_modules at that version. What
// is missing (node, or a package) is missing, which the caller skips or
// fails on as it requires; a package of another version than its pin, or
// a manifest that cannot be read, is err.
func NodeEnv(dir string) (node, missing string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "node is not on PATH; install Node.js >= 20, then `npm ci` in " + dir + " (make deps does)", nil
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := readJSON(filepath.Join(dir, "package.json"), &pkg); err != nil {
		return "", "", err
	}
	for name, want := range pkg.Dependencies {
		var got struct {
			Version string `json:"version"`
		}
		err := readJSON(filepath.Join(dir, "node_modules", filepath.FromSlash(name), "package.json"), &got)
		if errors.Is(err, os.ErrNotExist) {
			return "", filepath.Join(dir, "node_modules") + " lacks " + name + "; run `npm ci` in " + dir + " (make deps does)", nil
		}
		if err != nil {
			return "", "", err
		}
		if got.Version != want {
			return "", "", fmt.Errorf("%s has %s@%s, package.json pins %s; run `npm ci` in %s", filepath.Join(dir, "node_modules"), name, got.Version, want, dir)
		}
	}
	return node, "", nil
}

// readJSON decodes the JSON file name into v.
func readJSON(name string, v any) error {
	raw, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
