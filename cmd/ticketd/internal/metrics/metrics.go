package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/wire"
)

// MaxTables bounds the table label of ticketd_ids_allocated_total: tables
// beyond the first MaxTables seen are counted under "other", so that a
// client creating tables in a loop cannot blow up the series count.
const MaxTables = 100

// maxCodes bounds the code label of ticketd_errors_total likewise.
const maxCodes = 64

// Metrics holds the observers handed to each package.
type Metrics struct {
	Ticket *Ticket
	Wire   *Wire
	Store  *Store
	Redis  *Redis
}

// New creates ticketd's metrics and registers them with reg.
func New(reg prometheus.Registerer) *Metrics {
	return &Metrics{Ticket: newTicket(reg), Wire: newWire(reg), Store: newStore(reg), Redis: newRedis(reg)}
}

// latencyBuckets span a reservation hit (tens of µs) to a statement
// timing out without a leader (seconds).
var latencyBuckets = prometheus.ExponentialBuckets(0.0001, 2.5, 12)

func resultLabel(err error) int {
	if err != nil {
		return 1
	}
	return 0
}

var results = [2]string{"ok", "error"}

// Ticket implements alloc.Observer.
type Ticket struct {
	ids       *lazyVec[tableKey]
	allocDur  [2]prometheus.Observer // by path: raft, range
	hits      prometheus.Counter
	batchSize prometheus.Observer
	batchDur  prometheus.Observer
	batches   [2]prometheus.Counter // by result
	refills   [2]prometheus.Counter // by result
	cas       [2]prometheus.Counter // by outcome: proposed, lost
}

type tableKey struct{ db, table string }

func newTicket(reg prometheus.Registerer) *Ticket {
	ids := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_ids_allocated_total",
		Help: "Ids handed to this node's clients, by table (db.table; \"other\" beyond " + strconv.Itoa(MaxTables) + " tables).",
	}, []string{"table"})
	allocDur := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ticketd_allocation_duration_seconds",
		Help:    "Time from an allocating statement reaching the ticket service to its ids, by path (raft: a Raft round trip; range: a range reservation).",
		Buckets: latencyBuckets,
	}, []string{"path"})
	hits := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ticketd_reservation_hits_total",
		Help: "Allocating statements served from a range reservation.",
	})
	refills := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_reservation_refills_total",
		Help: "Range reservations proposed through Raft, by result.",
	}, []string{"result"})
	batchSize := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ticketd_batch_size",
		Help:    "Commands per batch proposed through Raft or forwarded to the leader (group commit).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10),
	})
	batchDur := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ticketd_batch_duration_seconds",
		Help:    "Round trip of one batch through replication (commit and apply, or forward to the leader).",
		Buckets: latencyBuckets,
	})
	cas := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_compare_and_set_total",
		Help: "Compare-and-set UPDATEs (one row by primary key, a WHERE beyond the key) the leader queued for their row, by outcome (lost: answered 0 rows from its state, without a log entry; proposed: through Raft).",
	}, []string{"outcome"})
	batches := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_batches_total",
		Help: "Batches proposed through replication, by result (error: no quorum or outcome unknown).",
	}, []string{"result"})
	reg.MustRegister(ids, allocDur, hits, refills, batchSize, batchDur, batches, cas)
	t := &Ticket{
		ids: newLazyVec(MaxTables, func(k tableKey) string { return k.db + "." + k.table },
			func(label string) prometheus.Counter { return ids.WithLabelValues(label) }),
		allocDur:  [2]prometheus.Observer{allocDur.WithLabelValues("raft"), allocDur.WithLabelValues("range")},
		hits:      hits,
		batchSize: batchSize,
		batchDur:  batchDur,
	}
	for i, r := range results {
		t.batches[i] = batches.WithLabelValues(r)
		t.refills[i] = refills.WithLabelValues(r)
	}
	t.cas = [2]prometheus.Counter{cas.WithLabelValues("proposed"), cas.WithLabelValues("lost")}
	return t
}

