package sql

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/terror"
	"github.com/ticketd/ticketd/sql/mysqlerr"

	// The parser builds literals through a value-expression driver that
	// must be registered before parser.New; test_driver is the one that
	// needs nothing from the rest of TiDB.
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// The test driver's decimal type panics on literals of more than 81
// digits instead of failing; make such a literal a syntax error. This runs
// once, after test_driver's init (which sets the hook), and only wraps it.
func init() {
	newDecimal := ast.NewDecimal
	ast.NewDecimal = func(s string) (v any, err error) {
		defer func() {
			if recover() != nil {
				v, err = nil, fmt.Errorf("decimal literal %.20s... is too long", s)
			}
		}()
		return newDecimal(s)
	}
}

// Error is a statement error with MySQL's code, SQLSTATE and message,
// ready to be sent as an ERR packet (the catalogue's type, shared with
// ticket).
type Error = mysqlerr.Error

var errEmptyQuery = mysqlerr.New(mysqlerr.CodeEmptyQuery, "Query was empty")

// syntaxError builds MySQL's 1064 message. MySQL quotes at most 80
// characters of the text from the offending token on.
func syntaxError(near string, line int) *Error {
	if r := []rune(near); len(r) > 80 {
		near = string(r[:80])
	}
	return mysqlerr.Syntax(near, line)
}

// Parse parses one query, which may hold several statements, into one plan
// per statement. Errors are *Error. Statements that parse but that ticketd
// does not implement become *Unsupported plans, not errors, so that the
// statements before them in a multi-statement query still run.
//
// Parse creates a parser per call; use a Cache to reuse parsers and plans.
func Parse(query string) ([]Plan, error) {
	plans, _, err := parseWith(parser.New(), query)
	return plans, err
}

// parseWith parses query with p. reusable is false when p panicked and
// must be dropped.
func parseWith(p *parser.Parser, query string) (plans []Plan, reusable bool, err error) {
	// A query must never take the server down: a panic in the parser or
	// here becomes an error for this query alone (FuzzParse fails on it).
	defer func() {
		if r := recover(); r != nil {
			plans, reusable = nil, false
			err = mysqlerr.New(mysqlerr.CodeUnknown, "ticketd: internal error parsing query: %v", r)
		}
	}()
	stmts, _, perr := p.ParseSQL(query)
	if perr != nil {
		e, off := parseError(perr, query)
		// MySQL runs the statements before a bad one in a multi-statement
		// query, then reports the error: keep the longest prefix that
		// parses, ending at a ';' before the error.
		if prefix := parsePrefix(p, query, off); prefix != nil {
			return append(prefix, &Failed{Err: e}), true, nil
		}
		return nil, true, e
	}
	if len(stmts) == 0 {
		// MySQL answers an empty query with 1065; a query that is only a
		// comment is answered OK so that comment "pings" keep working.
		if hasComment(query) {
			return []Plan{&Empty{}}, true, nil
		}
		return nil, true, errEmptyQuery
	}
	plans = make([]Plan, 0, len(stmts))
	for _, stmt := range stmts {
		plan, err := convertStmt(stmt, query)
		if err != nil {
			return nil, true, err
		}
		plans = append(plans, plan)
	}
	return plans, true, nil
}

// convertStmt turns one statement into its plan, numbering its '?'
// placeholders in text order first.
func convertStmt(stmt ast.StmtNode, src string) (Plan, error) {
	params := 0
	if strings.IndexByte(src, '?') >= 0 {
		// Only a '?' makes a placeholder: a text without one (any
		// interpolated query) skips the walk over its tree.
		params = numberParams(stmt)
	}
	plan, err := statement(stmt, src)
	var u unsupported
	switch {
	case errors.As(err, &u):
		return &Unsupported{Reason: string(u)}, nil
	case err != nil:
		return nil, err
	}
	// A placeholder the plan does not carry would leave the client sending
	// more parameters than the statement takes.
	if params > 0 && ParamCount(plan) != params {
		if _, isUnsupported := plan.(*Unsupported); !isUnsupported {
			return &Unsupported{Reason: "'?' placeholder in this position"}, nil
		}
	}
	return plan, nil
}

