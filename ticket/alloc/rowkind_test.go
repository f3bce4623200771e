package alloc

import (
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/ticketd/ticketd/ticket"
)

// clockReader is a MemStore reader with a schema epoch, as raftstore's
// Node has.
type clockReader struct {
	st    *ticket.MemStore
	epoch atomic.Uint64
}

func (r *clockReader) View(fn func(ticket.Store) error) error { return fn(r.st) }
func (r *clockReader) SchemaEpoch() uint64                    { return r.epoch.Load() }

func TestIsRowTableCache(t *testing.T) {
	st := rowStore(t, tinySpec())
	r := &clockReader{st: st}
	svc := NewService(nil, r, Config{}, slog.New(slog.DiscardHandler))
	if !svc.IsRowTable("ids", "tiny_id_info") || svc.IsRowTable("ids", "nosuch") {
		t.Fatal("kinds")
	}
	// Cached until the schema epoch moves.
	if err := st.DeleteTable("ids", "tiny_id_info"); err != nil {
		t.Fatal(err)
	}
	if !svc.IsRowTable("ids", "tiny_id_info") {
		t.Fatal("not cached")
	}
	r.epoch.Add(1)
	if svc.IsRowTable("ids", "tiny_id_info") {
		t.Fatal("a dropped table is still a row table after the epoch moved")
	}
	if n := testing.AllocsPerRun(100, func() { svc.IsRowTable("ids", "nosuch") }); n != 0 {
		t.Errorf("cached IsRowTable: %.0f allocations, want 0", n)
	}
}
