package raftstore

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Observer is told about a node's forwarding and snapshots, for metrics.
// Raft's own measurements (commit time, log stores, FSM apply, elections)
// go through hashicorp/go-metrics instead, which the program installs.
// Config.Observer nil means no observer.
type Observer interface {
	// Forwarded reports one batch this follower sent to the leader (one
	// attempt: a batch the leader refused as no longer leading is sent
	// again to the next one), the round trip, and its error, if any.
	Forwarded(d time.Duration, err error)
	// SnapshotPersisted reports a snapshot of the state written out for
	// Raft, from capture to the end of the write.
	SnapshotPersisted(d time.Duration, err error)
	// SnapshotRestored reports the state replaced by a snapshot (from the
	// leader, or at start).
	SnapshotRestored(d time.Duration, err error)
}

type nopObserver struct{}

func (nopObserver) Forwarded(time.Duration, error)         {}
func (nopObserver) SnapshotPersisted(time.Duration, error) {}
func (nopObserver) SnapshotRestored(time.Duration, error)  {}

// LastContact is when this node last heard from the leader (now, on the
// leader itself; zero if never).
func (n *Node) LastContact() time.Time {
	if n.IsLeader() {
		return time.Now()
	}
	return n.raft.LastContact()
}

// StateSize is the size in bytes of the state file (state.db) as bbolt
// sees it.
func (n *Node) StateSize() (int64, error) { return n.fsm.Size() }

// Size is the size in bytes of the state file.
func (f *FSM) Size() (int64, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.db == nil {
		return 0, fmt.Errorf("raftstore: state size: %w", bolt.ErrDatabaseNotOpen)
	}
	var size int64
	err := f.db.View(func(tx *bolt.Tx) error {
		size = tx.Size()
		return nil
	})
	return size, err
}
