package main

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The collector's pace. A ticket server's heap is small (tens of MB) and
// its garbage is per statement: collecting at 5x the live heap (GOGC=400)
// instead of Go's 2x gave 5% more tickets/s on three nodes (sysbench, 64
// connections). A node holding large row tables (150 bytes a row live:
// 1.5 GB at 10,000,000 rows) would then use up to 7.5 GB, so the pace
// comes down to Go's default as the live heap grows: the heap in use
// stays within twice the live heap once that passes gcLargeHeap, and
// within gcLargeHeap*2 + live before.
const (
	gcSmallPercent = 400
	gcLargePercent = 100
	gcLargeHeap    = 256 << 20
)

// gcPercent is the GOGC for a live heap of live bytes: the smaller of
// gcSmallPercent and the percent that leaves gcLargeHeap of headroom,
// and never below gcLargePercent.
func gcPercent(live uint64) int {
	if live == 0 {
		return gcSmallPercent
	}
	p := uint64(gcLargePercent) * gcLargeHeap / live
	return int(min(max(p, gcLargePercent), gcSmallPercent))
}

// liveHeap reads the live heap the last collection marked.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// tuneGC sets GOGC to gcPercent of the live heap now and then every
// interval until ctx ends; read and set are liveHeap and
// debug.SetGCPercent outside tests. It only sets a value that changed.
func tuneGC(ctx context.Context, every time.Duration, read func() uint64, set func(int) int) {
	cur := gcPercent(read())
	set(cur)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if p := gcPercent(read()); p != cur {
				cur = p
				set(p)
			}
		}
	}
}

// startGCTuning starts tuneGC unless GOGC is set in the environment,
// which then wins.
func startGCTuning(ctx context.Context, getenv func(string) string) {
	if getenv("GOGC") != "" {
		return
	}
	go tuneGC(ctx, time.Second, liveHeap, debug.SetGCPercent)
}
