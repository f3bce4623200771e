package history

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestRecordsRoundTrip: an operation read back is the one added: times
// compare the same (the zero time stays zero), the error is the same
// value, node and client are kept.
func TestRecordsRoundTrip(t *testing.T) {
	h := New()
	boom := errors.New("boom")
	now := time.Now()
	added := []Op{
		{Call: now, Return: now.Add(time.Microsecond), ID: 7, Node: "n2", Client: 3},
		{Call: now.Add(time.Nanosecond), Return: now.Add(2 * time.Millisecond), ID: 8, Hi: 20, Node: "n1", Client: 4},
		{Client: 5, Err: boom}, // a connection that never reached a node
		{Call: now.Add(-time.Hour), Return: now.Add(time.Second), Node: "n2", Client: 6, Err: boom},
	}
	for _, o := range added {
		h.Add(o)
	}
	got := h.Ops()
	if len(got) != len(added) {
		t.Fatalf("%d ops read back, want %d", len(got), len(added))
	}
	for i, g := range got {
		w := added[i]
		if !g.Call.Equal(w.Call) || !g.Return.Equal(w.Return) || g.Call.IsZero() != w.Call.IsZero() ||
			g.ID != w.ID || g.Hi != w.Hi || g.Node != w.Node || g.Client != w.Client || g.Err != w.Err {
			t.Errorf("op %d: read back %+v, added %+v", i, g, w)
		}
	}
	if !got[0].Call.Before(got[1].Call) || !got[1].Return.After(got[0].Return) {
		t.Error("a nanosecond apart no longer compares")
	}
	if ok, failed := h.Counts(); ok != 2 || failed != 2 {
		t.Errorf("Counts %d, %d; want 2, 2", ok, failed)
	}
	if h.MaxID() != 20 || h.IDs() != 1+13 {
		t.Errorf("MaxID %d, IDs %d; want 20, 14", h.MaxID(), h.IDs())
	}
}

// TestHistoryAgreesWithSlice: on random histories (ranges, failures,
// several nodes, out-of-order returns), a History's checks find what the
// checks of the same operations as a slice find, and its counters agree
// with the operations.
func TestHistoryAgreesWithSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		h := New()
		start := time.Now()
		for range r.IntN(60) {
			call := start.Add(time.Duration(r.IntN(100)) * time.Millisecond)
			o := Op{Call: call, Return: call.Add(time.Duration(r.IntN(20)) * time.Millisecond),
				ID: uint64(r.IntN(50)), Node: []string{"n1", "n2", "n3"}[r.IntN(3)], Client: r.IntN(4)}
			if r.IntN(4) == 0 {
				o.Hi = o.ID + uint64(r.IntN(5)) - 1
			}
			if r.IntN(6) == 0 {
				o.Err = errors.New("lost")
			}
			h.Add(o)
		}
		ops := h.Ops()
		if a, b := h.Check(), Check(ops); !reflect.DeepEqual(a, b) {
			t.Fatalf("round %d: History.Check %s\nCheck %s", round, Report(a, 5), Report(b, 5))
		}
		if a, b := h.CheckNodeScoped(), CheckNodeScoped(ops); !reflect.DeepEqual(a, b) {
			t.Fatalf("round %d: History.CheckNodeScoped %s\nCheckNodeScoped %s", round, Report(a, 5), Report(b, 5))
		}
		var ok, failed int
		var maxID, ids uint64
		for _, o := range ops {
			if !o.OK() {
				failed++
				continue
			}
			ok++
			maxID = max(maxID, o.Last())
			if o.Last() >= o.Lo() {
				ids += o.Last() - o.Lo() + 1
			}
		}
		if gotOK, gotFailed := h.Counts(); gotOK != ok || gotFailed != failed || h.MaxID() != maxID || h.IDs() != ids {
			t.Fatalf("round %d: counters %d %d %d %d, operations say %d %d %d %d", round, gotOK, gotFailed, h.MaxID(), h.IDs(), ok, failed, maxID, ids)
		}
		byCall := slices.Collect(h.ByCall())
		if !slices.IsSortedFunc(byCall, func(a, b Op) int { return a.Call.Compare(b.Call) }) || len(byCall) != len(ops) {
			t.Fatalf("round %d: ByCall not in call order", round)
		}
	}
}

// TestReadWhileRecording: All and From read a snapshot while clients go
// on recording (run with -race): a snapshot yields the same operations
// every time, From yields what was added since.
func TestReadWhileRecording(t *testing.T) {
	h := New()
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3 * chunkLen {
				h.End(h.Begin("n1", c), uint64(c*10*chunkLen+i+1), nil)
			}
		}()
	}
	next, seen := 0, 0
	for done := false; !done; {
		done = h.Len() == 4*3*chunkLen
		all := h.All()
		a, b := 0, 0
		for range all {
			a++
		}
		for range all {
			b++
		}
		if a != b {
			t.Fatalf("one snapshot yielded %d, then %d operations", a, b)
		}
		for i, o := range h.From(next) {
			if i != next || !o.OK() {
				t.Fatalf("From yielded position %d (%+v), want %d", i, o, next)
			}
			next++
			seen++
		}
	}
	wg.Wait()
	if seen != 4*3*chunkLen {
		t.Fatalf("From yielded %d operations in all, want %d", seen, 4*3*chunkLen)
	}
}

// TestHistoryCompact: what a history keeps and what reading it costs,
// the soak's memory (issue: 1 GB a million INCRs when an Op was kept
// whole and every read copied the history): at most 48 bytes an
// operation kept (a record is 40; an Op was 104, 125 with append's
// slack), and ranging over All allocates nothing.
func TestHistoryCompact(t *testing.T) {
	const n = 100_000
	before := heapAfterGC()
	h := New()
	recordN(h, n)
	if kept := float64(heapAfterGC()-before) / n; kept > 48 {
		t.Errorf("history keeps %.1f bytes an operation, want at most 48", kept)
	}
	allocs := testing.AllocsPerRun(5, func() {
		for o := range h.All() {
			if !o.OK() {
				t.Fatal("recorded only successes")
			}
		}
	})
	if allocs > 1 { // the snapshot's closure
		t.Errorf("reading the history allocated %v times, want at most 1", allocs)
	}
}
