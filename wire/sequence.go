package wire

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// sequence evaluates NEXTVAL, LASTVAL and SETVAL. NEXTVAL commits (or is
// served from the leader's cache) before the row is built, so that a
// SELECT with two NEXTVALs takes two values in order, as in MariaDB.
func (e *evalCtx) sequence(x *sql.Expr) (any, error) {
	v, err := e.sequenceValue(x)
	var me *mysqlerr.Error
	if err != nil && e.from && errors.As(err, &me) && me.Code == mysqlerr.CodeUnknownSequence {
		db, _ := e.s.dbFor(*x.Seq)
		return nil, mysqlerr.NoSuchTable(db, x.Seq.Name)
	}
	return v, err
}

func (e *evalCtx) sequenceValue(x *sql.Expr) (any, error) {
	s := e.s
	db, err := s.dbFor(*x.Seq)
	if err != nil {
		return nil, err
	}
	name := x.Seq.Name
	switch x.Name {
	case "NEXTVAL":
		r, err := s.exec(&model.Command{Op: model.OpSeqNext, DB: db, Table: name, Seq: &model.SeqCommand{Count: 1}})
		if err != nil {
			return nil, err
		}
		v := int64(r.First)
		s.ts.SetLastVal(db, name, v)
		return v, nil
	case "LASTVAL":
		if err := s.checkSequence(db, name); err != nil {
			return nil, err
		}
		if v, ok := s.ts.LastVal(db, name); ok {
			return v, nil
		}
		return nil, nil
	case "SETVAL":
		if len(x.Args) != 1 {
			return nil, unsupported("SETVAL with these arguments")
		}
		a, err := e.eval(&x.Args[0])
		if err != nil {
			return nil, err
		}
		n, ok := toInt(a)
		if !ok {
			return nil, unsupported("SETVAL of this value")
		}
		r, err := s.exec(&model.Command{Op: model.OpSetVal, DB: db, Table: name, Seq: &model.SeqCommand{Value: n}})
		if err != nil {
			return nil, err
		}
		s.noteTxnWrite()
		if r.Affected == 0 {
			return nil, nil // behind the sequence's next value: nothing changed
		}
		return n, nil
	}
	return nil, unsupported("function " + x.Name)
}

// checkSequence answers MariaDB's errors for a name that is not a sequence.
//
// A sequence the local state already has is taken without waiting for the
// session's own last write to be applied here: the leader's Apply checks
// again, and on a follower that wait is a commit interval (10-20 ms) for
// every NEXTVAL after the first, the previous one being the session's last
// write. Only a name not found (yet) waits, so that CREATE SEQUENCE then
// NEXTVAL on a follower still finds it.
func (s *session) checkSequence(db, name string) error {
	var t *model.Table
	get := func(st ticket.Store) (err error) {
		t, err = st.Table(db, name)
		return err
	}
	if err := s.srv.svc.View(get); err != nil {
		return err
	}
	if t == nil || t.Def.Seq == nil {
		if err := s.view(get); err != nil {
			return err
		}
	}
	switch {
	case t == nil:
		return mysqlerr.UnknownSequence(name)
	case t.Def.Seq == nil:
		return mysqlerr.NotSequence(db, name, false)
	}
	return nil
}

// setvalTarget is the sequence a SELECT's SETVAL changes, if any.
func setvalTarget(p *sql.Select) *sql.TableName {
	var find func(e *sql.Expr) *sql.TableName
	find = func(e *sql.Expr) *sql.TableName {
		if e.Kind == sql.ExprSequence && e.Name == "SETVAL" {
			return e.Seq
		}
		for i := range e.Args {
			if t := find(&e.Args[i]); t != nil {
				return t
			}
		}
		return nil
	}
	for i := range p.Fields {
		if t := find(&p.Fields[i].Expr); t != nil {
			return t
		}
	}
	return nil
}

func seqOptions(opts []sql.SeqOption) []model.SeqOption {
	out := make([]model.SeqOption, len(opts))
	for i, o := range opts {
		out[i] = model.SeqOption{Kind: model.SeqOptionKind(o.Kind), Value: o.Value}
	}
	return out
}

