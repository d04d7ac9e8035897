package ports

import "errors"

// ErrMessageTooLarge is wrapped by the error a Conn returns for an incoming
// message over its size limit.
var ErrMessageTooLarge = errors.New("message exceeds the transport's size limit")
