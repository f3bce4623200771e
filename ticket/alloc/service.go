package alloc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// ErrClosed is returned by a Service that has been closed.
var ErrClosed = errors.New("ticket: service closed")

// Config tunes a Service.
type Config struct {
	// Proposals is the number of Raft proposals a leader has in flight
	// at once (pipelining).
	Proposals int
	// Workers is the number of batches a follower forwards at once.
	Workers int
	// MaxBatch bounds the commands in one proposal.
	MaxBatch int
	// Cache is the default range-reservation size for tables without
	// their own (0 or 1: every id through Raft).
	Cache uint64
	// Leadership enables range reservation and tells leader from
	// follower; nil turns reservation off and every node proposes.
	Leadership Leadership
	// Observer, if set, is told about allocations and batches (metrics).
	Observer Observer
	// Reads, with Leadership, lets the leader answer a compare-and-set
	// UPDATE that matches nothing without a proposal (casgate.go).
	Reads ReadWaiter
	// KeyCache, with Leadership, is the block of values the leader
	// reserves per Redis key for INCR (keys_reserve.go); 0 or 1: every
	// INCR through Raft.
	KeyCache int64
}

// Service is what the wire layer calls: it runs commands through group
// commit and replication, and reads the local replica's state.
type Service struct {
	read ticket.Reader
	b    *batcher
	res  *reservations // nil without Leadership
	node *nodeBlocks   // node-scoped tables' blocks
	nseq *nodeSeqs     // node-scoped sequences' blocks
	seq  *seqCaches    // nil without Leadership
	kb   *keyBlocks    // nil without Leadership and KeyCache
	kind *rowKinds     // which tables are row tables (rowkind.go)
	// flight counts the leader's writes in flight for compare-and-sets
	// (casgate.go); nil without Leadership and Reads.
	flight   *inFlight
	lead     Leadership
	readWait ReadWaiter
	log      *slog.Logger
	obs      Observer
}

// ErrNotLeader is FlushTables' answer on a node that does not lead: the
// sequence caches it would drop are the leader's.
var ErrNotLeader = errors.New("ticket: not the leader")

// FlushTables drops every sequence cache, as MariaDB's FLUSH TABLES does:
// the next NEXTVAL of each sequence reserves anew from the value no cache
// holds.
func (s *Service) FlushTables() error {
	if s.seq == nil {
		return nil
	}
	if _, leader := s.seq.lead.LeaderTerm(); !leader {
		return ErrNotLeader
	}
	s.seq.reset()
	return nil
}

// NewService starts a Service over a Replicator and the local state.
func NewService(repl ticket.Replicator, read ticket.Reader, cfg Config, log *slog.Logger) *Service {
	if cfg.Proposals <= 0 {
		// One proposal in flight: the next batch fills while it commits,
		// and hashicorp/raft pipelines replication by itself. Measured
		// with the WAL log store, 3 nodes on 2 cores, sysbench spread
		// over the nodes, CPU summed over the three processes (issue
		// 13), 5 alternating pairs of 10s runs against 2 in flight: 64
		// connections 6.43k vs 5.49k tickets/s (medians), 193 vs 237
		// CPU-us per ticket; 16 connections 3.29-3.56k vs 2.97-3.15k,
		// 352-414 vs 423-475 us; 4 connections the same rate with
		// lower p95; one node 64 connections within noise.
		cfg.Proposals = 1
	}
	if cfg.Workers <= 0 {
		// A follower forwards at most 4 batches at once. Fewer workers
		// make fewer, larger forwarded batches: each costs both nodes
		// system calls and wake-ups whatever its size, and the leader
		// merges them into its next entry anyway. More let a request
		// leave at once instead of waiting for a worker, which may cost
		// it a commit interval. Measured (issue 13), 3 nodes, sysbench
		// spread, 8s pairs: 64 connections 4 vs 8 workers 12.5k/14.2k vs
		// 9.9k/11.8k tickets/s, 99/86 vs 127/107 CPU-us per ticket over
		// the three processes; 16 connections 6.1k/6.2k vs 6.5k/6.6k
		// tickets/s. 2 workers: 64 connections about as good as 4, 16
		// connections 12% below 8.
		cfg.Workers = 4
	}
	if cfg.Workers < cfg.Proposals {
		cfg.Workers = cfg.Proposals
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 512
	}
	if log == nil {
		log = slog.Default()
	}
	obs := cfg.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	var leading func() bool
	if cfg.Leadership != nil {
		leading = func() bool { _, l := cfg.Leadership.LeaderTerm(); return l }
	}
	s := &Service{read: read, b: newBatcher(repl, cfg.Workers, cfg.Proposals, cfg.MaxBatch, leading, obs), log: log, obs: obs}
	// Every command through the batcher drops what it can overtake, but
	// the caches' own refills (cacheExec): overtake.go.
	s.b.overtake = s.overtake
	s.node = newNodeBlocks(read, cfg.Cache, obs, s.b.cacheExec)
	s.nseq = newNodeSeqs(read, s.b.cacheExec)
	s.kind = newRowKinds(read)
	if cfg.Leadership != nil {
		s.res = newReservations(cfg.Leadership, read, cfg.Cache, s.b.cacheExec)
		s.res.obs = obs
		s.seq = newSeqCaches(cfg.Leadership, read, &s.res.verifier, s.b.cacheExec)
		if cfg.KeyCache > 1 {
			s.kb = newKeyBlocks(cfg.Leadership, cfg.KeyCache, &s.res.verifier, read, s.b.cacheExec)
		}
		if cfg.Reads != nil {
			s.flight, s.lead, s.readWait = newInFlight(), cfg.Leadership, cfg.Reads
		}
	}
	return s
}

