package ports

import "fmt"

// MaxMessageHead is the most leading bytes of an over-limit message a
// transport keeps in a [MessageTooLargeError] (64 KiB): enough to find the
// request's id in any ordinary message, little enough to keep whatever
// the limit.
const MaxMessageHead = 64 << 10

// MessageTooLargeError is an error a [Conn] may return for an incoming
// message over its size limit, carrying the first bytes of the message
// (at most [MaxMessageHead]) so that the engine can answer the request's
// id when it comes first. It wraps [ErrMessageTooLarge].
type MessageTooLargeError struct {
	// Size is the message's size in bytes, Limit the transport's limit.
	Size, Limit int64
	// Unit names what the transport frames a message in ("line" over
	// stdio); "" reads "message".
	Unit string
	// Head is the beginning of the message, possibly cut in the middle
	// of a value; nil when the transport kept nothing.
	Head []byte
}

// Error says how large the message was.
func (e *MessageTooLargeError) Error() string {
	unit := e.Unit
	if unit == "" {
		unit = "message"
	}
	return fmt.Sprintf("%s of %d bytes exceeds the limit of %d bytes: %v", unit, e.Size, e.Limit, ErrMessageTooLarge)
}

// Unwrap returns [ErrMessageTooLarge].
func (e *MessageTooLargeError) Unwrap() error { return ErrMessageTooLarge }
