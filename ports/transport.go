package ports

import (
	"context"
	"time"
)

// MessageWriter sends messages to a client: a connection, or the SSE stream
// of one HTTP request.
type MessageWriter interface {
	// WriteMessage sends one message. The engine calls it from one goroutine
	// at a time; msg must not be kept after it returns.
	WriteMessage(ctx context.Context, msg []byte) error
}

// Conn is one bidirectional stream of JSON-RPC messages: a stdio pipe, a
// WebSocket, an in-memory pipe. One message is one JSON text, without
// framing.
type Conn interface {
	// ReadMessage returns the next message, or io.EOF when the peer is gone.
	// An error wrapping ErrMessageTooLarge reports a message over the
	// transport's size limit; the connection stays usable.
	// It is called from one goroutine at a time. The message is the
	// engine's from then on: it keeps parts of it without copying them (a
	// tool's arguments go to its handler as they are), so every call must
	// return a slice of its own that the Conn never writes again.
	ReadMessage(ctx context.Context) ([]byte, error)
	// WriteMessage sends one message. The engine calls it from one goroutine
	// at a time; msg must not be kept after it returns.
	WriteMessage(ctx context.Context, msg []byte) error
	// Close ends the connection.
	Close() error
}

// PeerAddr is implemented by a [Conn] that knows its peer's network
// address (a WebSocket connection). The engine hands the address to
// handlers (TransportInfo.RemoteAddr) and counts per-client limits, such as
// the listen streams one client may hold, by it, so that a client cannot
// multiply its share by opening more connections. A transport that attaches
// its own TransportInfo to the ServeConn context takes precedence.
type PeerAddr interface {
	// RemoteAddr returns the peer's address, as net.Addr.String writes it.
	RemoteAddr() string
}

// ConnHandler serves one connection until it ends. The protocol engine
// implements it.
type ConnHandler interface {
	ServeConn(ctx context.Context, c Conn) error
}

// Transport accepts connections and hands each to h. Serve returns when the
// transport is done (stdin closed, listener stopped) or ctx is cancelled;
// cancelling ctx asks in-flight work to finish (graceful shutdown).
type Transport interface {
	Serve(ctx context.Context, h ConnHandler) error
}

// Clock tells the time, so that expiry can be tested.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }
