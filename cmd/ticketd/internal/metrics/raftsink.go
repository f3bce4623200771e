package metrics

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
	gmprom "github.com/hashicorp/go-metrics/compat/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// hashicorp/raft v1.7.3, raft-boltdb v2 and raft-wal report through
// github.com/hashicorp/go-metrics/compat, which forwards to
// armon/go-metrics unless the program is built with -tags
// hashicorpmetrics. Using the compat packages here too keeps the sink and
// raft on the same library whichever way the binary is built.
//
// go-metrics keeps one global sink per process: raft calls package-level
// functions (metrics.MeasureSince and the like) with no way to pass a sink
// per raft.Raft. So the sink is process-wide state, installed once by the
// program, and with several nodes in one process (tests) raft's metrics of
// all of them land in the last registry installed. ticketd's own metrics
// have no such limit.
var (
	sinkMu    sync.Mutex
	installed *gometrics.Metrics
)

// blockedRaftMetrics are measurements raft and raft-wal take for every
// log entry or RPC that say little the others do not: transport stages,
// queue hand-offs, entry counts and byte counters. Each one through the
// Prometheus sink costs a key join, a map lookup and a summary insert
// under a lock, a dozen times per entry on every node. In CPU profiles of
// 3 nodes at 64 connections spread (issue 13), raft's metric calls were
// 2.9% of the three processes' CPU, 1.9% with these blocked and the
// legacy per-peer names off (raftstore sets raft's NoLegacyTelemetry).
// What stays per entry: the leader's
// raft_leader_dispatch_log, raft_commit_time, raft_apply_total,
// raft_fsm_apply_batch, raft_replication_append_entries_rpc and _logs
// (per peer, as labels); a follower's raft_rpc_append_entries and its
// _store_logs; raft_wal_log_appends_total and raft_boltdb_*. The
// prefixes here are raft's own names, before promNames renames them.
// promNames blocks them, not go-metrics' filter: with any prefix in that
// filter, go-metrics joins every key into a new string and walks a radix
// tree under a lock for every call, blocked or not, which was ~8% of a
// follower's CPU under confirmation heartbeats (issue 35).
var blockedRaftMetrics = []string{
	"raft.net.",                          // getRPCType, rpcDecode, rpcEnqueue, rpcRespond: 4 per RPC
	"raft.fsm.enqueue",                   // hand-off to the FSM goroutine
	"raft.fsm.applyBatchNum",             // entries per FSM batch
	"raft.commitNumLogs",                 // entries per commit
	"raft.leader.dispatchNumLogs",        // entries per dispatch
	"raft.rpc.appendEntries.processLogs", // in-memory part of a follower's append
	"raft.wal.log_entries_",              // written/read: raft_apply and log_appends count them
	"raft.wal.log_entry_bytes_",          // written/read
}

// InstallRaftSink sends hashicorp/raft's and its log store's measurements to
// reg, as raft_* series named as Prometheus asks (promNames: e.g.
// raft_commit_time, raft_fsm_apply, raft_rpc_append_entries_store_logs,
// raft_state_leader_total, raft_boltdb_store_logs; timings are summaries
// in milliseconds). uninstall puts back go-metrics'
// discarding sink, unless another InstallRaftSink has replaced this one
// since.
func InstallRaftSink(reg prometheus.Registerer) (uninstall func(), err error) {
	sink, err := gmprom.NewPrometheusSinkFrom(gmprom.PrometheusOpts{
		Registerer: reg,
		Name:       "ticketd_raft_sink",
		// Keep a series once raft has reported it: an alert on a summary
		// that vanishes after a quiet minute would see nothing.
		Expiration: 0,
	})
	if err != nil {
		return nil, fmt.Errorf("metrics: raft sink: %w", err)
	}
	cfg := gometrics.DefaultConfig("")
	// The hostname is the instance label's business, and the Go
	// collector already reports the runtime (this would add a goroutine
	// sampling it every second).
	cfg.EnableHostname = false
	cfg.EnableHostnameLabel = false
	cfg.EnableRuntimeMetrics = false
	sinkMu.Lock()
	defer sinkMu.Unlock()
	names := newPromNames(sink, blockedRaftMetrics)
	if err := reg.Register(names); err != nil {
		return nil, fmt.Errorf("metrics: raft sink: %w", err)
	}
	m, err := gometrics.NewGlobal(cfg, names)
	if err != nil {
		return nil, fmt.Errorf("metrics: raft sink: %w", err)
	}
	installed = m
	return func() {
		sinkMu.Lock()
		defer sinkMu.Unlock()
		if installed == m {
			gometrics.Shutdown()
			installed = nil
		}
	}, nil
}

