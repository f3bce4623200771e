package ticket

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// Restore errors.
var (
	// ErrBadDump: a dump is not a consistent state (a table without its
	// database, a name twice, an empty name). Nothing is changed.
	ErrBadDump = errors.New("ticket: inconsistent dump")
	// ErrAdvanceOverflow: moving a table's counter by the requested
	// advance or floor would pass the largest value of its id column.
	ErrAdvanceOverflow = errors.New("ticket: counter advance exceeds the id column's maximum")
)

// ValidateDump checks that d is a state Apply can install: every table's
// database is listed and no name repeats. Apply checks it again, so that a
// bad entry is refused the same way on every replica instead of failing a
// state file half-way.
func ValidateDump(d *model.Dump) error {
	dbs := make(map[string]bool, len(d.Databases))
	for _, db := range d.Databases {
		if db == "" || dbs[db] {
			return fmt.Errorf("%w: database %q empty or listed twice", ErrBadDump, db)
		}
		dbs[db] = true
	}
	seen := make(map[string]bool, len(d.Tables))
	for i := range d.Tables {
		def := &d.Tables[i].Def
		if def.Name == "" || !dbs[def.DB] {
			return fmt.Errorf("%w: table %q of database %q not listed", ErrBadDump, def.Name, def.DB)
		}
		if seen[def.Key()] {
			return fmt.Errorf("%w: table %s twice", ErrBadDump, def.Key())
		}
		seen[def.Key()] = true
	}
	for key, rows := range d.Rows {
		var t *model.Table
		for i := range d.Tables {
			if d.Tables[i].Def.Key() == key {
				t = &d.Tables[i]
			}
		}
		if t == nil || t.Def.Rows == nil {
			return fmt.Errorf("%w: rows for %s, which is not a row table of the dump", ErrBadDump, key)
		}
		// The rows must be storable: right width, no unique key twice.
		rt := rowengine.NewRowTree(t.Def.Rows)
		for _, r := range rows {
			if _, err := rt.Put("", r); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrBadDump, key, err)
			}
		}
	}
	names := make(map[string]bool, len(d.Globals))
	for _, g := range d.Globals {
		if g.Name == "" || names[g.Name] {
			return fmt.Errorf("%w: global %q empty or listed twice", ErrBadDump, g.Name)
		}
		names[g.Name] = true
	}
	return validateDumpKeys(d)
}

// AdvanceDump moves every table's next id to max(next + advance, floor), so
// that a restored backup cannot hand out again the ids its source cluster
// handed out after the backup was taken. An AUTO_INCREMENT table's counter
// moves; a sequence table's rows all shift by the same amount (keeping
// them distinct and in order). It checks every table first and changes
// nothing if one would pass its type's maximum (ErrAdvanceOverflow).
// The marks of dropped tables (see DropMark) move the same way, and so do
// keys holding a non-negative integer (keys_store.go).
func AdvanceDump(d *model.Dump, advance, floor uint64) ([]model.Move, error) {
	if err := checkDumpKeysAdvance(d, advance, floor); err != nil {
		return nil, err
	}
	moves := make([]model.Move, len(d.Tables))
	var bad []string
	for i := range d.Tables {
		t := &d.Tables[i]
		m := model.Move{Table: t.Def.Key()}
		next, ok := t.NextID()
		if !ok {
			m.Exhausted = t.Def.AutoInc
			moves[i] = m
			continue
		}
		to := next + advance
		if to < next {
			to = ^uint64(0) // wrapped: certainly above the maximum
			if t.Def.IDType.Max() == ^uint64(0) {
				bad = append(bad, fmt.Sprintf("%s: next id %d + %d passes 2^64", m.Table, next, advance))
				continue
			}
		}
		to = max(to, floor)
		if limit := t.Def.IDType.Max(); to > limit {
			bad = append(bad, fmt.Sprintf("%s: next id %d would become %d, above the %s maximum %d",
				m.Table, next, to, t.Def.IDType.SQL(), limit))
			continue
		}
		m.From, m.To = next, to
		moves[i] = m
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrAdvanceOverflow, strings.Join(bad, "; "))
	}
	for i := range d.Tables {
		t, m := &d.Tables[i], moves[i]
		if m.To == m.From {
			continue
		}
		if t.Def.AutoInc {
			t.AutoInc = m.To
			continue
		}
		delta := m.To - m.From
		for j := range t.Rows {
			t.Rows[j].ID += delta
		}
	}
	// Dropped tables' marks move as their tables would have: a table
	// re-created after the restore must start above the ids the source
	// cluster handed out. One past 2^64-1 is the exhausted mark.
	for i := range d.Globals {
		g := &d.Globals[i]
		if _, ok := IsDropMark(g.Name); !ok || g.Value == exhaustedMark {
			continue
		}
		if to := g.Value + advance; to < g.Value {
			g.Value = exhaustedMark
		} else {
			g.Value = max(to, floor)
		}
	}
	advanceDumpKeys(d, advance, floor)
	return moves, nil
}

// applyRestore installs c.Dump in place of the whole state. Without Force
// it refuses a state that holds any database: restoring over live tables
// would silently drop their counters.
func applyRestore(s Store, c *model.Command) (model.Result, error) {
	if c.Dump == nil {
		return model.Result{Err: mysqlerr.New(mysqlerr.CodeUnknown, "restore: no state in the command")}, nil
	}
	if err := ValidateDump(c.Dump); err != nil {
		return model.Result{Err: mysqlerr.New(mysqlerr.CodeUnknown, "restore refused: %v", err)}, nil
	}
	dbs, err := s.Databases()
	if err != nil {
		return model.Result{}, err
	}
	if len(dbs) == 0 && !c.Force {
		if dbs, err = keyHolders(s); err != nil {
			return model.Result{}, err
		}
	}
	if len(dbs) > 0 && !c.Force {
		return model.Result{Err: mysqlerr.New(mysqlerr.CodeUnknown, "restore refused: the cluster already holds database(s) %s; restore into a fresh cluster, or force it to replace them",
			strings.Join(dbs, ", "))}, nil
	}
	for _, db := range dbs {
		if err := s.DeleteDatabase(db); err != nil {
			return model.Result{}, err
		}
	}
	for _, db := range c.Dump.Databases {
		if err := s.PutDatabase(db); err != nil {
			return model.Result{}, err
		}
	}
	for i := range c.Dump.Tables {
		// PutTable copies the table, so the command (which the FSM's
		// decoder may reuse) keeps nothing shared with the state.
		if err := s.PutTable(&c.Dump.Tables[i]); err != nil {
			return model.Result{}, err
		}
	}
	for _, g := range c.Dump.Globals {
		if err := s.PutGlobal(g.Name, g.Value); err != nil {
			return model.Result{}, err
		}
	}
	if err := restoreKeys(s, c.Dump.Keys); err != nil {
		return model.Result{}, err
	}
	for i := range c.Dump.Tables {
		def := &c.Dump.Tables[i].Def
		data := c.Dump.Rows[def.Key()]
		if def.Rows == nil || len(data) == 0 {
			continue
		}
		rows, err := s.Rows(def.DB, def.Name)
		if err != nil || rows == nil {
			return model.Result{}, rowengine.MissingRows(&c.Dump.Tables[i], err)
		}
		for _, r := range data {
			// Validate stored them once already: Put cannot refuse here.
			if _, err := rows.Put("", append([]model.Datum(nil), r...)); err != nil {
				return model.Result{}, err
			}
		}
	}
	return model.Result{Affected: uint64(len(c.Dump.Tables))}, nil
}
