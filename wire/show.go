package wire

import (
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

func (s *session) show(p *sql.Show, bin bool) (*mysql.Result, error) {
	var rs rowset
	var err error
	switch p.Kind {
	case sql.ShowDatabases:
		rs.cols = strCols("Database")
		err = s.view(func(st ticket.Store) error {
			dbs, err := st.Databases()
			rs.add("information_schema")
			for _, d := range dbs {
				rs.add(d)
			}
			return err
		})
	case sql.ShowTables:
		err = s.showTables(p, &rs)
	case sql.ShowVariables:
		s.showVariables(p, &rs)
	case sql.ShowStatus:
		rs.cols = strCols("Variable_name", "Value")
		rs.add("Uptime", strconv.FormatInt(int64(timeSince(s.srv.start)), 10))
		s.srv.mu.Lock()
		rs.add("Threads_connected", strconv.Itoa(len(s.srv.conns)))
		s.srv.mu.Unlock()
		// Clients check these to see that their connection is TLS
		// (empty on a plain one, as in MariaDB).
		rs.add("Ssl_cipher", s.login.TLSCipher)
		rs.add("Ssl_version", s.login.TLSVersion)
	case sql.ShowTableStatus:
		err = s.showTableStatus(p, &rs)
	case sql.ShowCreateTable:
		var t *model.Table
		if t, err = s.showTable(p.Table); err == nil {
			rs.cols = strCols("Table", "Create Table")
			rs.add(t.Def.Name, createStatement(t))
		}
	case sql.ShowCreateSequence:
		err = s.showCreateSequence(p, &rs)
	case sql.ShowCreateDatabase:
		if err = s.checkDB(p.DB); err == nil {
			rs.cols = strCols("Database", "Create Database")
			rs.add(p.DB, ticket.CreateDatabaseStatement(p.DB))
		}
	case sql.ShowColumns:
		err = s.showColumns(p, &rs)
	case sql.ShowIndex:
		err = s.showIndex(p, &rs)
	case sql.ShowEngines:
		rs.cols = strCols("Engine", "Support", "Comment", "Transactions", "XA", "Savepoints")
		rs.add("MyISAM", "DEFAULT", "ticketd: Raft-replicated ticket counters", "NO", "NO", "NO")
		rs.add("InnoDB", "YES", "ticketd: Raft-replicated ticket counters", "NO", "NO", "NO")
	case sql.ShowCharset:
		rs.cols = strCols("Charset", "Description", "Default collation", "Maxlen")
		rs.add("utf8mb4", "UTF-8 Unicode", "utf8mb4_general_ci", int64(4))
	case sql.ShowCollation:
		rs.cols = strCols("Collation", "Charset", "Id", "Default", "Compiled", "Sortlen")
		rs.add("utf8mb4_general_ci", "utf8mb4", int64(45), "Yes", "Yes", int64(1))
	case sql.ShowGrants:
		err = s.showGrants(p, &rs)
	case sql.ShowProcessList:
		rs.cols = strCols("Id", "User", "Host", "db", "Command", "Time", "State", "Info")
		rs.add(uint64(s.id), s.user, s.conn.RemoteAddr().String(), nullable(s.db), "Query", int64(0), "", "SHOW PROCESSLIST")
	default:
		return nil, unsupported("SHOW statement of kind " + strconv.Itoa(int(p.Kind)))
	}
	if err != nil {
		return nil, err
	}
	if p.HasLike && len(rs.cols) > 0 && p.Kind != sql.ShowTables && p.Kind != sql.ShowTableStatus {
		like := s.likeFilter(p.Like)
		rs.rows = filterRows(rs.rows, func(r []any) bool { t, _ := textValue(r[0]); return like(t) })
		if p.Kind == sql.ShowStatus && len(rs.rows) == 0 {
			// MariaDB has hundreds of status variables (Handler_*, Com_*,
			// ...); ticketd has these four, and an empty answer would say
			// the asked ones do not exist.
			return nil, unsupported("status variables other than Uptime, Threads_connected, Ssl_cipher and Ssl_version")
		}
	}
	if len(p.Where) > 0 {
		if err := s.filterShow(&rs, p); err != nil {
			return nil, err
		}
	}
	return rs.result(bin, &s.srv.fields), nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func filterRows(rows [][]any, keep func([]any) bool) [][]any {
	out := rows[:0]
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// checkDB answers 1049 for a database the local replica does not have.
func (s *session) checkDB(db string) error {
	var ok bool
	if err := s.view(func(st ticket.Store) (err error) {
		ok, err = st.Database(db)
		return err
	}); err != nil {
		return err
	}
	if !ok {
		return mysqlerr.UnknownDB(db)
	}
	return nil
}

func (s *session) showDB(db string) (string, error) {
	if db != "" {
		return db, s.checkDB(db)
	}
	if s.db == "" {
		return "", errNoDB()
	}
	return s.db, nil
}

func (s *session) showTable(t sql.TableName) (*model.Table, error) {
	db, err := s.dbFor(t)
	if err != nil {
		return nil, err
	}
	return s.table(db, t.Name)
}

func (s *session) showTables(p *sql.Show, rs *rowset) error {
	db, err := s.showDB(p.DB)
	if err != nil {
		return err
	}
	label := "Tables_in_" + db
	if p.HasLike {
		label += " (" + p.Like + ")"
	}
	rs.cols = strCols(label)
	if p.Full {
		rs.cols = strCols(label, "Table_type")
	}
	like := s.likeAll(p.HasLike, p.Like)
	return s.view(func(st ticket.Store) error {
		names, err := st.Tables(db)
		for _, n := range names {
			if !like(n) {
				continue
			}
			if p.Full {
				t, err := st.Table(db, n)
				if err != nil || t == nil {
					return err
				}
				rs.add(n, tableType(t))
			} else {
				rs.add(n)
			}
		}
		return err
	})
}

func (s *session) showVariables(p *sql.Show, rs *rowset) {
	rs.cols = strCols("Variable_name", "Value")
	like := s.likeAll(p.HasLike, p.Like)
	for _, n := range sortedVarNames(s.vars) {
		if !like(n) {
			continue
		}
		v, err := s.sysVar(n, p.Scope, 0)
		if err != nil {
			continue
		}
		t, _ := textValue(v)
		rs.add(n, t)
	}
}

func (s *session) showTableStatus(p *sql.Show, rs *rowset) error {
	db, err := s.showDB(p.DB)
	if err != nil {
		return err
	}
	rs.cols = []column{{name: "Name"}, {name: "Engine"}, {name: "Version", typ: mysql.MYSQL_TYPE_LONGLONG},
		{name: "Row_format"}, {name: "Rows", typ: mysql.MYSQL_TYPE_LONGLONG},
		{name: "Avg_row_length", typ: mysql.MYSQL_TYPE_LONGLONG}, {name: "Data_length", typ: mysql.MYSQL_TYPE_LONGLONG},
		{name: "Max_data_length", typ: mysql.MYSQL_TYPE_LONGLONG}, {name: "Index_length", typ: mysql.MYSQL_TYPE_LONGLONG},
		{name: "Data_free", typ: mysql.MYSQL_TYPE_LONGLONG}, {name: "Auto_increment", typ: mysql.MYSQL_TYPE_LONGLONG},
		{name: "Create_time"}, {name: "Update_time"}, {name: "Check_time"}, {name: "Collation"},
		{name: "Checksum", typ: mysql.MYSQL_TYPE_LONGLONG}, {name: "Create_options"}, {name: "Comment"}}
	like := s.likeAll(p.HasLike, p.Like)
	return s.view(func(st ticket.Store) error {
		names, err := st.Tables(db)
		if err != nil {
			return err
		}
		for _, n := range names {
			if !like(n) {
				continue
			}
			t, err := st.Table(db, n)
			if err != nil || t == nil {
				return err
			}
			rows, err := tableRowCount(st, t)
			if err != nil {
				return err
			}
			rs.add(n, t.Def.Engine, int64(10), "Fixed", rows, int64(9), int64(9*rows), int64(0), int64(0), int64(0),
				autoIncValue(t), nil, nil, nil, t.Def.Collation().String(), nil, "", t.Def.Comment)
		}
		return nil
	})
}

// showColumns is SHOW [FULL] COLUMNS (and DESCRIBE): COLUMNS' rows of
// the table (catColumns), with the default unquoted, as MariaDB shows it.
func (s *session) showColumns(p *sql.Show, rs *rowset) error {
	t, err := s.showTable(p.Table)
	if err != nil {
		return err
	}
	rs.cols = strCols("Field", "Type", "Null", "Key", "Default", "Extra")
	if p.Full {
		rs.cols = strCols("Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment")
	}
	like := s.likeAll(p.HasLike, p.Like)
	for _, c := range catColumns(t) {
		if !like(c.name) {
			continue
		}
		null := "NO"
		if c.nullable {
			null = "YES"
		}
		var def any
		if d, ok := c.def.(string); ok && d != "NULL" {
			def = d
			if len(d) >= 2 && d[0] == '\'' && d[len(d)-1] == '\'' {
				def = strings.ReplaceAll(d[1:len(d)-1], "''", "'")
			}
		}
		if p.Full {
			var coll any
			if c.intType == nil && c.temporal == 0 {
				coll = c.coll.String()
			}
			rs.add(c.name, c.colType, coll, null, c.key, def, c.extra, "select,insert,update,references", c.comment)
		} else {
			rs.add(c.name, c.colType, null, c.key, def, c.extra)
		}
	}
	p.HasLike = false
	return nil
}

// showIndex is SHOW INDEX: STATISTICS' rows of the table (catKeys),
// in MariaDB 10.11's columns.
func (s *session) showIndex(p *sql.Show, rs *rowset) error {
	t, err := s.showTable(p.Table)
	if err != nil {
		return err
	}
	rs.cols = []column{{name: "Table"}, {name: "Non_unique", typ: mysql.MYSQL_TYPE_LONGLONG}, {name: "Key_name"},
		{name: "Seq_in_index", typ: mysql.MYSQL_TYPE_LONG, flag: mysql.UNSIGNED_FLAG}, {name: "Column_name"}, {name: "Collation"},
		{name: "Cardinality", typ: mysql.MYSQL_TYPE_LONGLONG}, {name: "Sub_part", typ: mysql.MYSQL_TYPE_LONGLONG}, {name: "Packed"},
		{name: "Null"}, {name: "Index_type"}, {name: "Comment"}, {name: "Index_comment"}, {name: "Ignored"}}
	var src source
	src.cols = statisticsCols
	if err := s.view(func(st ticket.Store) error { return addStatisticsRows(st, t, &src) }); err != nil {
		return err
	}
	for _, r := range src.rows {
		// TABLE_CATALOG, TABLE_SCHEMA and INDEX_SCHEMA are not shown.
		rs.add(append([]any{r[2], r[3]}, r[5:]...)...)
	}
	return nil
}

// showWarnings answers SHOW WARNINGS / SHOW ERRORS from the last
// statement's diagnostics, which it leaves in place.
func (s *session) showWarnings(p *sql.Show, bin bool) (*mysql.Result, error) {
	rs := rowset{cols: []column{{name: "Level"}, {name: "Code", typ: mysql.MYSQL_TYPE_LONGLONG}, {name: "Message"}}}
	for _, w := range s.warnings {
		if p.Kind == sql.ShowErrors && w.Level != "Error" {
			continue
		}
		rs.add(w.Level, int64(w.Code), w.Message)
	}
	return rs.result(bin, &s.srv.fields), nil
}
