package ticket

import (
	"context"
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
)

// BenchmarkBatcher is group commit alone: parallel Exec calls through the
// batcher into a replicator that applies to memory, so it measures
// queueing, batching and handing results back (allocations included).
func BenchmarkBatcher(b *testing.B) {
	repl := &localRepl{st: NewMemStore()}
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

// BenchmarkApplyReplace is the allocation rule and row update for one
// REPLACE on a one-row table.
func BenchmarkApplyReplace(b *testing.B) {
	st := NewMemStore()
	for _, c := range []model.Command{{Op: model.OpCreateDB, DB: "flickr"}, {Op: model.OpCreateTable, Def: tickets64("flickr", "T")}} {
		if _, err := Apply(st, &c); err != nil {
			b.Fatal(err)
		}
	}
	c := replace("a")
	b.ReportAllocs()
	for b.Loop() {
		if r, err := Apply(st, &c); err != nil || r.Err != nil {
			b.Fatalf("%v %v", err, r.Err)
		}
	}
}
