package rowengine

import (
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// RestoreRows adds a chunk of a restored row table's rows, all or
// none: a row of the wrong width or colliding on a unique key (a
// damaged backup, or a write into the table while it was restored)
// refuses the chunk. Count is how many rows the restore added before
// this chunk: the chunk applies when the table holds exactly that many,
// and is a no-op when it holds them and the chunk's (the same chunk
// committed twice: a sender that did not hear the outcome retries), so
// that retrying is safe.
func RestoreRows(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	rd := t.Def.Rows
	rows, err := s.Rows(c.DB, c.Table)
	if err != nil || rows == nil {
		return model.Result{}, MissingRows(t, err)
	}
	switch n := uint64(rows.Len()); n {
	case c.Count:
	case c.Count + uint64(len(c.RestoreRows)):
		return model.Result{}, nil // applied already
	default:
		return model.Result{Err: mysqlerr.New(mysqlerr.CodeUnknown, "restore: %s.%s holds %d rows where the restore put %d: was it written to during the restore?",
			c.DB, c.Table, n, c.Count)}, nil
	}
	tx := newRowsTx(rd, rows)
	for i, r := range c.RestoreRows {
		var e *model.Error
		if len(r) != len(rd.Cols) {
			e = mysqlerr.New(mysqlerr.CodeUnknown, "restore: row %d of %s.%s has %d values for %d columns", i+1, c.DB, c.Table, len(r), len(rd.Cols))
		} else {
			_, k, dup, err := tx.conflict(r, "", nil)
			if err != nil {
				return model.Result{}, err
			}
			if dup {
				e = model.DupEntry(KeyText(&rd.Keys[k], r), rd.Keys[k].Name)
			}
		}
		if e != nil {
			if err := tx.rollback(); err != nil {
				return model.Result{}, err
			}
			return model.Result{Err: e}, nil
		}
		if _, err := tx.put("", r); err != nil {
			return model.Result{}, err
		}
	}
	return model.Result{Affected: uint64(len(c.RestoreRows))}, nil
}
