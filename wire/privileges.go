package wire

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// authorize refuses a statement the session's role may not run, with the
// error MySQL gives an account lacking the privilege. Only the admin role
// may change what the counters are: a DROP, CREATE or ALTER of a table, a
// database's DDL, or a replicated global (SET GLOBAL). The alloc role
// allocates and reads. The check comes before the statement looks at the
// state, as MySQL's does: a denied DROP of a missing table is 1142, not
// 1051.
func (s *session) authorize(p sql.Plan) error {
	if s.login.Role == mysqlconn.RoleAdmin {
		return nil
	}
	table := func(cmd string, t sql.TableName) error {
		if _, err := s.dbFor(t); err != nil {
			return err
		}
		return mysqlerr.TableAccessDenied(cmd, s.user, s.login.Host, t.Name)
	}
	switch p := p.(type) {
	case *sql.CreateTable:
		return table("CREATE", p.Table)
	case *sql.DropTable:
		return table("DROP", p.Tables[0])
	case *sql.AlterTable:
		return table("ALTER", p.Table)
	case *sql.CreateSequence:
		return table("CREATE", p.Table)
	case *sql.AlterSequence:
		return table("ALTER", p.Table)
	case *sql.DropSequence:
		return table("DROP", p.Tables[0])
	case *sql.Select:
		// SETVAL changes the sequence: MariaDB asks for INSERT on it.
		if t := setvalTarget(p); t != nil {
			return table("INSERT", *t)
		}
	case *sql.CreateDatabase:
		return mysqlerr.DBAccessDenied(s.user, s.login.Host, p.Name)
	case *sql.DropDatabase:
		return mysqlerr.DBAccessDenied(s.user, s.login.Host, p.Name)
	case *sql.FlushHosts, *sql.FlushTables:
		return errNeedReload()
	case *sql.Set:
		for _, v := range p.Vars {
			if !v.User && v.Scope == sql.ScopeGlobal {
				return mysqlerr.SpecificAccessDenied("SUPER or SYSTEM_VARIABLES_ADMIN")
			}
		}
	}
	return nil
}

// authorizeCounter refuses, to the alloc role, a write that sets a
// counter by hand: the alloc role takes ids, it does not choose them. A
// counter is a ticket table's id column, or a row table's AUTO_INCREMENT
// column; a sequence is one too (its rows are SETVAL's, which MariaDB
// guards with INSERT). Refused, with MySQL's 1142 for the command:
//   - INSERT or REPLACE with an explicit id (a value other than NULL,
//     DEFAULT or 0, which generate one; any value for a ticket table
//     whose id is not AUTO_INCREMENT, the MySQL manual's sequence table):
//     one row with id 2^63 would exhaust the counter for everyone;
//   - UPDATE or ON DUPLICATE KEY UPDATE of the counter to anything but
//     [LAST_INSERT_ID](id + k), k an integer (sql.ColAssign.CounterStep's
//     forms: id - k, k + id, id alone, VALUES(id) in ON DUPLICATE KEY
//     UPDATE): a constant, LAST_INSERT_ID(constant) included, moves it by
//     hand, and so does any other expression of it (id * 2, -(id),
//     LAST_INSERT_ID(), NOW(), id + NOW()), whatever the other
//     assignments of the statement are.
//
// Allowed: everything that generates the next id (REPLACE/INSERT without
// an id, id = LAST_INSERT_ID(id + k), NEXTVAL) and a row table's other
// columns (Leaf's max_id = max_id + step, Tinyid's max_id = ?, a
// UidGenerator WORKER_NODE row without ID): those tables are the
// application's data, and their schemes run as alloc. This needs the
// table's definition, so it runs with the statement's arguments bound,
// after authorize.
func (s *session) authorizeCounter(db string, ins *sql.Insert, upd *sql.Update, args []any) error {
	if s.login.Role == mysqlconn.RoleAdmin {
		return nil
	}
	name := ""
	if ins != nil {
		name = ins.Table.Name
	} else {
		name = upd.Table.Name
	}
	var t *model.Table
	if err := s.view(func(st ticket.Store) (err error) {
		t, err = st.Table(db, name)
		return err
	}); err != nil || t == nil {
		return err // an unknown table gets its 1146 from the statement
	}
	d := &t.Def
	cmd := "UPDATE"
	if ins != nil {
		cmd = "INSERT"
	}
	// Built only when needed: this check runs for every REPLACE of an
	// alloc account.
	denied := func() error { return mysqlerr.TableAccessDenied(cmd, s.user, s.login.Host, name) }
	if d.Seq != nil {
		return denied()
	}
	if d.IDCol == "" || (d.Rows != nil && !d.AutoInc) {
		return nil // no counter
	}
	onDup := ins != nil
	var assigns []sql.ColAssign
	if onDup {
		assigns = ins.OnDup
	} else {
		assigns = upd.Assigns
	}
	for i := range assigns {
		if !strings.EqualFold(assigns[i].Column, d.IDCol) {
			continue
		}
		step, ok := assigns[i].CounterStep(onDup)
		if !ok {
			return denied()
		}
		ok, err := integerStep(step, args)
		if err != nil {
			return err
		}
		if !ok {
			return denied()
		}
	}
	if upd != nil {
		return nil
	}
	i := idIndex(d, ins.Columns)
	for _, row := range ins.Rows {
		if i < 0 || i >= len(row) {
			break
		}
		v, err := bind(row[i], args)
		if err != nil {
			return err
		}
		if !d.AutoInc || !generates(v) {
			return denied()
		}
	}
	return nil
}

