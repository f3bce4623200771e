package ticket

import (
	"strings"

	"github.com/ticketd/ticketd/ticket/model"
)

// A dropped table leaves a high-water mark: the next id it would have
// handed out. A table created later under the same db.name starts at or
// above it, so that DROP TABLE followed by CREATE TABLE (a mistake, or a
// migration script run twice) cannot hand out an id a second time. DROP
// DATABASE leaves the marks of all its tables. Marks are never lowered
// and never removed through SQL: re-creating a table keeps its mark, and
// a later DROP raises it if the new table went further.
//
// Marks are kept among the replicated globals under names no SET GLOBAL
// can write (they hold NUL bytes), so they are part of every snapshot,
// state file and backup without a format change.

// dropMarkPrefix starts the global name of a table's mark.
const dropMarkPrefix = "\x00drop\x00"

// exhaustedMark is the mark of a dropped table that had handed out every
// value of an unsigned BIGINT: no uint64 is above them.
const exhaustedMark = 0

// DropMarkName is the replicated global holding the mark of db.name.
func DropMarkName(db, name string) string { return dropMarkPrefix + db + "\x00" + name }

// IsDropMark reports whether a global name is a drop mark, and of which
// table (db.name).
func IsDropMark(global string) (table string, ok bool) {
	rest, ok := strings.CutPrefix(global, dropMarkPrefix)
	if !ok {
		return "", false
	}
	db, name, ok := strings.Cut(rest, "\x00")
	return db + "." + name, ok
}

// DropMark returns the mark left by dropped tables named db.name: the
// lowest id a re-created table may generate, exhausted when no id is
// left, ok false when no table of that name was ever dropped.
func DropMark(s Store, db, name string) (next uint64, exhausted, ok bool, err error) {
	v, ok, err := s.Global(DropMarkName(db, name))
	if err != nil || !ok {
		return 0, false, false, err
	}
	return v, v == exhaustedMark, true, nil
}

// markDropped records t's next id before t is dropped, keeping the
// higher of it and an earlier mark.
func markDropped(s Store, t *model.Table) error {
	next, exhausted := tableNext(t)
	old, oldExhausted, ok, err := DropMark(s, t.Def.DB, t.Def.Name)
	if err != nil {
		return err
	}
	switch {
	case ok && oldExhausted:
		return nil
	case exhausted:
		next = exhaustedMark
	case ok && old > next:
		return nil
	}
	return s.PutGlobal(DropMarkName(t.Def.DB, t.Def.Name), next)
}

// tableNext is the lowest id above every id t handed out (its
// AUTO_INCREMENT, or one above its largest row), and exhausted when that
// is past 2^64-1.
func tableNext(t *model.Table) (next uint64, exhausted bool) {
	next = max(t.AutoInc, 1)
	for _, r := range t.Rows {
		if r.ID >= next {
			if r.ID == ^uint64(0) {
				return 0, true
			}
			next = r.ID + 1
		}
	}
	if t.Exhausted {
		m := t.Def.IDType.Max()
		if m == ^uint64(0) {
			return 0, true
		}
		next = max(next, m+1)
	}
	return next, false
}

// startAbove raises a new table's counter to the mark of a dropped table
// of the same name.
func startAbove(s Store, t *model.Table) error {
	mark, exhausted, ok, err := DropMark(s, t.Def.DB, t.Def.Name)
	if err != nil || !ok {
		return err
	}
	if exhausted || mark > t.Def.IDType.Max() {
		t.Exhausted = true
		t.AutoInc = t.Def.IDType.Max()
		return nil
	}
	t.AutoInc = max(t.AutoInc, mark)
	return nil
}
