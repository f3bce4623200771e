package ticket

import (
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// A tableKind applies the commands addressed to an existing table of its
// kind. Apply looks the table up once (applyToTable) and dispatches once,
// to the kind of the table it found: a ticket table, a row table (the row
// engine's, package ticket/rowengine) or a sequence. A command the kind
// has no such statement for gets the answer MariaDB gives (refused).
type tableKind interface {
	// apply runs c on t, the table c names, as s holds it: t is a copy,
	// whose changes count once put back with s.PutTable.
	apply(s Store, t *model.Table, c *model.Command) (model.Result, error)
}

// kindOf is the kind of a table of definition def.
func kindOf(def *model.TableDef) tableKind {
	switch {
	case def.Seq != nil:
		return sequenceKind{}
	case def.Rows != nil:
		return rowTableKind{}
	}
	return ticketTableKind{}
}

// ticketTableKind is a ticket table: one integer id, at most one stub
// (apply.go, values.go).
type ticketTableKind struct{}

func (ticketTableKind) apply(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	switch c.Op {
	case model.OpInsert:
		return insertTickets(s, t, c)
	case model.OpUpdate:
		return updateTickets(s, t, c)
	case model.OpAlterTable:
		return alterTable(s, t, c)
	}
	return refused(c), nil
}

// rowTableKind is a row table: the row engine applies its statements.
type rowTableKind struct{}

func (rowTableKind) apply(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	switch c.Op {
	case model.OpInsert:
		return rowengine.ApplyInsert(s, t, c)
	case model.OpUpdate:
		return rowengine.ApplyUpdate(s, t, c)
	case model.OpDelete:
		return rowengine.ApplyDelete(s, t, c)
	case model.OpRestoreRows:
		return rowengine.RestoreRows(s, t, c)
	case model.OpAlterTable:
		var res model.Result
		if len(c.DropKeys)+len(c.AddKeys) > 0 {
			// Keys first: a refused key change leaves the options alone too.
			var e *model.Error
			var err error
			if res, e, err = rowengine.AlterKeys(s, t, c); err != nil || e != nil {
				return model.Result{Err: e}, err
			}
		}
		return alterOptions(s, t, c, res)
	}
	return refused(c), nil
}

// sequenceKind is a sequence (CREATE SEQUENCE; sequence.go).
type sequenceKind struct{}

func (sequenceKind) apply(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	switch {
	case c.Op == model.OpDropSeq:
		return model.Result{}, s.DeleteTable(c.DB, c.Table)
	case isSeqOp(c.Op):
		return applySequence(s, t, c)
	case c.Op == model.OpInsert, c.Op == model.OpUpdate:
		return model.Result{Err: errSequenceRows}, nil
	case c.Op == model.OpAlterTable:
		return alterTable(s, t, c)
	}
	return refused(c), nil
}

// refused is the answer to c on a table whose kind has no such
// statement: a sequence's on a table, DELETE of a ticket table or a
// sequence, a restore's rows for a table that holds none.
func refused(c *model.Command) model.Result {
	switch {
	case isSeqOp(c.Op):
		return model.Result{Err: mysqlerr.NotSequence(c.DB, c.Table, c.Op == model.OpDropSeq)}
	case c.Op == model.OpDelete:
		return model.Result{Err: mysqlerr.NotSupported("DELETE from a ticket table or sequence")}
	case c.Op == model.OpRestoreRows:
		return model.Result{Err: mysqlerr.New(mysqlerr.CodeUnknown, "restore: %s.%s is not a row table", c.DB, c.Table)}
	}
	return model.Result{Err: unknownCommand(c)}
}
