package raftstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/logformat"
)

// Member is one server of the Raft configuration.
type Member struct {
	ID     string `json:"id"`
	Addr   string `json:"addr"`
	Voter  bool   `json:"voter"`
	Leader bool   `json:"leader"`
	// CommandVersion is the version the member announced in the
	// replicated state (version.go); 1 with VersionAnnounced false for a
	// build from before versions, or one that has not announced yet.
	CommandVersion   uint32 `json:"command_version"`
	VersionAnnounced bool   `json:"command_version_announced"`
}

// Status is a node's view of the cluster, for /status.
type Status struct {
	NodeID     string `json:"node_id"`
	Addr       string `json:"raft_addr"`
	State      string `json:"state"` // Leader, Follower, Candidate, Shutdown
	LeaderID   string `json:"leader_id"`
	LeaderAddr string `json:"leader_addr"`
	Term       uint64 `json:"term"`
	// AppliedIndex is the last entry Raft handed to the state machine;
	// StateIndex the last one the state file holds (Raft's no-op and
	// barrier entries never reach it).
	AppliedIndex uint64   `json:"applied_index"`
	StateIndex   uint64   `json:"state_index"`
	CommitIndex  uint64   `json:"commit_index"`
	LastLogIndex uint64   `json:"last_log_index"`
	Members      []Member `json:"members"`
	// CommandVersion is this node's build's command version;
	// ClusterVersion the cluster's, as this replica applied it.
	CommandVersion uint32 `json:"command_version"`
	ClusterVersion uint32 `json:"cluster_command_version"`
	// Error is set when the state machine failed (see ErrFSMFailed).
	Error string `json:"error,omitempty"`
}

// Status reports the node's Raft state. It does not block.
func (n *Node) Status() Status {
	laddr, lid := n.raft.LeaderWithID()
	st := Status{
		NodeID:         string(n.id),
		Addr:           n.addr,
		State:          n.raft.State().String(),
		LeaderID:       string(lid),
		LeaderAddr:     string(laddr),
		Term:           n.raft.CurrentTerm(),
		AppliedIndex:   n.raft.AppliedIndex(),
		StateIndex:     n.fsm.AppliedIndex(),
		CommitIndex:    n.raft.CommitIndex(),
		LastLogIndex:   n.raft.LastIndex(),
		Members:        []Member{},
		CommandVersion: n.cfg.commandVersion,
		ClusterVersion: n.fsm.ClusterVersion(),
	}
	if cf := n.raft.GetConfiguration(); cf.Error() == nil {
		versions := n.fsm.MemberVersions()
		for _, srv := range cf.Configuration().Servers {
			v, ok := versions[string(srv.ID)]
			if !ok {
				v = logformat.BaseVersion
			}
			st.Members = append(st.Members, Member{
				ID:               string(srv.ID),
				Addr:             string(srv.Address),
				Voter:            srv.Suffrage == raft.Voter,
				Leader:           srv.ID == lid,
				CommandVersion:   v,
				VersionAnnounced: ok,
			})
		}
	}
	if err := n.fsm.Err(); err != nil {
		st.Error = err.Error()
	}
	return st
}

// Describe returns this node's status document (Config.Describe), as
// members get it from ClusterStatus.
func (n *Node) Describe() []byte {
	if n.cfg.Describe != nil {
		return n.cfg.Describe(n)
	}
	b, err := json.Marshal(n.Status())
	if err != nil {
		// A Status always marshals; say so rather than send nothing.
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return b
}

// MemberReport is one member's answer to ClusterStatus: its status
// document, or why there is none.
type MemberReport struct {
	ID   string `json:"id"`
	Addr string `json:"raft_addr"`
	// Status is the member's Config.Describe document.
	Status json.RawMessage `json:"status,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// ClusterStatus asks every member of this node's configuration for its
// status document over the Raft port (the connections forwarding uses,
// with their TLS), all at once, and returns the answers in configuration
// order; this node answers for itself. A member that has not answered
// when ctx ends is reported with the error. Without a readable
// configuration it reports this node alone.
func (n *Node) ClusterStatus(ctx context.Context) []MemberReport {
	var servers []raft.Server
	if cf := n.raft.GetConfiguration(); cf.Error() == nil {
		servers = cf.Configuration().Servers
	}
	if len(servers) == 0 {
		servers = []raft.Server{{ID: n.id, Address: raft.ServerAddress(n.addr)}}
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(n.cfg.ApplyTimeout)
	}
	out := make([]MemberReport, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		out[i] = MemberReport{ID: string(s.ID), Addr: string(s.Address)}
		if s.ID == n.id {
			out[i].Status = n.Describe()
			continue
		}
		wg.Go(func() {
			status, body, err := n.fwd.call(ctx, string(s.Address), deadline, fwdStatus, nil, nil)
			switch {
			case err != nil:
				out[i].Error = err.Error()
			case status != stOK:
				out[i].Error = fmt.Sprintf("no status (a build without it?): %s", body)
			case !json.Valid(body):
				out[i].Error = "status answer is not JSON"
			default:
				out[i].Status = body
			}
		})
	}
	wg.Wait()
	return out
}