// promNames renames raft's measurements on their way to the Prometheus
// sink the way Prometheus' naming rules (and `promtool check metrics`)
// ask: raft's camelCase key parts become snake_case (commitTime ->
// commit_time, appendEntries -> append_entries) and counters end in
// _total (raft_state_leader -> raft_state_leader_total). Without it the
// lint of a scrape failed on every raft_* series. It also drops the
// blocked measurements (blockedRaftMetrics, on raft's own names).
//
// Raft calls it a few times per RPC on every node, so the answer for a
// key is computed once and looked up without allocating afterwards.
// Timings without labels (a follower's raft_rpc_append_entries and
// raft_rpc_process_heartbeat, once per heartbeat) go to a summary it
// holds itself, made as go-metrics' sink makes them (same name, help,
// objectives and max age), and collected by promNames: through the sink
// each sample also cost a key join, two sync.Map operations, a copy of
// the summary's record and time.Now(), ~1.3 µs besides the summary's own
// ~0.3 (BenchmarkRaftSinkSample). Labelled timings, counters and gauges
// still go through the sink; a key is always served by the same one.
type promNames struct {
	sink    gometrics.MetricSink
	blocked []string
	// names maps a key as raft spells it (kind byte, then the parts
	// joined by '.') to its fate. Copy-on-write: readers load the map
	// without a lock; a new key (rare: raft uses a few dozen) copies it
	// under mu.
	names atomic.Pointer[map[string]*promName]
	mu    sync.Mutex
}

// promName is what promNames does with one raft key.
type promName struct {
	blocked bool
	key     []string // the Prometheus form; never modified once stored
	// summary serves key's samples without labels (kindSample only).
	summary prometheus.Summary
}

// maxPromNames bounds the cache should a caller ever put something
// unbounded in key parts; keys beyond it are computed on every call.
const maxPromNames = 4096

var (
	_ gometrics.MetricSink = (*promNames)(nil)
	_ prometheus.Collector = (*promNames)(nil)
)

func newPromNames(sink gometrics.MetricSink, blocked []string) *promNames {
	p := &promNames{sink: sink, blocked: blocked}
	p.names.Store(&map[string]*promName{})
	return p
}

// Kinds of measurement, part of the cache key: counters get a suffix.
const (
	kindPlain   = 'p'
	kindCounter = 'c'
	kindSample  = 's' // a timing without labels
)

// summaryObjectives are go-metrics' Prometheus sink's, so that a summary
// promNames holds reads as the sink's did.
var summaryObjectives = map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}

// promNameReplacer is go-metrics' Prometheus sink's: the characters it
// turns into '_' in a metric name.
var promNameReplacer = strings.NewReplacer(" ", "_", ".", "_", "=", "_", "-", "_", "/", "_")

