package wire

import (
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// information_schema's views of ticketd's tables (ticket tables, row
// tables, sequences): TABLES, COLUMNS, STATISTICS and KEY_COLUMN_USAGE,
// with MariaDB 10.11's columns, in its order, types and values
// (integration/differential_infoschema_test.go compares them), which
// Connector/J's DatabaseMetaData, ORMs' schema checks and GUI tools read.
// A view is materialised whole and filtered by selectRows with the
// select list's evaluator (catalog_eval.go).

// Column types of the views, as MariaDB sends them.
var (
	isStr  = column{}
	isText = column{typ: mysql.MYSQL_TYPE_BLOB}
	isU64  = column{typ: mysql.MYSQL_TYPE_LONGLONG, flag: mysql.UNSIGNED_FLAG}
	isI64  = column{typ: mysql.MYSQL_TYPE_LONGLONG}
	isU32  = column{typ: mysql.MYSQL_TYPE_LONG, flag: mysql.UNSIGNED_FLAG}
	isI32  = column{typ: mysql.MYSQL_TYPE_LONG}
	isTime = column{typ: mysql.MYSQL_TYPE_DATETIME}
)

// isCols names a view's columns, each typed as its kind.
func isCols(view string, spec ...any) []column {
	var out []column
	for i := 0; i < len(spec); i += 2 {
		c := spec[i+1].(column)
		c.name, c.table, c.db = spec[i].(string), view, "information_schema"
		out = append(out, c)
	}
	return out
}

// infoSchema materialises the information_schema view name.
func (s *session) infoSchema(name string) (*source, error) {
	var src *source
	var fill func(st ticket.Store, t *model.Table, src *source) error
	switch strings.ToUpper(name) {
	case "TABLES":
		src, fill = &source{rowset: rowset{cols: tablesCols}}, addTablesRow
	case "COLUMNS":
		src, fill = &source{rowset: rowset{cols: columnsCols}}, addColumnsRows
	case "STATISTICS":
		src, fill = &source{rowset: rowset{cols: statisticsCols}}, addStatisticsRows
	case "KEY_COLUMN_USAGE":
		src, fill = &source{rowset: rowset{cols: keyColumnUsageCols}}, addKeyColumnUsageRows
	case "SCHEMATA":
		return s.infoSchemata()
	case "TABLE_CONSTRAINTS":
		src, fill = &source{rowset: rowset{cols: tableConstraintsCols}}, addTableConstraintsRows
	case "REFERENTIAL_CONSTRAINTS", "CHECK_CONSTRAINTS", "VIEWS", "TRIGGERS", "ROUTINES":
		// ticketd has none of these: no foreign keys or CHECK (both
		// 1235), views, triggers or stored routines.
		return &source{rowset: rowset{cols: emptyViews[strings.ToUpper(name)]}, catalog: true}, nil
	default:
		return nil, unsupported("information_schema." + strings.ToUpper(name) + " (ticketd has SCHEMATA, TABLES, COLUMNS, STATISTICS, KEY_COLUMN_USAGE, TABLE_CONSTRAINTS, REFERENTIAL_CONSTRAINTS, CHECK_CONSTRAINTS, VIEWS, TRIGGERS and ROUTINES)")
	}
	src.catalog = true
	err := s.view(func(st ticket.Store) error {
		dbs, err := st.Databases()
		if err != nil {
			return err
		}
		for _, db := range dbs {
			names, err := st.Tables(db)
			if err != nil {
				return err
			}
			for _, n := range names {
				t, err := st.Table(db, n)
				if err != nil || t == nil {
					return err
				}
				if err := fill(st, t, src); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return src, err
}

var schemataCols = isCols("SCHEMATA",
	"CATALOG_NAME", isStr, "SCHEMA_NAME", isStr, "DEFAULT_CHARACTER_SET_NAME", isStr,
	"DEFAULT_COLLATION_NAME", isStr, "SQL_PATH", isStr, "SCHEMA_COMMENT", isStr)

// infoSchemata is SCHEMATA: information_schema and the databases (every
// database is utf8mb4_general_ci, as SHOW CREATE DATABASE says).
func (s *session) infoSchemata() (*source, error) {
	src := &source{rowset: rowset{cols: schemataCols}, catalog: true}
	src.add("def", "information_schema", "utf8mb3", "utf8mb3_general_ci", nil, "")
	err := s.view(func(st ticket.Store) error {
		dbs, err := st.Databases()
		for _, db := range dbs {
			src.add("def", db, "utf8mb4", "utf8mb4_general_ci", nil, "")
		}
		return err
	})
	return src, err
}

// emptyViews are the columns of the views ticketd has no rows for.
var emptyViews = map[string][]column{
	"REFERENTIAL_CONSTRAINTS": isCols("REFERENTIAL_CONSTRAINTS",
		"CONSTRAINT_CATALOG", isStr, "CONSTRAINT_SCHEMA", isStr, "CONSTRAINT_NAME", isStr,
		"UNIQUE_CONSTRAINT_CATALOG", isStr, "UNIQUE_CONSTRAINT_SCHEMA", isStr, "UNIQUE_CONSTRAINT_NAME", isStr,
		"MATCH_OPTION", isStr, "UPDATE_RULE", isStr, "DELETE_RULE", isStr, "TABLE_NAME", isStr, "REFERENCED_TABLE_NAME", isStr),
	"CHECK_CONSTRAINTS": isCols("CHECK_CONSTRAINTS",
		"CONSTRAINT_CATALOG", isStr, "CONSTRAINT_SCHEMA", isStr, "TABLE_NAME", isStr, "CONSTRAINT_NAME", isStr,
		"LEVEL", isStr, "CHECK_CLAUSE", isText),
	"VIEWS": isCols("VIEWS",
		"TABLE_CATALOG", isStr, "TABLE_SCHEMA", isStr, "TABLE_NAME", isStr, "VIEW_DEFINITION", isText,
		"CHECK_OPTION", isStr, "IS_UPDATABLE", isStr, "DEFINER", isStr, "SECURITY_TYPE", isStr,
		"CHARACTER_SET_CLIENT", isStr, "COLLATION_CONNECTION", isStr, "ALGORITHM", isStr),
	"TRIGGERS": isCols("TRIGGERS",
		"TRIGGER_CATALOG", isStr, "TRIGGER_SCHEMA", isStr, "TRIGGER_NAME", isStr, "EVENT_MANIPULATION", isStr,
		"EVENT_OBJECT_CATALOG", isStr, "EVENT_OBJECT_SCHEMA", isStr, "EVENT_OBJECT_TABLE", isStr, "ACTION_ORDER", isI64,
		"ACTION_CONDITION", isText, "ACTION_STATEMENT", isText, "ACTION_ORIENTATION", isStr, "ACTION_TIMING", isStr,
		"ACTION_REFERENCE_OLD_TABLE", isStr, "ACTION_REFERENCE_NEW_TABLE", isStr, "ACTION_REFERENCE_OLD_ROW", isStr,
		"ACTION_REFERENCE_NEW_ROW", isStr, "CREATED", isTime, "SQL_MODE", isStr, "DEFINER", isStr,
		"CHARACTER_SET_CLIENT", isStr, "COLLATION_CONNECTION", isStr, "DATABASE_COLLATION", isStr),
	"ROUTINES": isCols("ROUTINES",
		"SPECIFIC_NAME", isStr, "ROUTINE_CATALOG", isStr, "ROUTINE_SCHEMA", isStr, "ROUTINE_NAME", isStr,
		"ROUTINE_TYPE", isStr, "DATA_TYPE", isStr, "CHARACTER_MAXIMUM_LENGTH", isI32, "CHARACTER_OCTET_LENGTH", isI32,
		"NUMERIC_PRECISION", isI32, "NUMERIC_SCALE", isI32, "DATETIME_PRECISION", isU64, "CHARACTER_SET_NAME", isStr,
		"COLLATION_NAME", isStr, "DTD_IDENTIFIER", isText, "ROUTINE_BODY", isStr, "ROUTINE_DEFINITION", isText,
		"EXTERNAL_NAME", isStr, "EXTERNAL_LANGUAGE", isStr, "PARAMETER_STYLE", isStr, "IS_DETERMINISTIC", isStr,
		"SQL_DATA_ACCESS", isStr, "SQL_PATH", isStr, "SECURITY_TYPE", isStr, "CREATED", isTime, "LAST_ALTERED", isTime,
		"SQL_MODE", isStr, "ROUTINE_COMMENT", isText, "DEFINER", isStr, "CHARACTER_SET_CLIENT", isStr,
		"COLLATION_CONNECTION", isStr, "DATABASE_COLLATION", isStr),
}

var tableConstraintsCols = isCols("TABLE_CONSTRAINTS",
	"CONSTRAINT_CATALOG", isStr, "CONSTRAINT_SCHEMA", isStr, "CONSTRAINT_NAME", isStr, "TABLE_SCHEMA", isStr,
	"TABLE_NAME", isStr, "CONSTRAINT_TYPE", isStr)

// addTableConstraintsRows is a table's primary and unique keys.
func addTableConstraintsRows(_ ticket.Store, t *model.Table, src *source) error {
	for _, k := range catKeys(t) {
		switch {
		case k.primary:
			src.add("def", t.Def.DB, k.name, t.Def.DB, t.Def.Name, "PRIMARY KEY")
		case k.unique:
			src.add("def", t.Def.DB, k.name, t.Def.DB, t.Def.Name, "UNIQUE")
		}
	}
	return nil
}

var tablesCols = isCols("TABLES",
	"TABLE_CATALOG", isStr, "TABLE_SCHEMA", isStr, "TABLE_NAME", isStr, "TABLE_TYPE", isStr, "ENGINE", isStr,
	"VERSION", isU64, "ROW_FORMAT", isStr, "TABLE_ROWS", isU64, "AVG_ROW_LENGTH", isU64, "DATA_LENGTH", isU64,
	"MAX_DATA_LENGTH", isU64, "INDEX_LENGTH", isU64, "DATA_FREE", isU64, "AUTO_INCREMENT", isU64,
	"CREATE_TIME", isTime, "UPDATE_TIME", isTime, "CHECK_TIME", isTime, "TABLE_COLLATION", isStr,
	"CHECKSUM", isU64, "CREATE_OPTIONS", isStr, "TABLE_COMMENT", isStr, "MAX_INDEX_LENGTH", isU64, "TEMPORARY", isStr)

// addTablesRow is a table's row of TABLES; its sizes are SHOW TABLE
// STATUS's (a row counted as 9 bytes), which no storage engine's match.
func addTablesRow(st ticket.Store, t *model.Table, src *source) error {
	n, err := tableRowCount(st, t)
	if err != nil {
		return err
	}
	var ai any
	if v := autoIncValue(t); v != nil {
		ai = v
	}
	src.add("def", t.Def.DB, t.Def.Name, tableType(t), t.Def.Engine, uint64(10), "Fixed",
		n, uint64(9), 9*n, uint64(0), uint64(0), uint64(0), ai,
		nil, nil, nil, t.Def.Collation().String(), nil, "", t.Def.Comment, uint64(0), "N")
	return nil
}

var columnsCols = isCols("COLUMNS",
	"TABLE_CATALOG", isStr, "TABLE_SCHEMA", isStr, "TABLE_NAME", isStr, "COLUMN_NAME", isStr,
	"ORDINAL_POSITION", isU64, "COLUMN_DEFAULT", isText, "IS_NULLABLE", isStr, "DATA_TYPE", isStr,
	"CHARACTER_MAXIMUM_LENGTH", isU64, "CHARACTER_OCTET_LENGTH", isU64, "NUMERIC_PRECISION", isU64,
	"NUMERIC_SCALE", isU64, "DATETIME_PRECISION", isU64, "CHARACTER_SET_NAME", isStr, "COLLATION_NAME", isStr,
	"COLUMN_TYPE", isText, "COLUMN_KEY", isStr, "EXTRA", isStr, "PRIVILEGES", isStr, "COLUMN_COMMENT", isStr,
	"IS_GENERATED", isStr, "GENERATION_EXPRESSION", isText)

// catColumn is one column of a table as COLUMNS describes it.
type catColumn struct {
	name, colType string
	// def is COLUMN_DEFAULT as MariaDB 10.2+ writes it: a string or
	// date quoted, a number bare, current_timestamp(), the string NULL
	// for a nullable column without another default, SQL NULL for a
	// NOT NULL column without one.
	def      any
	nullable bool
	intType  *model.IntType // an integer column's type
	charLen  int            // CHAR/VARCHAR's length in characters
	coll     model.Collation
	temporal model.ColKind // ColDate, ColDateTime, ColTimestamp; 0 otherwise
	key      string        // PRI, UNI, MUL or ""
	extra    string
	comment  string
}

// numericPrecision is MariaDB's NUMERIC_PRECISION of each integer type.
var numericPrecision = map[model.IntKind][2]uint64{ // {signed, unsigned}
	model.TinyInt: {3, 3}, model.SmallInt: {5, 5}, model.MediumInt: {7, 8}, model.Int: {10, 10}, model.BigInt: {19, 20},
}

func addColumnsRows(_ ticket.Store, t *model.Table, src *source) error {
	for i, c := range catColumns(t) {
		nullable := "NO"
		if c.nullable {
			nullable = "YES"
		}
		dataType := c.colType
		if j := strings.IndexAny(dataType, "( "); j >= 0 {
			dataType = dataType[:j]
		}
		var charMax, octets, prec, scale, dtPrec, charset, coll any
		switch {
		case c.intType != nil:
			p := numericPrecision[c.intType.Kind]
			if c.intType.Unsigned {
				prec = p[1]
			} else {
				prec = p[0]
			}
			scale = uint64(0)
		case c.charLen > 0 || strings.HasPrefix(dataType, "char") || strings.HasPrefix(dataType, "varchar"):
			per := uint64(4)
			if c.coll.MB3() {
				per = 3
			}
			charMax, octets = uint64(c.charLen), uint64(c.charLen)*per
			charset, coll = c.coll.Charset(), c.coll.String()
		case c.temporal == model.ColDateTime || c.temporal == model.ColTimestamp:
			dtPrec = uint64(0)
		}
		src.add("def", t.Def.DB, t.Def.Name, c.name, uint64(i+1), c.def, nullable, dataType,
			charMax, octets, prec, scale, dtPrec, charset, coll, c.colType, c.key, c.extra,
			"select,insert,update,references", c.comment, "NEVER", nil)
	}
	return nil
}

// catColumns describes t's columns in their order.
func catColumns(t *model.Table) []catColumn {
	d := &t.Def
	switch {
	case d.Seq != nil:
		return sequenceCatColumns
	case d.Rows != nil:
		return rowCatColumns(d)
	}
	keyOf := func(k string) string {
		switch k {
		case "":
			return ""
		case model.PrimaryKey:
			return "PRI"
		}
		return "UNI"
	}
	idType := d.IDType
	id := catColumn{name: d.IDCol, colType: idType.SQL(), nullable: !d.IDNotNull, intType: &idType, key: keyOf(d.IDKey)}
	if d.AutoInc {
		id.extra = "auto_increment"
	} else if id.nullable {
		id.def = "NULL"
	}
	if d.StubCol == "" {
		return []catColumn{id}
	}
	stub := catColumn{name: d.StubCol, colType: d.StubType, nullable: !d.StubNotNull, charLen: d.StubLen,
		coll: d.Collation(), key: keyOf(d.StubKey), def: "NULL"}
	if d.StubNotNull {
		stub.def = sqlQuote(d.StubDefault)
	}
	if d.StubFirst {
		return []catColumn{stub, id}
	}
	return []catColumn{id, stub}
}

// rowCatColumns describes a row table's columns.
func rowCatColumns(d *model.TableDef) []catColumn {
	rd := d.Rows
	out := make([]catColumn, len(rd.Cols))
	for i := range rd.Cols {
		c := &rd.Cols[i]
		cc := catColumn{name: c.Name, colType: c.Type, nullable: !c.NotNull, comment: c.Comment, key: rowKeyOf(rd, i)}
		switch c.Kind {
		case model.ColInt:
			it := c.Int
			cc.intType = &it
		case model.ColString:
			cc.charLen, cc.coll = c.Len, d.ColCollation(c)
		default:
			cc.temporal = c.Kind
		}
		switch {
		case c.AutoInc:
			cc.extra = "auto_increment"
		case c.OnUpdateNow:
			cc.extra = "on update current_timestamp()"
		}
		switch {
		case c.AutoInc:
		case c.DefaultNow:
			cc.def = "current_timestamp()"
		case c.HasDefault && !c.Default.Null:
			if c.Kind == model.ColInt {
				cc.def = c.Default.S
			} else {
				cc.def = sqlQuote(c.Default.S)
			}
		case !c.NotNull:
			cc.def = "NULL"
		}
		out[i] = cc
	}
	return out
}

// rowKeyOf is COLUMN_KEY (and SHOW COLUMNS' Key) of a row table's
// column i, as MariaDB derives it: PRI for every column of the primary
// key, UNI for the column of a one-column unique key, MUL for the first
// column of another key.
func rowKeyOf(rd *model.RowsDef, i int) string {
	for _, k := range rd.Keys {
		if k.Primary && slices.Contains(k.Cols, i) {
			return "PRI"
		}
	}
	for _, k := range rd.Keys {
		if k.Unique && len(k.Cols) == 1 && k.Cols[0] == i {
			return "UNI"
		}
	}
	for _, k := range rd.Keys {
		if k.Cols[0] == i {
			return "MUL"
		}
	}
	return ""
}

// sequenceCatColumns are a sequence's columns as MariaDB declares them.
var sequenceCatColumns = func() []catColumn {
	big, bigU, tinyU := model.IntType{Kind: model.BigInt, Width: 21}, model.IntType{Kind: model.BigInt, Width: 21, Unsigned: true},
		model.IntType{Kind: model.TinyInt, Width: 1, Unsigned: true}
	col := func(name string, it *model.IntType, comment string) catColumn {
		return catColumn{name: name, colType: it.SQL(), intType: it, comment: comment}
	}
	return []catColumn{
		col("next_not_cached_value", &big, ""), col("minimum_value", &big, ""), col("maximum_value", &big, ""),
		col("start_value", &big, "start value when sequences is created or value if RESTART is used"),
		col("increment", &big, "increment value"), col("cache_size", &bigU, ""),
		col("cycle_option", &tinyU, "0 if no cycles are allowed, 1 if the sequence should begin a new cycle when maximum_value is passed"),
		col("cycle_count", &big, "How many cycles have been done"),
	}
}()

// sqlQuote is a string literal as MariaDB writes a default: quoted, a
// quote doubled.
func sqlQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// catKey is one key of a table: its name, uniqueness and columns.
type catKey struct {
	name     string
	primary  bool
	unique   bool
	cols     []string
	nullable []bool
}

// catKeys lists t's keys in MariaDB's order: the primary key, unique
// keys of NOT NULL columns, other unique keys, the rest, each group in
// the order of definition.
func catKeys(t *model.Table) []catKey {
	d := &t.Def
	switch {
	case d.Seq != nil:
		return nil
	case d.Rows != nil:
		var out []catKey
		var rank []int
		for _, k := range d.Rows.Keys {
			ck := catKey{name: k.Name, primary: k.Primary, unique: k.Unique || k.Primary}
			r := 3
			switch {
			case k.Primary:
				r = 0
			case ck.unique:
				r = 1
			}
			for _, c := range k.Cols {
				ck.cols = append(ck.cols, d.Rows.Cols[c].Name)
				ck.nullable = append(ck.nullable, !d.Rows.Cols[c].NotNull)
				if r == 1 && !d.Rows.Cols[c].NotNull {
					r = 2
				}
			}
			out, rank = append(out, ck), append(rank, r)
		}
		idx := make([]int, len(out))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return rank[a] - rank[b] })
		sorted := make([]catKey, len(out))
		for i, j := range idx {
			sorted[i] = out[j]
		}
		return sorted
	}
	var out []catKey
	if d.IDKey != "" {
		out = append(out, catKey{name: d.IDKey, primary: d.IDKey == model.PrimaryKey, unique: true, cols: []string{d.IDCol}, nullable: []bool{!d.IDNotNull}})
	}
	if d.StubKey != "" {
		out = append(out, catKey{name: d.StubKey, unique: true, cols: []string{d.StubCol}, nullable: []bool{!d.StubNotNull}})
	}
	return out
}

var statisticsCols = isCols("STATISTICS",
	"TABLE_CATALOG", isStr, "TABLE_SCHEMA", isStr, "TABLE_NAME", isStr, "NON_UNIQUE", isI64,
	"INDEX_SCHEMA", isStr, "INDEX_NAME", isStr, "SEQ_IN_INDEX", isU32, "COLUMN_NAME", isStr,
	"COLLATION", isStr, "CARDINALITY", isI64, "SUB_PART", isI64, "PACKED", isStr, "NULLABLE", isStr,
	"INDEX_TYPE", isStr, "COMMENT", isStr, "INDEX_COMMENT", isStr, "IGNORED", isStr)

// addStatisticsRows is a table's keys in STATISTICS, a row per key column.
// CARDINALITY is the row count for a unique key's last column (what
// MyISAM keeps exact; InnoDB estimates), and for the others.
func addStatisticsRows(st ticket.Store, t *model.Table, src *source) error {
	keys := catKeys(t)
	if len(keys) == 0 {
		return nil
	}
	n, err := tableRowCount(st, t)
	if err != nil {
		return err
	}
	for _, k := range keys {
		nonUnique := int64(1)
		if k.unique {
			nonUnique = 0
		}
		for i, c := range k.cols {
			null := ""
			if k.nullable[i] {
				null = "YES"
			}
			src.add("def", t.Def.DB, t.Def.Name, nonUnique, t.Def.DB, k.name, uint64(i+1), c, "A",
				int64(n), nil, nil, null, "BTREE", "", "", "NO")
		}
	}
	return nil
}

var keyColumnUsageCols = isCols("KEY_COLUMN_USAGE",
	"CONSTRAINT_CATALOG", isStr, "CONSTRAINT_SCHEMA", isStr, "CONSTRAINT_NAME", isStr, "TABLE_CATALOG", isStr,
	"TABLE_SCHEMA", isStr, "TABLE_NAME", isStr, "COLUMN_NAME", isStr, "ORDINAL_POSITION", isI64,
	"POSITION_IN_UNIQUE_CONSTRAINT", isI64, "REFERENCED_TABLE_SCHEMA", isStr, "REFERENCED_TABLE_NAME", isStr,
	"REFERENCED_COLUMN_NAME", isStr)

// addKeyColumnUsageRows is a table's primary and unique keys (ticketd has
// no foreign keys), a row per key column.
func addKeyColumnUsageRows(_ ticket.Store, t *model.Table, src *source) error {
	for _, k := range catKeys(t) {
		if !k.unique {
			continue
		}
		for i, c := range k.cols {
			src.add("def", t.Def.DB, k.name, "def", t.Def.DB, t.Def.Name, c, int64(i+1), nil, nil, nil, nil)
		}
	}
	return nil
}
