package alloc

import "github.com/ticketd/ticketd/ticket/model"

// The one rule of the allocation caches (DESIGN §4f): a command that
// reaches Raft by another way than a cache takes its values above
// whatever the cache holds, so the cache must not serve once that
// command's answer can have been returned. The batcher, which every
// proposal of the Service passes (batcher.go), drops the caches a
// command can overtake before it is queued and again once it is
// answered: the drop before keeps the cache from serving while the
// command is in flight, the drop after burns a refill that began
// meanwhile (a refill checks the entry's generation before it installs,
// and may have been reserved below the command's values). Whoever asks
// for the proposal, a session of this node, a follower's forwarded
// batch, a node that won an election while its statement waited, a
// restore, or DDL, takes the same path; only a cache's own commands are
// exempt (origin fromCache): its refills, and the commands it sends
// knowing its state (a NOCACHE sequence's NEXTVAL).

// origin says whose command reaches Raft.
type origin uint8

const (
	// fromSession is a statement of this node's own client.
	fromSession origin = iota
	// fromPeer is a command of another node's forwarded batch: it drops
	// the leader's caches, never this node's own node-scoped blocks,
	// whose order only this node's answers follow (DESIGN §4c).
	fromPeer
	// fromCache is a cache's own command (a refill, or a NEXTVAL the
	// sequence cache sends through Raft knowing it holds nothing).
	fromCache
)

// reach is how much of one cache a command through Raft can overtake.
type reach uint8

const (
	reachNone reach = iota
	reachOne        // the entry of the table, sequence or keys it names
	reachAll        // every entry
)

// overtakes is what a command through Raft can overtake, cache by cache.
type overtakes struct {
	ranges   reach // the leader's table ranges (reserve.go)
	blocks   reach // this node's node-scoped table blocks (nodescope.go)
	seqCache reach // the leader's sequence caches (sequence_cache.go)
	nodeSeqs reach // this node's node-scoped sequence ranges (nodescope.go)
	keys     reach // the leader's key blocks (keys_reserve.go)
}

// overtaken is the table of the rule: what a command of kind c.Op can
// overtake. An allocation overtakes its own table's entry; what may
// change a definition (DDL) overtakes what loaded it; what cannot
// change a table, a sequence or a key overtakes nothing (MariaDB keeps
// a sequence's cache through other tables' statements).
func overtaken(c *model.Command) overtakes {
	switch c.Op {
	case model.OpInsert, model.OpUpdate:
		// A ticket table's counter (an explicit id, LAST_INSERT_ID(id+1)).
		return overtakes{ranges: reachOne, blocks: reachOne}
	case model.OpDelete, model.OpReserve, model.OpCreateSeq:
		// DELETE takes only row tables, which have no cache; a forwarded
		// reservation is another node's block or a deposed leader's
		// range, whose ids that leader never serves; a new name has no
		// cache yet.
		return overtakes{}
	case model.OpKeys:
		return overtakes{keys: reachOne}
	case model.OpSeqNext:
		// A value through Raft: a forwarded refill of a deposed leader,
		// whose first value it answers, or a NEXTVAL a node sent before
		// it won the election.
		return overtakes{seqCache: reachOne}
	case model.OpSetVal, model.OpAlterSeq, model.OpDropSeq:
		return overtakes{seqCache: reachOne, nodeSeqs: reachOne}
	case model.OpSetGlobal:
		// auto_increment_increment is the step of INCREMENT 0 sequences;
		// sessions send their own increment with every REPLACE.
		return overtakes{seqCache: reachAll, nodeSeqs: reachAll}
	case model.OpCreateDB, model.OpCreateTable:
		return overtakes{ranges: reachAll, blocks: reachAll}
	case model.OpDropTable, model.OpAlterTable:
		// ALTER TABLE s COMMENT moves a sequence between the leader's
		// cache and node-scoped ranges.
		return overtakes{ranges: reachAll, blocks: reachAll, seqCache: reachOne, nodeSeqs: reachOne}
	case model.OpRestore:
		return overtakes{ranges: reachAll, blocks: reachAll, seqCache: reachAll, nodeSeqs: reachAll, keys: reachAll}
	default:
		// DROP DATABASE, a restore's rows, and any kind this table does
		// not know yet.
		return overtakes{ranges: reachAll, blocks: reachAll, seqCache: reachAll, nodeSeqs: reachAll}
	}
}

// overtake drops the caches c, from from, can overtake. The batcher
// calls it before c is queued and after it is answered. The node's
// sequence ranges are dropped synchronously on this node too, so that its
// sessions' next NEXTVAL follows their SETVAL (or ALTER TABLE s COMMENT)
// even before the node applies it; other nodes drop theirs by the
// SchemaClock.
func (s *Service) overtake(c *model.Command, from origin) {
	if from == fromCache {
		return
	}
	o := overtaken(c)
	if s.res != nil {
		o.ranges.drop(s.res, c)
	}
	if from == fromSession {
		o.blocks.drop(s.node, c)
	}
	if s.seq != nil {
		o.seqCache.drop(s.seq, c)
	}
	o.nodeSeqs.drop(s.nseq, c)
	if s.kb != nil {
		o.keys.drop(s.kb, c)
	}
}

// overtakable is one cache as the rule sees it.
type overtakable interface {
	dropOf(c *model.Command) // the entry of what c names
	reset()                  // every entry
}

// drop drops what r says of k for c.
func (r reach) drop(k overtakable, c *model.Command) {
	switch r {
	case reachOne:
		k.dropOf(c)
	case reachAll:
		k.reset()
	}
}

func (rs *reservations) dropOf(c *model.Command) { rs.drop(c.DB, c.Table) }
func (nb *nodeBlocks) dropOf(c *model.Command)   { nb.drop(c.DB, c.Table) }
func (sc *seqCaches) dropOf(c *model.Command)    { sc.drop(c.DB, c.Table) }
func (ns *nodeSeqs) dropOf(c *model.Command)     { ns.drop(c.DB, c.Table) }
func (kb *keyBlocks) dropOf(c *model.Command)    { kb.drop(c) }
