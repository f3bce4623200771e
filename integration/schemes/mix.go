package schemes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/ticketd/ticketd/integration/history"
)

// Mix is several workloads run at once against one target: one history
// per counter (Scheme.Counter), shared by the schemes drawing from it,
// and each scheme's stats once it has run.
type Mix struct {
	// Histories are created by NewMix and safe to read while Run runs.
	Histories map[string]*history.History
	// Stats is filled in when Run returns.
	Stats map[Scheme]*Stats

	cfgs []Config
}

// NewMix prepares cfgs to run together, with empty histories.
func NewMix(cfgs []Config) *Mix {
	m := &Mix{Histories: map[string]*history.History{}, Stats: map[Scheme]*Stats{}, cfgs: cfgs}
	for _, c := range cfgs {
		if m.Histories[c.Scheme.Counter()] == nil {
			m.Histories[c.Scheme.Counter()] = history.New()
		}
	}
	return m
}

// RunMix is NewMix(cfgs).Run(ctx, tgt, also...).
func RunMix(ctx context.Context, tgt Target, cfgs []Config, also ...*history.History) (*Mix, error) {
	m := NewMix(cfgs)
	return m, m.Run(ctx, tgt, also...)
}

// Run runs every config concurrently against tgt until each is done or
// ctx ends, numbering their clients apart, recording each allocation in
// its counter's history and in every history of also (e.g. a fault
// test's view of availability across schemes). Call it once.
func (m *Mix) Run(ctx context.Context, tgt Target, also ...*history.History) error {
	var mu sync.Mutex
	var errs []error
	stats := map[Scheme]*Stats{}
	var wg sync.WaitGroup
	first := 0
	for _, c := range m.cfgs {
		c.FirstClient = first
		first += c.Clients
		hs := append([]*history.History{m.Histories[c.Scheme.Counter()]}, also...)
		wg.Go(func() {
			st, err := Run(ctx, tgt, c, hs...)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c.Scheme, err))
				return
			}
			stats[c.Scheme] = st
		})
	}
	wg.Wait()
	m.Stats = stats
	return errors.Join(errs...)
}

// Violations checks every counter's history.
func (m *Mix) Violations() map[string][]history.Violation {
	out := map[string][]history.Violation{}
	for counter, h := range m.Histories {
		if vs := h.Check(); len(vs) > 0 {
			out[counter] = vs
		}
	}
	return out
}

// Unknown counts the failed allocations from counter whose effect is
// unknown: all but Tinyid's lost compare-and-sets, which are known to
// have changed nothing.
func (m *Mix) Unknown(counter string) int {
	n := 0
	for s, st := range m.Stats {
		if s.Counter() == counter {
			n += st.Failed - st.Errors[ClassConflict]
		}
	}
	return n
}

// Unserved returns "node counter" for each node of nodes that has not
// completed a successful allocation from counter called at or after
// from: a scheme a recovered node keeps refusing would otherwise hide
// behind the others.
func (m *Mix) Unserved(nodes []string, from time.Time) []string {
	var out []string
	for counter, h := range m.Histories {
		served := map[string]bool{}
		for _, o := range h.Ops() {
			if o.OK() && !o.Call.Before(from) {
				served[o.Node] = true
			}
		}
		for _, n := range nodes {
			if !served[n] {
				out = append(out, n+" "+counter)
			}
		}
	}
	sort.Strings(out)
	return out
}

// CheckState reads the counters' final state through dsn (the workload
// stopped) and checks it against the histories. Always: nothing handed
// out is above what the server kept (durability: a restart must not
// forget a committed segment, worker or sequence value). And for a
// counter with no allocation of unknown outcome, exactly what was handed
// out was consumed: Leaf's max_id is 1 plus every segment, Tinyid's row
// moved one step and one version per successful fetch, one WORKER_NODE
// row per launch. It takes one NEXTVAL from each sequence.
func (m *Mix) CheckState(ctx context.Context, dsn string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	// Only the statements the schemes themselves send (and one plain
	// SELECT of a column): a server that runs the schemes need not
	// support aggregates for its tests to pass.
	var errs []error
	one := func(q string, args []any, dst ...any) bool {
		if err := db.QueryRowContext(ctx, q, args...).Scan(dst...); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", q, err))
			return false
		}
		return true
	}
	exact := func(counter string) bool { return m.Unknown(counter) == 0 }
	if h := m.Histories[Leaf.Counter()]; h != nil {
		var tag string
		var maxID uint64
		var step int64
		if one(leafSelect, []any{LeafTag}, &tag, &maxID, &step) {
			if maxID < h.MaxID() || exact(Leaf.Counter()) && maxID != 1+h.IDs() {
				errs = append(errs, fmt.Errorf("leaf_alloc.max_id %d; the history handed out %d ids up to %d (%d fetches of unknown outcome)",
					maxID, h.IDs(), h.MaxID(), m.Unknown(Leaf.Counter())))
			}
		}
	}
	if h := m.Histories[Tinyid.Counter()]; h != nil {
		var (
			id                                     uint64
			bizType, createTime, updateTime        string
			beginID, maxID, delta, remainder, vers int64
			step                                   sql.NullInt64
		)
		if one(tinyidSelect, []any{TinyidBizType}, &id, &bizType, &beginID, &maxID, &step, &delta, &remainder, &createTime, &updateTime, &vers) {
			ok, _ := h.Counts()
			if uint64(maxID) < h.MaxID() || exact(Tinyid.Counter()) && (uint64(maxID) != 1+h.IDs() || vers != 1+int64(ok)) {
				errs = append(errs, fmt.Errorf("tiny_id_info max_id %d version %d; the history: %d fetches of %d ids up to %d (%d of unknown outcome)",
					maxID, vers, ok, h.IDs(), h.MaxID(), m.Unknown(Tinyid.Counter())))
			}
		}
	}
	if h := m.Histories[UidGen.Counter()]; h != nil {
		var n, maxID uint64
		rows, err := db.QueryContext(ctx, "SELECT ID FROM WORKER_NODE")
		if err == nil {
			for rows.Next() {
				var id uint64
				if err = rows.Scan(&id); err != nil {
					break
				}
				n, maxID = n+1, max(maxID, id)
			}
			err = errors.Join(err, rows.Err(), rows.Close())
		}
		ok, _ := h.Counts()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("SELECT ID FROM WORKER_NODE: %w", err))
		case maxID < h.MaxID() || exact(UidGen.Counter()) && n != uint64(ok):
			errs = append(errs, fmt.Errorf("WORKER_NODE holds %d rows up to id %d; the history: %d launches up to worker id %d (%d of unknown outcome)",
				n, maxID, ok, h.MaxID(), m.Unknown(UidGen.Counter())))
		}
	}
	for _, s := range []Scheme{NextVal, NextValNoCache} {
		h := m.Histories[s.Counter()]
		if h == nil {
			continue
		}
		name := SeqCached
		if s == NextValNoCache {
			name = SeqNoCache
		}
		var v uint64
		if one(fmt.Sprintf("SELECT NEXTVAL(%s)", name), nil, &v) && v <= h.MaxID() {
			errs = append(errs, fmt.Errorf("sequence %s: NEXTVAL after the run %d, not above the %d handed out", name, v, h.MaxID()))
		}
	}
	return errors.Join(errs...)
}