// Allocated implements alloc.Observer.
func (t *Ticket) Allocated(db, table string, ids uint64, d time.Duration, fromRange bool) {
	path := 0
	if fromRange {
		path = 1
		t.hits.Inc()
	}
	t.allocDur[path].Observe(d.Seconds())
	if ids > 0 {
		t.ids.get(tableKey{db, table}).Add(float64(ids))
	}
}

// BatchProposed implements alloc.Observer.
func (t *Ticket) BatchProposed(size int, d time.Duration, err error) {
	t.batchSize.Observe(float64(size))
	t.batchDur.Observe(d.Seconds())
	t.batches[resultLabel(err)].Inc()
}

// ReservationRefilled implements alloc.Observer.
func (t *Ticket) ReservationRefilled(_ uint64, err error) { t.refills[resultLabel(err)].Inc() }

// CompareAndSet implements alloc.Observer.
func (t *Ticket) CompareAndSet(lost bool) {
	i := 0
	if lost {
		i = 1
	}
	t.cas[i].Inc()
}

// Wire implements wire.Observer.
type Wire struct {
	stmts      []prometheus.Counter // by wire.StmtKind
	other      prometheus.Counter
	errs       *lazyVec[uint16]
	plans      []prometheus.Counter // by sql.PlanSource
	connsOpen  prometheus.Gauge
	connsTotal prometheus.Counter
	authFailed prometheus.Counter
}

func newWire(reg prometheus.Registerer) *Wire {
	stmts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_statements_total",
		Help: "Statements run, by kind (replace, insert, update, select, set, show, ddl, use, transaction, other).",
	}, []string{"kind"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_errors_total",
		Help: "Errors answered to clients, by MySQL error code (1290: no leader with a quorum; 1105: outcome unknown).",
	}, []string{"code"})
	open := prometheus.NewGauge(prometheus.GaugeOpts{Name: "ticketd_connections_open", Help: "Client connections open."})
	total := prometheus.NewCounter(prometheus.CounterOpts{Name: "ticketd_connections_total", Help: "Client connections accepted."})
	auth := prometheus.NewCounter(prometheus.CounterOpts{Name: "ticketd_auth_failures_total", Help: "Logins and COM_CHANGE_USERs refused (error 1045)."})
	plans := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_query_plans_total",
		Help: "Text queries by where their plans came from: cache (the same text before), template (the same text with other values; no parse) or parser.",
	}, []string{"source"})
	reg.MustRegister(stmts, errs, plans, open, total, auth)
	w := &Wire{
		errs: newLazyVec(maxCodes, func(c uint16) string { return strconv.Itoa(int(c)) },
			func(label string) prometheus.Counter { return errs.WithLabelValues(label) }),
		connsOpen: open, connsTotal: total, authFailed: auth,
	}
	for _, k := range wire.StmtKinds() {
		w.stmts = append(w.stmts, stmts.WithLabelValues(k.String()))
	}
	w.other = stmts.WithLabelValues(wire.StmtOther.String())
	for _, src := range sql.PlanSources() {
		w.plans = append(w.plans, plans.WithLabelValues(src.String()))
	}
	return w
}

// QueryPlanned implements wire.Observer.
func (w *Wire) QueryPlanned(src sql.PlanSource) {
	if int(src) < len(w.plans) {
		w.plans[src].Inc()
	}
}

// Statement implements wire.Observer.
func (w *Wire) Statement(k wire.StmtKind) {
	if int(k) < len(w.stmts) {
		w.stmts[k].Inc()
		return
	}
	w.other.Inc()
}

// StatementError implements wire.Observer.
func (w *Wire) StatementError(code uint16) { w.errs.get(code).Inc() }

// ConnOpened implements wire.Observer.
func (w *Wire) ConnOpened() { w.connsOpen.Inc(); w.connsTotal.Inc() }

