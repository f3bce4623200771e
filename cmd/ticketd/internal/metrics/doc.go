// Package metrics owns ticketd's Prometheus metrics: the ticketd_* series,
// made by implementing the Observer interfaces that packages ticket, wire
// and raftstore declare, and by a collector that reads a node's Raft state
// at scrape time; and the bridge that sends hashicorp/raft's own
// measurements (through hashicorp/go-metrics) to the same registry.
//
// Everything registers with a prometheus.Registerer the caller owns; the
// only process-wide state is go-metrics' global sink (see InstallRaftSink).
// Observer methods run on the hot path: they use label children resolved
// once and cached, and allocate nothing.
package metrics
