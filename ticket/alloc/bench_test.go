package alloc

import (
	"context"
	"testing"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// BenchmarkBatcher is group commit alone: parallel Exec calls through the
// batcher into a replicator that applies to memory, so it measures
// queueing, batching and handing results back (allocations included).
func BenchmarkBatcher(b *testing.B) {
	repl := &localRepl{st: ticket.NewMemStore()}
	svc := NewService(repl, repl, Config{}, nil)
	defer svc.Close()
	ctx := context.Background()
	for _, c := range []model.Command{{Op: model.OpCreateDB, DB: "flickr"}, {Op: model.OpCreateTable, Def: tickets64("flickr", "T")}} {
		if _, err := svc.Exec(ctx, &c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		c := replace("a")
		for pb.Next() {
			if r, err := svc.Exec(ctx, &c); err != nil || r.Err != nil {
				b.Errorf("%v %v", err, r.Err)
				return
			}
		}
	})
}

// benchService is a leader's Service over a replicator that applies to
// memory, with flickr.T (stub "a", cache 1000, node-scoped when node),
// the sequence flickr.s (CACHE 1000) and key blocks of 1000.
func benchService(b *testing.B, node bool) *Service {
	b.Helper()
	repl := &localRepl{st: ticket.NewMemStore()}
	lead := &fakeLead{term: 1, leader: true}
	svc := NewService(repl, repl, Config{Cache: 1000, Leadership: lead, KeyCache: 1000}, nil)
	b.Cleanup(svc.Close)
	def := tickets64("flickr", "T")
	if node {
		def.Comment = "ticketd:scope=node"
	}
	seq, _, err := ticket.NewSequenceDef("flickr", "s", "", []model.SeqOption{{Kind: model.SeqCache, Value: 1000}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []model.Command{{Op: model.OpCreateDB, DB: "flickr"}, {Op: model.OpCreateTable, Def: def}, replace("a"),
		{Op: model.OpCreateSeq, DB: "flickr", Table: "s", Def: seq}} {
		if r, err := svc.Exec(ctx, &c); err != nil || r.Err != nil {
			b.Fatalf("%v: %v %v", &c, err, r.Err)
		}
	}
	return svc
}

// benchCached runs c through svc.Exec from 16 goroutines per CPU: the
// commands a cache serves from memory, so it measures the cache (entry,
// take, the shared leadership confirmation), a refill per 1000.
func benchCached(b *testing.B, svc *Service, c model.Command) {
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		c := c
		for pb.Next() {
			if r, err := svc.Exec(ctx, &c); err != nil || r.Err != nil {
				b.Errorf("%v %v", err, r.Err)
				return
			}
		}
	})
}

// BenchmarkCachedReplace is REPLACE from the leader's range (reserve.go).
func BenchmarkCachedReplace(b *testing.B) {
	benchCached(b, benchService(b, false), replace("a"))
}

// BenchmarkNodeScopeReplace is REPLACE from this node's block
// (nodescope.go), through Exec (TryExec is the wire layer's first try).
func BenchmarkNodeScopeReplace(b *testing.B) {
	benchCached(b, benchService(b, true), replace("a"))
}

// BenchmarkCachedNextval is NEXTVAL from the leader's sequence cache
// (sequence_cache.go).
func BenchmarkCachedNextval(b *testing.B) {
	benchCached(b, benchService(b, false), model.Command{Op: model.OpSeqNext, DB: "flickr", Table: "s", Seq: &model.SeqCommand{Count: 1}})
}

// BenchmarkCachedIncr is INCR from the leader's key block
// (keys_reserve.go).
func BenchmarkCachedIncr(b *testing.B) {
	benchCached(b, benchService(b, false), model.Command{Op: model.OpKeys, Key: &model.KeyCommand{Op: model.KeyIncr, Keys: []string{"k"}, Delta: 1}})
}
