package logformat

import (
	"math/bits"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// TestCommandVersionTables: every op ticket.Apply knows, every presence
// bit of a command or table definition and every value kind has a
// version, so that a new one cannot be added without saying which builds
// can apply it (raftstore's TestCommandVersions: the commands of a build
// from before versions are version 1, the others not).
func TestCommandVersionTables(t *testing.T) {
	for m := uint64(cmdKnown); m != 0; m &= m - 1 {
		if _, ok := cmdBitVersions[uint64(1)<<bits.TrailingZeros64(m)]; !ok {
			t.Errorf("command presence bit %d has no version in cmdBitVersions", bits.TrailingZeros64(m))
		}
	}
	for m := uint64(defKnown); m != 0; m &= m - 1 {
		if _, ok := defBitVersions[uint64(1)<<bits.TrailingZeros64(m)]; !ok {
			t.Errorf("definition presence bit %d has no version in defBitVersions", bits.TrailingZeros64(m))
		}
	}
	for op := range 256 {
		// On a store holding the sequence d.s, so that the sequences'
		// range of ops reaches its "unknown command" too.
		st := ticket.NewMemStore()
		for _, c := range []model.Command{formattest.CreateDB("d"), formattest.SeqSeedCommands()[0]} {
			if r, err := ticket.Apply(st, &c); err != nil || r.Err != nil {
				t.Fatalf("setup: %v %v", err, r.Err)
			}
		}
		c := model.Command{Op: model.Op(op), DB: "d", Table: "s"}
		r, err := func() (r model.Result, err error) {
			defer func() {
				if recover() != nil {
					r = model.Result{} // it knows the op: it looked at the fields
				}
			}()
			return ticket.Apply(st, &c)
		}()
		unknown := err == nil && r.Err != nil && strings.HasPrefix(r.Err.Message, "unknown command")
		if _, ok := opVersions[c.Op]; !ok && !unknown {
			t.Errorf("op %d is applied but has no version in opVersions", op)
		}
	}
	for k := range 256 {
		v := model.Value{Kind: model.ValueKind(k), Str: "x"}
		if _, ok := kindVersions[v.Kind]; !ok && model.ValueKind(k) <= model.ValDouble && k != 0 && k != 7 {
			t.Errorf("value kind %d has no version", k)
		}
	}
}
