package history

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// rng builds a range operation [lo, hi] from millisecond offsets.
func rng(call, ret int, lo, hi uint64) Op {
	o := op(call, ret, lo)
	o.Hi = hi
	return o
}

func TestCheckRangesPass(t *testing.T) {
	cases := map[string][]Op{
		// Leaf segments of 2000 after max_id 1: (1, 2001], (2001, 4001].
		"sequential segments":                {rng(0, 1, 2, 2001), rng(2, 3, 2002, 4001), rng(4, 5, 4002, 6001)},
		"adjacent, concurrent, either order": {rng(0, 10, 101, 200), rng(1, 9, 1, 100), rng(2, 8, 201, 300)},
		// Tinyid and a dynamic Leaf step: ranges of different sizes.
		"mixed sizes with gaps": {rng(0, 1, 1, 10), rng(2, 3, 11, 11), rng(4, 5, 100, 1000), op(6, 7, 1001)},
		// A one-id range is the same as a single id.
		"one-id ranges and ids": {rng(0, 1, 1, 1), op(2, 3, 2), rng(4, 5, 3, 3)},
		// A failed fetch's range (known or not) constrains nothing.
		"failed overlapping range ignored": {rng(0, 1, 1, 100), {Call: t0, Return: t0, ID: 50, Hi: 60, Err: errors.New("commit: connection lost")}, rng(2, 3, 101, 200)},
		// Called before the earlier range returned: concurrent.
		"overlap in time by a hair": {rng(0, 5, 101, 200), rng(5, 6, 1, 100)},
	}
	for name, ops := range cases {
		t.Run(name, func(t *testing.T) {
			if vs := Check(ops); len(vs) != 0 {
				t.Fatalf("want no violations, got %s", Report(vs, 10))
			}
		})
	}
}

func TestCheckRangesFail(t *testing.T) {
	cases := []struct {
		name  string
		ops   []Op
		kinds []Kind
	}{
		// Two Leaf servers got the same segment (a lost update).
		{"same segment twice, concurrent", []Op{rng(0, 10, 2, 2001), rng(1, 9, 2, 2001)}, []Kind{Overlap}},
		// One id in common at the edge: (1, 2001] and [2001, 4000].
		{"touching by one id", []Op{rng(0, 10, 2, 2001), rng(1, 9, 2001, 4000)}, []Kind{Overlap}},
		// A range inside another.
		{"nested", []Op{rng(0, 10, 1, 1000), rng(1, 9, 500, 600)}, []Kind{Overlap}},
		// A single id inside a segment.
		{"id inside a segment", []Op{rng(0, 10, 1, 1000), op(1, 9, 42)}, []Kind{Overlap}},
		// The overlap is with a range that is not the previous one by lo.
		{"overlap with an earlier long range", []Op{rng(0, 10, 1, 1000), rng(0, 10, 10, 20), rng(0, 10, 500, 501)}, []Kind{Overlap, Overlap}},
		// Sequential but backwards: disjoint, yet the later fetch is
		// below a segment that had returned before it was called.
		{"later segment below", []Op{rng(0, 1, 101, 200), rng(2, 3, 1, 100)}, []Kind{NotIncreasing}},
		// The later range starts above the earlier start but inside it,
		// so it overlaps and is not entirely above.
		{"starts inside an earlier range", []Op{rng(0, 1, 1, 100), rng(2, 3, 50, 150)}, []Kind{Overlap, NotIncreasing}},
		// Entirely above the last-returned range but not above the
		// largest range returned earlier.
		{"below an older max", []Op{rng(0, 1, 901, 1000), rng(2, 3, 10, 20), rng(4, 5, 500, 600)}, []Kind{NotIncreasing, NotIncreasing}},
		// A UidGenerator worker id reused after a restart.
		{"worker id reissued", []Op{op(0, 1, 7), failed(2, 50), op(60, 61, 7)}, []Kind{Duplicate}},
		// A client that computed its segment wrongly.
		{"empty range", []Op{rng(0, 1, 10, 5)}, []Kind{EmptyRange}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkKinds(t, c.ops, c.kinds)
		})
	}
}

// TestRangeReportNamesRanges: a report shows both ranges, so a failure in
// a fault test can be read without the raw history.
func TestRangeReportNamesRanges(t *testing.T) {
	a, b := rng(0, 10, 2, 2001), rng(1, 9, 1000, 3000)
	a.Client, b.Client = 1, 2
	vs := Check([]Op{a, b})
	if len(vs) != 1 {
		t.Fatalf("want 1 violation, got %s", Report(vs, 10))
	}
	// b was called later, so it is the offender.
	if vs[0].Op.Client != 2 || vs[0].Prior.Client != 1 {
		t.Fatalf("want client 2 flagged against client 1, got %+v", vs[0])
	}
	s := vs[0].String()
	for _, want := range []string{"[1000, 3000]", "ids=[2,2001]"} {
		if !strings.Contains(s, want) {
			t.Errorf("report %q lacks %q", s, want)
		}
	}
}

// TestRangesRecorded drives EndRange from many goroutines with a correct
// segment allocator and with one that sometimes hands out a segment
// overlapping the previous one, as a Leaf server would after a lost
// update.
func TestRangesRecorded(t *testing.T) {
	var mu sync.Mutex
	var maxID uint64 = 1
	const step = 100
	fetch := func(overlap bool) (uint64, uint64) {
		mu.Lock()
		defer mu.Unlock()
		maxID += step
		if overlap && rand.IntN(50) == 0 {
			return maxID - 2*step + 1, maxID - step + 10
		}
		return maxID - step + 1, maxID
	}
	for _, bad := range []bool{false, true} {
		h := New()
		var wg sync.WaitGroup
		for c := range 8 {
			wg.Go(func() {
				for range 200 {
					p := h.Begin("n1", c)
					lo, hi := fetch(bad)
					h.EndRange(p, lo, hi, nil)
				}
			})
		}
		wg.Wait()
		vs := h.Check()
		if bad && len(vs) == 0 {
			t.Fatal("overlapping segments not detected")
		}
		if !bad {
			if len(vs) != 0 {
				t.Fatalf("correct allocator flagged: %s", Report(vs, 5))
			}
			if h.IDs() != 1600*step || h.MaxID() != 1+1600*step {
				t.Fatalf("IDs %d MaxID %d, want %d and %d", h.IDs(), h.MaxID(), 1600*step, 1+1600*step)
			}
		}
	}
}