// Exec commits one command and returns its result. A non-nil error is a
// replication failure (wrapping ErrNoQuorum or ErrUncertain, or the
// context's error); statement errors are in Result.Err.
func (s *Service) Exec(ctx context.Context, c *model.Command) (model.Result, error) {
	return s.ExecFor(ctx, nil, c)
}

// ExecFor is Exec for a session's statement: a compare-and-set that
// lost keeps its row for the session's retry (casgate.go).
func (s *Service) ExecFor(ctx context.Context, who *ticket.Session, c *model.Command) (model.Result, error) {
	var owner uint64
	if who != nil {
		owner = who.CASOwner()
	}
	if c.Op.IsSeq() {
		return s.execSeq(ctx, c, fromSession)
	}
	if c.Op == model.OpKeys {
		return s.execKeys(ctx, c)
	}
	var start time.Time
	if allocating(c) {
		start = time.Now()
	}
	if eligible(c) {
		if ids, ok, err := s.node.assign(ctx, c); ok {
			if err != nil {
				return model.Result{}, err
			}
			s.obs.Allocated(c.DB, c.Table, uint64(len(ids)), time.Since(start), true)
			return served(ids), nil
		}
	}
	if s.res != nil && eligible(c) {
		ids, term, ok, err := s.res.assign(ctx, c)
		if ok {
			if err == nil {
				err = s.res.confirm(ctx, c, term)
			}
			if err != nil {
				return model.Result{}, err
			}
			s.obs.Allocated(c.DB, c.Table, uint64(len(ids)), time.Since(start), true)
			return served(ids), nil
		}
	}
	// Through Raft: the batcher drops the caches c can overtake, before
	// and after (overtake.go).
	var r model.Result
	var err error
	switch {
	case s.tracks(c):
		r, err = s.tracked(ctx, c, owner, false, fromSession)
	case s.forwardsAlone(c):
		r, err = s.alone(ctx, c, owner)
	default:
		r, err = s.b.exec(ctx, c, fromSession)
	}
	if err == nil && r.Err == nil && allocating(c) {
		s.obs.Allocated(c.DB, c.Table, allocatedIDs(c, &r), time.Since(start), false)
	}
	return r, err
}

// TryExec answers c at once if that needs no wait at all: a REPLACE of a
// node-scoped table whose block on this node holds its ids. ok is false
// otherwise, and the caller runs Exec. It saves the caller arming a
// statement deadline for the commonest statement of node-scoped tables
// (the wire layer's timer was 3.6% of a node's CPU under sysbench).
func (s *Service) TryExec(c *model.Command) (r model.Result, ok bool) {
	if !eligible(c) {
		return model.Result{}, false
	}
	start := time.Now()
	ids := s.node.tryTake(c)
	if ids == nil {
		return model.Result{}, false
	}
	s.obs.Allocated(c.DB, c.Table, uint64(len(ids)), time.Since(start), true)
	return served(ids), true
}

