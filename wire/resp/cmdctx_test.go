package resp

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// A command's context ends d after the command began with
// DeadlineExceeded, as context.WithTimeout's; the next command's is a
// live one; a command that ended in time leaves the next one its whole
// d; the parent's end ends it.
func TestCmdContexts(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	var cc cmdContexts
	defer cc.close()
	const d = 50 * time.Millisecond

	start := time.Now()
	ctx := cc.begin(parent, d)
	if dl, ok := ctx.Deadline(); !ok || dl.Before(start.Add(d)) || dl.After(time.Now().Add(d)) {
		t.Fatalf("deadline %v, %v; want %v after the start", dl, ok, d)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the command's context did not end")
	}
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ended with %v, want DeadlineExceeded", err)
	}
	if took := time.Since(start); took < d {
		t.Fatalf("ended after %v, before its %v", took, d)
	}
	cc.end()

	// Commands that end in time: the timer is re-armed for each, so the
	// third one is not ended by the first's time.
	for range 3 {
		ctx = cc.begin(parent, d)
		if err := ctx.Err(); err != nil {
			t.Fatalf("a new command's context: %v", err)
		}
		time.Sleep(d / 2)
		if err := ctx.Err(); err != nil {
			t.Fatalf("ended %v into its %v: %v", d/2, d, err)
		}
		cc.end()
	}

	// A child is attached to the shared context, not watched by a
	// goroutine, and ends with it.
	ctx = cc.begin(parent, time.Hour)
	before := runtime.NumGoroutine()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after a child context, %d before", n, before)
	}
	cancelParent()
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the parent's end did not reach the command's child")
	}
	if err := ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("after the parent's end: %v", err)
	}
	cc.end()
}
