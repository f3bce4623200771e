package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ticketd/ticketd/raftstore"
)

// Node is what the node collector reads at scrape time; *raftstore.Node
// implements it.
type Node interface {
	Status() raftstore.Status
	// Ready returns nil when the node can serve (the /readyz answer).
	Ready() error
	LastContact() time.Time
	StateSize() (int64, error)
}

// raftStates are the values of ticketd_raft_state's state label.
var raftStates = []string{"Leader", "Follower", "Candidate", "Shutdown"}

// nodeCollector reports a node's Raft position and health as gauges read
// when Prometheus scrapes, so they are never stale and cost nothing
// between scrapes.
type nodeCollector struct {
	node        Node
	info        *prometheus.Desc
	state       *prometheus.Desc
	hasLeader   *prometheus.Desc
	term        *prometheus.Desc
	applied     *prometheus.Desc
	commit      *prometheus.Desc
	lastLog     *prometheus.Desc
	stateIndex  *prometheus.Desc
	members     *prometheus.Desc
	lastContact *prometheus.Desc
	ready       *prometheus.Desc
	fsmFailed   *prometheus.Desc
	stateBytes  *prometheus.Desc
	version     *prometheus.Desc
	clusterVer  *prometheus.Desc
	memberVer   *prometheus.Desc
}

// NewNodeCollector returns a collector of node's Raft state, readiness and
// state file size.
func NewNodeCollector(node Node) prometheus.Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &nodeCollector{
		node:        node,
		info:        d("ticketd_node_info", "Always 1; the labels name this node.", "node_id", "raft_addr"),
		state:       d("ticketd_raft_state", "1 for this node's Raft state, 0 for the others.", "state"),
		hasLeader:   d("ticketd_raft_has_leader", "1 when this node knows a leader."),
		term:        d("ticketd_raft_term", "Current Raft term."),
		applied:     d("ticketd_raft_applied_index", "Last Raft log index applied to the state machine."),
		commit:      d("ticketd_raft_commit_index", "Last Raft log index this node knows committed (a follower learns it from the leader)."),
		lastLog:     d("ticketd_raft_last_log_index", "Last index in this node's Raft log."),
		stateIndex:  d("ticketd_state_applied_index", "Last Raft log index applied to the state (state.db has it from the next checkpoint, at most a second later)."),
		members:     d("ticketd_raft_members", "Servers in the Raft configuration, by suffrage.", "suffrage"),
		lastContact: d("ticketd_raft_last_contact_seconds", "Seconds since this node last heard from the leader (0 on the leader; -1 never)."),
		ready:       d("ticketd_ready", "1 when the node can serve (what GET /readyz answers 200 for)."),
		fsmFailed:   d("ticketd_fsm_failed", "1 when the state machine stopped taking entries (see /status error)."),
		stateBytes:  d("ticketd_state_db_bytes", "Size of the bbolt state file (state.db)."),
		version:     d("ticketd_command_version", "Highest command version this node's build applies."),
		clusterVer:  d("ticketd_cluster_command_version", "The cluster's command version, as this node applied it: commands above it are refused."),
		memberVer:   d("ticketd_member_command_version", "Command version each member announced (1 for a build from before versions).", "member"),
	}
}

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.info, c.state, c.hasLeader, c.term, c.applied, c.commit, c.lastLog,
		c.stateIndex, c.members, c.lastContact, c.ready, c.fsmFailed, c.stateBytes, c.version, c.clusterVer, c.memberVer} {
		ch <- d
	}
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	st := c.node.Status()
	gauge(c.info, 1, st.NodeID, st.Addr)
	for _, s := range raftStates {
		gauge(c.state, bool01(st.State == s), s)
	}
	gauge(c.hasLeader, bool01(st.LeaderID != ""))
	gauge(c.term, float64(st.Term))
	gauge(c.applied, float64(st.AppliedIndex))
	gauge(c.commit, float64(st.CommitIndex))
	gauge(c.lastLog, float64(st.LastLogIndex))
	gauge(c.stateIndex, float64(st.StateIndex))
	var voters, nonvoters int
	for _, m := range st.Members {
		if m.Voter {
			voters++
		} else {
			nonvoters++
		}
	}
	gauge(c.version, float64(st.CommandVersion))
	gauge(c.clusterVer, float64(st.ClusterVersion))
	for _, m := range st.Members {
		gauge(c.memberVer, float64(m.CommandVersion), m.ID)
	}
	gauge(c.members, float64(voters), "voter")
	gauge(c.members, float64(nonvoters), "nonvoter")
	contact := -1.0
	if t := c.node.LastContact(); !t.IsZero() {
		contact = time.Since(t).Seconds()
	}
	gauge(c.lastContact, contact)
	// Ready may ask the leader for its commit index (bounded by a second):
	// the same check a load balancer makes on /readyz.
	gauge(c.ready, bool01(c.node.Ready() == nil))
	gauge(c.fsmFailed, bool01(st.Error != ""))
	if size, err := c.node.StateSize(); err == nil {
		gauge(c.stateBytes, float64(size))
	}
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
