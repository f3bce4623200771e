package rowengine

import (
	"fmt"
	"math"

	"github.com/ticketd/ticketd/ticket/model"
)

// The statements of row tables (rows.go): UPDATE and DELETE (INSERT is
// insert.go), each applied entirely or not at all, through rowsTx.

// MissingRows is the storage error of a row table whose rows the store
// does not have (a bug: PutTable creates them).
func MissingRows(t *model.Table, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("ticket: row table %s has no rows in the store", t.Def.Key())
}

// RowStore is what the row engine reads and writes of the replicated
// state: a table's definition and counter, and its rows. ticket's Store
// (bbolt in raftstore, MemStore in tests) is one.
type Store interface {
	// Table returns nil, nil when there is no such table.
	Table(db, name string) (*model.Table, error)
	// PutTable stores t's definition and counter.
	PutTable(t *model.Table) error
	// Rows returns a row table's rows, nil when db.name is not one.
	Rows(db, name string) (TableRows, error)
}

// rowsTx writes a statement's rows through TableRows and can undo them
// all, so that a failing statement leaves the table as it was.
type rowsTx struct {
	rd      *model.RowsDef
	rows    TableRows
	cluster int
	undo    []undoRow
}

// undoRow is what a write replaced: the row under pk before it (had
// false: none).
type undoRow struct {
	pk  string
	old []model.Datum
	had bool
}

func newRowsTx(rd *model.RowsDef, rows TableRows) *rowsTx {
	return &rowsTx{rd: rd, rows: rows, cluster: ClusterKey(rd)}
}

// put stores r (pk: its hidden row id, "" for a new row) and returns its
// clustering key.
func (tx *rowsTx) put(pk string, r []model.Datum) (string, error) {
	key := pk
	if tx.cluster >= 0 {
		key, _ = IndexKey(tx.rd, tx.cluster, r)
	}
	var old []model.Datum
	had := false
	if key != "" {
		old, had = tx.rows.Get(key)
	}
	got, err := tx.rows.Put(pk, r)
	if err != nil {
		return "", err
	}
	tx.undo = append(tx.undo, undoRow{pk: got, old: old, had: had})
	return got, nil
}

// replace stores r in place of the row under pk, which it updates: a
// put over it when r keeps that clustering key (the usual UPDATE, and
// what the tree does in one lookup and one write), else a delete of pk
// and a put. A delete and a put for every updated row cost an UPDATE by
// key two more lookups, a removal and two row decodes on every replica.
// The undo log restores the old row either way.
func (tx *rowsTx) replace(pk string, r []model.Datum) error {
	if tx.cluster < 0 {
		// Clustered by hidden row id: r stays under pk.
		_, err := tx.put(pk, r)
		return err
	}
	if key, _ := IndexKey(tx.rd, tx.cluster, r); key != pk {
		if err := tx.del(pk); err != nil {
			return err
		}
	}
	_, err := tx.put(pk, r)
	return err
}

func (tx *rowsTx) del(pk string) error {
	old, had := tx.rows.Get(pk)
	if !had {
		return nil
	}
	if err := tx.rows.Delete(pk); err != nil {
		return err
	}
	tx.undo = append(tx.undo, undoRow{pk: pk, old: old, had: true})
	return nil
}

// rollback undoes every write, last first.
func (tx *rowsTx) rollback() error {
	for i := len(tx.undo) - 1; i >= 0; i-- {
		u := tx.undo[i]
		var err error
		if u.had {
			_, err = tx.rows.Put(u.pk, u.old)
		} else {
			err = tx.rows.Delete(u.pk)
		}
		if err != nil {
			return fmt.Errorf("ticket: undo a failed statement's rows: %w", err)
		}
	}
	tx.undo = tx.undo[:0]
	return nil
}

// conflict finds a row other than the one stored under skip that
// collides with r on a unique key, by key lookups. Only keys over a
// column in changed are checked (nil: every key): an UPDATE of other
// columns cannot make a duplicate. k is the key that collided.
func (tx *rowsTx) conflict(r []model.Datum, skip string, changed []bool) (pk string, k int, found bool, err error) {
	for k := range tx.rd.Keys {
		key := &tx.rd.Keys[k]
		if !key.Unique || !touches(key, changed) {
			continue
		}
		want, null := IndexKey(tx.rd, k, r)
		if null {
			continue
		}
		if k == tx.cluster {
			if want != skip {
				if _, ok := tx.rows.Get(want); ok {
					return want, k, true, nil
				}
			}
			continue
		}
		err = tx.rows.Scan(k, want, PrefixEnd(want), func(p string, _ []model.Datum) bool {
			if p != skip {
				pk, found = p, true
			}
			return !found
		})
		if err != nil || found {
			return pk, k, found, err
		}
	}
	return "", 0, false, nil
}

// matched is a row a WHERE selected, with its clustering key.
type matched struct {
	pk  string
	row []model.Datum
}

// setsFromTicket turns the ticket form of an UPDATE (one id assignment, at
// most one WHERE term) into the row-table form.
func setsFromTicket(c *model.Command) *model.RowsCommand {
	rc := &model.RowsCommand{}
	u := &c.Set
	set := model.RowSet{Col: u.Column, SetLastID: u.SetLastID}
	switch {
	case u.Absolute:
		set.A = model.RowOperand{Val: model.Value{Kind: model.ValUint, Uint: u.Value}}
		if u.Value <= math.MaxInt64 {
			set.A.Val = model.Value{Kind: model.ValInt, Int: int64(u.Value)}
		}
	case u.Delta == 0:
		set.A = model.RowOperand{Col: u.Column}
	default:
		set.A, set.Op = model.RowOperand{Col: u.Column}, '+'
		set.B = model.RowOperand{Val: model.Value{Kind: model.ValInt, Int: u.Delta}}
	}
	rc.Sets = []model.RowSet{set}
	if c.HasWhere {
		rc.Where = []model.RowCond{{Col: c.WhereCol, Val: c.Where}}
	}
	return rc
}

// ApplyUpdate is UPDATE on a row table: every matching row, all or
// nothing (engine.go).
func ApplyUpdate(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	if c.Rows == nil || !c.Rows.Engine {
		return legacyRowsUpdate(s, t, c)
	}
	return applyRowsUpdateExpr(s, t, c, c.Rows)
}

// ApplyDelete is DELETE on a row table.
func ApplyDelete(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	if c.Rows == nil || !c.Rows.Engine {
		return legacyRowsDelete(s, t, c)
	}
	return applyRowsDeleteExpr(s, t, c, c.Rows)
}
