package alloc

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// seqService is a Service over a MemStore with sequence d.s (opts) and a
// leadership the test moves.
func seqService(t *testing.T, opts ...model.SeqOption) (*Service, *localRepl, *fakeLead) {
	t.Helper()
	repl := &localRepl{st: seqStore(t, opts...)}
	lead := &fakeLead{term: 1, leader: true}
	svc := NewService(repl, repl, Config{Leadership: lead}, nil)
	t.Cleanup(svc.Close)
	return svc, repl, lead
}

func svcNext(t *testing.T, svc *Service) (int64, error) {
	t.Helper()
	r, err := svc.Exec(context.Background(), &model.Command{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{Count: 1}})
	if err == nil && r.Err != nil {
		err = r.Err
	}
	return int64(r.First), err
}

func TestSequenceLeaderCache(t *testing.T) {
	svc, repl, lead := seqService(t, model.SeqOption{Kind: model.SeqCache, Value: 100})
	for i := int64(1); i <= 150; i++ {
		v, err := svcNext(t, svc)
		if err != nil || v != i {
			t.Fatalf("value %d: %d %v", i, v, err)
		}
	}
	if row := seqRow(t, repl.st); row.Next != 201 {
		t.Fatalf("two ranges of 100 reserved through Raft, row %+v", row)
	}
	lead.mu.Lock()
	verifies := lead.verifies
	lead.mu.Unlock()
	if verifies < 148 {
		t.Fatalf("%d VerifyLeader rounds for 148 cached values", verifies)
	}

	// A new term drops the cache: the next value comes from a new range
	// above everything reserved, never from the old one.
	lead.set(2, true, nil)
	if v, err := svcNext(t, svc); err != nil || v != 201 {
		t.Fatalf("after a leadership change: %d %v", v, err)
	}
	// A deposed leader answers nothing from its cache.
	lead.set(2, true, ticket.ErrNoQuorum)
	if _, err := svcNext(t, svc); !errors.Is(err, ticket.ErrNoQuorum) {
		t.Fatalf("unconfirmed leader answered: %v", err)
	}
	lead.set(3, true, nil)
	if v, err := svcNext(t, svc); err != nil || v != 301 {
		t.Fatalf("after the failed confirmation: %d %v", v, err)
	}
}

func TestSequenceCacheDroppedBySetValAndAlter(t *testing.T) {
	svc, repl, _ := seqService(t)
	ctx := context.Background()
	for i := int64(1); i <= 3; i++ {
		if v, err := svcNext(t, svc); err != nil || v != i {
			t.Fatalf("%d %v", v, err)
		}
	}
	// SETVAL inside the cached range: MariaDB continues right after it,
	// and so does the leader (its cache dropped, its position sent along).
	r, err := svc.Exec(ctx, &model.Command{Op: model.OpSetVal, DB: "d", Table: "s", Seq: &model.SeqCommand{Value: 10}})
	if err != nil || r.Err != nil || r.Affected != 1 {
		t.Fatalf("SETVAL: %+v %v", r, err)
	}
	if v, err := svcNext(t, svc); err != nil || v != 11 {
		t.Fatalf("after SETVAL 10: %d %v", v, err)
	}
	if r, _ := svc.Exec(ctx, &model.Command{Op: model.OpSetVal, DB: "d", Table: "s", Seq: &model.SeqCommand{Value: 5}}); r.Affected != 0 {
		t.Fatal("SETVAL behind the handed-out values was taken")
	}
	r, err = svc.Exec(ctx, &model.Command{Op: model.OpAlterSeq, DB: "d", Table: "s", Seq: &model.SeqCommand{Options: []model.SeqOption{{Kind: model.SeqRestartWith, Value: 7}}}})
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if v, err := svcNext(t, svc); err != nil || v != 7 {
		t.Fatalf("after RESTART WITH 7: %d %v", v, err)
	}
	if row := seqRow(t, repl.st); row.Next != 1007 {
		t.Fatalf("row %+v", row)
	}
}

func TestSequenceCacheConcurrentUnique(t *testing.T) {
	svc, _, lead := seqService(t, model.SeqOption{Kind: model.SeqCache, Value: 7})
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(0)
			for i := range 200 {
				if w == 0 && i%50 == 0 {
					lead.mu.Lock()
					lead.term++
					lead.mu.Unlock()
				}
				v, err := svcNext(t, svc)
				if err != nil {
					continue
				}
				mu.Lock()
				if seen[v] {
					t.Errorf("duplicate %d", v)
				}
				seen[v] = true
				mu.Unlock()
				if v <= last {
					t.Errorf("worker %d: %d after %d", w, v, last)
				}
				last = v
			}
		}()
	}
	wg.Wait()
}

func TestSequenceFollowerForwards(t *testing.T) {
	svc, repl, lead := seqService(t, model.SeqOption{Kind: model.SeqCache, Value: 100})
	lead.set(1, false, nil)
	// Not the leader: NEXTVAL goes to the Replicator as a one-value command.
	for i := int64(1); i <= 3; i++ {
		if v, err := svcNext(t, svc); err != nil || v != i {
			t.Fatalf("%d %v", v, err)
		}
	}
	if row := seqRow(t, repl.st); row.Next != 4 {
		t.Fatalf("a follower must not reserve ranges: %+v", row)
	}
	// The leader's ExecBatch serves a forwarded batch from its cache.
	lead.set(2, true, nil)
	cmds := []model.Command{
		{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{Count: 1}},
		{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{Count: 1}},
	}
	out, err := svc.ExecBatch(context.Background(), cmds)
	if err != nil || len(out) != 2 || out[0].First == out[1].First || min(out[0].First, out[1].First) != 4 {
		t.Fatalf("forwarded batch: %+v %v", out, err)
	}
	if row := seqRow(t, repl.st); row.Next != 104 {
		t.Fatalf("row %+v", row)
	}
}

// A leader deposed while its refill waits in the batcher forwards that
// refill (OpSeqNext, Count 0) to the new leader, which proposes it
// through Raft above its own cache, and the deposed leader answers the
// new range's first value. The new leader's cache must not serve lower
// values after that: TestSchemeFaults/01-pause-leader saw 7001 answered
// by the paused old leader, then 6174.. from the new leader's cache.
func TestSequenceForwardedRefillDropsCache(t *testing.T) {
	svc, _, _ := seqService(t, model.SeqOption{Kind: model.SeqCache, Value: 100})
	for i := int64(1); i <= 2; i++ {
		if v, err := svcNext(t, svc); err != nil || v != i {
			t.Fatalf("value %d: %d %v", i, v, err)
		}
	}
	out, err := svc.ExecBatch(context.Background(), []model.Command{{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{}}})
	if err != nil || len(out) != 1 || out[0].Err != nil || out[0].First != 101 {
		t.Fatalf("forwarded refill: %+v %v", out, err)
	}
	if v, err := svcNext(t, svc); err != nil || v <= 101 {
		t.Fatalf("after 101 was returned through Raft: %d %v", v, err)
	}
}
