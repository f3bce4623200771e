package wire

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
	"github.com/go-mysql-org/go-mysql/stmt"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/wire/mysqlconn"
)

// session is one client connection: it implements go-mysql's
// server.Handler and holds everything a MySQL session holds (current
// database, LAST_INSERT_ID(), variables, the last statement's warnings).
type session struct {
	srv  *Server
	conn *server.Conn
	cc   *mysqlconn.Conn
	vars map[string]sysVar

	id    uint32          // the connection id of the handshake and CONNECTION_ID()
	user  string          // login.User
	login mysqlconn.Login // who the client authenticated as
	quit  bool            // close the connection after this command
	// wrote is the log index of the session's last write (see view).
	wrote uint64
	// loginBy is when a login still waiting for the local state is
	// refused with 1290: early enough that the refusal reaches the
	// client before the connect timeout closes its connection.
	loginBy time.Time

	prepares uint32 // COM_STMT_PREPAREs so far: the last statement's id
	stmts    map[uint32]*prepared

	ts       *ticket.Session
	stmt     *stmtContext // bounds each statement's wait for replication
	db       string
	setVars  map[string]any // session values set by the client
	userVars map[string]any
	warnings []model.Warning
	rowCount int64
	found    int64
	txnWrote bool
	// pinned is SET timestamp's value in Unix microseconds, 0 when NOW()
	// follows the clock (rowengine.go).
	pinned int64
	// rowCols: the columns of the row table read last (rows.go).
	rowCols rowColsMemo
}

func newSession(srv *Server) *session {
	s := &session{srv: srv, vars: srv.vars, id: srv.lastID.Add(1)}
	s.stmt = newStmtContext(srv.ctx, srv.cfg.StatementTimeout)
	s.reset()
	return s
}

// close releases what the session holds once its connection is gone.
func (s *session) close() { s.stmt.close() }

// connected starts the session of a client the connection phase
// authenticated, before the client is told it is in: a *mysql.MyError it
// returns is the client's answer instead.
func (s *session) connected(l mysqlconn.Login) error {
	s.user, s.login = l.User, l
	if err := s.refuseDraining(); err != nil {
		return err
	}
	// The session's defaults come from replicated global variables: read
	// them only once the local state may answer.
	if err := s.awaitLogin(); err != nil {
		return err
	}
	s.reset()
	if l.DB != "" {
		if err := s.use(l.DB); err != nil {
			return myErr(err)
		}
	}
	return nil
}

func (s *session) attach(c *server.Conn, cc *mysqlconn.Conn) { s.conn, s.cc = c, cc }

// reset returns the session to a fresh connection's state
// (COM_RESET_CONNECTION, COM_CHANGE_USER).
func (s *session) reset() {
	// MySQL deallocates the session's prepared statements; go-mysql keeps
	// its records of them, but executing one now answers 1243.
	clear(s.stmts)
	s.ts = ticket.NewSession(
		s.srv.svc.Global(ticket.VarIncrement, 1),
		s.srv.svc.Global(ticket.VarOffset, 1))
	s.setVars = map[string]any{}
	s.userVars = map[string]any{}
	s.warnings = nil
	s.rowCount = -1
	s.found = 0
	s.txnWrote = false
	s.pinned = 0
	if s.conn != nil {
		s.conn.SetStatus(mysql.SERVER_STATUS_AUTOCOMMIT)
		s.conn.UnsetStatus(mysql.SERVER_STATUS_IN_TRANS)
	}
}

// awaitState holds the session until the local state may answer a
// statement (Config.Gate), bounded by the statement timeout.
func (s *session) awaitState() error {
	g := s.srv.cfg.Gate
	if g == nil || g.Serving() == nil {
		return nil
	}
	ctx := s.stmt.begin()
	err := g.WaitServing(ctx)
	s.stmt.end()
	if err != nil {
		return packet(mysqlerr.New(mysqlerr.CodeReadOnly,
			"ticketd cannot answer from this node now (%v): nothing was done, retry or use another node", err))
	}
	return nil
}

// awaitRead holds a statement until the local state holds every write
// acknowledged before it began (Gate.WaitRead), bounded by the statement
// timeout.
func (s *session) awaitRead() error {
	g := s.srv.cfg.Gate
	if g == nil {
		return nil
	}
	ctx := s.stmt.begin()
	err := g.WaitRead(ctx)
	s.stmt.end()
	if err != nil {
		return packet(mysqlerr.New(mysqlerr.CodeReadOnly,
			"ticketd cannot confirm this node's state is current (%v): nothing was done, retry or use another node", err))
	}
	return nil
}

