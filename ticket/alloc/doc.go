// Package alloc is ticketd's allocation service: the Service the wire
// layers (MySQL and Redis) and raftstore's forward handler call. It owns
// how a command reaches Raft (group commit in the batcher, a follower's
// batches forwarded, the leader's compare-and-set queue for Tinyid's
// UPDATEs) and the allocation caches that answer from memory instead:
// the leader's table ranges, sequence caches and Redis key blocks, and
// every node's node-scoped blocks, with their one shared shape (cache.go)
// and the one rule that drops what a command through Raft can overtake
// (overtake.go, DESIGN §4f).
//
// It knows core ticket (Apply's domain, the Store it reads, the
// Replicator it proposes to) and ticket/model's types. It must not know
// Raft, bbolt, the wire protocols or the row engine's insides: what it
// asks of a row table (is an UPDATE a compare-and-set of one row, would it
// match nothing) it asks core.
package alloc
