package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// SeqOptionKind is an option of CREATE or ALTER SEQUENCE; the numbers are
// model.SeqOptionKind's.
type SeqOptionKind uint8

// Sequence options, as ticket numbers them.
const (
	SeqStart       SeqOptionKind = 1
	SeqIncrement   SeqOptionKind = 2
	SeqMin         SeqOptionKind = 3
	SeqNoMin       SeqOptionKind = 4
	SeqMax         SeqOptionKind = 5
	SeqNoMax       SeqOptionKind = 6
	SeqCache       SeqOptionKind = 7
	SeqNoCache     SeqOptionKind = 8
	SeqCycle       SeqOptionKind = 9
	SeqNoCycle     SeqOptionKind = 10
	SeqRestart     SeqOptionKind = 11
	SeqRestartWith SeqOptionKind = 12
)

// SeqOption is one option as written.
type SeqOption struct {
	Kind  SeqOptionKind
	Value int64
}

// CreateSequence is MariaDB's CREATE SEQUENCE [IF NOT EXISTS] s [options]
// [ENGINE=e] [COMMENT='c'].
type CreateSequence struct {
	Table       TableName
	IfNotExists bool
	Options     []SeqOption
	Engine      string
	Comment     string // ticketd's options: 'ticketd:scope=node'
}

// AlterSequence is ALTER SEQUENCE [IF EXISTS] s options (RESTART included).
type AlterSequence struct {
	Table    TableName
	IfExists bool
	Options  []SeqOption
}

// DropSequence is DROP SEQUENCE [IF EXISTS] a, b.
type DropSequence struct {
	Tables   []TableName
	IfExists bool
}

func (*CreateSequence) isPlan() {}
func (*AlterSequence) isPlan()  {}
func (*DropSequence) isPlan()   {}

// The parser's option types, in ticket's numbers.
var seqOptionKinds = map[ast.SequenceOptionType]SeqOptionKind{
	ast.SequenceStartWith:         SeqStart,
	ast.SequenceOptionIncrementBy: SeqIncrement,
	ast.SequenceMinValue:          SeqMin,
	ast.SequenceNoMinValue:        SeqNoMin,
	ast.SequenceMaxValue:          SeqMax,
	ast.SequenceNoMaxValue:        SeqNoMax,
	ast.SequenceCache:             SeqCache,
	ast.SequenceNoCache:           SeqNoCache,
	ast.SequenceCycle:             SeqCycle,
	ast.SequenceNoCycle:           SeqNoCycle,
	ast.SequenceRestart:           SeqRestart,
	ast.SequenceRestartWith:       SeqRestartWith,
}

func seqOptions(opts []*ast.SequenceOption) ([]SeqOption, error) {
	out := make([]SeqOption, 0, len(opts))
	for _, o := range opts {
		k, ok := seqOptionKinds[o.Tp]
		if !ok {
			return nil, unsupported("sequence option " + nodeSQL(o))
		}
		out = append(out, SeqOption{Kind: k, Value: o.IntValue})
	}
	return out, nil
}

func sequenceStmt(stmt ast.StmtNode) (Plan, error) {
	switch s := stmt.(type) {
	case *ast.CreateSequenceStmt:
		opts, err := seqOptions(s.SeqOptions)
		if err != nil {
			return nil, err
		}
		plan := &CreateSequence{Table: *tableName(s.Name), IfNotExists: s.IfNotExists, Options: opts}
		for _, o := range s.TblOptions {
			switch o.Tp {
			case ast.TableOptionEngine:
				plan.Engine = o.StrValue
			case ast.TableOptionComment:
				plan.Comment = o.StrValue
			}
			// Charset and the like change nothing for a sequence.
		}
		return plan, nil
	case *ast.AlterSequenceStmt:
		opts, err := seqOptions(s.SeqOptions)
		if err != nil {
			return nil, err
		}
		return &AlterSequence{Table: *tableName(s.Name), IfExists: s.IfExists, Options: opts}, nil
	case *ast.DropSequenceStmt:
		plan := &DropSequence{IfExists: s.IfExists, Tables: make([]TableName, len(s.Sequences))}
		for i, t := range s.Sequences {
			plan.Tables[i] = *tableName(t)
		}
		return plan, nil
	}
	return nil, unsupported(stmtReason(stmt))
}

// sequenceCall converts NEXTVAL(s) / NEXT VALUE FOR s, LASTVAL(s) and
// SETVAL(s, n), which the parser gives as calls with a table-name
// argument. ok is false for other functions. (The parser reads neither
// PREVIOUS VALUE FOR nor SETVAL's optional third and fourth arguments.)
func sequenceCall(f *ast.FuncCallExpr, sc scope) (Expr, bool, error) {
	name := f.FnName.L
	if name != ast.NextVal && name != ast.LastVal && name != ast.SetVal || len(f.Args) == 0 {
		return Expr{}, false, nil
	}
	tn, ok := f.Args[0].(*ast.TableNameExpr)
	if !ok || tn.Name == nil {
		return Expr{}, false, nil
	}
	out := Expr{Kind: ExprSequence, Name: strings.ToUpper(name), Seq: tableName(tn.Name)}
	for _, a := range f.Args[1:] {
		e, err := expr(a, sc)
		if err != nil {
			return Expr{}, true, err
		}
		out.Args = append(out.Args, e)
	}
	return out, true, nil
}