// awaitLogin is awaitState for the connection phase: the wait ends at
// loginBy if that comes before the statement timeout. The connect timeout
// bounds the whole phase; a login held until it ends would lose its
// connection without an answer (the client's 2013) instead of the 1290
// that says why.
func (s *session) awaitLogin() error {
	g := s.srv.cfg.Gate
	if g == nil || g.Serving() == nil {
		return nil
	}
	deadline := time.Now().Add(s.srv.cfg.StatementTimeout)
	if !s.loginBy.IsZero() && s.loginBy.Before(deadline) {
		deadline = s.loginBy
	}
	ctx, cancel := context.WithDeadline(s.srv.ctx, deadline)
	defer cancel()
	if err := g.WaitServing(ctx); err != nil {
		return packet(mysqlerr.New(mysqlerr.CodeReadOnly,
			"ticketd cannot answer from this node now (%v): nothing was done, retry or use another node", err))
	}
	return nil
}

// view reads the local state once it holds the session's own last write:
// through a follower, a REPLACE returns when the leader has applied it,
// and the follower applies it a commit interval later.
func (s *session) view(fn func(ticket.Store) error) error {
	if g := s.srv.cfg.Gate; g != nil && s.wrote > 0 && !g.Applied(s.wrote) {
		ctx := s.stmt.begin()
		err := g.WaitApplied(ctx, s.wrote)
		s.stmt.end()
		if err != nil {
			return err
		}
	}
	return s.srv.svc.View(fn)
}

// errNoDB is MySQL's answer to a statement that needs a database when none
// is selected.
func errNoDB() error {
	return packet(mysqlerr.New(mysqlerr.CodeNoDB, "No database selected"))
}

// Errors the replication sentinels become.
var (
	errNoQuorum = mysqlerr.New(mysqlerr.CodeReadOnly,
		"ticketd has no leader with a quorum: nothing was written, retry later")
	errUncertain = mysqlerr.New(mysqlerr.CodeUnknown,
		"ticketd could not confirm the commit (leader change or timeout): no id was handed out, retry")
	// errStopped answers a statement whose context the server cancelled
	// (Close: a stop past --shutdown-timeout, or a node that failed)
	// where the error does not say whether anything was proposed. It
	// was "context canceled", the text of 544f168's every stop.
	errStopped = mysqlerr.New(mysqlerr.CodeUnknown,
		"ticketd is stopping: the statement was cut short and its outcome is unknown (no id was handed out); retry on another node")
)

// myErr converts any error into the MySQL error the client sees: this is
// the one place where sql's and ticket's errors (both *mysqlerr.Error) and
// the replication sentinels become ERR packets.
func myErr(err error) error {
	var me *mysql.MyError
	var e *mysqlerr.Error
	switch {
	case errors.As(err, &me):
		return me
	case errors.As(err, &e):
	case errors.Is(err, ticket.ErrStorage):
		e = storageErr(err)
	case errors.Is(err, ticket.ErrNoQuorum):
		e = noQuorumErr(err)
	case errors.Is(err, ticket.ErrUncertain), errors.Is(err, context.DeadlineExceeded):
		e = errUncertain
	case errors.Is(err, context.Canceled):
		// A statement's context ends by its timeout or by the server's
		// Close (stmtContext's parent), nothing else.
		e = errStopped
	default:
		e = &mysqlerr.Error{Code: mysqlerr.CodeUnknown, Message: err.Error()}
	}
	return packet(e)
}

// leaderless is a refusal that knows since when the node has had no
// leader (raftstore.NoLeaderError): the node refused at once instead of
// waiting, and the client is told for how long there has been none.
type leaderless interface{ NoLeaderSince() time.Time }

// noQuorumErr is errNoQuorum, saying since when no leader is known where
// err knows it.
func noQuorumErr(err error) *mysqlerr.Error {
	var nl leaderless
	if !errors.As(err, &nl) {
		return errNoQuorum
	}
	since := nl.NoLeaderSince()
	return mysqlerr.New(mysqlerr.CodeReadOnly,
		"ticketd has had no leader with a quorum since %s UTC (%v): nothing was written, retry later or use another node",
		since.UTC().Format("15:04:05.000"), time.Since(since).Round(100*time.Millisecond))
}