// ConnClosed implements wire.Observer.
func (w *Wire) ConnClosed() { w.connsOpen.Dec() }

// AuthFailed implements wire.Observer.
func (w *Wire) AuthFailed() { w.authFailed.Inc() }

// Store implements raftstore.Observer.
type Store struct {
	forwarded   [2]prometheus.Counter
	forwardDur  prometheus.Observer
	snapshots   [2]prometheus.Counter
	snapshotDur prometheus.Observer
	restores    [2]prometheus.Counter
}

func newStore(reg prometheus.Registerer) *Store {
	fwd := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_forwarded_batches_total",
		Help: "Batches this node, as a follower, forwarded to the leader, by result.",
	}, []string{"result"})
	fwdDur := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ticketd_forward_duration_seconds",
		Help:    "Round trip of a batch forwarded to the leader.",
		Buckets: latencyBuckets,
	})
	snaps := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_snapshots_total",
		Help: "Raft snapshots of the state written, by result.",
	}, []string{"result"})
	snapDur := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ticketd_snapshot_duration_seconds",
		Help:    "Time to capture and write one snapshot of the state.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	})
	restores := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketd_snapshot_restores_total",
		Help: "State replaced from a Raft snapshot (from the leader, or at start), by result.",
	}, []string{"result"})
	reg.MustRegister(fwd, fwdDur, snaps, snapDur, restores)
	s := &Store{forwardDur: fwdDur, snapshotDur: snapDur}
	for i, r := range results {
		s.forwarded[i] = fwd.WithLabelValues(r)
		s.snapshots[i] = snaps.WithLabelValues(r)
		s.restores[i] = restores.WithLabelValues(r)
	}
	return s
}

// Forwarded implements raftstore.Observer.
func (s *Store) Forwarded(d time.Duration, err error) {
	s.forwarded[resultLabel(err)].Inc()
	s.forwardDur.Observe(d.Seconds())
}

// SnapshotPersisted implements raftstore.Observer.
func (s *Store) SnapshotPersisted(d time.Duration, err error) {
	s.snapshots[resultLabel(err)].Inc()
	if err == nil {
		s.snapshotDur.Observe(d.Seconds())
	}
}

// SnapshotRestored implements raftstore.Observer.
func (s *Store) SnapshotRestored(_ time.Duration, err error) { s.restores[resultLabel(err)].Inc() }

// lazyVec resolves label children on first use and caches them in a map
// that is replaced, never changed, so that lookups take no lock and
// allocate nothing. Past max distinct keys, new keys share the "other"
// child.
type lazyVec[K comparable] struct {
	children atomic.Pointer[map[K]prometheus.Counter]
	mu       sync.Mutex
	max      int
	distinct int
	label    func(K) string
	child    func(label string) prometheus.Counter
	other    prometheus.Counter
}

func newLazyVec[K comparable](max int, label func(K) string, child func(string) prometheus.Counter) *lazyVec[K] {
	v := &lazyVec[K]{max: max, label: label, child: child}
	m := map[K]prometheus.Counter{}
	v.children.Store(&m)
	return v
}

func (v *lazyVec[K]) get(k K) prometheus.Counter {
	if c, ok := (*v.children.Load())[k]; ok {
		return c
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	old := *v.children.Load()
	if c, ok := old[k]; ok {
		return c
	}
	var c prometheus.Counter
	if v.distinct < v.max {
		v.distinct++
		c = v.child(v.label(k))
	} else {
		if v.other == nil {
			v.other = v.child("other")
		}
		c = v.other
		if len(old) >= 10*v.max {
			// Keys past this are looked up under the lock every time,
			// rather than growing the map without bound.
			return c
		}
	}
	m := make(map[K]prometheus.Counter, len(old)+1)
	for key, val := range old {
		m[key] = val
	}
	m[k] = c
	v.children.Store(&m)
	return c
}
