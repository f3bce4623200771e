package ticket

import (
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
)

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
