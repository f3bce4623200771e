package metrics

import (
	"fmt"
	"sync"

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
// raft_leader_dispatchLog, raft_commitTime, raft_apply,
// raft_fsm_applyBatch, raft_replication_appendEntries_rpc and _logs (per
// peer, as labels); a follower's raft_rpc_appendEntries and its
// _storeLogs; raft_wal_log_appends and raft_boltdb_*.
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
// reg, as raft_* series (e.g. raft_commitTime, raft_fsm_apply,
// raft_rpc_appendEntries_storeLogs, raft_state_leader, raft_boltdb_storeLogs;
// timings are summaries in milliseconds). uninstall puts back go-metrics'
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
	cfg.BlockedPrefixes = blockedRaftMetrics
	sinkMu.Lock()
	defer sinkMu.Unlock()
	m, err := gometrics.NewGlobal(cfg, sink)
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
