package raftstore

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/ticket"
)

// The replicated clock: the time NOW() and CURRENT_TIMESTAMP read in a
// command.
//
// A command's time is its Raft entry's AppendedAt, which the leader
// stamps from its own clock when it appends the entry, and which every
// replica reads from the same entry. Successive leaders' clocks differ:
// a new leader whose clock is slower than its predecessor's would stamp
// entries earlier than ones already applied, and NOW() would go back
// (a lease written as NOW() + INTERVAL 10 SECOND could end before one
// written earlier). From clockVersion on, the state machine keeps the
// highest time it applied in the replicated state (the global
// clockGlobal, checkpointed, in snapshots, kept across restores and
// left out of backups) and gives each entry the later of its AppendedAt
// and that time: the replicated clock never goes backwards, on any
// replica, whatever the leaders' clocks. A leader whose clock is ahead
// moves it ahead for good; the clock then stands still (every command
// reads the same time) until the leaders' clocks catch up with it.
//
// The clock starts at the entry that raises the cluster's command
// version to clockVersion or above: an older build applies NOW() as the
// entry's AppendedAt and keeps no clock, and a replica that restored an
// older build's snapshot has none either, so each replica sets it there,
// from that entry, and every replica agrees from then on. Before that
// entry, a command's time is its AppendedAt, as older builds apply it.

// clockVersion is the command version from which NOW() is the
// replicated clock rather than the entry's AppendedAt.
const clockVersion = 4

// clockGlobal holds the replicated clock in Unix nanoseconds. Its name
// holds NUL bytes, which no SET GLOBAL can write.
const clockGlobal = "\x00clock\x00now"

// isClusterGlobal reports the globals that describe the cluster, not
// its data (its members' versions, its clock): a backup leaves them
// out, and a restore leaves the cluster's own in place.
func isClusterGlobal(name string) bool {
	return isVersionGlobal(name) || strings.HasPrefix(name, "\x00clock\x00")
}

// entryTime is the time of the commands of an entry appended at at: the
// later of at and the replicated clock, which it moves to that time.
// Before the cluster runs clockVersion, it is at. The caller holds mu.
func (f *FSM) entryTime(st memStore, at time.Time) time.Time {
	if f.ClusterVersion() < clockVersion {
		return at
	}
	clock, _, _ := st.Global(clockGlobal)
	if n := unixNanos(at); n > clock {
		// The global map cannot refuse a non-empty name.
		_ = st.PutGlobal(clockGlobal, n)
		return at
	}
	return time.Unix(0, int64(clock)).UTC()
}

// startClock sets the replicated clock to an entry's time, at the entry
// that raises the cluster's version to clockVersion. The caller holds mu.
func (f *FSM) startClock(st memStore, at time.Time) {
	_ = st.PutGlobal(clockGlobal, unixNanos(at))
}

// Clock is the replicated clock as this replica has applied it: the
// time of the last entry applied (zero before the cluster runs
// clockVersion).
func (f *FSM) Clock() time.Time {
	var clock uint64
	_ = f.View(func(s ticket.Store) error {
		clock, _, _ = s.Global(clockGlobal)
		return nil
	})
	if clock == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(clock)).UTC()
}

// Clock is the replicated clock as this node has applied it (FSM.Clock):
// the wire server's NOW() for statements that are not replicated never
// reads below it.
func (n *Node) Clock() time.Time { return n.fsm.Clock() }

// unixNanos is t in Unix nanoseconds, 0 for times before 1970 (the zero
// time of an entry without AppendedAt).
func unixNanos(t time.Time) uint64 {
	if t.IsZero() || t.Before(time.Unix(0, 0)) {
		return 0
	}
	return uint64(t.UnixNano())
}

// stampedLogs is the log store of a node whose Config.appendClock is set
// (tests): the entries it stores while it leads, which Raft has just
// stamped with its own clock, get appendClock's time instead. Raft keeps
// the same *raft.Log for the leader's own apply and its replication, so
// every replica reads the restamped time. Entries a follower stores came
// from a leader, and keep their time.
type stampedLogs struct {
	raft.LogStore
	clock func(time.Time) time.Time
	raft  atomic.Pointer[raft.Raft]
}

func (s *stampedLogs) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

func (s *stampedLogs) StoreLogs(logs []*raft.Log) error {
	if r := s.raft.Load(); r != nil && r.State() == raft.Leader {
		for _, l := range logs {
			l.AppendedAt = s.clock(l.AppendedAt)
		}
	}
	return s.LogStore.StoreLogs(logs)
}
