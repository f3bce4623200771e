package rowengine

import (
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// autoCounter is a row-table INSERT's use of its table's AUTO_INCREMENT
// counter, as InnoDB (innodb_autoinc_lock_mode 1, MariaDB 10.11's
// default) keeps it.
//
// InnoDB reserves a simple INSERT's values when its first row needs one:
// as many as the statement has rows, whatever becomes of them. A row
// that turns into an update (ON DUPLICATE KEY UPDATE) or is ignored
// hands its value to the next row, and the statement still took them
// all; a statement that fails after the reservation leaves the counter
// past all of them (INSERT (1), (NULL), (3) on a NOT NULL column is 1048
// and the next id is 4), one that fails before it (a first row that does
// not convert) leaves it alone, and a row written with an explicit value
// before the failure leaves the counter past that value. After a
// generated value v the counter stands at v + auto_increment_increment
// (innobase_next_autoinc), which a later statement with a smaller
// increment starts from.
//
// Builds before RulesV11 took one value per generated row and kept them
// after a failure only when the first generated row was not ignored
// (keepCounter), with the counter at v + 1: a command applied under the
// older rules does that still.
type autoCounter struct {
	t *model.Table
	c *model.Command
	// taken is how many values the statement took from the counter.
	taken int
	// startAt and startEx are the counter before the statement.
	startAt uint64
	startEx bool
}

// take generates the next value and moves the counter past it.
func (a *autoCounter) take(row int) (uint64, *model.Error) {
	v, e := model.Generate(a.t, a.c.Increment, a.c.Offset, row)
	if e != nil {
		return 0, e
	}
	a.taken++
	inc := a.c.Increment
	if max := a.t.Def.IDType.Max(); !a.c.RulesAt(model.RulesV11) || inc <= 1 || inc-1 > max || v > max-(inc-1) {
		model.Advance(a.t, v)
		return v, nil
	}
	if next := v + inc; next > a.t.AutoInc {
		a.t.AutoInc = next
	}
	return v, nil
}

// keepOnFailure brings the counter where a statement failing with e
// leaves it and reports whether it changed. A statement ticketd refuses
// (1235) leaves it alone: MariaDB would have run it, and it did not run.
// keepCounter is the older rules' test: the first generated value, unless
// its row was ignored.
func (a *autoCounter) keepOnFailure(keepCounter uint64, e *model.Error) bool {
	if !a.c.RulesAt(model.RulesV11) {
		return keepCounter != 0
	}
	if e.Code == mysqlerr.CodeNotSupported {
		a.t.AutoInc, a.t.Exhausted = a.startAt, a.startEx
		return false
	}
	if a.taken > 0 {
		for a.taken < len(a.c.Values) {
			if _, e := a.take(len(a.c.Values)); e != nil {
				break // the counter is at the type's top
			}
		}
	}
	return a.t.AutoInc != a.startAt || a.t.Exhausted != a.startEx
}
