package wire

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// run executes one statement and keeps MySQL's diagnostics area: every
// statement but SHOW WARNINGS/ERRORS replaces the previous warnings, and a
// failing statement leaves its error there.
func (s *session) run(p sql.Plan, args []any, bin bool) (*mysql.Result, error) {
	s.srv.obs.Statement(stmtKind(p))
	if sh, ok := p.(*sql.Show); ok && (sh.Kind == sql.ShowWarnings || sh.Kind == sql.ShowErrors) {
		// Its own end-of-rows packet counts no warnings (MariaDB's), not
		// those of the statement before it. It keeps the diagnostics,
		// but, like any statement with a result set, sets ROW_COUNT() to
		// -1 (MariaDB 10.11; it had kept the previous statement's).
		s.conn.SetWarnings(0)
		s.rowCount = -1
		return s.showWarnings(sh, bin)
	}
	prevWarnings := len(s.warnings)
	s.warnings = s.warnings[:0:0]
	err := s.awaitState()
	if err == nil && readsTables(p) {
		err = s.awaitRead()
	}
	var r *mysql.Result
	if err == nil {
		r, err = s.dispatch(p, args, bin, prevWarnings)
	}
	if err != nil && s.srv.cfg.Gate != nil && notFound(err) && !readsTables(p) {
		// The database or table may have been created through another
		// node a moment ago: a statement that found nothing changed
		// nothing, so once the state holds every acknowledged write it
		// runs again and its answer is the cluster's.
		if err = s.awaitRead(); err == nil {
			s.warnings = s.warnings[:0:0]
			r, err = s.dispatch(p, args, bin, prevWarnings)
		}
	}
	if err != nil {
		me := myErr(err).(*mysql.MyError)
		s.srv.obs.StatementError(me.Code)
		s.warnings = append(s.warnings, model.Warning{Level: "Error", Code: me.Code, Message: me.Message})
		s.rowCount = -1
		return nil, me
	}
	if r.HasResultset() {
		s.conn.SetWarnings(uint16(len(s.warnings)))
		s.rowCount = -1
		s.found = int64(len(r.RowDatas))
	} else {
		r.Warnings = uint16(len(s.warnings))
		s.rowCount = int64(r.AffectedRows)
	}
	return r, nil
}

func (s *session) dispatch(p sql.Plan, args []any, bin bool, prevWarnings int) (*mysql.Result, error) {
	if err := s.authorize(p); err != nil {
		return nil, err
	}
	switch p := p.(type) {
	case *sql.Insert:
		return s.insert(p, args)
	case *sql.Select:
		return s.selectRows(p, args, bin, prevWarnings)
	case *sql.Update:
		return s.update(p, args)
	case *sql.Delete:
		return s.deleteRows(p, args)
	case *sql.Set:
		return s.set(p, args)
	case *sql.Show:
		return s.show(p, bin)
	case *sql.CreateSequence, *sql.AlterSequence, *sql.DropSequence:
		return s.sequenceDDL(p)
	case *sql.CreateTable:
		return s.createTable(p)
	case *sql.DropTable:
		return s.dropTable(p)
	case *sql.AlterTable:
		return s.alterTable(p)
	case *sql.CreateDatabase:
		if err := ticket.CheckDatabaseCollation(p.Charsets, p.Collates); err != nil {
			return nil, err
		}
		r, err := s.exec(&model.Command{Op: model.OpCreateDB, DB: p.Name, IfExists: p.IfNotExists})
		return s.ok(r), err
	case *sql.DropDatabase:
		r, err := s.exec(&model.Command{Op: model.OpDropDB, DB: p.Name, IfExists: p.IfExists})
		if err == nil && p.Name == s.db {
			s.db = ""
		}
		return s.ok(r), err
	case *sql.Use:
		if err := s.use(p.DB); err != nil {
			return nil, err
		}
		return okResult(0, 0), nil
	case *sql.Txn:
		return s.txn(p), nil
	case *sql.Empty:
		return okResult(0, 0), nil
	case *sql.Account:
		return nil, accountStmt(p)
	case *sql.FlushHosts:
		s.srv.acceptor.FlushHosts()
		return okResult(0, 0), nil
	case *sql.FlushTables:
		if f, ok := s.srv.svc.(tableFlusher); ok {
			if err := f.FlushTables(); err != nil {
				return nil, unsupported("FLUSH TABLES through a node that is not the leader (the sequence caches are the leader's)")
			}
		}
		return okResult(0, 0), nil
	case *sql.Unsupported:
		return nil, unsupported(p.Reason)
	case *sql.Failed:
		return nil, p.Err
	default:
		return nil, unsupported(fmt.Sprintf("statement %T", p))
	}
}

func unsupported(what string) error {
	return mysqlerr.NotSupported(what)
}

