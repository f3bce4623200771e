package schemes

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/history"
)

// mix is the standard workload: how many clients of each scheme. Eight
// Leaf servers on one biz_tag (two of them with a dynamic step), eight
// Tinyid servers on one biz_type (two without the transaction), four
// UidGenerator launchers and four callers of each sequence.
var mix = []Config{
	{Scheme: Leaf, Clients: 6},
	{Scheme: LeafDynamic, Clients: 2, Step: 500},
	{Scheme: Tinyid, Clients: 6},
	{Scheme: TinyidAutocommit, Clients: 2},
	{Scheme: UidGen, Clients: 4},
	{Scheme: NextVal, Clients: 4},
	{Scheme: NextValNoCache, Clients: 4},
}

// outcome is a finished mix: one history per counter, stats per scheme.
type outcome struct {
	hs    map[string]*history.History
	stats map[Scheme]*Stats
}

// runMix runs every config of cfgs concurrently against tgt for dur,
// numbering clients apart, and records each scheme in its counter's
// history (plus all, if given).
func runMix(ctx context.Context, t *testing.T, tgt Target, cfgs []Config, dur time.Duration, all *history.History) *outcome {
	t.Helper()
	out := &outcome{hs: map[string]*history.History{}, stats: map[Scheme]*Stats{}}
	for _, c := range cfgs {
		if out.hs[c.Scheme.Counter()] == nil {
			out.hs[c.Scheme.Counter()] = history.New()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	first := 0
	for _, c := range cfgs {
		c.FirstClient = first
		first += c.Clients
		hs := []*history.History{out.hs[c.Scheme.Counter()]}
		if all != nil {
			hs = append(hs, all)
		}
		wg.Go(func() {
			st, err := Run(ctx, tgt, c, hs...)
			if err != nil {
				t.Errorf("%s: %v", c.Scheme, err)
				return
			}
			mu.Lock()
			out.stats[c.Scheme] = st
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// check fails the test on any history violation, any error outside
// allowed, and a counter with fewer than minOK successful allocations;
// it logs each scheme's figures. The minimum is per counter, not per
// scheme: on one Tinyid row the transactional servers starve the
// autocommit ones (their row lock lasts until COMMIT, so the others'
// compare-and-set keeps finding max_id moved), which is InnoDB's
// behaviour, not a failure.
func (o *outcome) check(t *testing.T, minOK int, allowed ...string) {
	t.Helper()
	for counter, h := range o.hs {
		if vs := h.Check(); len(vs) > 0 {
			t.Errorf("%s: %s", counter, history.Report(vs, 10))
		}
	}
	okBy := map[string]int{}
	defer func() {
		for counter := range o.hs {
			if okBy[counter] < minOK {
				t.Errorf("%s: %d successful allocations, want at least %d", counter, okBy[counter], minOK)
			}
		}
	}()
	for _, s := range Schemes {
		st := o.stats[s]
		if st == nil {
			continue
		}
		t.Logf("%-18s %d clients: %5d ok (%.0f/s), %d failed [%s], %d lost CAS, p50 %v p99 %v",
			s, st.Clients, st.OK, st.PerSec(), st.Failed, st.ErrorSummary(), st.Retries,
			st.P50.Round(time.Microsecond), st.P99.Round(time.Microsecond))
		okBy[s.Counter()] += st.OK
		for _, e := range st.Unexpected(allowed...) {
			t.Errorf("%s: unexpected error: %s", s, e)
		}
	}
}

// failed counts the failed allocations of the schemes drawing from
// counter whose effect is unknown: all but Tinyid's lost
// compare-and-sets, which are known to have changed nothing.
func (o *outcome) failed(counter string) int {
	n := 0
	for s, st := range o.stats {
		if s.Counter() == counter {
			n += st.Failed - st.Errors[ClassConflict]
		}
	}
	return n
}

// checkState reads the counters' final state through dsn and checks it
// against the histories: nothing handed out is above what the server
// kept (durable), and with no failed allocation (whose outcome is
// unknown), exactly what was handed out was consumed: Leaf's max_id is 1
// plus every segment, Tinyid's row moved one step and one version per
// successful fetch, one WORKER_NODE row per launch.
func (o *outcome) checkState(ctx context.Context, t *testing.T, dsn string) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	one := func(q string, dst ...any) bool {
		if err := db.QueryRowContext(ctx, q).Scan(dst...); err != nil {
			t.Errorf("%s: %v", q, err)
			return false
		}
		return true
	}
	exact := func(counter string) bool { return o.failed(counter) == 0 }

	if h := o.hs[Leaf.Counter()]; h != nil {
		var maxID uint64
		if one("SELECT max_id FROM leaf_alloc WHERE biz_tag = '"+LeafTag+"'", &maxID) {
			if maxID < h.MaxID() || exact(Leaf.Counter()) && maxID != 1+h.IDs() {
				t.Errorf("leaf_alloc.max_id %d; history handed out %d ids up to %d (exact: %v)", maxID, h.IDs(), h.MaxID(), exact(Leaf.Counter()))
			}
		}
	}
	if h := o.hs[Tinyid.Counter()]; h != nil {
		var maxID, version uint64
		if one("SELECT max_id, version FROM tiny_id_info WHERE biz_type = '"+TinyidBizType+"'", &maxID, &version) {
			ok, _ := h.Counts()
			if maxID < h.MaxID() || exact(Tinyid.Counter()) && (maxID != 1+h.IDs() || version != 1+uint64(ok)) {
				t.Errorf("tiny_id_info max_id %d version %d; history: %d fetches of %d ids up to %d", maxID, version, ok, h.IDs(), h.MaxID())
			}
		}
	}
	if h := o.hs[UidGen.Counter()]; h != nil {
		var n, maxID uint64
		if one("SELECT COUNT(*), COALESCE(MAX(ID), 0) FROM WORKER_NODE", &n, &maxID) {
			ok, _ := h.Counts()
			if maxID < h.MaxID() || exact(UidGen.Counter()) && n != uint64(ok) {
				t.Errorf("WORKER_NODE holds %d rows up to id %d; history: %d launches up to worker id %d", n, maxID, ok, h.MaxID())
			}
		}
	}
	for _, seq := range []Scheme{NextVal, NextValNoCache} {
		h := o.hs[seq.Counter()]
		if h == nil {
			continue
		}
		name := SeqCached
		if seq == NextValNoCache {
			name = SeqNoCache
		}
		var v uint64
		if one(fmt.Sprintf("SELECT NEXTVAL(%s)", name), &v) && v <= h.MaxID() {
			t.Errorf("sequence %s: NEXTVAL after the run %d, not above the %d handed out", name, v, h.MaxID())
		}
	}
}

// allSchemes is every scheme of cfgs, for Setup.
func allSchemes(cfgs []Config) []Scheme {
	var s []Scheme
	for _, c := range cfgs {
		s = append(s, c.Scheme)
	}
	return s
}
