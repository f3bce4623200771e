package raftport

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// countingConn records every Write; the first one blocks until release
// is closed, so that the frames sent meanwhile queue behind it.
type countingConn struct {
	net.Conn
	release chan struct{}
	fail    error

	mu     sync.Mutex
	writes [][]byte
	closed bool
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	first := len(c.writes) == 0
	c.writes = append(c.writes, bytes.Clone(b))
	c.mu.Unlock()
	if first {
		<-c.release
	}
	if c.fail != nil {
		return 0, c.fail
	}
	return len(b), nil
}

func (c *countingConn) SetWriteDeadline(time.Time) error { return nil }

func (c *countingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func frameOf(i int) func([]byte) []byte {
	return func(b []byte) []byte { return fmt.Appendf(b, "[frame %03d]", i) }
}

// TestFrameWriterCombines: frames written while a write is under way go
// out together in the next write, each whole and each once.
func TestFrameWriterCombines(t *testing.T) {
	c := &countingConn{release: make(chan struct{})}
	w := NewFrameWriter(c, time.Second)
	firstDone := make(chan struct{})
	go func() {
		w.Send(frameOf(0))
		close(firstDone)
	}()
	for { // wait until the first write is under way
		c.mu.Lock()
		n := len(c.writes)
		c.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	const n = 50
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Send(frameOf(i))
		}()
	}
	// The others only queue: they return while the first write blocks.
	wg.Wait()
	close(c.release)
	<-firstDone

	if len(c.writes) != 2 {
		t.Fatalf("%d writes for %d frames, want 2 (the first, then the rest together)", len(c.writes), n+1)
	}
	all := string(bytes.Join(c.writes, nil))
	for i := 0; i <= n; i++ {
		if got := bytes.Count([]byte(all), []byte(fmt.Sprintf("[frame %03d]", i))); got != 1 {
			t.Errorf("frame %d written %d times", i, got)
		}
	}
	if len(all) != (n+1)*len("[frame 000]") {
		t.Errorf("%d bytes written, want %d", len(all), (n+1)*len("[frame 000]"))
	}
}

// TestFrameWriterFailure: a failed write closes the connection, and later
// frames are dropped without blocking.
func TestFrameWriterFailure(t *testing.T) {
	c := &countingConn{release: make(chan struct{}), fail: errors.New("broken pipe")}
	close(c.release)
	w := NewFrameWriter(c, time.Second)
	w.Send(frameOf(1))
	if !c.closed {
		t.Fatal("connection not closed after a failed write")
	}
	w.Send(frameOf(2))
	if len(c.writes) != 1 {
		t.Errorf("%d writes, want 1: frames after the failure must be dropped", len(c.writes))
	}
}