func okResult(affected, insertID uint64) *mysql.Result {
	return &mysql.Result{AffectedRows: affected, InsertId: insertID}
}

// ok turns a command's result into an OK packet, keeping its warnings for
// SHOW WARNINGS.
func (s *session) ok(r model.Result) *mysql.Result {
	s.warnings = append(s.warnings, r.Warnings...)
	return okResult(r.Affected, r.InsertID)
}

// dbFor resolves the database of a possibly unqualified table name.
func (s *session) dbFor(t sql.TableName) (string, error) {
	if t.DB != "" {
		return t.DB, nil
	}
	if s.db == "" {
		return "", errNoDB()
	}
	return s.db, nil
}

// bind converts a literal or a prepared statement's argument.
func bind(v sql.Value, args []any) (model.Value, error) {
	switch v.Kind {
	case sql.ValNull:
		return model.Value{Kind: model.ValNull}, nil
	case sql.ValDefault:
		return model.Value{Kind: model.ValDefault}, nil
	case sql.ValInt:
		return model.Value{Kind: model.ValInt, Int: v.Int}, nil
	case sql.ValUint:
		return model.Value{Kind: model.ValUint, Uint: v.Uint}, nil
	case sql.ValString:
		return model.Value{Kind: model.ValString, Str: v.Str}, nil
	case sql.ValDecimal:
		if v.Approx {
			// A DOUBLE literal (1e2) is a double, as a DOUBLE parameter is:
			// 2.5e0 into an INT is 2 (half to even), 1e20 into a VARCHAR
			// is '1e20'.
			if f, err := strconv.ParseFloat(v.Str, 64); err == nil {
				return rowengine.DoubleValue(f), nil
			}
		}
		return model.Value{Kind: model.ValDecimal, Str: v.Str}, nil
	case sql.ValNow:
		return model.Value{Kind: model.ValNow}, nil
	case sql.ValParam:
		if v.Param >= len(args) {
			return model.Value{}, mysqlerr.Syntax("?", 1)
		}
		return argValue(args[v.Param])
	}
	return model.Value{}, unsupported("a " + v.Kind.String() + " value here")
}

// tableFlusher is the Service that FLUSH TABLES drops sequence caches of
// (alloc.Service); the tests' services hold none.
type tableFlusher interface{ FlushTables() error }

// MaxRowsPerStatement bounds the VALUES tuples of one INSERT or REPLACE.
// A multi-row REPLACE is ticketd's batch fetch: n consecutive ids (with
// the session's increment) in one Raft round trip; the bound keeps one
// Raft entry, and the leader's apply of it, small.
const MaxRowsPerStatement = 10000

func (s *session) insert(p *sql.Insert, args []any) (*mysql.Result, error) {
	db, err := s.dbFor(p.Table)
	if err != nil {
		return nil, err
	}
	if len(p.Rows) > MaxRowsPerStatement {
		return nil, unsupported("more than " + strconv.Itoa(MaxRowsPerStatement) + " rows in one statement")
	}
	if err := s.authorizeCounter(db, p, nil, args); err != nil {
		return nil, err
	}
	c := &model.Command{
		Op: model.OpInsert, DB: db, Table: p.Table.Name,
		Replace: p.Replace, Ignore: p.Ignore, Columns: p.Columns,
		Increment: s.ts.Increment, Offset: s.ts.Offset,
		Values: make([][]model.Value, len(p.Rows)),
	}
	rowTable := s.srv.svc.IsRowTable(db, p.Table.Name)
	if rowTable {
		c.Rows = s.rowsCommand()
		if err := insertRowsForm(c, p, args); err != nil {
			return nil, err
		}
	} else {
		onDup, odErr := p.TicketOnDup()
		if p.Exprs != nil || odErr != nil {
			// Only a row table takes these: an unknown table is still
			// 1146 first.
			if _, err := s.table(db, p.Table.Name); err != nil {
				return nil, err
			}
			if p.Exprs != nil {
				return nil, unsupported("expression in VALUES on a ticket table")
			}
			return nil, odErr
		}
		if s.mode() != defaultMode {
			if t := s.peekTable(db, p.Table.Name); t != nil && t.Def.Rows == nil {
				if err := s.ticketInsertMode(p, t); err != nil {
					return nil, err
				}
			}
		}
		if onDup != nil {
			u, err := s.ticketAssignment(db, p.Table.Name, onDup, args)
			if err != nil {
				return nil, err
			}
			c.OnDup = &u
		}
	}
	for i, row := range p.Rows {
		vals := make([]model.Value, len(row))
		for j, v := range row {
			if v.Kind == sql.ValExpr {
				// Computed from c.Rows.Exprs at apply time.
				vals[j] = model.Value{Kind: model.ValNull}
				continue
			}
			if vals[j], err = bind(v, args); err != nil {
				return nil, err
			}
		}
		c.Values[i] = vals
	}
	if err := s.valueLists(db, p, c.Values); err != nil {
		return nil, err
	}
	if err := s.insertRefusal(db, p, c.Values, rowTable); err != nil {
		return nil, err
	}
	r, err := s.exec(c)
	s.warnings = append(s.warnings, r.Warnings...)
	if err != nil {
		return nil, err
	}
	s.noteTxnWrite()
	s.remember(db, p.Table.Name, r.Images)
	affected := r.Affected
	if rowTable && s.conn.HasCapability(mysql.CLIENT_FOUND_ROWS) {
		// ON DUPLICATE KEY UPDATE counts a row it found unchanged.
		affected = r.Matched
	}
	return okResult(affected, r.InsertID), nil
}

