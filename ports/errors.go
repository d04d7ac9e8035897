package ports

import "errors"

// ErrMessageTooLarge is wrapped by the error a Conn returns for an incoming
// message over its size limit.
var ErrMessageTooLarge = errors.New("message exceeds the transport's size limit")

// ErrNoStream is returned by a MessageWriter that cannot carry messages
// other than the response (a plain JSON HTTP response to a client that does
// not accept an event stream). The engine then sends requests of its own on
// the session's stream, and drops notifications related to the request.
var ErrNoStream = errors.New("no stream for messages other than the response")