// unsupported is the error conversion functions return for a construct
// outside ticketd's surface; it becomes an *Unsupported plan.
type unsupported string

func (u unsupported) Error() string { return string(u) }

// planErr is an error kept in a plan for the executor to answer: an
// unsupported construct becomes its 1235.
func planErr(err error) error {
	var u unsupported
	if errors.As(err, &u) {
		return mysqlerr.NotSupported(string(u))
	}
	return err
}

func statement(stmt ast.StmtNode, src string) (Plan, error) {
	var rowid rowidFinder
	if stmt.Accept(&rowid); rowid.found {
		// MariaDB's alias of a one-column integer primary key.
		return nil, unsupported("_rowid")
	}
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		return selectStmt(s)
	case *ast.InsertStmt:
		return insertStmt(s)
	case *ast.UpdateStmt:
		return updateStmt(s)
	case *ast.DeleteStmt:
		return deleteStmt(s)
	case *ast.SetStmt:
		return setStmt(s, src)
	case *ast.ShowStmt:
		return showStmt(s)
	case *ast.ExplainStmt:
		// DESCRIBE t and DESC t parse as EXPLAIN of SHOW COLUMNS.
		if sh, ok := s.Stmt.(*ast.ShowStmt); ok && sh.Tp == ast.ShowColumns {
			return showStmt(sh)
		}
		return nil, unsupported("EXPLAIN")
	case *ast.CreateSequenceStmt, *ast.AlterSequenceStmt, *ast.DropSequenceStmt:
		return sequenceStmt(s)
	case *ast.CreateTableStmt:
		return createTable(s)
	case *ast.DropTableStmt:
		return dropTable(s)
	case *ast.AlterTableStmt:
		return alterTable(s)
	case *ast.CreateIndexStmt:
		return createIndex(s)
	case *ast.DropIndexStmt:
		return dropIndex(s)
	case *ast.CreateDatabaseStmt:
		plan := &CreateDatabase{Name: s.Name.O, IfNotExists: s.IfNotExists}
		for _, o := range s.Options {
			switch o.Tp {
			case ast.DatabaseOptionCharset:
				plan.Charsets = append(plan.Charsets, strings.ToLower(o.Value))
			case ast.DatabaseOptionCollate:
				plan.Collates = append(plan.Collates, strings.ToLower(o.Value))
			default:
				return nil, unsupported("CREATE DATABASE option " + nodeSQL(o))
			}
		}
		return plan, nil
	case *ast.DropDatabaseStmt:
		return &DropDatabase{Name: s.Name.O, IfExists: s.IfExists}, nil
	case *ast.UseStmt:
		return &Use{DB: s.DBName}, nil
	case *ast.BeginStmt:
		if s.AsOf != nil {
			return nil, unsupported("START TRANSACTION ... AS OF")
		}
		return &Txn{Kind: TxnBegin}, nil
	case *ast.CommitStmt:
		if s.CompletionType != ast.CompletionTypeDefault {
			return nil, unsupported("COMMIT AND CHAIN / RELEASE")
		}
		return &Txn{Kind: TxnCommit}, nil
	case *ast.RollbackStmt:
		if s.SavepointName != "" {
			return nil, unsupported("ROLLBACK TO SAVEPOINT")
		}
		if s.CompletionType != ast.CompletionTypeDefault {
			return nil, unsupported("ROLLBACK AND CHAIN / RELEASE")
		}
		return &Txn{Kind: TxnRollback}, nil
	case *ast.FlushStmt:
		if s.Tp == ast.FlushHosts {
			return &FlushHosts{}, nil
		}
		if s.Tp == ast.FlushTables && !s.ReadLock {
			return &FlushTables{}, nil
		}
		return &Empty{}, nil
	case *ast.LockTablesStmt, *ast.UnlockTablesStmt:
		// Every ticket statement is atomic on its own and there is no
		// table cache to flush.
		return &Empty{}, nil
	case *ast.GrantStmt, *ast.RevokeStmt, *ast.GrantRoleStmt, *ast.RevokeRoleStmt, *ast.GrantProxyStmt,
		*ast.CreateUserStmt, *ast.AlterUserStmt, *ast.DropUserStmt, *ast.RenameUserStmt, *ast.SetPwdStmt,
		*ast.SetRoleStmt, *ast.SetDefaultRoleStmt:
		return &Account{Stmt: stmtReason(stmt)}, nil
	case *ast.DoStmt:
		// DO 1 is a ping; DO with a function could have effects
		// (DO LAST_INSERT_ID(5)) that an OK would silently drop.
		for _, e := range s.Exprs {
			if _, ok, err := literal(e); err != nil || !ok {
				return nil, unsupported("DO with an expression")
			}
		}
		return &Empty{}, nil
	}
	return nil, unsupported(stmtReason(stmt))
}

