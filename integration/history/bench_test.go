package history

import (
	"runtime"
	"testing"
)

// recordN records n successful single-id operations from one client of
// one of three nodes each, as a soak's clients do.
func recordN(h *History, n int) {
	nodes := []string{"n1", "n2", "n3"}
	for i := range n {
		p := h.Begin(nodes[i%3], i%9)
		h.End(p, uint64(i+1), nil)
	}
}

// heapAfterGC is the live heap, collected.
func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkHistory measures what a soak's history costs: kept bytes per
// operation recorded (retained-B/rec, the live heap after recording 1M),
// and the allocation of checking 1M operations and of reading them once
// (a soak reads the history after every fault and polls it while it
// waits for the nodes to serve): read copies it (Ops), all does not (All).
func BenchmarkHistory(b *testing.B) {
	const n = 1 << 20
	b.Run("record", func(b *testing.B) {
		b.ReportAllocs()
		var kept float64
		for range b.N {
			before := heapAfterGC()
			h := New()
			recordN(h, n)
			kept = float64(heapAfterGC()-before) / n
			runtime.KeepAlive(h)
		}
		b.ReportMetric(kept, "retained-B/rec")
	})
	h := New()
	recordN(h, n)
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if vs := h.Check(); len(vs) != 0 {
				b.Fatal(Report(vs, 3))
			}
		}
	})
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var ok int
			for o := range h.All() {
				if o.OK() {
					ok++
				}
			}
			if ok != n {
				b.Fatalf("%d ok, want %d", ok, n)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var ok int
			for _, o := range h.Ops() {
				if o.OK() {
					ok++
				}
			}
			if ok != n {
				b.Fatalf("%d ok, want %d", ok, n)
			}
		}
	})
}
