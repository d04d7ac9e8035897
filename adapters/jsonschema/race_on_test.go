//go:build race

package jsonschema

// raceEnabled: the race detector changes what escapes to the heap, so
// allocation counts are not asserted under it.
const raceEnabled = true
