package wire

import (
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// Row tables (ticket/rowengine/rows.go) at the protocol: their result columns, the
// UPDATE and DELETE commands in row form, and a transaction's own writes.
//
// Writes apply at the statement, as with MyISAM: COMMIT has nothing to
// make durable and ROLLBACK cannot undo them (warning 1196). What a
// transaction does get is its own writes: until it ends, a session's
// SELECT of a row table shows the rows its INSERTs and UPDATEs left, as
// those statements wrote them, over whatever other sessions wrote since.
// That is what InnoDB's row lock gives Leaf-segment's UPDATE ... max_id =
// max_id + step; SELECT max_id in one transaction: without it, two Leaf
// servers whose UPDATEs land back to back would both read the second
// value and hand out the same segment.

// inTxn reports an open transaction: BEGIN, or autocommit off.
func (s *session) inTxn() bool {
	return s.conn.HasStatus(mysql.SERVER_STATUS_IN_TRANS) || !s.conn.HasStatus(mysql.SERVER_STATUS_AUTOCOMMIT)
}

// remember keeps the rows a write left, for the rest of the transaction
// (ticket.Session.Remember).
func (s *session) remember(db, table string, images [][]model.Datum) {
	if s.inTxn() {
		s.ts.Remember(db, table, images)
	}
}

// endTxn forgets the transaction's writes.
func (s *session) endTxn() { s.ts.EndTxn() }

// rowsSource is a row table as a FROM source: its columns and the bound
// WHERE. selectRowTable reads its rows through the row engine
// (ticket.Session.Select), with the session's own writes over them.
func (s *session) rowsSource(tb *model.Table, filter *model.RowExpr) *source {
	return &source{rowTable: tb, pred: filter, rowset: rowset{cols: s.rowCols.of(tb)}}
}

// rowColsMemo holds the result columns of the row table a session read
// last, which the next statement on it reuses. A RowsDef is never changed
// once stored (a schema change stores a new one), so the same RowsDef of
// the same table has the same columns. The columns are shared: callers
// copy before changing one.
type rowColsMemo struct {
	rd       *model.RowsDef
	db, name string
	cols     []column
}

// of is tb's result columns, named as in tb.
func (m *rowColsMemo) of(tb *model.Table) []column {
	if m.rd == tb.Def.Rows && m.db == tb.Def.DB && m.name == tb.Def.Name {
		return m.cols
	}
	cols := rowsColumns(&tb.Def)
	for i := range cols {
		cols[i].table, cols[i].db = tb.Def.Name, tb.Def.DB
	}
	*m = rowColsMemo{rd: tb.Def.Rows, db: tb.Def.DB, name: tb.Def.Name, cols: cols}
	return cols
}

// tableRowCount is how many rows a table holds.
func tableRowCount(st ticket.Store, t *model.Table) (uint64, error) {
	if t.Def.Rows == nil {
		return uint64(len(t.Rows)), nil
	}
	rows, err := st.Rows(t.Def.DB, t.Def.Name)
	if err != nil || rows == nil {
		return 0, err
	}
	return uint64(rows.Len()), nil
}

// rowsColumns are a row table's result columns.
func rowsColumns(d *model.TableDef) []column {
	cols := make([]column, len(d.Rows.Cols))
	for i, c := range d.Rows.Cols {
		cols[i] = rowColumn(d, &c)
	}
	return cols
}

// rowColumn is a row table's column as a result column, with MariaDB's
// type and unsigned flag for it: a client reading binary rows takes each
// value's size and signedness from them (a BIGINT UNSIGNED above 2^63
// read as signed is negative). A string of a _bin collation has
// BINARY_FLAG, as MariaDB sends it.
func rowColumn(d *model.TableDef, c *model.RowCol) column {
	col := column{name: c.Name, typ: colType(c.Kind)}
	switch c.Kind {
	case model.ColInt:
		col.typ = intColType[c.Int.Kind]
		if c.Int.Unsigned {
			col.flag = mysql.UNSIGNED_FLAG
		}
	case model.ColString:
		if strings.HasPrefix(c.Type, "char") {
			col.typ = mysql.MYSQL_TYPE_STRING
		}
		if d.ColCollation(c).Bin() {
			col.flag = mysql.BINARY_FLAG
		}
	case model.ColTimestamp:
		col.flag = mysql.UNSIGNED_FLAG | mysql.BINARY_FLAG // as MariaDB flags TIMESTAMP
	}
	return col
}

// intColType is the protocol type of each integer column type.
var intColType = map[model.IntKind]uint8{
	model.TinyInt: mysql.MYSQL_TYPE_TINY, model.SmallInt: mysql.MYSQL_TYPE_SHORT,
	model.MediumInt: mysql.MYSQL_TYPE_INT24, model.Int: mysql.MYSQL_TYPE_LONG, model.BigInt: mysql.MYSQL_TYPE_LONGLONG,
}

func colType(k model.ColKind) uint8 {
	switch k {
	case model.ColInt:
		return mysql.MYSQL_TYPE_LONGLONG
	case model.ColDate:
		return mysql.MYSQL_TYPE_DATE
	case model.ColDateTime:
		return mysql.MYSQL_TYPE_DATETIME
	case model.ColTimestamp:
		return mysql.MYSQL_TYPE_TIMESTAMP
	}
	return mysql.MYSQL_TYPE_VAR_STRING
}

// datumValue is a stored value as the result set code takes it.
func datumValue(c *model.RowCol, d model.Datum) any {
	if d.Null {
		return nil
	}
	if c.Kind == model.ColInt {
		if n, err := strconv.ParseInt(d.S, 10, 64); err == nil {
			return n
		}
		if n, err := strconv.ParseUint(d.S, 10, 64); err == nil {
			return n
		}
	}
	return d.S
}