// stmtReason names a statement ticketd does not implement, as MySQL's 1235
// message quotes it.
func stmtReason(stmt ast.StmtNode) string {
	switch s := stmt.(type) {
	case *ast.DeleteStmt:
		return "DELETE"
	case *ast.TruncateTableStmt:
		return "TRUNCATE TABLE"
	case *ast.SetOprStmt:
		return "UNION"
	case *ast.CreateIndexStmt:
		return "CREATE INDEX"
	case *ast.DropIndexStmt:
		return "DROP INDEX"
	case *ast.CreateViewStmt:
		return "CREATE VIEW"
	case *ast.RenameTableStmt:
		return "RENAME TABLE"
	case *ast.GrantStmt:
		return "GRANT"
	case *ast.RevokeStmt:
		return "REVOKE"
	case *ast.LoadDataStmt:
		return "LOAD DATA"
	case *ast.AnalyzeTableStmt:
		return "ANALYZE TABLE"
	case *ast.PrepareStmt:
		return "PREPARE"
	case *ast.ExecuteStmt:
		return "EXECUTE"
	case *ast.DeallocateStmt:
		return "DEALLOCATE PREPARE"
	case *ast.KillStmt:
		return "KILL"
	case *ast.ShowStmt:
		return leadingWords(s.Text(), 2)
	}
	w := leadingWords(stmt.Text(), 1)
	switch w {
	case "CREATE", "DROP", "ALTER", "SET", "SHOW", "LOCK", "RELEASE", "XA":
		return leadingWords(stmt.Text(), 2)
	case "":
		return "this statement"
	}
	return w
}

// parsePrefix parses query[:k+1] for the last few ';' at k before the
// error offset, and returns the plans of the first prefix that parses. It
// relies on the parser to tell a statement separator from a ';' inside a
// string or comment: a prefix cut inside one does not parse.
func parsePrefix(p *parser.Parser, query string, errOff int) []Plan {
	if errOff <= 0 || errOff > len(query) {
		return nil
	}
	end := errOff
	for tries := 0; tries < 4; tries++ {
		k := strings.LastIndexByte(query[:end], ';')
		if k < 0 {
			return nil
		}
		end = k
		stmts, _, err := p.ParseSQL(query[:k+1])
		if err != nil || len(stmts) == 0 {
			continue
		}
		plans := make([]Plan, 0, len(stmts))
		for _, stmt := range stmts {
			plan, err := convertStmt(stmt, query)
			if err != nil {
				return nil
			}
			plans = append(plans, plan)
		}
		return plans
	}
	return nil
}

