// Package bench holds comparative micro-benchmarks of MCP server
// implementations. It is a separate Go module so that the SDK's own go.mod
// never depends on the peer SDKs being measured here.
//
// All benchmarks live in _test.go files; see README.md for how to run them.
package bench