// storageErr is the error of a statement that failed because a replica
// cannot write its Raft log: MySQL's 1021 "Disk full" when it is full,
// and whether anything was done, as for the replication errors.
func storageErr(err error) *mysqlerr.Error {
	done := "nothing was written"
	if errors.Is(err, ticket.ErrUncertain) {
		done = "the statement may or may not have been carried out (no id was handed out)"
	}
	msg := err.Error()
	if strings.Contains(msg, "no space left") || strings.Contains(msg, "quota exceeded") {
		return mysqlerr.New(mysqlerr.CodeDiskFull, "Disk full: %s; %s, and it serves again by itself once space is freed", msg, done)
	}
	return mysqlerr.New(mysqlerr.CodeUnknown, "%s; %s", msg, done)
}

// packet is e as go-mysql sends it.
func packet(e *mysqlerr.Error) *mysql.MyError {
	return &mysql.MyError{Code: e.Code, State: e.SQLState(), Message: e.Message}
}

// UseDB handles COM_INIT_DB.
func (s *session) UseDB(db string) error {
	if err := s.refuseDraining(); err != nil {
		return err
	}
	if err := s.use(db); err != nil {
		return s.countErr(myErr(err))
	}
	return nil
}

func (s *session) use(db string) error {
	if err := s.awaitState(); err != nil {
		return err
	}
	if strings.EqualFold(db, "information_schema") {
		s.db = "information_schema"
		return nil
	}
	if err := s.checkDB(db); err != nil {
		if !notFound(err) || s.srv.cfg.Gate == nil {
			return err
		}
		// Created through another node a moment ago? (see run)
		if werr := s.awaitRead(); werr != nil {
			return werr
		}
		if err := s.checkDB(db); err != nil {
			return err
		}
	}
	s.db = db
	return nil
}

// HandleQuery handles COM_QUERY, including several statements in one
// query when the client enabled CLIENT_MULTI_STATEMENTS: every result but
// the last goes out with SERVER_MORE_RESULTS_EXISTS, and an error ends the
// sequence, as in MySQL.
func (s *session) HandleQuery(query string) (*mysql.Result, error) {
	if err := s.refuseDraining(); err != nil {
		return nil, err
	}
	s.srv.questions.Add(1)
	// args are set when a template answered: a text that differs from
	// one parsed before only in its values runs as that text's plan with
	// the values as parameters (sql/template.go).
	plans, args, src, err := s.srv.plans.ParseQuery(query)
	s.srv.obs.QueryPlanned(src)
	if err != nil {
		s.warnings = nil
		s.srv.obs.Statement(StmtOther)
		return nil, s.countErr(myErr(err))
	}
	if len(plans) > 1 && !s.conn.HasCapability(mysql.CLIENT_MULTI_STATEMENTS) {
		return nil, s.countErr(packet(mysqlerr.SyntaxBecause("multiple statements need the CLIENT_MULTI_STATEMENTS option")))
	}
	for _, p := range plans[:len(plans)-1] {
		r, err := s.run(p, nil, false)
		if err != nil {
			return nil, err
		}
		s.conn.SetStatus(mysql.SERVER_MORE_RESULTS_EXISTS)
		werr := s.conn.WriteValue(r)
		s.conn.UnsetStatus(mysql.SERVER_MORE_RESULTS_EXISTS)
		if werr != nil {
			return nil, werr
		}
	}
	return s.run(plans[len(plans)-1], args, false)
}

// prepared is a server-side prepared statement.
type prepared struct {
	plan sql.Plan
}

// HandleStmtPrepare handles COM_STMT_PREPARE. Its context is go-mysql's
// *stmt.PreparedStmt, the one type whose column definitions go-mysql sends
// in the prepare response (otherwise it sends nameless ones, and clients
// that label rows from them, as Ruby's mysql2, get "" for every column);
// its ID is the key of the statement in s.stmts.
func (s *session) HandleStmtPrepare(query string) (int, int, any, error) {
	if err := s.refuseDraining(); err != nil {
		return 0, 0, nil, err
	}
	// go-mysql numbers this statement s.prepares, failed or not.
	s.prepares++
	plans, err := s.srv.plans.Parse(query)
	if err != nil {
		return 0, 0, nil, s.countErr(myErr(err))
	}
	if len(plans) != 1 {
		return 0, 0, nil, s.countErr(packet(mysqlerr.SyntaxBecause("a prepared statement holds one statement")))
	}
	// A statement ticketd refuses is refused here, with its own error:
	// prepared, it would announce no parameters (their count is not
	// known), and a client binding some would fail on that instead.
	switch p := plans[0].(type) {
	case *sql.Unsupported:
		return 0, 0, nil, s.countErr(myErr(unsupported(p.Reason)))
	case *sql.Failed:
		return 0, 0, nil, s.countErr(myErr(p.Err))
	}
	n := sql.ParamCount(plans[0])
	if s.cc != nil {
		s.cc.Prepared(s.prepares, n)
	}
	cols := s.columnDefs(plans[0])
	if s.stmts == nil {
		s.stmts = map[uint32]*prepared{}
	}
	s.stmts[s.prepares] = &prepared{plan: plans[0]}
	return n, len(cols), &stmt.PreparedStmt{ID: s.prepares, Params: n, Columns: len(cols), RawColumnFields: cols}, nil
}