// parseError turns the TiDB parser's error into MySQL's, with the byte
// offset of the offending token in query (-1 when unknown).
// mariadbCharsets are MariaDB 10.11's character sets (SHOW CHARACTER SET).
var mariadbCharsets = map[string]bool{
	"armscii8": true, "ascii": true, "big5": true, "binary": true, "cp1250": true, "cp1251": true,
	"cp1256": true, "cp1257": true, "cp850": true, "cp852": true, "cp866": true, "cp932": true,
	"dec8": true, "eucjpms": true, "euckr": true, "gb2312": true, "gbk": true, "geostd8": true,
	"greek": true, "hebrew": true, "hp8": true, "keybcs2": true, "koi8r": true, "koi8u": true,
	"latin1": true, "latin2": true, "latin5": true, "latin7": true, "macce": true, "macroman": true,
	"sjis": true, "swe7": true, "tis620": true, "ucs2": true, "ujis": true, "utf16": true,
	"utf16le": true, "utf32": true, "utf8mb3": true, "utf8mb4": true, "utf8": true,
}

func parseError(err error, query string) (*Error, int) {
	var te *terror.Error
	if errors.As(err, &te) && te.Code() != mysql.ErrParse && te.Code() != mysql.ErrSyntax {
		// Errors the grammar raises on purpose, such as 1115 Unknown
		// character set for SET NAMES, keep their MySQL code.
		code := uint16(te.Code())
		if cs, ok := strings.CutPrefix(te.GetMsg(), "Unknown character set: '"); ok && code == mysql.ErrUnknownCharacterSet &&
			mariadbCharsets[strings.ToLower(strings.TrimSuffix(cs, "'"))] {
			// The grammar knows a few character sets; MariaDB has these
			// others, which ticketd refuses rather than call unknown.
			e := mysqlerr.NotSupported("CHARACTER SET " + strings.ToLower(strings.TrimSuffix(cs, "'")))
			return &Error{Code: e.Code, State: e.State, Message: e.Message}, -1
		}
		if cs, ok := strings.CutPrefix(te.GetMsg(), "Unsupported character introducer: '"); ok && code == mysql.ErrUnknownCharacterSet &&
			mariadbCharsets[strings.ToLower(strings.TrimSuffix(cs, "'"))] {
			// As literal() refuses the introducers the grammar knows.
			e := mysqlerr.NotSupported("the character set introducer _" + strings.ToLower(strings.TrimSuffix(cs, "'")))
			return &Error{Code: e.Code, State: e.State, Message: e.Message}, -1
		}
		if co, ok := strings.CutPrefix(te.GetMsg(), "Unknown collation: '"); ok && code == mysql.ErrUnknownCollation {
			// A collation of a MariaDB character set that the grammar does
			// not know (utf8mb4_uca1400_ai_ci): refused, not unknown.
			co = strings.ToLower(strings.TrimSuffix(co, "'"))
			if cs, _, found := strings.Cut(co, "_"); found && mariadbCharsets[cs] {
				e := mysqlerr.NotSupported("COLLATE " + co)
				return &Error{Code: e.Code, State: e.State, Message: e.Message}, -1
			}
		}
		if code == mysql.ErrInvalidYearColumnLength {
			// YEAR(2) and YEAR(3): MariaDB takes them with note 1287
			// (deprecated); ticketd has no YEAR column.
			e := mysqlerr.NotSupported("column type year")
			return &Error{Code: e.Code, State: e.State, Message: e.Message}, -1
		}
		state, ok := mysql.MySQLState[code]
		if !ok {
			state = mysql.DefaultMySQLState
		}
		return &Error{Code: code, State: state, Message: te.GetMsg()}, -1
	}
	near, line := nearText(err.Error(), query)
	off := -1
	if near != "" {
		off = strings.LastIndex(query, near)
	}
	return syntaxError(near, line), off
}

