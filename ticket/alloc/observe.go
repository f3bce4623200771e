package alloc

import (
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// Observer is told what the Service does, for metrics. Its methods are
// called on the hot path, once per statement or batch: they must be
// cheap, must not block, and must not keep the strings they are given
// beyond the call. Config.Observer nil means no observer.
type Observer interface {
	// Allocated reports an allocating statement (INSERT, REPLACE,
	// UPDATE) of this node's client that succeeded: the ids it took from
	// db.table (0 when it only wrote explicit ids), how long the Service
	// took, and whether they came from a range reservation rather than a
	// Raft round trip.
	Allocated(db, table string, ids uint64, d time.Duration, fromRange bool)
	// BatchProposed reports one batch handed to the Replicator: its
	// commands, the round trip, and the replication error, if any.
	BatchProposed(size int, d time.Duration, err error)
	// ReservationRefilled reports a range reservation proposed through
	// Raft, successful or not.
	ReservationRefilled(size uint64, err error)
	// CompareAndSet reports a compare-and-set UPDATE the leader queued
	// for its row (casgate.go): answered "nothing matched" from its state
	// (lost) or proposed.
	CompareAndSet(lost bool)
}

type nopObserver struct{}

func (nopObserver) Allocated(string, string, uint64, time.Duration, bool) {}
func (nopObserver) BatchProposed(int, time.Duration, error)               {}
func (nopObserver) ReservationRefilled(uint64, error)                     {}
func (nopObserver) CompareAndSet(bool)                                    {}

// allocatedIDs is how many ids a successful command took: every row of an
// INSERT or REPLACE that generated one (INSERT IGNORE: the rows it
// inserted), every row an UPDATE changed. A statement that wrote explicit
// ids only (no LAST_INSERT_ID change) took none.
func allocatedIDs(c *model.Command, r *model.Result) uint64 {
	switch c.Op {
	case model.OpInsert:
		if !r.SetLastID {
			return 0
		}
		if c.Ignore {
			return min(r.Affected, uint64(len(c.Values)))
		}
		return uint64(len(c.Values))
	case model.OpUpdate:
		return r.Affected
	}
	return 0
}

func allocating(c *model.Command) bool { return c.Op == model.OpInsert || c.Op == model.OpUpdate }