// columnDefs are the column definitions a prepared statement announces:
// the labels its result will have. Clients read the rows' types from the
// execute response's own definitions.
func (s *session) columnDefs(p sql.Plan) [][]byte {
	sel, ok := p.(*sql.Select)
	if !ok {
		return nil
	}
	var defs [][]byte
	add := func(name string) {
		defs = append(defs, (&mysql.Field{Name: []byte(name), OrgName: []byte(name)}).Dump())
	}
	for _, f := range sel.Fields {
		if f.Expr.Kind != sql.ExprStar {
			add(f.Name)
			continue
		}
		names := []string{"", ""}
		if sel.From != nil {
			db := sel.From.DB
			if db == "" {
				db = s.db
			}
			if t, err := s.table(db, sel.From.Name); err == nil {
				names = names[:0]
				for _, c := range tableColumns(&t.Def) {
					names = append(names, c.name)
				}
			}
		}
		for _, n := range names {
			add(n)
		}
	}
	return defs
}

// HandleStmtExecute handles COM_STMT_EXECUTE. Errors are written here:
// go-mysql wraps errors returned from this method, which would turn every
// MySQL error code into 1105.
func (s *session) HandleStmtExecute(ctx any, query string, args []any) (*mysql.Result, error) {
	s.srv.questions.Add(1)
	var ps *prepared
	if st, ok := ctx.(*stmt.PreparedStmt); ok {
		ps = s.stmts[st.ID]
	}
	var r *mysql.Result
	err := s.refuseDraining()
	if err != nil {
		// Answered below, like any error of an execute.
	} else if ps != nil {
		r, err = s.run(ps.plan, args, true)
	} else {
		err = s.countErr(packet(mysqlerr.New(mysqlerr.CodeUnknownStmtHandler, "Unknown prepared statement handler given to mysqld_stmt_execute")))
	}
	if err != nil {
		if werr := s.conn.WriteValue(err); werr != nil {
			return nil, werr
		}
		return written(), nil
	}
	return r, nil
}

// written is a result that go-mysql sends as nothing at all, for replies
// the session already wrote itself.
func written() *mysql.Result {
	return &mysql.Result{Resultset: &mysql.Resultset{
		Fields:        []*mysql.Field{{}},
		Streaming:     mysql.StreamingMultiple,
		StreamingDone: true,
	}}
}

// HandleStmtClose handles COM_STMT_CLOSE.
func (s *session) HandleStmtClose(ctx any) error {
	if st, ok := ctx.(*stmt.PreparedStmt); ok {
		delete(s.stmts, st.ID)
	}
	return nil
}

// HandleFieldList handles COM_FIELD_LIST (the column list of a table).
func (s *session) HandleFieldList(table string, wildcard string) ([]*mysql.Field, error) {
	if err := s.refuseDraining(); err != nil {
		return nil, err
	}
	if s.db == "" {
		return nil, errNoDB()
	}
	if err := s.awaitState(); err != nil {
		return nil, err
	}
	t, err := s.table(s.db, table)
	if err != nil {
		return nil, myErr(err)
	}
	var fields []*mysql.Field
	for _, c := range tableColumns(&t.Def) {
		if wildcard != "" && !likeMatch(wildcard, c.name) {
			continue
		}
		fields = append(fields, &mysql.Field{
			Schema: []byte(s.db), Table: []byte(table), OrgTable: []byte(table),
			Name: []byte(c.name), OrgName: []byte(c.name), Type: c.typ, Charset: 45, ColumnLength: 20,
		})
	}
	return fields, nil
}