// name returns what to do with raft's key k of the given kind.
func (p *promNames) name(k []string, kind byte) *promName {
	var buf [160]byte
	raw := append(buf[:0], kind)
	for i, part := range k {
		if i > 0 {
			raw = append(raw, '.')
		}
		raw = append(raw, part...)
	}
	// The map index with string(raw) does not allocate.
	if n, ok := (*p.names.Load())[string(raw)]; ok {
		return n
	}
	dotted := string(raw[1:])
	n := &promName{}
	for _, prefix := range p.blocked {
		if strings.HasPrefix(dotted, prefix) {
			n.blocked = true
			break
		}
	}
	if !n.blocked {
		suffix := ""
		if kind == kindCounter {
			suffix = "total"
		}
		n.key = promKey(k, suffix)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := *p.names.Load()
	if got, ok := old[string(raw)]; ok {
		return got // another caller stored it first: its summary counts
	}
	if len(old) >= maxPromNames {
		return n // not cached, so never a summary: the sink serves it
	}
	if kind == kindSample && !n.blocked {
		name := promNameReplacer.Replace(strings.Join(n.key, "_"))
		n.summary = prometheus.NewSummary(prometheus.SummaryOpts{
			Name:       name,
			Help:       name,
			MaxAge:     10 * time.Second,
			Objectives: summaryObjectives,
		})
	}
	next := make(map[string]*promName, len(old)+1)
	for key, v := range old {
		next[key] = v
	}
	next[string(raw)] = n
	p.names.Store(&next)
	return n
}

// promKey returns a new slice: k with its camelCase parts in snake_case,
// and suffix appended as one more part when not "" (and not already
// there).
func promKey(k []string, suffix string) []string {
	if suffix != "" && len(k) > 0 && strings.HasSuffix(k[len(k)-1], suffix) {
		suffix = ""
	}
	out := make([]string, len(k), len(k)+1)
	for i, part := range k {
		out[i] = part
		if hasUpper(part) {
			out[i] = snakeCase(part)
		}
	}
	if suffix != "" {
		out = append(out, suffix)
	}
	return out
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// snakeCase lower-cases s with an underscore before each word that
// starts with a capital: commitTime -> commit_time, getRPCType ->
// get_rpc_type.
func snakeCase(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			if i > 0 {
				prev := s[i-1]
				lowerBefore := ('a' <= prev && prev <= 'z') || ('0' <= prev && prev <= '9')
				acronymEnd := 'A' <= prev && prev <= 'Z' && i+1 < len(s) && 'a' <= s[i+1] && s[i+1] <= 'z'
				if lowerBefore || acronymEnd {
					b.WriteByte('_')
				}
			}
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (p *promNames) SetGauge(key []string, val float32) {
	if n := p.name(key, kindPlain); !n.blocked {
		p.sink.SetGauge(n.key, val)
	}
}

func (p *promNames) SetGaugeWithLabels(key []string, val float32, labels []gometrics.Label) {
	if n := p.name(key, kindPlain); !n.blocked {
		p.sink.SetGaugeWithLabels(n.key, val, labels)
	}
}

func (p *promNames) EmitKey(key []string, val float32) {
	if n := p.name(key, kindPlain); !n.blocked {
		p.sink.EmitKey(n.key, val)
	}
}

func (p *promNames) IncrCounter(key []string, val float32) {
	if n := p.name(key, kindCounter); !n.blocked {
		p.sink.IncrCounter(n.key, val)
	}
}

func (p *promNames) IncrCounterWithLabels(key []string, val float32, labels []gometrics.Label) {
	if n := p.name(key, kindCounter); !n.blocked {
		p.sink.IncrCounterWithLabels(n.key, val, labels)
	}
}

func (p *promNames) AddSample(key []string, val float32) { p.AddSampleWithLabels(key, val, nil) }

func (p *promNames) AddSampleWithLabels(key []string, val float32, labels []gometrics.Label) {
	if len(labels) == 0 {
		n := p.name(key, kindSample)
		switch {
		case n.blocked:
		case n.summary != nil:
			n.summary.Observe(float64(val))
		default:
			p.sink.AddSample(n.key, val)
		}
		return
	}
	if n := p.name(key, kindPlain); !n.blocked {
		p.sink.AddSampleWithLabels(n.key, val, labels)
	}
}

// Describe implements prometheus.Collector. It describes nothing: the
// summaries appear as raft reports them (an unchecked collector, like
// go-metrics' sink).
func (p *promNames) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector: the summaries promNames holds.
func (p *promNames) Collect(ch chan<- prometheus.Metric) {
	for _, n := range *p.names.Load() {
		if n.summary != nil {
			n.summary.Collect(ch)
		}
	}
}