// integerStep reports whether step, the n of a counter's id = id + n
// (nil: none), is an integer: a literal or a '?' bound to one. A string,
// a decimal, NOW() or a column there is a value chosen by hand.
func integerStep(step *sql.Expr, args []any) (bool, error) {
	if step == nil {
		return true, nil
	}
	if step.Kind != sql.ExprValue {
		return false, nil
	}
	switch step.Value.Kind {
	case sql.ValInt, sql.ValUint:
		return true, nil
	case sql.ValParam:
		v, err := bind(step.Value, args)
		if err != nil {
			return false, err
		}
		return v.Kind == model.ValInt || v.Kind == model.ValUint, nil
	}
	return false, nil
}

// idIndex is the position of d's id column in an INSERT's values: in
// cols when given, else in the table's column order; -1 if absent.
func idIndex(d *model.TableDef, cols []string) int {
	if cols != nil {
		for i, c := range cols {
			if strings.EqualFold(c, d.IDCol) {
				return i
			}
		}
		return -1
	}
	if d.Rows != nil {
		for i, c := range d.Rows.Cols {
			if strings.EqualFold(c.Name, d.IDCol) {
				return i
			}
		}
		return -1
	}
	if d.StubCol != "" && d.StubFirst {
		return 1
	}
	return 0
}

// generates reports whether v, given to an AUTO_INCREMENT column, makes
// MySQL generate the next id: NULL, DEFAULT or 0 (without
// NO_AUTO_VALUE_ON_ZERO).
func generates(v model.Value) bool {
	switch v.Kind {
	case model.ValNull, model.ValDefault:
		return true
	case model.ValInt:
		return v.Int == 0
	case model.ValUint:
		return v.Uint == 0
	case model.ValString, model.ValDecimal, model.ValDouble:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
		return err == nil && f == 0
	}
	return false
}

// errNeedReload is FLUSH's privilege error.
func errNeedReload() *mysqlerr.Error { return mysqlerr.SpecificAccessDenied("RELOAD") }

// accountStmt answers GRANT, REVOKE, CREATE USER and the like: accounts
// and roles are the users file's, so a statement cannot change them.
// MySQL's answer for a statement a server option forbids (1290) says so.
func accountStmt(p *sql.Account) error {
	return mysqlerr.New(mysqlerr.CodeReadOnly,
		"The MySQL server is running with the --users-file option so it cannot execute this statement (%s: ticketd's accounts and roles are set in its users file)", p.Stmt)
}

// grantLines are SHOW GRANTS' answer for a role, as MySQL 5.7 words
// equivalent privileges: admin has them all; alloc what allocation and
// reads need (REPLACE needs INSERT and DELETE in MySQL, so a MySQL account
// for Flickr's scheme has DELETE too, although ticketd has no DELETE).
func grantLines(role mysqlconn.Role, user, host string) []string {
	to := fmt.Sprintf(" TO `%s`@`%s`", user, host)
	if role == mysqlconn.RoleAdmin {
		return []string{"GRANT ALL PRIVILEGES ON *.* TO" + to[3:] + " WITH GRANT OPTION"}
	}
	return []string{"GRANT SELECT, INSERT, UPDATE, DELETE ON *.*" + to}
}

// showGrants is SHOW GRANTS [FOR user]. Another account's grants need the
// admin role (MySQL: SELECT on the mysql database).
func (s *session) showGrants(p *sql.Show, rs *rowset) error {
	user := s.user
	if p.User != "" && p.User != s.user {
		if s.login.Role != mysqlconn.RoleAdmin {
			return mysqlerr.DBAccessDenied(s.user, s.login.Host, "mysql")
		}
		user = p.User
	}
	r, accountHost, ok := s.srv.cfg.Users.Role(user)
	if !ok || (p.Host != "" && p.Host != accountHost) {
		h := p.Host
		if h == "" {
			h = "%"
		}
		return mysqlerr.New(mysqlerr.CodeNoSuchGrant, "There is no such grant defined for user '%s' on host '%s'", user, h)
	}
	rs.cols = strCols("Grants for " + user + "@" + accountHost)
	for _, l := range grantLines(r, user, accountHost) {
		rs.add(l)
	}
	return nil
}
