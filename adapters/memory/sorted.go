package memory

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// sortedSet is the store behind the in-memory registries: entries by key,
// safe for concurrent use, listed in key order from a snapshot rebuilt only
// when the set changes. The zero value is ready to use.
type sortedSet[T any] struct {
	mu     sync.RWMutex
	items  map[string]T
	sorted []T // nil when stale
}

// add stores v under key; a key already present is an error wrapping dup.
func (s *sortedSet[T]) add(key string, v T, what string, dup error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		s.items = make(map[string]T)
	}
	if _, ok := s.items[key]; ok {
		return fmt.Errorf("hexmcp: memory registry: %s %q: %w", what, key, dup)
	}
	s.items[key] = v
	s.sorted = nil
	return nil
}

// remove deletes key and reports whether it was there.
func (s *sortedSet[T]) remove(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.items[key]; !ok {
		return false
	}
	delete(s.items, key)
	s.sorted = nil
	return true
}

// get finds the entry of key.
func (s *sortedSet[T]) get(key string) (T, bool) {
	s.mu.RLock()
	v, ok := s.items[key]
	s.mu.RUnlock()
	return v, ok
}

// list returns the entries in the order of keyOf (shared: not to modify).
func (s *sortedSet[T]) list(keyOf func(T) string) []T {
	s.mu.RLock()
	out := s.sorted
	s.mu.RUnlock()
	if out != nil {
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sorted == nil {
		out := make([]T, 0, len(s.items))
		for _, v := range s.items {
			out = append(out, v)
		}
		slices.SortFunc(out, func(a, b T) int { return strings.Compare(keyOf(a), keyOf(b)) })
		s.sorted = out
	}
	return s.sorted
}
