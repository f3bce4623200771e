package raftstore

import "github.com/hashicorp/raft"

// Member is one server of the Raft configuration.
type Member struct {
	ID     string `json:"id"`
	Addr   string `json:"addr"`
	Voter  bool   `json:"voter"`
	Leader bool   `json:"leader"`
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
	// Error is set when the state machine failed (see ErrFSMFailed).
	Error string `json:"error,omitempty"`
}

// Status reports the node's Raft state. It does not block.
func (n *Node) Status() Status {
	laddr, lid := n.raft.LeaderWithID()
	st := Status{
		NodeID:       string(n.id),
		Addr:         n.addr,
		State:        n.raft.State().String(),
		LeaderID:     string(lid),
		LeaderAddr:   string(laddr),
		Term:         n.raft.CurrentTerm(),
		AppliedIndex: n.raft.AppliedIndex(),
		StateIndex:   n.fsm.AppliedIndex(),
		CommitIndex:  n.raft.CommitIndex(),
		LastLogIndex: n.raft.LastIndex(),
		Members:      []Member{},
	}
	if cf := n.raft.GetConfiguration(); cf.Error() == nil {
		for _, s := range cf.Configuration().Servers {
			st.Members = append(st.Members, Member{
				ID:     string(s.ID),
				Addr:   string(s.Address),
				Voter:  s.Suffrage == raft.Voter,
				Leader: s.ID == lid,
			})
		}
	}
	if err := n.fsm.Err(); err != nil {
		st.Error = err.Error()
	}
	return st
}