// insertRowsForm adds to a row table's INSERT command what only the row
// engine computes: expressions in VALUES and ON DUPLICATE KEY UPDATE's
// assignments, with their placeholders bound.
func insertRowsForm(c *model.Command, p *sql.Insert, args []any) error {
	if p.Exprs != nil {
		c.Rows.Exprs = make([][]model.RowExpr, len(p.Exprs))
		for i, row := range p.Exprs {
			if row == nil {
				continue
			}
			c.Rows.Exprs[i] = make([]model.RowExpr, len(row))
			for j := range row {
				if row[j].Kind == 0 {
					continue
				}
				x, err := rowExpr(&row[j], args)
				if err != nil {
					return err
				}
				c.Rows.Exprs[i][j] = x
			}
		}
	}
	for _, a := range p.OnDup {
		ra := model.RowAssign{Col: a.Column}
		if a.Expr.Kind == sql.ExprValue && a.Expr.Value.Kind == sql.ValDefault {
			ra.Default = true
		} else {
			var err error
			if ra.Expr, err = rowExpr(&a.Expr, args); err != nil {
				return err
			}
		}
		c.Rows.OnDup = append(c.Rows.OnDup, ra)
	}
	return nil
}

// ticketAssignment is assignment for a ticket table db.table. A value
// that is no id is answered only after the table and the column: an
// unknown table is 1146, an unknown column 1054 and the stub column 1235
// (ticket.CheckAssign) whatever the value, as MariaDB judges them first;
// `SET stub = 'x'` used to answer "Incorrect integer value" (1366).
func (s *session) ticketAssignment(db, table string, a *sql.Assign, args []any) (model.Update, error) {
	u, err := assignment(a, args)
	if err == nil {
		return u, nil
	}
	t, terr := s.table(db, table)
	if terr != nil {
		return u, terr
	}
	if e := ticket.CheckAssign(&t.Def, &model.Update{Column: a.Column}); e != nil && t.Def.Rows == nil && t.Def.Seq == nil {
		return u, e
	}
	return u, err
}

// assignment converts `id = [LAST_INSERT_ID](id + k | v)`.
func assignment(a *sql.Assign, args []any) (model.Update, error) {
	u := model.Update{Column: a.Column, SetLastID: a.SetLastID}
	if a.FromValues {
		// Parsed so that the statement is recognised, not executed yet.
		return u, unsupported("VALUES(" + a.Column + ") in ON DUPLICATE KEY UPDATE of a ticket table")
	}
	if !a.Absolute {
		u.Delta = a.Delta
		return u, nil
	}
	v, err := bind(a.Value, args)
	if err != nil {
		return u, err
	}
	u.Absolute = true
	switch v.Kind {
	case model.ValInt:
		if v.Int < 0 {
			// MariaDB stores it in a signed column, 1264 in an unsigned
			// one; a ticket table's ids are not negative.
			return u, unsupported("negative values for a ticket table's id")
		}
		u.Value = uint64(v.Int)
	case model.ValUint:
		u.Value = v.Uint
	case model.ValString:
		n, err := strconv.ParseUint(strings.TrimSpace(v.Str), 10, 64)
		if err != nil {
			return u, mysqlerr.New(mysqlerr.CodeIncorrectValue, "Incorrect integer value: '%s' for column '%s' at row 1", v.Str, a.Column)
		}
		u.Value = n
	default:
		return u, unsupported(typeName(v) + " value for a ticket table's id")
	}
	return u, nil
}

