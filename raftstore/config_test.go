package raftstore

import (
	"testing"
	"time"
)

func TestApplyTimeoutFor(t *testing.T) {
	for _, st := range []time.Duration{time.Second, 2 * time.Second, 10 * time.Second, time.Minute} {
		at := ApplyTimeoutFor(st)
		if at <= 0 {
			t.Errorf("statement timeout %v: apply timeout %v, want > 0", st, at)
		}
		// A statement queued behind a failing proposal waits out that
		// one's apply timeout and then its own: both must end inside the
		// statement timeout, with time left to tell the client.
		if 2*at >= st {
			t.Errorf("statement timeout %v: two apply timeouts (%v) do not end inside it", st, 2*at)
		}
	}
	// The flag's default, 10s, gives Raft a third of it.
	if got, want := ApplyTimeoutFor(10*time.Second), 10*time.Second/3; got != want {
		t.Errorf("ApplyTimeoutFor(10s) = %v, want %v", got, want)
	}
}