// ExecBatch runs a batch of independent commands, such as a follower's
// forwarded batch, and returns one result per command. Commands served
// from ranges share one leadership confirmation; the others go through
// Raft together, dropping the leader's caches they can overtake as any
// command does (overtake.go), but never this node's node-scoped blocks:
// the commands are another node's, whose order this node's answers need
// not follow. An error fails the whole batch.
func (s *Service) ExecBatch(ctx context.Context, cmds []model.Command) ([]model.Result, error) {
	out := make([]model.Result, len(cmds))
	viaRaft := make([]int, 0, len(cmds))
	type assigned struct {
		i    int
		ids  []uint64
		term uint64
	}
	var fromRange []assigned
	var seqs, keys []int
	for i := range cmds {
		c := &cmds[i]
		if c.Op.IsSeq() {
			seqs = append(seqs, i)
			continue
		}
		if c.Op == model.OpKeys && s.kb != nil {
			keys = append(keys, i)
			continue
		}
		if s.res != nil && eligible(c) {
			ids, term, ok, err := s.res.assign(ctx, c)
			if ok {
				if err != nil {
					return nil, err
				}
				fromRange = append(fromRange, assigned{i, ids, term})
				continue
			}
		}
		viaRaft = append(viaRaft, i)
	}
	if len(viaRaft) > 0 {
		// Into this node's queue with its own requests: under load the
		// followers' batches and the leader's merge into fewer, larger
		// entries (measured, 3 nodes, 64 connections: 8.7k tickets/s in
		// 3.4k entries, against 7.3k in 6.9k entries as one entry per
		// forwarded batch).
		if err := s.execForwarded(ctx, cmds, viaRaft, out); err != nil {
			return nil, err
		}
	}
	if len(seqs) > 0 {
		if err := s.execSeqBatch(ctx, cmds, seqs, out); err != nil {
			return nil, err
		}
	}
	if len(keys) > 0 {
		if err := s.execKeysBatch(ctx, cmds, keys, out); err != nil {
			return nil, err
		}
	}
	for _, a := range fromRange {
		if err := s.res.confirm(ctx, &cmds[a.i], a.term); err != nil {
			return nil, err
		}
		out[a.i] = served(a.ids)
	}
	return out, nil
}

// execForwarded proposes the commands of a forwarded batch at idx, their
// results into out. The leader counts them in flight (casgate.go) but
// does not queue them: the batch answers as one, and one compare-and-set
// waiting for its turn would hold back every other session's answer in
// it.
func (s *Service) execForwarded(ctx context.Context, cmds []model.Command, idx []int, out []model.Result) error {
	if len(idx) == 1 && s.tracks(&cmds[idx[0]]) {
		// Alone in its batch, as a follower forwards a compare-and-set
		// (forwardsAlone), it may take its turn.
		c := &cmds[idx[0]]
		var err error
		out[idx[0]], err = s.tracked(ctx, c, CASOwner(ctx), true, fromPeer)
		return err
	}
	batch := make([]*model.Command, len(idx))
	var scopes []writeScope
	for j, i := range idx {
		batch[j] = &cmds[i]
		if s.tracks(batch[j]) {
			sc, _ := s.scope(batch[j])
			scopes = append(scopes, sc)
		}
	}
	for _, sc := range scopes {
		s.flight.add(sc)
	}
	res, err := s.b.execMany(ctx, batch, fromPeer)
	for _, sc := range scopes {
		s.flight.done(sc, false, 0, false)
	}
	if err != nil {
		return err
	}
	if len(res) != len(batch) {
		return fmt.Errorf("ticket: %d results for %d commands: %w", len(res), len(batch), ticket.ErrUncertain)
	}
	for j, i := range idx {
		out[i] = res[j]
	}
	return nil
}

// View reads the local replica's applied state.
func (s *Service) View(fn func(ticket.Store) error) error { return s.read.View(fn) }

// Global returns a replicated global variable, or def if it was never set.
func (s *Service) Global(name string, def uint64) uint64 {
	v := def
	err := s.read.View(func(st ticket.Store) error {
		g, ok, err := st.Global(name)
		if ok {
			v = g
		}
		return err
	})
	if err != nil {
		s.log.Warn("reading global variable", "name", name, "err", err)
	}
	return v
}

// Close stops the workers; commands in flight finish first.
func (s *Service) Close() { s.b.close() }
