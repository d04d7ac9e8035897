package app

import "testing"

// The response buffer of a connection-loop goroutine is reused only for a
// single call, and only when the response written is the one encoded into
// it: never a slice from elsewhere (a constant, an error's encoding).
func TestCallSlotOutBuffer(t *testing.T) {
	var nilSlot *callSlot
	if b := nilSlot.outBuffer(); len(b) != 0 || cap(b) == 0 {
		t.Fatalf("outBuffer of no slot = len %d cap %d, want a new empty buffer", len(b), cap(b))
	}
	nilSlot.encoded([]byte("x")) // no slot (HTTP): nothing to record

	c := &callSlot{}
	c.single = true
	b := append(c.outBuffer(), `{"r":1}`...)
	c.encoded(b)
	c.recycle(b)
	if c.out == nil || &c.out[:1][0] != &b[0] {
		t.Fatal("the buffer of a single call's response was not kept for the next")
	}

	// A foreign response (not the one encoded) is not taken.
	c.single = true
	own := c.outBuffer()
	if c.out != nil {
		t.Fatal("the buffer is still free while a response holds it")
	}
	foreign := []byte(`{"error":1}`)
	c.recycle(foreign)
	if c.out != nil {
		t.Fatal("recycle took a slice it did not make")
	}
	_ = own

	// Not a single call (a batch member): a new buffer each time, nothing recorded.
	c.out = make([]byte, 0, 64)
	kept := c.out
	c.single = false
	if b := c.outBuffer(); cap(b) != 0 && &b[:1][0] == &kept[:1][0] {
		t.Fatal("a batch member got the goroutine's buffer")
	}
	c.encoded([]byte("y"))
	if c.made != nil {
		t.Fatal("a batch member's response was recorded")
	}

	// A large response is left to the garbage collector.
	c.out, c.single = nil, true
	big := append(c.outBuffer(), make([]byte, maxReusedResponse+1)...)
	c.encoded(big)
	c.recycle(big)
	if c.out != nil {
		t.Fatal("a response over maxReusedResponse was kept")
	}
}
