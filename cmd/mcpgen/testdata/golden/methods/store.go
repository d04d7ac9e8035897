// Package methods declares tools as methods: Store's live in two files,
// Clock's in one, and the package also has plain functions in two files.
package methods

import "context"

// hexmcp is a package-level name that clashes with the SDK's package
// hexmcp: the generated code imports it under another name (mcphexmcp).
var hexmcp = "example.com"

// Store keeps values.
type Store struct{ data map[string]string }

// Get returns the value of a key.
//
// Parameters:
//   - key: The key to look up
//
//mcp:tool readOnly
func (s *Store) Get(key string) (string, error) { return s.data[key], nil }

// Put stores a value.
//
// Parameters:
//   - key: The key
//   - value: The value
//
//mcp:tool destructive
func (s *Store) Put(ctx context.Context, key, value string) error {
	s.data[key] = value
	return nil
}

// Clock tells the time; its methods have value receivers.
type Clock struct{ Zone string }

// Now returns the time in the clock's zone.
//
//mcp:tool name=clock_now
func (Clock) Now() string { return "noon" }

// Version returns the version of the store.
//
//mcp:tool
func Version() string { return "1.0" }