func (s *session) sequenceDDL(p sql.Plan) (*mysql.Result, error) {
	switch p := p.(type) {
	case *sql.CreateSequence:
		db, err := s.dbFor(p.Table)
		if err != nil {
			return nil, err
		}
		def, warns, err := ticket.NewSequenceDef(db, p.Table.Name, p.Engine, seqOptions(p.Options))
		if err != nil {
			return nil, err
		}
		s.warnings = append(s.warnings, warns...)
		def.Comment = p.Comment
		r, err := s.exec(&model.Command{Op: model.OpCreateSeq, DB: db, Table: def.Name, Def: def, IfExists: p.IfNotExists})
		return s.ok(r), err
	case *sql.AlterSequence:
		db, err := s.dbFor(p.Table)
		if err != nil {
			return nil, err
		}
		r, err := s.exec(&model.Command{Op: model.OpAlterSeq, DB: db, Table: p.Table.Name,
			Seq: &model.SeqCommand{Options: seqOptions(p.Options)}})
		if p.IfExists && r.Err != nil && r.Err.Code == mysqlerr.CodeUnknownSequence {
			s.warnings = append(s.warnings, model.Warning{Level: "Note", Code: r.Err.Code,
				Message: mysqlerr.UnknownSequence(db + "." + p.Table.Name).Message})
			return okResult(0, 0), nil
		}
		return s.ok(r), err
	case *sql.DropSequence:
		var unknown []string
		for _, t := range p.Tables {
			db, err := s.dbFor(t)
			if err != nil {
				return nil, err
			}
			r, err := s.exec(&model.Command{Op: model.OpDropSeq, DB: db, Table: t.Name, IfExists: p.IfExists})
			s.warnings = append(s.warnings, r.Warnings...)
			if r.Err != nil && r.Err.Code == mysqlerr.CodeUnknownSequence {
				unknown = append(unknown, db+"."+t.Name)
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		if len(unknown) > 0 {
			return nil, mysqlerr.UnknownSequence(strings.Join(unknown, ","))
		}
		return okResult(0, 0), nil
	}
	return nil, unsupported(fmt.Sprintf("statement %T", p))
}

func (s *session) showCreateSequence(p *sql.Show, rs *rowset) error {
	t, err := s.showTable(p.Table)
	if err != nil {
		return err
	}
	if t.Def.Seq == nil {
		return mysqlerr.NotSequence(t.Def.DB, t.Def.Name, false)
	}
	rs.cols = strCols("Table", "Create Table")
	rs.add(t.Def.Name, ticket.CreateSequenceStatement(&t.Def))
	return nil
}

// createStatement is SHOW CREATE TABLE's text: MariaDB shows a sequence
// as the table that holds its row.
func createStatement(t *model.Table) string {
	if t.Def.Seq != nil {
		return ticket.CreateSequenceTableStatement(&t.Def)
	}
	return ticket.CreateStatement(t)
}

// tableType is SHOW FULL TABLES' Table_type and information_schema's TABLE_TYPE.
func tableType(t *model.Table) string {
	if t.Def.Seq != nil {
		return "SEQUENCE"
	}
	return "BASE TABLE"
}

func sequenceColumns() []column {
	cols := make([]column, len(ticket.SequenceColumns))
	for i, n := range ticket.SequenceColumns {
		cols[i] = column{name: n, typ: mysql.MYSQL_TYPE_LONGLONG}
	}
	return cols
}

// sequenceSource is SELECT ... FROM a sequence: its one row.
func sequenceSource(t *model.Table) *source {
	src := &source{}
	src.cols = sequenceColumns()
	for i := range src.cols {
		src.cols[i].table, src.cols[i].db = t.Def.Name, t.Def.DB
	}
	vals := t.Def.Seq.SequenceRow()
	row := make([]any, len(vals))
	for i, v := range vals {
		row[i] = v
	}
	src.rows = append(src.rows, row)
	return src
}
