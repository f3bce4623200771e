package wire

import (
	"fmt"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
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
	case *sql.FlushHosts:
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
