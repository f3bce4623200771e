package raftport

import (
	"net"
	"sync"
	"time"
)

// FrameWriter writes a connection's outgoing frames from many goroutines,
// combining the frames that queue up while one write is under way into
// the next write. A leader answers a follower's forwarded batches when
// the Raft entry holding them commits, so the answers become ready
// together; written one by one they cost a write system call and a wake
// of the follower's reader each. What a frame says is the caller's: to
// the writer it is bytes.
//
// The first goroutine to find no write under way becomes the writer: it
// writes what is queued, then whatever queued meanwhile, until nothing is
// left; the others only append and return. A failed write closes the
// connection, and later frames are dropped: the follower reports every
// request it had in flight on it as uncertain.
type FrameWriter struct {
	c       net.Conn
	timeout time.Duration

	mu      sync.Mutex
	pending []byte // frames waiting for the writer
	spare   []byte // the buffer last written, reused as the next pending
	writing bool
	failed  bool
}

// NewFrameWriter writes on c, each write within timeout.
func NewFrameWriter(c net.Conn, timeout time.Duration) *FrameWriter {
	return &FrameWriter{c: c, timeout: timeout}
}

// Send queues the frame built by appendFrame and writes it, with any
// other queued frames, unless another goroutine is writing already.
func (w *FrameWriter) Send(appendFrame func([]byte) []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed {
		return
	}
	w.pending = appendFrame(w.pending)
	if w.writing {
		return
	}
	w.writing = true
	for len(w.pending) > 0 && !w.failed {
		buf := w.pending
		w.pending = w.spare[:0]
		w.mu.Unlock()
		w.c.SetWriteDeadline(time.Now().Add(w.timeout))
		_, err := w.c.Write(buf)
		w.mu.Lock()
		w.spare = buf[:0]
		if err != nil {
			w.failed = true
			w.c.Close()
		}
	}
	w.writing = false
}
