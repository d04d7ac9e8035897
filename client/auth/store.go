package auth

import (
	"context"
	"sync"

	"golang.org/x/oauth2"
)

// Key names the tokens of one client for one MCP server in a
// [TokenStore].
type Key struct {
	// Resource is the MCP server's canonical URL (the RFC 8707 resource).
	Resource string
	// Client names the client: Options.ClientID, else
	// Options.ClientMetadataURL, else "" (a dynamically registered
	// client).
	Client string
}

// TokenStore keeps tokens by [Key]. Get returns nil, nil when it has none.
// Implementations must be safe for concurrent use and must keep tokens
// confidential (they are bearer credentials).
type TokenStore interface {
	Get(ctx context.Context, k Key) (*oauth2.Token, error)
	Put(ctx context.Context, k Key, t *oauth2.Token) error
}

// MemoryStore is a [TokenStore] in memory, the default one. The zero
// value is ready to use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[Key]*oauth2.Token
}

// Get returns a copy of the token stored for k, or nil.
func (s *MemoryStore) Get(_ context.Context, k Key) (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.m[k]
	if t == nil {
		return nil, nil
	}
	c := *t
	return &c, nil
}

// Put stores a copy of t for k; a nil t removes it.
func (s *MemoryStore) Put(_ context.Context, k Key, t *oauth2.Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == nil {
		delete(s.m, k)
		return nil
	}
	if s.m == nil {
		s.m = map[Key]*oauth2.Token{}
	}
	c := *t
	s.m[k] = &c
	return nil
}
