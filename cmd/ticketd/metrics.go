package main

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ticketd/ticketd/cmd/ticketd/internal/metrics"
)

// nodeMetrics is one node's registry (its own, not the prometheus
// default, so that nodes run in one process keep apart) and the
// observers handed to the packages.
type nodeMetrics struct {
	reg *prometheus.Registry
	*metrics.Metrics
	// uninstall removes raft's go-metrics sink (a process global: see
	// metrics.InstallRaftSink).
	uninstall func()
}

// newNodeMetrics sets up the registry with the Go runtime and process
// collectors, ticketd's metrics and raft's. Raft's sink is installed
// before Raft starts, so that its start-up (log replay, election) is
// measured too.
func newNodeMetrics() (*nodeMetrics, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	uninstall, err := metrics.InstallRaftSink(reg)
	if err != nil {
		return nil, err
	}
	return &nodeMetrics{reg: reg, Metrics: metrics.New(reg), uninstall: uninstall}, nil
}

// withMetrics serves GET /metrics from the registry in front of the other
// admin endpoints.
func withMetrics(admin http.Handler, reg *prometheus.Registry, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.Handle("/", admin)
	return mux
}
