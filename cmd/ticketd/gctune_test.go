package main

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 400},
		{10 << 20, 400},
		{64 << 20, 400},
		{128 << 20, 200},
		{256 << 20, 100},
		{1500 << 20, 100},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestTuneGCFollowsLiveHeap: the pace follows the live heap as it grows
// and shrinks, and is set only when it changes.
func TestTuneGCFollowsLiveHeap(t *testing.T) {
	lives := []uint64{10 << 20, 20 << 20, 128 << 20, 1 << 30, 1 << 30, 10 << 20}
	var mu sync.Mutex
	var set []int
	next := 0
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	read := func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		if next == len(lives) {
			if done != nil {
				close(done)
				done = nil
			}
			return lives[len(lives)-1]
		}
		next++
		return lives[next-1]
	}
	finished := done
	go tuneGC(ctx, time.Millisecond, read, func(p int) int {
		mu.Lock()
		defer mu.Unlock()
		set = append(set, p)
		return 0
	})
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("tuneGC stopped reading the live heap")
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	want := []int{400, 200, 100, 400}
	if len(set) != len(want) {
		t.Fatalf("set %v, want %v", set, want)
	}
	for i := range want {
		if set[i] != want[i] {
			t.Fatalf("set %v, want %v", set, want)
		}
	}
}
