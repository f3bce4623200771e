package ticket

import (
	"strconv"
	"strings"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// insertRow is one VALUES tuple mapped onto a ticket table's columns.
type insertRow struct {
	// HasID is false when the id column was not given, or was NULL, 0 or
	// DEFAULT: MySQL then generates the next value.
	HasID   bool
	ID      uint64
	HasStub bool
	Stub    string
}

// columnMap says where the id and stub columns sit in a VALUES tuple (-1:
// not given).
type columnMap struct {
	id, stub, n int
}

// mapRows resolves an INSERT's column list against the table and checks
// every tuple's width before anything is written, as MySQL does.
func mapRows(def *model.TableDef, cols []string, values [][]model.Value) (columnMap, *model.Error) {
	m := columnMap{id: -1, stub: -1}
	if cols == nil {
		switch {
		case def.StubCol == "":
			m.id, m.n = 0, 1
		case def.StubFirst:
			m.stub, m.id, m.n = 0, 1, 2
		default:
			m.id, m.stub, m.n = 0, 1, 2
		}
	} else {
		m.n = len(cols)
		for i, c := range cols {
			var pos *int
			switch {
			case strings.EqualFold(c, def.IDCol):
				pos = &m.id
			case def.StubCol != "" && strings.EqualFold(c, def.StubCol):
				pos = &m.stub
			default:
				return m, mysqlerr.UnknownColumn(c, "INSERT INTO")
			}
			if *pos >= 0 {
				return m, mysqlerr.New(mysqlerr.CodeFieldSpecifiedTwice, "Column '%s' specified twice", c)
			}
			*pos = i
		}
	}
	for i, v := range values {
		if len(v) != m.n {
			return m, mysqlerr.New(mysqlerr.CodeWrongValueCount, "Column count doesn't match value count at row %d", i+1)
		}
	}
	return m, nil
}

// row converts one tuple.
func (m columnMap) row(def *model.TableDef, vals []model.Value, rowNum int) (insertRow, *model.Error) {
	var r insertRow
	if m.id >= 0 {
		id, set, e := idValue(def, vals[m.id], rowNum)
		if e != nil {
			return r, e
		}
		r.HasID, r.ID = set, id
	}
	if m.stub >= 0 {
		v := vals[m.stub]
		switch v.Kind {
		case model.ValDefault:
		case model.ValNull:
			if def.StubNotNull {
				return r, mysqlerr.BadNull(def.StubCol)
			}
			r.HasStub = true
		default:
			r.HasStub, r.Stub = true, model.ValueText(v)
		}
	}
	return r, nil
}

// idValue converts a value written for the id column. set is false when
// MySQL would generate the value (NULL, 0 or DEFAULT on an AUTO_INCREMENT
// column).
func idValue(def *model.TableDef, v model.Value, rowNum int) (id uint64, set bool, e *model.Error) {
	outOfRange := mysqlerr.OutOfRange(def.IDCol, rowNum)
	switch v.Kind {
	case model.ValNull:
		if def.AutoInc {
			return 0, false, nil
		}
		if def.IDNotNull {
			return 0, false, mysqlerr.BadNull(def.IDCol)
		}
		return 0, true, nil
	case model.ValDefault:
		if def.AutoInc {
			return 0, false, nil
		}
		return 0, false, mysqlerr.NoDefault(def.IDCol)
	case model.ValInt:
		if v.Int < 0 {
			if def.IDType.Unsigned {
				return 0, false, outOfRange
			}
			return 0, false, mysqlerr.NotSupported("negative ids")
		}
		id = uint64(v.Int)
	case model.ValUint:
		id = v.Uint
	case model.ValString:
		n, err := strconv.ParseUint(strings.TrimSpace(v.Str), 10, 64)
		if err != nil && func() bool { p, _ := rowengine.NumericPrefix(v.Str); return p != "" }() {
			// MariaDB rounds '5.5', cuts '5abc' with 1265, takes '-1':
			// ticketd's ticket tables take plain integers only.
			return 0, false, mysqlerr.NotSupported("a string that is not a plain integer as a ticket table's id")
		}
		if err != nil {
			return 0, false, mysqlerr.New(mysqlerr.CodeIncorrectValue, "Incorrect integer value: '%s' for column `%s`.`%s`.`%s` at row %d",
				v.Str, def.DB, def.Name, def.IDCol, rowNum)
		}
		id = n
	default:
		return 0, false, mysqlerr.NotSupported("non-integer ids")
	}
	if id > def.IDType.Max() {
		return 0, false, outOfRange
	}
	if id == 0 && def.AutoInc {
		return 0, false, nil
	}
	return id, true, nil
}

// CheckAssign accepts only assignments to the id column: a ticket table's
// stub is its identity, and ticketd does not rewrite it. The engine checks
// every ticket-table UPDATE and ON DUPLICATE KEY UPDATE with it; the wire
// also asks it before answering that a value is no id (MariaDB judges
// the column first).
func CheckAssign(def *model.TableDef, u *model.Update) *model.Error {
	if u.Column == "" || strings.EqualFold(u.Column, def.IDCol) {
		return nil
	}
	if def.StubCol != "" && strings.EqualFold(u.Column, def.StubCol) {
		return mysqlerr.NotSupported("updating the stub column")
	}
	return mysqlerr.UnknownColumn(u.Column, "SET")
}

// cond is a WHERE column = value test on rows.
type cond struct {
	onID bool
	id   uint64
	stub string
	none bool // the value cannot match any row
}

func makeCond(def *model.TableDef, col string, v model.Value) (cond, *model.Error) {
	switch {
	case strings.EqualFold(col, def.IDCol):
		switch v.Kind {
		case model.ValInt:
			return cond{onID: true, id: uint64(v.Int), none: v.Int < 0}, nil
		case model.ValUint:
			return cond{onID: true, id: v.Uint}, nil
		case model.ValString:
			n, err := strconv.ParseUint(strings.TrimSpace(v.Str), 10, 64)
			return cond{onID: true, id: n, none: err != nil}, nil
		default:
			return cond{none: true}, nil
		}
	case def.StubCol != "" && strings.EqualFold(col, def.StubCol):
		if v.Kind == model.ValNull {
			return cond{none: true}, nil
		}
		return cond{stub: model.ValueText(v)}, nil
	default:
		return cond{}, mysqlerr.UnknownColumn(col, "WHERE")
	}
}

func (c cond) match(r model.Row) bool {
	switch {
	case c.none:
		return false
	case c.onID:
		return r.ID == c.id
	default:
		return SameStub(r.Stub, c.stub)
	}
}

// SameStub compares stubs the way MySQL's default collation
// (utf8mb4_general_ci, PAD SPACE) does for a unique key: case-insensitive
// and ignoring trailing spaces. 'A' and 'a' are the same ticket row.
func SameStub(a, b string) bool {
	return strings.EqualFold(strings.TrimRight(a, " "), strings.TrimRight(b, " "))
}
