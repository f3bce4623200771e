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
