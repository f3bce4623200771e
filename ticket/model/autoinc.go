package model

import "github.com/ticketd/ticketd/sql/mysqlerr"

// NextID is MySQL's rule for the next generated value: the least value v >=
// autoInc with v ≡ off (mod inc), computed exactly as MySQL's
// compute_next_insert_id(autoInc-1) does, unsigned wrap-around included
// (that is what gives auto_increment_offset > auto_increment_increment its
// documented-as-ignored behaviour). ok is false when no value is left.
func NextID(autoInc, inc, off uint64) (v uint64, ok bool) {
	if autoInc == 0 {
		autoInc = 1
	}
	if inc == 0 {
		inc = 1
	}
	if off == 0 {
		off = 1
	}
	nr := autoInc - 1
	if inc == 1 {
		v = nr + 1
	} else {
		v = (nr+inc-off)/inc*inc + off
	}
	if v <= nr {
		return 0, false
	}
	return v, true
}

// Generate takes the next id of an AUTO_INCREMENT table and advances the
// counter past it. The counter is unchanged on error.
func Generate(t *Table, inc, off uint64, row int) (uint64, *Error) {
	v, ok := NextID(t.AutoInc, inc, off)
	if t.Exhausted || !ok || v > t.Def.IDType.Max() {
		return 0, mysqlerr.AutoincExhausted(t.Def.IDCol, row)
	}
	return v, nil
}

// Advance moves the counter past id, never backwards (MyISAM keeps the
// counter above the largest id ever stored, whichever way it got there).
func Advance(t *Table, id uint64) {
	if id == ^uint64(0) {
		t.Exhausted = true
		t.AutoInc = id
		return
	}
	if id+1 > t.AutoInc {
		t.AutoInc = id + 1
	}
}
