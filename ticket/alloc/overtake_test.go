package alloc

import (
	"context"
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
)

// TestSequenceAlterTableScopeDropsCache: ALTER TABLE s COMMENT moves a
// sequence between the leader's cache and node-scoped ranges. Both go
// through Raft above each other, so the leader's cache of s must not
// outlive the ALTER: without the drop, s went 1, 2 (cache), 101 (the
// node's range, above the cache), then 3 from the cache the leader kept
// through both ALTERs.
func TestSequenceAlterTableScopeDropsCache(t *testing.T) {
	svc, _, _ := seqService(t, model.SeqOption{Kind: model.SeqCache, Value: 100})
	ctx := context.Background()
	for i := int64(1); i <= 2; i++ {
		if v, err := svcNext(t, svc); err != nil || v != i {
			t.Fatalf("value %d: %d %v", i, v, err)
		}
	}
	alter := func(comment string) {
		t.Helper()
		r, err := svc.Exec(ctx, &model.Command{Op: model.OpAlterTable, DB: "d", Table: "s", HasComment: true, Comment: comment})
		if err != nil || r.Err != nil {
			t.Fatalf("ALTER TABLE s COMMENT %q: %v %v", comment, err, r.Err)
		}
	}
	alter("ticketd:scope=node")
	top, err := svcNext(t, svc)
	if err != nil || top != 101 {
		t.Fatalf("node-scoped value: %d %v, want 101 (the test no longer sets the case up)", top, err)
	}
	alter("")
	if v, err := svcNext(t, svc); err != nil || v <= top {
		t.Fatalf("after ALTER back to the leader's cache: %d %v, want above %d", v, err, top)
	}
}

// TestSequenceCacheKeptThroughOtherStatements: as in MariaDB, a
// sequence's cache is kept through statements that cannot change the
// sequence, whichever path they take to Raft. A DELETE (of any table)
// and a Redis write forwarded to a leader without key blocks dropped
// every sequence cache, and NEXTVAL skipped to the next range.
func TestSequenceCacheKeptThroughOtherStatements(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(*Service) error
	}{
		{"delete", func(svc *Service) error {
			_, err := svc.Exec(context.Background(), &model.Command{Op: model.OpDelete, DB: "d", Table: "x", Rows: &model.RowsCommand{}})
			return err
		}},
		{"forwarded key write", func(svc *Service) error {
			_, err := svc.ExecBatch(context.Background(), []model.Command{{Op: model.OpKeys, Key: &model.KeyCommand{Op: model.KeySet, Keys: []string{"k"}, Value: "1"}}})
			return err
		}},
		{"forwarded delete", func(svc *Service) error {
			_, err := svc.ExecBatch(context.Background(), []model.Command{{Op: model.OpDelete, DB: "d", Table: "x", Rows: &model.RowsCommand{}}})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, _, _ := seqService(t, model.SeqOption{Kind: model.SeqCache, Value: 100})
			if v, err := svcNext(t, svc); err != nil || v != 1 {
				t.Fatalf("first value: %d %v", v, err)
			}
			if err := tc.run(svc); err != nil {
				t.Fatal(err)
			}
			if v, err := svcNext(t, svc); err != nil || v != 2 {
				t.Fatalf("after the %s: %d %v, want 2 (the cache kept)", tc.name, v, err)
			}
		})
	}
}

// TestRangeKeptThroughDelete: DELETE takes only row tables (a ticket
// table refuses it), so it cannot overtake a ticket table's range; it
// dropped every range of the leader, and the next REPLACE skipped to a
// new one.
func TestRangeKeptThroughDelete(t *testing.T) {
	svc, repl, _ := cachedService(t, 100)
	// The first REPLACE writes the stub's row through Raft, the second
	// reserves 2..101.
	for want := uint64(1); want <= 2; want++ {
		if id, err := next(t, svc, "a"); err != nil || id != want {
			t.Fatalf("id %d: %d %v", want, id, err)
		}
	}
	for _, del := range []func() error{
		func() error {
			_, err := svc.Exec(context.Background(), &model.Command{Op: model.OpDelete, DB: "flickr", Table: "x", Rows: &model.RowsCommand{}})
			return err
		},
		func() error {
			_, err := svc.ExecBatch(context.Background(), []model.Command{{Op: model.OpDelete, DB: "flickr", Table: "T", Rows: &model.RowsCommand{}}})
			return err
		},
	} {
		if err := del(); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := next(t, svc, "a"); err != nil || id != 3 {
		t.Fatalf("after the DELETEs: %d %v, want 3 (the range kept)", id, err)
	}
	repl.mu.Lock()
	defer repl.mu.Unlock()
	if repl.reserves != 1 {
		t.Fatalf("%d reservations, want 1", repl.reserves)
	}
}
