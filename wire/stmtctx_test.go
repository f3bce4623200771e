package wire

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestStmtContextTimesOutAndRearms(t *testing.T) {
	c := newStmtContext(context.Background(), 20*time.Millisecond)
	defer c.close()
	ctx := c.begin()
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > 20*time.Millisecond {
		t.Fatalf("deadline %v %v, want within 20ms", d, ok)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("statement context never expired")
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("err %v, want DeadlineExceeded", ctx.Err())
	}
	c.end()

	// The next statement starts with a live context of its own.
	ctx = c.begin()
	if ctx.Err() != nil {
		t.Fatalf("next statement starts cancelled: %v", ctx.Err())
	}
	select {
	case <-ctx.Done():
		t.Fatal("next statement's Done already closed")
	default:
	}
	c.end()
	if _, ok := c.Deadline(); ok {
		t.Fatal("a disarmed context still reports a deadline")
	}
}

// A timer firing meant for the previous statement must not cancel the
// one that began since.
func TestStmtContextStaleExpiryIgnored(t *testing.T) {
	c := newStmtContext(context.Background(), time.Hour)
	defer c.close()
	c.begin()
	c.end()
	ctx := c.begin()
	c.expire() // as if the earlier statement's timer fired late
	if ctx.Err() != nil {
		t.Fatalf("stale expiry cancelled the current statement: %v", ctx.Err())
	}
	c.end()
	c.expire() // disarmed: nothing to cancel either
	if c.Err() != nil {
		t.Fatalf("expiry between statements cancelled: %v", c.Err())
	}
}

func TestStmtContextParentCancel(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	c := newStmtContext(parent, time.Hour)
	defer c.close()
	ctx := c.begin()
	cancel()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("parent cancel did not reach the statement")
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("err %v, want Canceled", ctx.Err())
	}
	c.end()
	// A server shutting down does not hand out live contexts again.
	if ctx = c.begin(); !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after parent cancel, begin gives err %v", ctx.Err())
	}
}