// HandleOtherCommand answers the commands go-mysql leaves to the handler.
// refreshHosts is COM_REFRESH's REFRESH_HOSTS flag.
const refreshHosts = 0x08

func (s *session) HandleOtherCommand(cmd byte, data []byte) error {
	if err := s.refuseDraining(); err != nil {
		return err
	}
	switch cmd {
	case mysql.COM_RESET_CONNECTION:
		s.reset()
		return nil
	case mysql.COM_CHANGE_USER:
		return s.changeUser(data)
	case mysql.COM_STATISTICS:
		return s.statistics()
	case mysql.COM_SET_OPTION:
		if len(data) >= 2 {
			switch uint16(data[0]) | uint16(data[1])<<8 {
			case mysql.MYSQL_OPTION_MULTI_STATEMENTS_ON:
				s.conn.SetCapability(mysql.CLIENT_MULTI_STATEMENTS)
			case mysql.MYSQL_OPTION_MULTI_STATEMENTS_OFF:
				s.conn.UnsetCapability(mysql.CLIENT_MULTI_STATEMENTS)
			}
		}
		return nil
	case mysql.COM_REFRESH:
		// mysqladmin flush-hosts; the other reloads have nothing to do.
		if len(data) > 0 && data[0]&refreshHosts != 0 {
			if s.login.Role != mysqlconn.RoleAdmin {
				return packet(errNeedReload())
			}
			s.srv.acceptor.FlushHosts()
		}
		return nil
	case mysql.COM_DEBUG:
		return nil
	default:
		return packet(mysqlerr.New(mysqlerr.CodeUnknownCommand, "Unknown command"))
	}
}

// changeUser handles COM_CHANGE_USER: a full re-authentication
// (mysqlconn.Acceptor.ChangeUser), then a fresh session for the new user.
// As in MySQL, a refused change ends the connection.
func (s *session) changeUser(data []byte) error {
	l, err := s.srv.acceptor.ChangeUser(s.cc, data, s.login)
	if err != nil {
		s.quit = true
		return err
	}
	s.user, s.login = l.User, l
	s.reset()
	s.db = ""
	if l.DB != "" {
		if err := s.use(l.DB); err != nil {
			s.quit = true
			return myErr(err)
		}
	}
	return nil
}

// statistics answers COM_STATISTICS with MySQL's status line, a bare
// string packet: it is written here and go-mysql's OK dropped.
func (s *session) statistics() error {
	up := max(int64(timeSince(s.srv.start)), 1)
	s.srv.mu.Lock()
	threads := len(s.srv.conns)
	s.srv.mu.Unlock()
	q := s.srv.questions.Load()
	line := fmt.Sprintf("Uptime: %d  Threads: %d  Questions: %d  Slow queries: 0  Opens: 0  Flush tables: 0  Open tables: 0  Queries per second avg: %.3f",
		up, threads, q, float64(q)/float64(up))
	if err := s.conn.WritePacket(append(make([]byte, 4), line...)); err != nil {
		return err
	}
	s.cc.DropReply()
	return nil
}

// table reads a table's state from the local replica.
func (s *session) table(db, name string) (*model.Table, error) {
	var t *model.Table
	err := s.view(func(st ticket.Store) (err error) {
		t, err = st.Table(db, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	if t == nil {
		if seqEngineTable.MatchString(name) {
			// MariaDB answers these from its SEQUENCE engine, in any
			// database.
			return nil, unsupported("the SEQUENCE engine's seq_N_to_M tables")
		}
		return nil, mysqlerr.NoSuchTable(db, name)
	}
	return t, nil
}

// seqEngineTable names MariaDB's SEQUENCE engine tables (seq_1_to_10,
// seq_1_to_10_step_2).
var seqEngineTable = regexp.MustCompile(`(?i)^seq_[0-9]+_to_[0-9]+(_step_[0-9]+)?$`)

// exec commits a command, bounded by the statement timeout, and applies
// its effect on the session.
func (s *session) exec(c *model.Command) (model.Result, error) {
	r, ok := s.srv.svc.TryExec(c)
	if !ok {
		ctx := s.stmt.begin()
		var err error
		r, err = s.srv.svc.ExecFor(ctx, s.ts, c)
		s.stmt.end()
		if err != nil {
			return r, err
		}
	}
	s.wrote = max(s.wrote, r.Index)
	s.ts.Observe(&r)
	if r.Err != nil {
		return r, r.Err
	}
	return r, nil
}
