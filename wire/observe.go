package wire

import (
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
)

// Observer is told what the wire layer does, for metrics. Statement and
// StatementError run once per statement: they must be cheap and must not
// block. Config.Observer nil means no observer.
type Observer interface {
	// Statement counts one statement run, by kind.
	Statement(kind StmtKind)
	// QueryPlanned counts one text query (COM_QUERY) by where its plans
	// came from: the cache, a template or the parser.
	QueryPlanned(src sql.PlanSource)
	// StatementError counts one error answered to a client, by MySQL code.
	StatementError(code uint16)
	// ConnOpened and ConnClosed bracket every accepted connection.
	ConnOpened()
	ConnClosed()
	// AuthFailed counts a refused login or COM_CHANGE_USER (error 1045).
	AuthFailed()
}

// StmtKind is a statement's kind, a small closed set so that a metric
// label has bounded values.
type StmtKind uint8

// Statement kinds.
const (
	StmtReplace StmtKind = iota
	StmtInsert
	StmtUpdate
	StmtSelect
	StmtSet
	StmtShow
	StmtDDL // CREATE/DROP/ALTER TABLE, CREATE/DROP DATABASE
	StmtUse
	StmtTransaction
	StmtOther // empty, unsupported or unparsable
	numStmtKinds
)

var stmtKindNames = [numStmtKinds]string{"replace", "insert", "update", "select", "set", "show", "ddl", "use", "transaction", "other"}

// String is the kind's label value.
func (k StmtKind) String() string {
	if k < numStmtKinds {
		return stmtKindNames[k]
	}
	return "other"
}

// StmtKinds lists every kind, for observers that set up one counter each.
func StmtKinds() []StmtKind {
	out := make([]StmtKind, numStmtKinds)
	for i := range out {
		out[i] = StmtKind(i)
	}
	return out
}

func stmtKind(p sql.Plan) StmtKind {
	switch p := p.(type) {
	case *sql.Insert:
		if p.Replace {
			return StmtReplace
		}
		return StmtInsert
	case *sql.Update:
		return StmtUpdate
	case *sql.Select:
		return StmtSelect
	case *sql.Set:
		return StmtSet
	case *sql.Show:
		return StmtShow
	case *sql.CreateTable, *sql.DropTable, *sql.AlterTable, *sql.CreateDatabase, *sql.DropDatabase:
		return StmtDDL
	case *sql.Use:
		return StmtUse
	case *sql.Txn:
		return StmtTransaction
	}
	return StmtOther
}

// countErr counts an error on its way to the client and returns it. The
// handlers return *mysql.MyError; a type assertion, unlike errors.As,
// costs no allocation.
func (s *session) countErr(err error) error {
	if me, ok := err.(*mysql.MyError); ok {
		s.srv.obs.StatementError(me.Code)
	}
	return err
}

type nopObserver struct{}

func (nopObserver) Statement(StmtKind)          {}
func (nopObserver) QueryPlanned(sql.PlanSource) {}
func (nopObserver) StatementError(uint16)       {}
func (nopObserver) ConnOpened()                 {}
func (nopObserver) ConnClosed()                 {}
func (nopObserver) AuthFailed()                 {}
