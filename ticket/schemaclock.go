package ticket

import "github.com/ticketd/ticketd/ticket/model"

// SchemaClock is what node-scoped reservation needs from the local
// replica besides its state: a number that grows whenever this replica
// applies a command that may change a table other than by allocating
// from it (ChangesSchema), restores a backup or installs a snapshot.
// raftstore's Node implements it; a Reader without it gives every block
// an epoch of 0, which is only right when nothing else changes the
// schema (tests).
type SchemaClock interface {
	SchemaEpoch() uint64
}

// ChangesSchema reports whether applying a command of kind op moves a
// SchemaClock: every kind but the allocating ones, whose effect on a
// node's blocks the node sees itself (the counter only grows), and
// DELETE, which only row tables take (a busy row table must not burn
// every node's blocks).
func ChangesSchema(op model.Op) bool {
	switch op {
	case model.OpInsert, model.OpUpdate, model.OpReserve, model.OpSeqNext, model.OpDelete, model.OpKeys:
		return false
	}
	return true
}