// typeName names a bound value's type, with its article, as a MySQL user
// reads it in a refusal: a DOUBLE or FLOAT parameter (or a DOUBLE
// literal, 1e3) is "a DOUBLE", a temporal parameter "a DATE", "a
// DATETIME" or "a TIME" by its text. sql.ValueKind's names would not do:
// model's kinds past NOW() are not sql's (9 is sql's ValExpr but model's
// ValTemporal, and 10, ValDouble, has no sql name).
func typeName(v model.Value) string {
	switch v.Kind {
	case model.ValDouble:
		return "a DOUBLE"
	case model.ValTemporal:
		t := strings.TrimPrefix(v.Str, "!")
		switch {
		case len(t) == 10 && t[4] == '-':
			return "a DATE"
		case len(t) > 10 && t[4] == '-':
			return "a DATETIME"
		}
		return "a TIME"
	case model.ValNull, model.ValDefault, model.ValInt, model.ValUint, model.ValString, model.ValDecimal, model.ValNow:
		// These numbers are sql's too.
		return "a " + sql.ValueKind(v.Kind).String()
	}
	return "a value of kind " + strconv.Itoa(int(v.Kind))
}

func (s *session) update(p *sql.Update, args []any) (*mysql.Result, error) {
	db, err := s.dbFor(p.Table)
	if err != nil {
		return nil, err
	}
	if err := s.authorizeCounter(db, nil, p, args); err != nil {
		return nil, err
	}
	var r model.Result
	switch {
	case s.srv.svc.IsRowTable(db, p.Table.Name):
		// A row table: the row engine, whatever form the statement has.
		r, err = s.updateRowsExpr(p, db, args)
	default:
		r, err = s.updateTicket(p, db, args)
	}
	s.warnings = append(s.warnings, r.Warnings...)
	if err != nil {
		return nil, err
	}
	s.noteTxnWrite()
	s.remember(db, p.Table.Name, r.Images)
	affected := r.Affected
	if s.conn.HasCapability(mysql.CLIENT_FOUND_ROWS) {
		affected = r.Matched
	}
	res := okResult(affected, r.InsertID)
	res.StatusMessage = "Rows matched: " + strconv.FormatUint(r.Matched, 10) + "  Changed: " + strconv.FormatUint(r.Affected, 10) + "  Warnings: 0"
	return res, nil
}

// updateTicket runs an UPDATE on what is no row table (a ticket table, a
// sequence, no table) in the ticket form, or answers why it has none.
func (s *session) updateTicket(p *sql.Update, db string, args []any) (model.Result, error) {
	tf, err := p.TicketForm()
	if err != nil {
		// Only a row table takes this statement: an unknown table is
		// still 1146 first.
		if _, terr := s.table(db, p.Table.Name); terr != nil {
			return model.Result{}, terr
		}
		return model.Result{}, err
	}
	u, err := s.ticketAssignment(db, p.Table.Name, &tf.Set, args)
	if err != nil {
		return model.Result{}, err
	}
	c := &model.Command{Op: model.OpUpdate, DB: db, Table: p.Table.Name, Set: u}
	if tf.Where != nil {
		c.HasWhere, c.WhereCol = true, tf.Where.Column
		if c.Where, err = bind(tf.Where.Value, args); err != nil {
			return model.Result{}, err
		}
	}
	return s.exec(c)
}

// txn answers BEGIN/COMMIT/ROLLBACK. Tickets are never rolled back, as in
// MySQL with non-transactional tables, which warns on ROLLBACK.
func (s *session) txn(p *sql.Txn) *mysql.Result {
	switch p.Kind {
	case sql.TxnBegin:
		s.conn.SetStatus(mysql.SERVER_STATUS_IN_TRANS)
		s.txnWrote = false
		s.endTxn()
	case sql.TxnRollback:
		if s.txnWrote {
			s.warnings = append(s.warnings, model.Warning{Level: "Warning", Code: mysqlerr.CodeIncompleteRollback,
				Message: "Some non-transactional changed tables couldn't be rolled back"})
		}
		fallthrough
	default:
		s.conn.UnsetStatus(mysql.SERVER_STATUS_IN_TRANS)
		s.txnWrote = false
		s.endTxn()
	}
	return okResult(0, 0)
}

func (s *session) noteTxnWrite() {
	if s.conn.HasStatus(mysql.SERVER_STATUS_IN_TRANS) {
		s.txnWrote = true
	}
}

// readsTables reports whether a statement reads replicated tables or the
// catalogue, so that it must see every write acknowledged before it began
// (DESIGN §4a): SELECT ... FROM and the SHOWs of the catalogue.
func readsTables(p sql.Plan) bool {
	switch p := p.(type) {
	case *sql.Select:
		return p.From != nil
	case *sql.Show:
		switch p.Kind {
		case sql.ShowDatabases, sql.ShowTables, sql.ShowTableStatus, sql.ShowCreateTable,
			sql.ShowCreateDatabase, sql.ShowColumns, sql.ShowIndex:
			return true
		}
	}
	return false
}

// notFound reports whether err is MySQL's "no such database" or "no such
// table".
func notFound(err error) bool {
	me, ok := myErr(err).(*mysql.MyError)
	return ok && (me.Code == mysqlerr.CodeBadDB || me.Code == mysqlerr.CodeNoSuchTable)
}
