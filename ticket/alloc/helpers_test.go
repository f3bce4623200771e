package alloc

import (
	"strings"
	"testing"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// The core package's test fixtures that the service's tests share: the
// Flickr tickets64 table, a REPLACE of its stubs, and a store with the
// sequence d.s (the core tests keep their own: an internal test of
// ticket cannot import a package that imports ticket).

func tickets64(db, name string) *model.TableDef {
	return &model.TableDef{DB: db, Name: name, IDCol: "id", IDType: model.IntType{Kind: model.BigInt, Unsigned: true, Width: 20},
		AutoInc: true, IDKey: "PRIMARY", IDNotNull: true, StubCol: "stub", StubType: "char(1)", StubLen: 1,
		StubKey: "stub", StubNotNull: true, Engine: "MyISAM"}
}

func replace(stubs ...string) model.Command {
	c := model.Command{Op: model.OpInsert, DB: "flickr", Table: "T", Replace: true, Increment: 1, Offset: 1}
	c.Columns = []string{"stub"}
	for _, s := range stubs {
		c.Values = append(c.Values, []model.Value{{Kind: model.ValString, Str: s}})
	}
	return c
}

// seqStore is a MemStore with database d and the sequence d.s made with opts.
func seqStore(t *testing.T, opts ...model.SeqOption) *ticket.MemStore {
	t.Helper()
	st := ticket.NewMemStore()
	mustApply(t, st, &model.Command{Op: model.OpCreateDB, DB: "d"})
	def, _, err := ticket.NewSequenceDef("d", "s", "", opts)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, st, &model.Command{Op: model.OpCreateSeq, DB: "d", Table: "s", Def: def})
	return st
}

func mustApply(t *testing.T, st ticket.Store, c *model.Command) model.Result {
	t.Helper()
	r, err := ticket.Apply(st, c)
	if err != nil || r.Err != nil {
		t.Fatalf("%v: %v %v", c, err, r.Err)
	}
	return r
}

func seqRow(t *testing.T, st ticket.Store) model.SequenceDef {
	t.Helper()
	tb, err := st.Table("d", "s")
	if err != nil || tb == nil || tb.Def.Seq == nil {
		t.Fatalf("no sequence: %v", err)
	}
	return *tb.Def.Seq
}

// rowStore is a MemStore with database ids and the row table spec.
func rowStore(t *testing.T, spec *model.TableSpec) *ticket.MemStore {
	t.Helper()
	st := ticket.NewMemStore()
	mustApply(t, st, &model.Command{Op: model.OpCreateDB, DB: "ids"})
	d, err := ticket.NewTableDef(spec)
	if err != nil || d.Rows == nil {
		t.Fatalf("NewTableDef(%s): %v (a row table: %t)", spec.Name, err, d != nil && d.Rows != nil)
	}
	mustApply(t, st, &model.Command{Op: model.OpCreateTable, Def: d})
	return st
}

func num(n int64) model.Value { return model.Value{Kind: model.ValInt, Int: n} }

// rowText is db.name's rows in key order, a line of |-separated values
// each.
func rowText(t *testing.T, st *ticket.MemStore, db, name string) string {
	t.Helper()
	rows, err := st.Rows(db, name)
	if err != nil || rows == nil {
		t.Fatalf("no row table %s.%s: %v", db, name, err)
	}
	var b strings.Builder
	if err := rows.Scan(rowengine.ClusterIndex, "", "", func(_ string, r []model.Datum) bool {
		for i, d := range r {
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(d.S)
		}
		b.WriteByte('\n')
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
