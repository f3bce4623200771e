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
// Replicator it proposes to), ticket/model's types, and the two questions
// the queue asks of a row-table UPDATE (is it a compare-and-set of one
// row by its key, would it match nothing), which ticket/rowengine
// answers. It must not know Raft, bbolt, the wire protocols, or how rows
// are evaluated and stored.
package alloc