// nearText recovers the text from the offending token on, and its line,
// from the parser's message. The lexer reports either
// `line L column C near "REST"DETAIL ` where REST is a suffix of the query
// (cut at 2048 bytes), or, for an unterminated comment, MySQL's own
// `near 'REST' at line L`.
func nearText(msg, query string) (string, int) {
	if rest, ok := strings.CutPrefix(msg, "near '"); ok {
		if i := strings.LastIndex(rest, "' at line "); i >= 0 {
			near := rest[:i]
			if off := strings.LastIndex(query, near); off >= 0 {
				return near, lineAt(query, off)
			}
			return near, 1
		}
	}
	i := strings.Index(msg, ` near "`)
	if !strings.HasPrefix(msg, "line ") || i < 0 {
		return "", 1
	}
	rest := msg[i+len(` near "`):]
	// REST was cut and its full length appended.
	const total = "(total length "
	if j := strings.LastIndex(rest, total); j >= 0 && strings.HasSuffix(rest, ")") {
		if n, err := strconv.Atoi(rest[j+len(total) : len(rest)-1]); err == nil && n >= 0 && n <= len(query) {
			off := len(query) - n
			return query[off:], lineAt(query, off)
		}
	}
	// A plain syntax error has no detail: rest is REST, a quote and a space.
	if cand, ok := strings.CutSuffix(rest, `" `); ok && strings.HasSuffix(query, cand) {
		off := len(query) - len(cand)
		return query[off:], lineAt(query, off)
	}
	// Otherwise REST is the longest suffix of the query that rest starts
	// with and that the closing quote follows.
	for off := max(0, len(query)-2048); off <= len(query); off++ {
		suffix := query[off:]
		if len(rest) > len(suffix) && rest[len(suffix)] == '"' && strings.HasPrefix(rest, suffix) {
			return suffix, lineAt(query, off)
		}
	}
	return "", 1
}

func lineAt(query string, off int) int {
	return 1 + strings.Count(query[:off], "\n")
}

// numberParams gives the statement's '?' placeholders their numbers in text
// order: the parser records only their offsets, and a plan reports them as
// Param 0, 1, ...
func numberParams(stmt ast.StmtNode) int {
	var c paramCollector
	stmt.Accept(&c)
	sort.Slice(c.params, func(i, j int) bool { return c.params[i].Offset < c.params[j].Offset })
	for i, p := range c.params {
		p.Order = i
	}
	return len(c.params)
}

type paramCollector struct {
	params []*test_driver.ParamMarkerExpr
}

func (c *paramCollector) Enter(n ast.Node) (ast.Node, bool) {
	if p, ok := n.(*test_driver.ParamMarkerExpr); ok {
		c.params = append(c.params, p)
	}
	return n, false
}

func (c *paramCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// ParamCount is the number of '?' placeholders of a plan, numbered 0 to
// ParamCount-1.
func ParamCount(p Plan) int {
	n := 0
	count := func(v *Value) {
		if v.Kind == ValParam {
			n++
		}
	}
	switch p := p.(type) {
	case *Select:
		for i := range p.Fields {
			n += exprParams(&p.Fields[i].Expr)
		}
		if p.Filter != nil {
			n += exprParams(p.Filter)
			break
		}
		for i := range p.Where {
			count(&p.Where[i].Value)
		}
	case *Insert:
		for _, row := range p.Rows {
			for i := range row {
				count(&row[i])
			}
		}
		for _, row := range p.Exprs {
			for i := range row {
				n += exprParams(&row[i])
			}
		}
		for i := range p.OnDup {
			n += exprParams(&p.OnDup[i].Expr)
		}
	case *Update:
		for i := range p.Assigns {
			n += exprParams(&p.Assigns[i].Expr)
		}
		if p.Filter != nil {
			n += exprParams(p.Filter)
		}
	case *Delete:
		if p.Filter != nil {
			n += exprParams(p.Filter)
		}
	case *Set:
		for i := range p.Vars {
			n += exprParams(&p.Vars[i].Value)
		}
	case *Show:
		for i := range p.Where {
			count(&p.Where[i].Value)
		}
	}
	return n
}

func exprParams(e *Expr) int {
	n := 0
	if e.Kind == ExprValue && e.Value.Kind == ValParam {
		n++
	}
	for i := range e.Args {
		n += exprParams(&e.Args[i])
	}
	return n
}

// rowidFinder looks for a _rowid column reference.
type rowidFinder struct{ found bool }

func (f *rowidFinder) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnName); ok && c.Name.L == "_rowid" {
		f.found = true
	}
	return n, f.found
}

func (f *rowidFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
