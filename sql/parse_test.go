package sql

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// Builders keep the expected plans readable.

func iv(n int64) Value     { return Value{Kind: ValInt, Int: n} }
func uv(n uint64) Value    { return Value{Kind: ValUint, Uint: n} }
func sv(s string) Value    { return Value{Kind: ValString, Str: s} }
func dv(s string) Value    { return Value{Kind: ValDecimal, Str: s} }
func pv(i int) Value       { return Value{Kind: ValParam, Param: i} }
func val(v Value) Expr     { return Expr{Kind: ExprValue, Value: v} }
func col(name string) Expr { return Expr{Kind: ExprColumn, Name: name} }
func ident(s string) Expr  { return Expr{Kind: ExprIdent, Name: s} }
func user(s string) Expr   { return Expr{Kind: ExprUserVar, Name: s} }

var (
	null = Value{Kind: ValNull}
	def  = Value{Kind: ValDefault}
	star = Expr{Kind: ExprStar}
)

func sys(name string, sc Scope) Expr { return Expr{Kind: ExprSysVar, Name: name, Scope: sc} }
func lid(args ...Expr) Expr          { return Expr{Kind: ExprLastInsertID, Args: args} }
func fn(name string, args ...Expr) Expr {
	return Expr{Kind: ExprFunc, Name: name, Args: args}
}
func arith(op byte, l, r Expr) Expr {
	return Expr{Kind: ExprArith, Op: op, Args: []Expr{l, r}}
}
func field(name string, e Expr) SelectField { return SelectField{Expr: e, Name: name} }
func sel(fields ...SelectField) *Select     { return &Select{Fields: fields} }
func tbl(db, name string) *TableName        { return &TableName{DB: db, Name: name} }
func setv(name string, e Expr) SetVar       { return SetVar{Name: name, Value: e} }
func unsup(reason string) *Unsupported      { return &Unsupported{Reason: reason} }

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

type planCase struct {
	query string
	want  []Plan
}

func runPlanCases(t *testing.T, cases []planCase) {
	t.Helper()
	for _, c := range cases {
		got, err := Parse(c.query)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.query, err)
			continue
		}
		got = ticketForms(got)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q)\n got %s\nwant %s", c.query, dumpPlans(got), dumpPlans(c.want))
		}
	}
}

// updateView and insertView are what TestParseUpdate and
// TestParseInsert compare: the ticket form (TicketForm, TicketOnDup) and
// the simple assignments (ColSets) derived from the one plan, in the
// shape plans had when they carried the ticket form beside the row form,
// so that the cases written for that shape check that the derived forms
// are the same.
type updateView struct {
	Table     TableName
	Set       Assign
	Where     []Cond
	Sets      []ColSet
	TicketErr error
}

type insertView struct {
	Table        TableName
	Replace      bool
	Ignore       bool
	Columns      []string
	Rows         [][]Value
	Exprs        [][]Expr
	OnDup        *Assign
	OnDupErr     error
	OnDupAssigns []ColAssign
}

func (*updateView) isPlan() {}
func (*insertView) isPlan() {}

// ticketForms turns Update and Insert plans into their views and drops
// the row engine's parts of Select plans (Filter and the errors beside
// it) and Delete's ORDER BY and LIMIT, which TestParseRowForm checks:
// the cases here are about the ticket forms. A 1235 is compared as the
// unsupported value it came from.
func ticketForms(ps []Plan) []Plan {
	back := func(err error) error {
		var e *Error
		if errors.As(err, &e) && e.Code == mysqlerr.CodeNotSupported {
			if _, rest, ok := strings.Cut(e.Message, "support '"); ok {
				return unsupported(strings.TrimSuffix(rest, "'"))
			}
		}
		return err
	}
	out := make([]Plan, len(ps))
	for i, p := range ps {
		switch x := p.(type) {
		case *Select:
			c := *x
			c.Filter, c.FilterErr, c.WhereErr = nil, nil, nil
			p = &c
		case *Update:
			tf, err := x.TicketForm()
			v := &updateView{Table: x.Table, Set: tf.Set, TicketErr: back(err)}
			if x.Filter != nil {
				v.Where, _ = ticketConds(x.Filter)
			}
			if err != nil {
				// The id assignment as far as it goes: what the ticket
				// form held beside an error in the WHERE.
				if x.OrderBy == nil && !x.HasLimit && len(x.Assigns) == 1 {
					v.Set, _ = ticketAssign(&x.Assigns[0], false)
				}
				v.Sets = x.ColSets()
			}
			p = v
		case *Insert:
			a, err := x.TicketOnDup()
			p = &insertView{Table: x.Table, Replace: x.Replace, Ignore: x.Ignore, Columns: x.Columns, Rows: x.Rows,
				Exprs: x.Exprs, OnDup: a, OnDupErr: err, OnDupAssigns: x.OnDup}
		case *Delete:
			c := *x
			c.OrderBy, c.HasLimit, c.Limit = nil, false, 0
			p = &c
		}
		out[i] = p
	}
	return out
}

func dumpPlans(ps []Plan) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(reflect.TypeOf(p).String())
		b.WriteString(dump(p))
		b.WriteString("; ")
	}
	return b.String()
}

func one(p Plan) []Plan { return []Plan{p} }

func TestParseInsert(t *testing.T) {
	ticketRow := [][]Value{{sv("a")}}
	runPlanCases(t, []planCase{
		{"REPLACE INTO Tickets64 (stub) VALUES ('a')", one(&insertView{
			Table: TableName{Name: "Tickets64"}, Replace: true, Columns: []string{"stub"}, Rows: ticketRow})},
		{"replace into flickr.Tickets64 (STUB) values ('a'),('a'),('a')", one(&insertView{
			Table: TableName{DB: "flickr", Name: "Tickets64"}, Replace: true, Columns: []string{"stub"},
			Rows: [][]Value{{sv("a")}, {sv("a")}, {sv("a")}}})},
		{"INSERT INTO t (stub) VALUES ('a')", one(&insertView{
			Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: ticketRow})},
		{"INSERT IGNORE INTO t (stub) VALUES ('a')", one(&insertView{
			Table: TableName{Name: "t"}, Ignore: true, Columns: []string{"stub"}, Rows: ticketRow})},
		{"INSERT INTO t VALUES (1, -2, 'x', NULL, DEFAULT, ?, 18446744073709551615, -9223372036854775808, 1.5, -2.50, +7, - -3)",
			one(&insertView{Table: TableName{Name: "t"}, Rows: [][]Value{{
				iv(1), iv(-2), sv("x"), null, def, pv(0), uv(18446744073709551615), iv(-9223372036854775808),
				dv("1.5"), dv("-2.50"), iv(7), iv(3)}}})},
		{"INSERT INTO t (id, stub) VALUES (?, ?), (?, 'b')", one(&insertView{
			Table: TableName{Name: "t"}, Columns: []string{"id", "stub"},
			Rows: [][]Value{{pv(0), pv(1)}, {pv(2), sv("b")}}})},
		{"INSERT INTO t SET stub='a'", one(&insertView{
			Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: ticketRow})},
		{"INSERT INTO t SET Stub = 'a', id = DEFAULT", one(&insertView{
			Table: TableName{Name: "t"}, Columns: []string{"stub", "id"}, Rows: [][]Value{{sv("a"), def}}})},
		{"INSERT INTO t () VALUES ()", one(&insertView{Table: TableName{Name: "t"}, Rows: [][]Value{{}}})},
		{"INSERT INTO t (stub) VALUES ('e') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)", one(&insertView{
			Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: [][]Value{{sv("e")}},
			OnDup:        &Assign{Column: "id", SetLastID: true, Delta: 1},
			OnDupAssigns: []ColAssign{{Column: "id", Expr: lid(arith('+', col("id"), val(iv(1))))}}})},
		{"INSERT INTO t (stub) VALUES ('e') ON DUPLICATE KEY UPDATE ID=id+1", one(&insertView{
			Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: [][]Value{{sv("e")}},
			OnDup:        &Assign{Column: "id", Delta: 1},
			OnDupAssigns: []ColAssign{{Column: "id", Expr: arith('+', col("id"), val(iv(1)))}}})},
		{"INSERT INTO t (stub) VALUES ('e') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(5)", one(&insertView{
			Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: [][]Value{{sv("e")}},
			OnDup:        &Assign{Column: "id", SetLastID: true, Absolute: true, Value: iv(5)},
			OnDupAssigns: []ColAssign{{Column: "id", Expr: lid(val(iv(5)))}}})},
		{"INSERT INTO t (stub) VALUES ('e') ON DUPLICATE KEY UPDATE id = VALUES(id)", one(&insertView{
			Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: [][]Value{{sv("e")}},
			OnDup:        &Assign{Column: "id", FromValues: true},
			OnDupAssigns: []ColAssign{{Column: "id", Expr: Expr{Kind: ExprValues, Name: "id"}}}})},
		{"INSERT INTO t (stub) VALUES ('e') ON DUPLICATE KEY UPDATE t.id = LAST_INSERT_ID(t.id - 3)", one(&insertView{
			Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: [][]Value{{sv("e")}},
			OnDup:        &Assign{Column: "id", SetLastID: true, Delta: -3},
			OnDupAssigns: []ColAssign{{Column: "id", Expr: lid(arith('-', col("id"), val(iv(3))))}}})},

		{"INSERT INTO t SELECT * FROM u", one(unsup("INSERT ... SELECT"))},
		{"REPLACE INTO t SELECT 1", one(unsup("REPLACE ... SELECT"))},
		{"INSERT INTO t VALUES (1 + 1, NOW() + INTERVAL 1 DAY, -5, DEFAULT)", one(&insertView{Table: TableName{Name: "t"},
			Rows: [][]Value{{{Kind: ValExpr}, {Kind: ValExpr}, iv(-5), def}},
			Exprs: [][]Expr{{arith('+', val(iv(1)), val(iv(1))),
				{Kind: ExprInterval, Name: "DAY", Op: '+', Args: []Expr{val(Value{Kind: ValNow}), val(iv(1))}}, {}, {}}}})},
		{"INSERT INTO t VALUES (1), (? * 2)", one(&insertView{Table: TableName{Name: "t"},
			Rows: [][]Value{{iv(1)}, {{Kind: ValExpr}}}, Exprs: [][]Expr{nil, {arith('*', val(pv(0)), val(iv(2)))}}})},
		{"INSERT INTO t VALUES ((SELECT 1))", one(unsup("subquery"))},
		{"INSERT INTO t VALUES (1, a + 1)", one(&insertView{Table: TableName{Name: "t"}, Rows: [][]Value{{iv(1), {Kind: ValExpr}}},
			Exprs: [][]Expr{{{}, arith('+', col("a"), val(iv(1)))}}})},
		{"INSERT INTO t VALUES (VALUES(a))", one(unsup("VALUES() outside ON DUPLICATE KEY UPDATE"))},
		{"INSERT INTO t VALUES (NOW())", one(&insertView{Table: TableName{Name: "t"}, Rows: [][]Value{{{Kind: ValNow}}}})},
		{"INSERT INTO t VALUES (CURRENT_TIMESTAMP, now(), 1)", one(&insertView{Table: TableName{Name: "t"}, Rows: [][]Value{{{Kind: ValNow}, {Kind: ValNow}, iv(1)}}})},
		{"INSERT INTO t VALUES (0x61)", one(unsup("hexadecimal or bit literal"))},
		{"INSERT INTO t VALUES (_latin1'a')", one(unsup("the character set introducer _latin1"))},
		{"DELETE FROM t WHERE s = _latin1'a'", one(unsup("the character set introducer _latin1"))},
		// Forms only row tables take: the ticket form's error is kept for
		// the wire layer to answer on a ticket table.
		{"INSERT INTO t (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id * 2", one(&insertView{Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: ticketRow,
			OnDupErr:     mysqlerr.NotSupported("SET id = expression"),
			OnDupAssigns: []ColAssign{{Column: "id", Expr: arith('*', col("id"), val(iv(2)))}}})},
		{"INSERT INTO t (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = VALUES(stub)", one(&insertView{Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: ticketRow,
			OnDupErr:     mysqlerr.NotSupported("SET id = expression"),
			OnDupAssigns: []ColAssign{{Column: "id", Expr: Expr{Kind: ExprValues, Name: "stub"}}}})},
		{"INSERT INTO t (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id + 1, stub = 'b'", one(&insertView{Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: ticketRow,
			OnDupErr: mysqlerr.NotSupported("ON DUPLICATE KEY UPDATE of several columns on a ticket table"),
			OnDupAssigns: []ColAssign{{Column: "id", Expr: arith('+', col("id"), val(iv(1)))},
				{Column: "stub", Expr: val(sv("b"))}}})},
		{"INSERT INTO t (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = id + ?", one(&insertView{Table: TableName{Name: "t"}, Columns: []string{"stub"}, Rows: ticketRow,
			OnDupErr:     mysqlerr.NotSupported("SET id = expression"),
			OnDupAssigns: []ColAssign{{Column: "id", Expr: arith('+', col("id"), val(pv(0)))}}})},
		// Refused in both forms.
		{"INSERT INTO t (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = CONCAT(id, 'x')", one(unsup("SET id = expression"))},
		{"INSERT INTO t (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = (SELECT 1)", one(unsup("SET id = expression"))},
	})
}

func TestParseUpdate(t *testing.T) {
	seq := TableName{Name: "seq"}
	runPlanCases(t, []planCase{
		{"UPDATE seq SET id = LAST_INSERT_ID(id + 1)", one(&updateView{Table: seq,
			Set: Assign{Column: "id", SetLastID: true, Delta: 1}})},
		{"update db.seq set ID = last_insert_id(ID+1) where stub = 'x'", one(&updateView{Table: TableName{DB: "db", Name: "seq"},
			Set:   Assign{Column: "id", SetLastID: true, Delta: 1},
			Where: []Cond{{Column: "stub", Value: sv("x")}}})},
		{"UPDATE seq SET id = id - 1", one(&updateView{Table: seq, Set: Assign{Column: "id", Delta: -1}})},
		{"UPDATE seq SET id = 10 + id", one(&updateView{Table: seq, Set: Assign{Column: "id", Delta: 10}})},
		{"UPDATE seq SET id = (id + (1))", one(&updateView{Table: seq, Set: Assign{Column: "id", Delta: 1}})},
		{"UPDATE seq SET id = LAST_INSERT_ID(42)", one(&updateView{Table: seq, Set: Assign{Column: "id", SetLastID: true, Absolute: true, Value: iv(42)}})},
		{"UPDATE seq SET id = 7", one(&updateView{Table: seq, Set: Assign{Column: "id", Absolute: true, Value: iv(7)}})},
		{"UPDATE seq SET id = LAST_INSERT_ID(?) WHERE stub = ? AND k = 'v'", one(&updateView{Table: seq,
			Set:   Assign{Column: "id", SetLastID: true, Absolute: true, Value: pv(0)},
			Where: []Cond{{Column: "stub", Value: pv(1)}, {Column: "k", Value: sv("v")}},
			// Two WHERE terms: the ticket form cannot hold them (a ticket
			// table's UPDATE matches one column), the row form can.
			TicketErr: unsupported("WHERE of several conditions on a ticket table"),
			Sets:      []ColSet{{Column: "id", A: Operand{Value: pv(0)}, SetLastID: true}}})},
		{"UPDATE seq s SET s.id = s.id + 1 WHERE 'a' = s.stub", one(&updateView{Table: seq,
			Set:   Assign{Column: "id", Delta: 1},
			Where: []Cond{{Column: "stub", Value: sv("a")}}})},

		{"UPDATE seq SET id = id * 2", one(&updateView{Table: seq, TicketErr: unsupported("SET id = expression")})},
		{"UPDATE seq SET id = other + 1", one(&updateView{Table: seq, TicketErr: unsupported("SET id = expression"),
			Sets: []ColSet{{Column: "id", A: Operand{Column: "other"}, Op: '+', B: Operand{Value: iv(1)}}}})},
		// Leaf-segment and Tinyid, in row form.
		{"UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?", one(&updateView{Table: TableName{Name: "leaf_alloc"},
			TicketErr: unsupported("SET max_id = expression"),
			Sets:      []ColSet{{Column: "max_id", A: Operand{Column: "max_id"}, Op: '+', B: Operand{Column: "step"}}},
			Where:     []Cond{{Column: "biz_tag", Value: Value{Kind: ValParam}}}})},
		{"update tiny_id_info set max_id= ?, update_time=now(), version=version+1 where id=? and version=?", one(&updateView{Table: TableName{Name: "tiny_id_info"},
			TicketErr: unsupported("UPDATE of several columns"),
			Sets: []ColSet{{Column: "max_id", A: Operand{Value: Value{Kind: ValParam}}},
				{Column: "update_time", A: Operand{Value: Value{Kind: ValNow}}},
				{Column: "version", A: Operand{Column: "version"}, Op: '+', B: Operand{Value: iv(1)}}},
			Where: []Cond{{Column: "id", Value: Value{Kind: ValParam, Param: 1}}, {Column: "version", Value: Value{Kind: ValParam, Param: 2}}}})},
		{"UPDATE t SET a = 1, b = a * 2", one(&updateView{Table: TableName{Name: "t"}, TicketErr: unsupported("UPDATE of several columns")})},
		{"UPDATE seq SET id = id - -9223372036854775808", one(&updateView{Table: seq, TicketErr: unsupported("SET id = expression")})},
		{"UPDATE seq SET id = id + 1 LIMIT 1", one(&updateView{Table: seq, TicketErr: unsupported("UPDATE ... LIMIT on a ticket table"),
			Sets: []ColSet{{Column: "id", A: Operand{Column: "id"}, Op: '+', B: Operand{Value: iv(1)}}}})},
		{"UPDATE seq SET id = id + 1 ORDER BY id", one(&updateView{Table: seq, TicketErr: unsupported("UPDATE ... ORDER BY on a ticket table"),
			Sets: []ColSet{{Column: "id", A: Operand{Column: "id"}, Op: '+', B: Operand{Value: iv(1)}}}})},
		{"UPDATE seq SET id = id + 1, stub = 'b'", one(&updateView{Table: seq, TicketErr: unsupported("UPDATE of several columns"),
			Sets: []ColSet{{Column: "id", A: Operand{Column: "id"}, Op: '+', B: Operand{Value: iv(1)}}, {Column: "stub", A: Operand{Value: sv("b")}}}})},
		{"UPDATE seq, u SET seq.id = 1", one(unsup("multiple-table UPDATE"))},
		{"UPDATE seq SET other.id = 1", one(unsup("column of another table"))},
		{"UPDATE seq SET id = 1 WHERE id > 5", one(&updateView{Table: seq, Set: Assign{Column: "id", Absolute: true, Value: iv(1)},
			TicketErr: unsupported("WHERE condition other than column = value"), Sets: []ColSet{{Column: "id", A: Operand{Value: iv(1)}}}})},
		{"UPDATE seq SET id = 1 WHERE id = 1 OR id = 2", one(&updateView{Table: seq, Set: Assign{Column: "id", Absolute: true, Value: iv(1)},
			TicketErr: unsupported("WHERE condition other than column = value"), Sets: []ColSet{{Column: "id", A: Operand{Value: iv(1)}}}})},
		{"UPDATE seq SET id = CONCAT(id, 'x')", one(unsup("SET id = expression"))},
		{"UPDATE seq SET id = 1 WHERE id REGEXP 'y'", one(unsup("WHERE condition other than column = value"))},
	})
}

func TestParseSelect(t *testing.T) {
	runPlanCases(t, []planCase{
		{"SELECT LAST_INSERT_ID()", one(sel(field("LAST_INSERT_ID()", lid())))},
		{"select last_insert_id() as ID", one(sel(field("ID", lid())))},
		{"SELECT LAST_INSERT_ID(42)", one(sel(field("LAST_INSERT_ID(42)", lid(val(iv(42))))))},
		{"SELECT LAST_INSERT_ID(@@x + 1)", one(sel(field("LAST_INSERT_ID(@@x + 1)",
			lid(arith('+', sys("x", ScopeDefault), val(iv(1)))))))},
		{"SELECT @@identity, @@last_insert_id, @@IDENTITY AS id", one(sel(
			field("@@identity", sys("identity", ScopeDefault)),
			field("@@last_insert_id", sys("last_insert_id", ScopeDefault)),
			field("id", sys("identity", ScopeDefault))))},
		{"SELECT @@session.auto_increment_increment, @@GLOBAL.Max_Connections, @@x, @User", one(sel(
			field("@@session.auto_increment_increment", sys("auto_increment_increment", ScopeSession)),
			field("@@GLOBAL.Max_Connections", sys("max_connections", ScopeGlobal)),
			field("@@x", sys("x", ScopeDefault)),
			field("@User", user("user"))))},
		{"SELECT 1", one(sel(field("1", val(iv(1)))))},
		{"SELECT 'a', \"b\", 'it''s', '', NULL, null, TRUE, false, 1.50, -1, - 2, +3", one(sel(
			field("a", val(sv("a"))), field("b", val(sv("b"))), field("it's", val(sv("it's"))),
			field("", val(sv(""))), field("NULL", val(null)), field("NULL", val(null)),
			field("TRUE", val(iv(1))), field("FALSE", val(iv(0))), field("1.50", val(dv("1.50"))),
			field("-1", val(iv(-1))), field("- 2", val(iv(-2))), field("+3", val(iv(3)))))},
		{"SELECT DATABASE(), schema(), VERSION(), CONNECTION_ID(), USER(), CURRENT_USER(), CURRENT_USER, " +
			"SESSION_USER(), SYSTEM_USER(), NOW(), NOW(3), CURRENT_TIMESTAMP, UTC_TIMESTAMP(), ROW_COUNT(), FOUND_ROWS()",
			one(sel(
				field("DATABASE()", fn("DATABASE")), field("schema()", fn("SCHEMA")),
				field("VERSION()", fn("VERSION")), field("CONNECTION_ID()", fn("CONNECTION_ID")),
				field("USER()", fn("USER")), field("CURRENT_USER()", fn("CURRENT_USER")),
				field("CURRENT_USER", fn("CURRENT_USER")), field("SESSION_USER()", fn("SESSION_USER")),
				field("SYSTEM_USER()", fn("SYSTEM_USER")), field("NOW()", fn("NOW")),
				field("NOW(3)", fn("NOW", val(iv(3)))), field("CURRENT_TIMESTAMP", fn("CURRENT_TIMESTAMP")),
				field("UTC_TIMESTAMP()", fn("UTC_TIMESTAMP")), field("ROW_COUNT()", fn("ROW_COUNT")),
				field("FOUND_ROWS()", fn("FOUND_ROWS"))))},
		{"SELECT 1+2*3, (1 - @a) AS d, -@@x", one(sel(
			field("1+2*3", arith('+', val(iv(1)), arith('*', val(iv(2)), val(iv(3))))),
			field("d", arith('-', val(iv(1)), user("a"))),
			field("-@@x", arith('-', val(iv(0)), sys("x", ScopeDefault)))))},
		{"SELECT CONCAT(@@sql_mode, ',X')", one(sel(field("CONCAT(@@sql_mode, ',X')",
			fn("CONCAT", sys("sql_mode", ScopeDefault), val(sv(",X"))))))},
		{"SELECT ?, LAST_INSERT_ID(?)", one(sel(field("?", val(pv(0))), field("LAST_INSERT_ID(?)", lid(val(pv(1))))))},
		{"SELECT 1 FROM DUAL", one(sel(field("1", val(iv(1)))))},
		{"select @@version_comment limit 1", one(&Select{
			Fields: []SelectField{field("@@version_comment", sys("version_comment", ScopeDefault))}, HasLimit: true, Limit: 1})},
		{"SELECT * FROM Tickets64", one(&Select{Fields: []SelectField{field("*", star)}, From: tbl("", "Tickets64")})},
		{"SELECT id, Stub AS s, t.id, flickr.t.stub FROM flickr.t WHERE stub = 'a' ORDER BY id DESC, stub LIMIT 5", one(&Select{
			Fields: []SelectField{field("id", col("id")), field("s", col("stub")), field("id", col("id")),
				field("stub", col("stub"))},
			From:     tbl("flickr", "t"),
			Where:    []Cond{{Column: "stub", Value: sv("a")}},
			OrderBy:  []Order{{Column: "id", Desc: true}, {Column: "stub"}},
			HasLimit: true, Limit: 5})},
		{"SELECT x.* , x.id FROM t AS x WHERE x.stub = ? AND id = ?", one(&Select{
			Fields: []SelectField{field("*", star), field("id", col("id"))},
			From:   tbl("", "t"),
			Where:  []Cond{{Column: "stub", Value: pv(0)}, {Column: "id", Value: pv(1)}}})},
		{"SELECT id FROM t LIMIT 2, 3", one(&Select{Fields: []SelectField{field("id", col("id"))},
			From: tbl("", "t"), HasLimit: true, Limit: 3, Offset: 2})},
		{"SELECT id FROM t LIMIT 3 OFFSET 2", one(&Select{Fields: []SelectField{field("id", col("id"))},
			From: tbl("", "t"), HasLimit: true, Limit: 3, Offset: 2})},
		{"SELECT id FROM t WHERE id = -1 FOR UPDATE", one(&Select{Fields: []SelectField{field("id", col("id"))},
			From: tbl("", "t"), Where: []Cond{{Column: "id", Value: iv(-1)}}})},
		{"SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'flickr' AND TABLE_NAME = 'Tickets64'",
			one(&Select{Fields: []SelectField{field("AUTO_INCREMENT", col("auto_increment"))},
				From:  tbl("information_schema", "TABLES"),
				Where: []Cond{{Column: "table_schema", Value: sv("flickr")}, {Column: "table_name", Value: sv("Tickets64")}}})},

		{"SELECT SLEEP(1)", one(unsup("SLEEP()"))},
		{"SELECT COUNT(DISTINCT id) FROM t", one(unsup("COUNT(DISTINCT ...)"))},
		{"SELECT GROUP_CONCAT(id) FROM t", one(unsup("GROUP_CONCAT()"))},
		{"SELECT id FROM t GROUP BY id", one(&Select{Fields: []SelectField{field("id", col("id"))}, From: &TableName{Name: "t"}, GroupBy: []string{"id"}})},
		{"SELECT id FROM t GROUP BY id + 1", one(unsup("GROUP BY an expression"))},
		{"SELECT id FROM t GROUP BY id WITH ROLLUP", one(unsup("WITH ROLLUP"))},
		{"SELECT DISTINCT id FROM t", one(&Select{Fields: []SelectField{field("id", col("id"))}, From: &TableName{Name: "t"}, Distinct: true})},
		{"SELECT id FROM t HAVING id > 1", one(unsup("HAVING"))},
		{"SELECT (SELECT 1)", one(unsup("subquery"))},
		{"SELECT 1 FROM (SELECT 1) AS s", one(unsup("subquery"))},
		{"SELECT 1 FROM t JOIN u", one(unsup("JOIN other than of information_schema views"))},
		{"SELECT 1 FROM t, u", one(unsup("JOIN other than of information_schema views"))},
		{"SELECT 1 UNION SELECT 2", one(unsup("UNION"))},
		{"SELECT 1 / 2", one(unsup("operator /"))},
		{"SELECT id FROM t WHERE id > 1", one(&Select{Fields: []SelectField{field("id", col("id"))}, From: &TableName{Name: "t"}})},
		{"SELECT id FROM t WHERE id REGEXP 'x'", one(unsup("REGEXP on a row table"))},
		{"SELECT id FROM t ORDER BY 1", one(&Select{Fields: []SelectField{field("id", col("id"))}, From: tbl("", "t"), OrderBy: []Order{{Column: "id"}}})},
		{"SELECT id, 1 + id AS k FROM t ORDER BY 2 DESC, k", one(&Select{Fields: []SelectField{field("id", col("id")), field("k", arith('+', val(iv(1)), col("id")))},
			From: tbl("", "t"), OrderBy: []Order{{Field: 2, Desc: true}, {Field: 2}}})},
		{"SELECT id FROM t LIMIT ?", one(unsup("LIMIT with an expression"))},
		{"SELECT u.id FROM t", one(unsup("column of another table"))},
		{"SELECT t.id FROM t AS x", one(unsup("column of another table"))},
		{"SELECT @a := 1", one(unsup("variable assignment in an expression"))},
		{"SELECT 1 INTO OUTFILE '/tmp/x'", one(unsup("SELECT ... INTO"))},
		{"SELECT db.f()", one(unsup("stored function"))},
		{"SELECT VERSION(1)", one(unsup("VERSION() with these arguments"))},
		{"WITH c AS (SELECT 1) SELECT * FROM c", one(unsup("WITH"))},
	})
}

// TestLabels checks column labels against what MySQL sends: drivers match
// columns by label (Connector/J fails to connect otherwise).
func TestLabels(t *testing.T) {
	connectorJ := "/* mysql-connector-j-8.0.33 (Revision: 7d6b0800528b6b25c68b52dc10d6c1c8429c100c) */" +
		"SELECT  @@session.auto_increment_increment AS auto_increment_increment, " +
		"@@character_set_client AS character_set_client, @@character_set_connection AS character_set_connection, " +
		"@@character_set_results AS character_set_results, @@character_set_server AS character_set_server, " +
		"@@collation_server AS collation_server, @@collation_connection AS collation_connection, " +
		"@@init_connect AS init_connect, @@interactive_timeout AS interactive_timeout, @@license AS license, " +
		"@@lower_case_table_names AS lower_case_table_names, @@max_allowed_packet AS max_allowed_packet, " +
		"@@net_write_timeout AS net_write_timeout, @@performance_schema AS performance_schema, " +
		"@@query_cache_size AS query_cache_size, @@query_cache_type AS query_cache_type, @@sql_mode AS sql_mode, " +
		"@@system_time_zone AS system_time_zone, @@time_zone AS time_zone, " +
		"@@transaction_isolation AS transaction_isolation, @@wait_timeout AS wait_timeout"
	cjVars := []string{"auto_increment_increment", "character_set_client", "character_set_connection",
		"character_set_results", "character_set_server", "collation_server", "collation_connection",
		"init_connect", "interactive_timeout", "license", "lower_case_table_names", "max_allowed_packet",
		"net_write_timeout", "performance_schema", "query_cache_size", "query_cache_type", "sql_mode",
		"system_time_zone", "time_zone", "transaction_isolation", "wait_timeout"}

	cases := []struct {
		query  string
		labels []string
	}{
		{connectorJ, cjVars},
		{"select @@version_comment limit 1", []string{"@@version_comment"}},
		{"SELECT @@session.transaction_read_only", []string{"@@session.transaction_read_only"}},
		{"SELECT @@max_allowed_packet", []string{"@@max_allowed_packet"}},
		{"SELECT LAST_INSERT_ID()", []string{"LAST_INSERT_ID()"}},
		{"SELECT last_insert_id( )", []string{"last_insert_id( )"}},
		{"SELECT   LAST_INSERT_ID()  ;  ", []string{"LAST_INSERT_ID()"}},
		{"SELECT LAST_INSERT_ID() AS id", []string{"id"}},
		{"SELECT LAST_INSERT_ID() id", []string{"id"}},
		{"SELECT LAST_INSERT_ID() AS `my id`", []string{"my id"}},
		{"SELECT 1 AS 'x'", []string{"x"}},
		{"SELECT 1 /* c */ , 2 -- trailing\n", []string{"1", "2"}},
		{"SELECT 1 # hash\n, '/* not a comment */' , 3", []string{"1", "/* not a comment */", "3"}},
		{"SELECT 1 + 1 /* c */ FROM DUAL", []string{"1 + 1"}},
		{"SELECT\n  @@a,\n  @@b\n", []string{"@@a", "@@b"}},
		{"SELECT 1,\n  2 +\n 3", []string{"1", "2 +\n 3"}},
		{"SELECT CONCAT('a', '-- b')", []string{"CONCAT('a', '-- b')"}},
		{"SELECT DATABASE(), USER() LIMIT 1", []string{"DATABASE()", "USER()"}},
		{"SELECT id, `stub` FROM t", []string{"id", "stub"}},
	}
	for _, c := range cases {
		plans, err := Parse(c.query)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.query, err)
			continue
		}
		s, ok := plans[0].(*Select)
		if !ok {
			t.Errorf("Parse(%q) = %s, want a Select", c.query, dumpPlans(plans))
			continue
		}
		var got []string
		for _, f := range s.Fields {
			got = append(got, f.Name)
		}
		if !reflect.DeepEqual(got, c.labels) {
			t.Errorf("labels of %q\n got %q\nwant %q", c.query, got, c.labels)
		}
	}

	plans, err := Parse(connectorJ)
	if err != nil {
		t.Fatal(err)
	}
	s := plans[0].(*Select)
	for i, f := range s.Fields {
		want := ScopeDefault
		if i == 0 {
			want = ScopeSession
		}
		if !reflect.DeepEqual(f.Expr, sys(cjVars[i], want)) {
			t.Errorf("Connector/J field %d = %s, want @@%s", i, dump(f.Expr), cjVars[i])
		}
	}
}

func TestParseSet(t *testing.T) {
	global := func(name string, e Expr) SetVar { return SetVar{Scope: ScopeGlobal, Name: name, Value: e} }
	names := func(cs string) []SetVar {
		return []SetVar{setv("character_set_client", val(sv(cs))), setv("character_set_results", val(sv(cs))),
			setv("character_set_connection", val(sv(cs)))}
	}
	runPlanCases(t, []planCase{
		{"SET @@auto_increment_increment = 5", one(&Set{Vars: []SetVar{setv("auto_increment_increment", val(iv(5)))}})},
		{"SET @@session.auto_increment_offset = 3", one(&Set{Vars: []SetVar{setv("auto_increment_offset", val(iv(3)))}})},
		{"SET @@SESSION.Auto_Increment_Offset=3", one(&Set{Vars: []SetVar{setv("auto_increment_offset", val(iv(3)))}})},
		{"SET SESSION Wait_Timeout = 1", one(&Set{Vars: []SetVar{setv("wait_timeout", val(iv(1)))}})},
		{"SET LOCAL x = 1", one(&Set{Vars: []SetVar{setv("x", val(iv(1)))}})},
		{"SET GLOBAL auto_increment_increment = 2", one(&Set{Vars: []SetVar{global("auto_increment_increment", val(iv(2)))}})},
		{"SET @@global.x=2", one(&Set{Vars: []SetVar{global("x", val(iv(2)))}})},
		{"SET x = DEFAULT", one(&Set{Vars: []SetVar{setv("x", val(def))}})},
		{"SET SQL_SELECT_LIMIT=DEFAULT", one(&Set{Vars: []SetVar{setv("sql_select_limit", val(def))}})},
		{"SET autocommit=1", one(&Set{Vars: []SetVar{setv("autocommit", val(iv(1)))}})},
		{"SET autocommit = ON", one(&Set{Vars: []SetVar{setv("autocommit", ident("ON"))}})},
		{"SET autocommit = 'ON'", one(&Set{Vars: []SetVar{setv("autocommit", val(sv("ON")))}})},
		{"SET autocommit = OFF", one(&Set{Vars: []SetVar{setv("autocommit", ident("OFF"))}})},
		{"SET character_set_results = NULL", one(&Set{Vars: []SetVar{setv("character_set_results", val(null))}})},
		{"SET character_set_results = binary", one(&Set{Vars: []SetVar{setv("character_set_results", ident("BINARY"))}})},
		{"SET NAMES utf8mb4", one(&Set{Vars: names("utf8mb4")})},
		{"SET NAMES 'latin1'", one(&Set{Vars: names("latin1")})},
		{"SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci", one(&Set{Vars: append(names("utf8mb4"),
			SetVar{Name: "collation_connection", Value: val(sv("utf8mb4_unicode_ci")), NamesCharset: ptr(val(sv("utf8mb4")))})})},
		{"SET NAMES DEFAULT", one(&Set{Vars: []SetVar{setv("character_set_client", val(def)),
			setv("character_set_results", val(def)), setv("character_set_connection", val(def))}})},
		{"/*!40101 SET NAMES utf8mb4 */", one(&Set{Vars: names("utf8mb4")})},
		{"SET CHARACTER SET latin1", one(&Set{Vars: []SetVar{setv("character_set_client", val(sv("latin1"))),
			setv("character_set_results", val(sv("latin1"))),
			setv("character_set_connection", sys("character_set_database", ScopeDefault))}})},
		{"SET sql_mode = CONCAT(@@sql_mode, ',STRICT_TRANS_TABLES')", one(&Set{Vars: []SetVar{
			setv("sql_mode", fn("CONCAT", sys("sql_mode", ScopeDefault), val(sv(",STRICT_TRANS_TABLES"))))}})},
		{"set autocommit=1,sql_mode=CONCAT(@@sql_mode,',STRICT_TRANS_TABLES')", one(&Set{Vars: []SetVar{
			setv("autocommit", val(iv(1))),
			setv("sql_mode", fn("CONCAT", sys("sql_mode", ScopeDefault), val(sv(",STRICT_TRANS_TABLES"))))}})},
		{"SET @user = 1", one(&Set{Vars: []SetVar{{User: true, Name: "user", Value: val(iv(1))}}})},
		{"SET @A := LAST_INSERT_ID(), @b = @@global.x", one(&Set{Vars: []SetVar{
			{User: true, Name: "a", Value: lid()}, {User: true, Name: "b", Value: sys("x", ScopeGlobal)}}})},
		{"SET @@x = ?", one(&Set{Vars: []SetVar{setv("x", val(pv(0)))}})},
		{"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", one(&Set{Vars: []SetVar{
			setv("transaction_isolation", val(sv("READ-COMMITTED")))}})},
		{"SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ WRITE", one(&Set{Vars: []SetVar{
			global("transaction_isolation", val(sv("SERIALIZABLE"))), global("transaction_read_only", val(iv(0)))}})},
		{"SET SESSION TRANSACTION READ ONLY", one(&Set{Vars: []SetVar{setv("transaction_read_only", val(iv(1)))}})},
		{"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", one(&Empty{})},

		{"SET PASSWORD = 'x'", one(&Account{Stmt: "SET PASSWORD"})},
		{"SET x = (SELECT 1)", one(unsup("subquery"))},
		{"SET x = SLEEP(1)", one(unsup("SLEEP()"))},
	})
}

func TestParseShow(t *testing.T) {
	show := func(k ShowKind) *Show { return &Show{Kind: k} }
	runPlanCases(t, []planCase{
		{"SHOW DATABASES", one(show(ShowDatabases))},
		{"show schemas", one(show(ShowDatabases))},
		{"SHOW DATABASES LIKE 'f%'", one(&Show{Kind: ShowDatabases, HasLike: true, Like: "f%"})},
		{"SHOW TABLES", one(show(ShowTables))},
		{"SHOW FULL TABLES FROM flickr LIKE 'T%'", one(&Show{Kind: ShowTables, Full: true, DB: "flickr", HasLike: true, Like: "T%"})},
		{"SHOW TABLES IN flickr", one(&Show{Kind: ShowTables, DB: "flickr"})},
		{"SHOW VARIABLES", one(show(ShowVariables))},
		{"SHOW SESSION VARIABLES LIKE 'auto_increment%'", one(&Show{Kind: ShowVariables, HasLike: true, Like: "auto_increment%"})},
		{"SHOW GLOBAL VARIABLES LIKE 'auto_increment%'", one(&Show{Kind: ShowVariables, Scope: ScopeGlobal, HasLike: true, Like: "auto_increment%"})},
		{"SHOW VARIABLES WHERE Variable_name = 'x'", one(&Show{Kind: ShowVariables,
			Where: []Cond{{Column: "variable_name", Value: sv("x")}}})},
		{"SHOW VARIABLES WHERE Variable_name = 'x' AND Value = 'y'", one(&Show{Kind: ShowVariables,
			Where: []Cond{{Column: "variable_name", Value: sv("x")}, {Column: "value", Value: sv("y")}}})},
		{"SHOW VARIABLES WHERE Variable_name ='language' OR Variable_name = 'net_write_timeout' OR Variable_name = 'wait_timeout'",
			one(&Show{Kind: ShowVariables, WhereOr: true, Where: []Cond{
				{Column: "variable_name", Value: sv("language")},
				{Column: "variable_name", Value: sv("net_write_timeout")},
				{Column: "variable_name", Value: sv("wait_timeout")}}})},
		{"SHOW GLOBAL VARIABLES WHERE Variable_name IN ('a', 'b')", one(&Show{Kind: ShowVariables, Scope: ScopeGlobal,
			WhereOr: true, Where: []Cond{{Column: "variable_name", Value: sv("a")}, {Column: "variable_name", Value: sv("b")}}})},
		{"SHOW STATUS", one(show(ShowStatus))},
		{"SHOW GLOBAL STATUS LIKE 'Uptime'", one(&Show{Kind: ShowStatus, Scope: ScopeGlobal, HasLike: true, Like: "Uptime"})},
		{"SHOW WARNINGS", one(show(ShowWarnings))},
		{"SHOW ERRORS", one(show(ShowErrors))},
		{"SHOW TABLE STATUS", one(show(ShowTableStatus))},
		{"SHOW TABLE STATUS FROM flickr LIKE 'Tickets64'", one(&Show{Kind: ShowTableStatus, DB: "flickr", HasLike: true, Like: "Tickets64"})},
		{"SHOW CREATE TABLE Tickets64", one(&Show{Kind: ShowCreateTable, Table: TableName{Name: "Tickets64"}})},
		{"SHOW CREATE TABLE flickr.Tickets64", one(&Show{Kind: ShowCreateTable, Table: TableName{DB: "flickr", Name: "Tickets64"}})},
		{"SHOW CREATE DATABASE flickr", one(&Show{Kind: ShowCreateDatabase, DB: "flickr"})},
		{"SHOW CREATE SCHEMA IF NOT EXISTS flickr", one(&Show{Kind: ShowCreateDatabase, DB: "flickr"})},
		{"SHOW COLUMNS FROM t", one(&Show{Kind: ShowColumns, Table: TableName{Name: "t"}})},
		{"SHOW FULL COLUMNS FROM t FROM db LIKE 'i%'", one(&Show{Kind: ShowColumns, Full: true,
			Table: TableName{DB: "db", Name: "t"}, HasLike: true, Like: "i%"})},
		{"SHOW FIELDS IN db.t", one(&Show{Kind: ShowColumns, Table: TableName{DB: "db", Name: "t"}})},
		{"DESCRIBE t", one(&Show{Kind: ShowColumns, Table: TableName{Name: "t"}})},
		{"DESC flickr.Tickets64", one(&Show{Kind: ShowColumns, Table: TableName{DB: "flickr", Name: "Tickets64"}})},
		{"DESC t id", one(&Show{Kind: ShowColumns, Table: TableName{Name: "t"}, HasLike: true, Like: "id"})},
		{"SHOW INDEX FROM t", one(&Show{Kind: ShowIndex, Table: TableName{Name: "t"}})},
		{"SHOW KEYS IN t FROM db", one(&Show{Kind: ShowIndex, Table: TableName{DB: "db", Name: "t"}})},
		{"SHOW ENGINES", one(show(ShowEngines))},
		{"SHOW CHARACTER SET", one(show(ShowCharset))},
		{"SHOW CHARSET LIKE 'utf8%'", one(&Show{Kind: ShowCharset, HasLike: true, Like: "utf8%"})},
		{"SHOW COLLATION", one(show(ShowCollation))},
		{"SHOW PROCESSLIST", one(show(ShowProcessList))},
		{"SHOW FULL PROCESSLIST", one(&Show{Kind: ShowProcessList, Full: true})},

		{"SHOW GRANTS", one(&Show{Kind: ShowGrants})},
		{"SHOW GRANTS FOR CURRENT_USER()", one(&Show{Kind: ShowGrants})},
		{"SHOW GRANTS FOR 'app'@'%'", one(&Show{Kind: ShowGrants, User: "app", Host: "%"})},
		{"SHOW MASTER STATUS", one(unsup("SHOW MASTER"))},
		{"SHOW COUNT(*) WARNINGS", one(unsup("SHOW COUNT(*)"))},
		{"SHOW VARIABLES LIKE ?", one(unsup("SHOW with this LIKE"))},
		{"SHOW VARIABLES WHERE Variable_name LIKE 'x'", one(unsup("WHERE condition other than column = value"))},
		{"SHOW VARIABLES WHERE a = 'x' AND b = 'y' OR c = 'z'", one(unsup("WHERE with AND and OR"))},
		{"EXPLAIN SELECT 1", one(unsup("EXPLAIN"))},
	})
}

func TestParseDDL(t *testing.T) {
	flickr := &CreateTable{
		Table: TableName{Name: "Tickets64"},
		Columns: []ColumnDef{
			{Name: "id", Type: "bigint", Unsigned: true, Width: 20, NotNull: true, AutoInc: true},
			{Name: "stub", Type: "char", Width: 1, NotNull: true, HasDefault: true, Default: sv("")},
		},
		Keys: []KeyDef{
			{Primary: true, Columns: []string{"id"}},
			{Name: "stub", Unique: true, Columns: []string{"stub"}},
		},
		Engine: "MyISAM",
	}
	runPlanCases(t, []planCase{
		{"CREATE TABLE Tickets64 (id bigint(20) unsigned NOT NULL auto_increment, stub char(1) NOT NULL default '', " +
			"PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM", one(flickr)},
		{"CREATE TABLE sequence (id INT NOT NULL)", one(&CreateTable{Table: TableName{Name: "sequence"},
			Columns: []ColumnDef{{Name: "id", Type: "int", NotNull: true}}})},
		{"CREATE TABLE IF NOT EXISTS db.Tickets32 (ID int(10) UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY COMMENT 'the id', " +
			"Stub varchar(32) NULL DEFAULT NULL UNIQUE, k integer DEFAULT -1, KEY kk (k, Stub)) " +
			"ENGINE=InnoDB AUTO_INCREMENT=1000 DEFAULT CHARSET=utf8mb4 COMMENT='ticketd:cache=1000'",
			one(&CreateTable{
				Table: TableName{DB: "db", Name: "Tickets32"}, IfNotExists: true,
				Columns: []ColumnDef{
					{Name: "ID", Type: "int", Unsigned: true, Width: 10, NotNull: true, AutoInc: true, PrimaryKey: true, Comment: "the id"},
					{Name: "Stub", Type: "varchar", Width: 32, HasDefault: true, Default: null, Unique: true},
					{Name: "k", Type: "int", HasDefault: true, Default: iv(-1)},
				},
				Keys:   []KeyDef{{Name: "kk", Columns: []string{"k", "Stub"}}},
				Engine: "InnoDB", HasAutoInc: true, AutoInc: 1000, Comment: "ticketd:cache=1000",
				Charsets: []string{"utf8mb4"},
			})},
		// Collations: the column's COLLATE (an option, or the type's),
		// CHARACTER SET and BINARY attribute, the table's options in order;
		// a COLLATE on another type is dropped (MariaDB ignores it).
		{"CREATE TABLE t (a VARCHAR(10) COLLATE utf8mb4_BIN, b CHAR(2) CHARACTER SET utf8 COLLATE utf8_bin, " +
			"c varchar(3) BINARY, n int COLLATE utf8mb4_bin) DEFAULT CHARSET=UTF8 COLLATE utf8_bin CHARSET latin1",
			one(&CreateTable{Table: TableName{Name: "t"},
				Columns: []ColumnDef{
					{Name: "a", Type: "varchar", Width: 10, Collate: "utf8mb4_bin"},
					{Name: "b", Type: "char", Width: 2, Charset: "utf8", Collate: "utf8_bin"},
					{Name: "c", Type: "varchar", Width: 3, Binary: true},
					{Name: "n", Type: "int"},
				},
				Charsets: []string{"utf8", "latin1"}, Collates: []string{"utf8_bin"}})},
		{"CREATE TABLE t (a varbinary(3), b binary(2), c blob)", one(&CreateTable{Table: TableName{Name: "t"},
			Columns: []ColumnDef{{Name: "a", Type: "varbinary", Width: 3}, {Name: "b", Type: "binary", Width: 2}, {Name: "c", Type: "blob"}}})},
		{"CREATE TABLE t (a tinyint, b smallint(5) unsigned, c mediumint, d binary(4), e text, f decimal(10,2), UNIQUE (a))",
			one(&CreateTable{Table: TableName{Name: "t"},
				Columns: []ColumnDef{
					{Name: "a", Type: "tinyint"}, {Name: "b", Type: "smallint", Unsigned: true, Width: 5},
					{Name: "c", Type: "mediumint"}, {Name: "d", Type: "binary", Width: 4},
					{Name: "e", Type: "text"}, {Name: "f", Type: "decimal", Width: 10},
				},
				Keys: []KeyDef{{Unique: true, Columns: []string{"a"}}}})},
		{"CREATE TABLE t LIKE u", one(unsup("CREATE TABLE ... LIKE"))},
		{"CREATE TABLE t AS SELECT 1", one(unsup("CREATE TABLE ... SELECT"))},
		{"CREATE TABLE t SELECT 1", one(unsup("CREATE TABLE ... SELECT"))},
		{"CREATE TEMPORARY TABLE t (id int)", one(unsup("CREATE TEMPORARY TABLE"))},
		{"CREATE TABLE t (ts timestamp DEFAULT CURRENT_TIMESTAMP)", one(&CreateTable{Table: TableName{Name: "t"},
			Columns: []ColumnDef{{Name: "ts", Type: "timestamp", Width: 19, HasDefault: true, DefaultNow: true}}})},
		{"CREATE TABLE t (ts timestamp ON UPDATE CURRENT_TIMESTAMP)", one(&CreateTable{Table: TableName{Name: "t"},
			Columns: []ColumnDef{{Name: "ts", Type: "timestamp", Width: 19, OnUpdateNow: true}}})},
		{"CREATE TABLE t (a int, FOREIGN KEY (a) REFERENCES u (b))", one(unsup("FOREIGN KEY"))},
		{"CREATE TABLE t (a int, b int AS (a + 1))", one(unsup("generated column"))},
		{"CREATE TABLE t (a int) PARTITION BY HASH(a) PARTITIONS 2", one(unsup("PARTITION BY"))},

		{"DROP TABLE t", one(&DropTable{Tables: []TableName{{Name: "t"}}})},
		{"DROP TABLE IF EXISTS a, db.b", one(&DropTable{IfExists: true, Tables: []TableName{{Name: "a"}, {DB: "db", Name: "b"}}})},
		{"DROP VIEW v", one(unsup("DROP VIEW"))},
		{"DROP TEMPORARY TABLE t", one(unsup("DROP TEMPORARY TABLE"))},

		{"ALTER TABLE t AUTO_INCREMENT = 1000", one(&AlterTable{Table: TableName{Name: "t"}, HasAutoInc: true, AutoInc: 1000})},
		{"ALTER TABLE db.t AUTO_INCREMENT=5, COMMENT = 'ticketd:cache=10'", one(&AlterTable{Table: TableName{DB: "db", Name: "t"},
			HasAutoInc: true, AutoInc: 5, HasComment: true, Comment: "ticketd:cache=10"})},
		{"ALTER TABLE t COMMENT 'x' AUTO_INCREMENT 7", one(&AlterTable{Table: TableName{Name: "t"},
			HasAutoInc: true, AutoInc: 7, HasComment: true, Comment: "x"})},
		{"ALTER TABLE t ENGINE=InnoDB", one(unsup("ALTER TABLE other than AUTO_INCREMENT, COMMENT and ADD/DROP of keys"))},
		{"ALTER TABLE t ADD COLUMN x int", one(unsup("ALTER TABLE other than AUTO_INCREMENT, COMMENT and ADD/DROP of keys"))},

		{"CREATE DATABASE flickr", one(&CreateDatabase{Name: "flickr"})},
		{"CREATE SCHEMA IF NOT EXISTS Flickr DEFAULT CHARSET utf8mb4", one(&CreateDatabase{Name: "Flickr", IfNotExists: true, Charsets: []string{"utf8mb4"}})},
		{"CREATE DATABASE d CHARACTER SET = UTF8 COLLATE utf8_bin", one(&CreateDatabase{Name: "d", Charsets: []string{"utf8"}, Collates: []string{"utf8_bin"}})},
		{"DROP DATABASE flickr", one(&DropDatabase{Name: "flickr"})},
		{"DROP SCHEMA IF EXISTS flickr", one(&DropDatabase{Name: "flickr", IfExists: true})},
		{"USE flickr", one(&Use{DB: "flickr"})},
		{"use `My DB`", one(&Use{DB: "My DB"})},
	})
}

func TestParseMisc(t *testing.T) {
	runPlanCases(t, []planCase{
		{"BEGIN", one(&Txn{Kind: TxnBegin})},
		{"START TRANSACTION", one(&Txn{Kind: TxnBegin})},
		{"START TRANSACTION READ ONLY", one(&Txn{Kind: TxnBegin})},
		{"COMMIT", one(&Txn{Kind: TxnCommit})},
		{"ROLLBACK", one(&Txn{Kind: TxnRollback})},
		{"ROLLBACK TO SAVEPOINT s", one(unsup("ROLLBACK TO SAVEPOINT"))},
		{"COMMIT AND CHAIN", one(unsup("COMMIT AND CHAIN / RELEASE"))},

		{"FLUSH TABLES", one(&FlushTables{})},
		{"SELECT _rowid, t._ROWID FROM t", one(unsup("_rowid"))},
		{"UPDATE t SET v = 1 WHERE _rowid = 2", one(unsup("_rowid"))},
		{"FLUSH TABLES WITH READ LOCK", one(&Empty{})},
		{"FLUSH PRIVILEGES", one(&Empty{})},
		{"LOCK TABLES t WRITE", one(&Empty{})},
		{"UNLOCK TABLES", one(&Empty{})},
		{"DO 1", one(&Empty{})},
		{"/* ping */", one(&Empty{})},
		{"-- just a comment\n", one(&Empty{})},
		{"DO SLEEP(1)", one(unsup("DO with an expression"))},

		{"DELETE FROM t", one(&Delete{Table: TableName{Name: "t"}})},
		{"DELETE FROM db.WORKER_NODE WHERE HOST_NAME = 'h' AND PORT = ?", one(&Delete{Table: TableName{DB: "db", Name: "WORKER_NODE"},
			Filter: &Expr{Kind: ExprLogic, Name: "AND", Args: []Expr{
				{Kind: ExprCompare, Name: "=", Args: []Expr{col("host_name"), val(sv("h"))}},
				{Kind: ExprCompare, Name: "=", Args: []Expr{col("port"), val(pv(0))}}}}})},
		{"DELETE IGNORE FROM t", one(unsup("DELETE IGNORE"))},
		{"DELETE t FROM t JOIN u", one(unsup("multiple-table DELETE"))},
		{"TRUNCATE TABLE t", one(unsup("TRUNCATE TABLE"))},
		{"TRUNCATE t", one(unsup("TRUNCATE TABLE"))},
		{"CREATE INDEX i ON t (a)", one(&AlterTable{Table: TableName{Name: "t"}, AddKeys: []KeyDef{{Name: "i", Columns: []string{"a"}}}})},
		{"CREATE UNIQUE INDEX IF NOT EXISTS i ON d.t (a, b)", one(&AlterTable{Table: TableName{DB: "d", Name: "t"}, IfNotExists: true,
			AddKeys: []KeyDef{{Name: "i", Unique: true, Columns: []string{"a", "b"}}}})},
		{"CREATE UNIQUE INDEX i ON t (a(3))", one(unsup("key prefix lengths on unique keys"))},
		{"CREATE FULLTEXT INDEX i ON t (a)", one(unsup("FULLTEXT and SPATIAL indexes"))},
		{"DROP INDEX i ON t", one(&AlterTable{Table: TableName{Name: "t"}, DropKeys: []string{"i"}})},
		{"DROP INDEX IF EXISTS i ON t", one(&AlterTable{Table: TableName{Name: "t"}, DropKeys: []string{"i"}, IfExists: true})},
		{"ALTER TABLE t ADD INDEX (a), DROP PRIMARY KEY, ADD UNIQUE KEY u (b, c), DROP KEY k", one(&AlterTable{Table: TableName{Name: "t"},
			AddKeys: []KeyDef{{Columns: []string{"a"}}, {Name: "u", Unique: true, Columns: []string{"b", "c"}}}, DropKeys: []string{"PRIMARY", "k"}})},
		{"GRANT ALL ON *.* TO 'a'@'%'", one(&Account{Stmt: "GRANT"})},
		{"REVOKE ALL ON *.* FROM 'a'@'%'", one(&Account{Stmt: "REVOKE"})},
		{"DROP USER 'a'", one(&Account{Stmt: "DROP USER"})},
		{"CREATE USER 'a'@'%'", one(&Account{Stmt: "CREATE USER"})},
		{"RENAME TABLE a TO b", one(unsup("RENAME TABLE"))},
		{"ANALYZE TABLE t", one(unsup("ANALYZE TABLE"))},
		{"KILL 5", one(unsup("KILL"))},
		{"SAVEPOINT s", one(unsup("SAVEPOINT"))},
		{"CREATE VIEW v AS SELECT 1", one(unsup("CREATE VIEW"))},
	})
}

func TestMultiStatements(t *testing.T) {
	replace := &insertView{Table: TableName{Name: "Tickets64"}, Replace: true, Columns: []string{"stub"}, Rows: [][]Value{{sv("a")}}}
	lastID := sel(field("LAST_INSERT_ID()", lid()))
	runPlanCases(t, []planCase{
		{"REPLACE INTO Tickets64 (stub) VALUES ('a'); SELECT LAST_INSERT_ID();", []Plan{replace, lastID}},
		{"REPLACE INTO Tickets64 (stub) VALUES ('a');SELECT LAST_INSERT_ID()", []Plan{replace, lastID}},
		{"REPLACE INTO Tickets64 (stub) VALUES ('a');\nSELECT LAST_INSERT_ID()\n", []Plan{replace, lastID}},
		{"BEGIN; REPLACE INTO Tickets64 (stub) VALUES ('a'); ROLLBACK", []Plan{&Txn{Kind: TxnBegin}, replace, &Txn{Kind: TxnRollback}}},
		{"SELECT 1; DELETE FROM t; SELECT 2", []Plan{sel(field("1", val(iv(1)))), &Delete{Table: TableName{Name: "t"}}, sel(field("2", val(iv(2))))}},
		// Placeholders are numbered per statement.
		{"SELECT ?; SELECT ?", []Plan{sel(field("?", val(pv(0)))), sel(field("?", val(pv(0))))}},
	})
}

func TestParseErrors(t *testing.T) {
	const prefix = "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near "
	cases := []struct {
		query string
		code  uint16
		state string
		msg   string
	}{
		{"", 1065, "42000", "Query was empty"},
		{"   \n\t", 1065, "42000", "Query was empty"},
		{";", 1065, "42000", "Query was empty"},
		{"SELEC 1", 1064, "42000", prefix + "'SELEC 1' at line 1"},
		{"SELECT 1 FROM", 1064, "42000", prefix + "'' at line 1"},
		{"SELECT * FROM t WHERE", 1064, "42000", prefix + "'' at line 1"},
		{"REPLACE INTO Tickets64 (stub) VALUE ('a'", 1064, "42000", prefix + "'' at line 1"},
		{"SELECT 1,\n2,\n3 4 5", 1064, "42000", prefix + "'4 5' at line 3"},
		{"SELECT 1;\nSELEC 2", 1064, "42000", prefix + "'SELEC 2' at line 2"},
		{"SELECT 'abc", 1064, "42000", prefix + "''abc' at line 1"},
		{"SELECT 1 /* unterminated", 1064, "42000", prefix + "'/* unterminated' at line 1"},
		{"INSERT INTO t VALUES (1) garbage here", 1064, "42000", prefix + "'garbage here' at line 1"},
		// MySQL quotes 80 characters, not bytes.
		{"SELECT 1 FROM t WHERE " + strings.Repeat("x = 1 AND ", 30) + ") " + strings.Repeat("é", 100), 1064, "42000",
			prefix + "') " + strings.Repeat("é", 78) + "' at line 1"},
		// The lexer cuts its copy of the rest at 2048 bytes.
		{"SELECT ) " + strings.Repeat("y", 3000), 1064, "42000", prefix + "') " + strings.Repeat("y", 78) + "' at line 1"},
		{strings.Repeat("SELECT 1;\n", 300) + "SELECT ) " + strings.Repeat("y", 3000), 1064, "42000",
			prefix + "') " + strings.Repeat("y", 78) + "' at line 301"},
		// The parser's decimal type cannot hold it; MySQL would take it as
		// a DOUBLE.
		{"SELECT " + strings.Repeat("9", 90), 1064, "42000", prefix + "'" + strings.Repeat("9", 80) + "' at line 1"},
		{"SET NAMES cp1251x", 1115, "42000", "Unknown character set: 'cp1251x'"},
		// A character set MariaDB has and the grammar does not know.
		{"SET NAMES cp1251", 1235, "42000", "This version of ticketd doesn't yet support 'CHARACTER SET cp1251'"},
		{"CREATE TABLE t1 (a VARCHAR(10) CHARACTER SET KOI8R)", 1235, "42000", "This version of ticketd doesn't yet support 'CHARACTER SET koi8r'"},
		{"CREATE TABLE t1 (a VARCHAR(10) COLLATE utf8mb4_uca1400_ai_ci)", 1235, "42000", "This version of ticketd doesn't yet support 'COLLATE utf8mb4_uca1400_ai_ci'"},
		{"CREATE TABLE t1 (a VARCHAR(10) COLLATE nosuch_ci)", 1273, "HY000", "Unknown collation: 'nosuch_ci'"},
		{"SELECT _koi8r'a'", 1235, "42000", "This version of ticketd doesn't yet support 'the character set introducer _koi8r'"},
		{"SELECT *", 1096, "HY000", "No tables used"},
		{"SELECT id", 1054, "42S22", "Unknown column 'id' in 'field list'"},
		{"SELECT t.id", 1054, "42S22", "Unknown column 't.id' in 'field list'"},
		{"SELECT LAST_INSERT_ID(id)", 1054, "42S22", "Unknown column 'id' in 'field list'"},
		// Only a bare word standing alone is a SET value.
		{"SET @a = OFF", 1054, "42S22", "Unknown column 'OFF' in 'field list'"},
		{"SET sql_mode = CONCAT(x, 'y')", 1054, "42S22", "Unknown column 'x' in 'field list'"},
	}
	for _, c := range cases {
		plans, err := Parse(c.query)
		// After statements that parse, the error comes as a final Failed
		// plan (the statements before it still run).
		if f, isFailed := lastFailed(plans); isFailed && err == nil {
			plans, err = nil, f.Err
		}
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("Parse(%q) = %s, %v; want *Error %d", c.query, dumpPlans(plans), err, c.code)
			continue
		}
		if plans != nil {
			t.Errorf("Parse(%q) returned plans with an error", c.query)
		}
		if e.Code != c.code || e.State != c.state || e.Message != c.msg {
			t.Errorf("Parse(%q) error\n got %d %s %q\nwant %d %s %q", c.query, e.Code, e.State, e.Message, c.code, c.state, c.msg)
		}
	}
}

func TestParamCount(t *testing.T) {
	cases := []struct {
		query string
		n     int
	}{
		{"SELECT LAST_INSERT_ID()", 0},
		{"REPLACE INTO Tickets64 (stub) VALUES (?)", 1},
		{"REPLACE INTO Tickets64 (stub) VALUES (?), (?), ('a'), (?)", 3},
		{"INSERT INTO t (stub) VALUES (?) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(?)", 2},
		{"UPDATE seq SET id = LAST_INSERT_ID(?) WHERE stub = ?", 2},
		{"SELECT ?, LAST_INSERT_ID(? + ?) FROM t WHERE stub = ?", 4},
		{"SET @a = ?, @@b = CONCAT(?, 'x')", 2},
		{"SHOW VARIABLES WHERE Variable_name = ?", 1},
		{"CREATE DATABASE d", 0},
		// A placeholder ticketd cannot carry makes the statement
		// unsupported rather than miscounted.
		{"SELECT id FROM t LIMIT ?", 0},
	}
	for _, c := range cases {
		plans, err := Parse(c.query)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.query, err)
			continue
		}
		if n := ParamCount(plans[0]); n != c.n {
			t.Errorf("ParamCount(%q) = %d, want %d", c.query, n, c.n)
		}
	}

	// Numbering follows the text, not the order the plan is built in.
	plans, err := Parse("INSERT INTO t (a, b) VALUES (?, ?) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(?)")
	if err != nil {
		t.Fatal(err)
	}
	ins := plans[0].(*Insert)
	if got := []int{ins.Rows[0][0].Param, ins.Rows[0][1].Param, ins.OnDup[0].Expr.Args[0].Value.Param}; !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("param numbers = %v, want [0 1 2]", got)
	}
}

func TestErrorString(t *testing.T) {
	e := &Error{Code: 1065, State: "42000", Message: "Query was empty"}
	if got, want := e.Error(), "ERROR 1065 (42000): Query was empty"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func lastFailed(plans []Plan) (*Failed, bool) {
	if len(plans) < 2 {
		return nil, false
	}
	f, ok := plans[len(plans)-1].(*Failed)
	return f, ok
}

// TestParseRowForm checks the row engine's parts of plans: the WHERE as a
// predicate, UPDATE's assignments as expressions, ORDER BY and LIMIT of
// UPDATE and DELETE, aggregates, and the placeholders they hold.
func TestParseRowForm(t *testing.T) {
	c := func(name string) Expr { return Expr{Kind: ExprColumn, Name: name} }
	v := func(x Value) Expr { return Expr{Kind: ExprValue, Value: x} }
	cmp := func(op string, a, b Expr) Expr { return Expr{Kind: ExprCompare, Name: op, Args: []Expr{a, b}} }
	param := func(n int) Expr { return v(Value{Kind: ValParam, Param: n}) }
	cases := []struct {
		query  string
		check  func(Plan) bool
		params int
	}{
		{"SELECT id FROM t WHERE v > -1 AND name IS NOT NULL", func(p Plan) bool {
			f := p.(*Select).Filter
			return reflect.DeepEqual(*f, Expr{Kind: ExprLogic, Name: "AND", Args: []Expr{
				cmp(">", c("v"), v(iv(-1))), {Kind: ExprIsNull, Not: true, Args: []Expr{c("name")}}}})
		}, 0},
		{"SELECT id FROM t WHERE v NOT IN (?, 2) OR v BETWEEN ? AND 9 OR NOT v <=> NULL", func(p Plan) bool {
			f := p.(*Select).Filter
			return f.Kind == ExprLogic && f.Name == "OR" && f.Args[0].Kind == ExprLogic &&
				reflect.DeepEqual(f.Args[0].Args[0], Expr{Kind: ExprIn, Not: true, Args: []Expr{c("v"), param(0), v(iv(2))}}) &&
				reflect.DeepEqual(f.Args[0].Args[1], Expr{Kind: ExprBetween, Args: []Expr{c("v"), param(1), v(iv(9))}}) &&
				f.Args[1].Kind == ExprNot
		}, 2},
		{"SELECT COUNT(*), MIN(v) AS m FROM t WHERE name LIKE 'a%'", func(p Plan) bool {
			s := p.(*Select)
			return s.Fields[0].Expr.Kind == ExprAgg && s.Fields[0].Expr.Name == "COUNT" && s.Fields[0].Expr.Args == nil &&
				reflect.DeepEqual(s.Fields[1], SelectField{Expr: Expr{Kind: ExprAgg, Name: "MIN", Args: []Expr{c("v")}}, Name: "m"}) &&
				s.Filter.Kind == ExprLike && s.Filter.Op == '\\'
		}, 0},
		{"UPDATE t SET x = NULL, step = step * 2, at = NOW() + INTERVAL ? SECOND, id = LAST_INSERT_ID(id) WHERE v <> ? ORDER BY id DESC LIMIT 3", func(p Plan) bool {
			u := p.(*Update)
			return len(u.Assigns) == 4 &&
				reflect.DeepEqual(u.Assigns[0], ColAssign{Column: "x", Expr: v(Value{Kind: ValNull})}) &&
				reflect.DeepEqual(u.Assigns[1], ColAssign{Column: "step", Expr: Expr{Kind: ExprArith, Op: '*', Args: []Expr{c("step"), v(iv(2))}}}) &&
				reflect.DeepEqual(u.Assigns[2], ColAssign{Column: "at", Expr: Expr{Kind: ExprInterval, Name: "SECOND", Op: '+',
					Args: []Expr{v(Value{Kind: ValNow}), param(0)}}}) &&
				reflect.DeepEqual(u.Assigns[3], ColAssign{Column: "id", Expr: Expr{Kind: ExprLastInsertID, Args: []Expr{c("id")}}}) &&
				reflect.DeepEqual(*u.Filter, cmp("<>", c("v"), param(1))) &&
				reflect.DeepEqual(u.OrderBy, []Order{{Column: "id", Desc: true}}) && u.HasLimit && u.Limit == 3
		}, 2},
		{"UPDATE t SET v = DEFAULT WHERE id = 1", func(p Plan) bool {
			u := p.(*Update)
			return reflect.DeepEqual(u.Assigns, []ColAssign{{Column: "v", Expr: v(Value{Kind: ValDefault})}})
		}, 0},
		{"UPDATE t SET v = CONCAT(v, 'x'), w = 1", func(p Plan) bool {
			u, ok := p.(*Unsupported)
			return ok && u.Reason == "UPDATE of several columns"
		}, 0},
		{"DELETE FROM t WHERE at < NOW() - INTERVAL 7 DAY ORDER BY at LIMIT 10", func(p Plan) bool {
			d := p.(*Delete)
			return reflect.DeepEqual(*d.Filter, cmp("<", c("at"), Expr{Kind: ExprInterval, Name: "DAY", Op: '-',
				Args: []Expr{v(Value{Kind: ValNow}), v(iv(7))}})) &&
				reflect.DeepEqual(d.OrderBy, []Order{{Column: "at"}}) && d.HasLimit && d.Limit == 10
		}, 0},
		{"DELETE FROM t WHERE id = ? AND v IS NULL", func(p Plan) bool { return p.(*Delete).Filter != nil }, 1},
		// A comparison in a select list over a table is a row-table
		// expression, labelled as written; without FROM it stays refused.
		{"SELECT id, s > 'x', v IS NULL AS n FROM t", func(p Plan) bool {
			f := p.(*Select).Fields
			return len(f) == 3 && reflect.DeepEqual(f[1], SelectField{Expr: cmp(">", c("s"), v(sv("x"))), Name: "s > 'x'"}) &&
				f[2].Name == "n" && f[2].Expr.Kind == ExprIsNull
		}, 0},
		{"SELECT 1 = 1", func(p Plan) bool { s, ok := p.(*Select); return ok && s.Fields[0].Expr.Kind == ExprCompare }, 0},
		// ORDER BY an alias: of a column, by the column; else refused.
		{"SELECT id AS s, s AS k FROM t ORDER BY s, k DESC", func(p Plan) bool {
			return reflect.DeepEqual(p.(*Select).OrderBy, []Order{{Column: "id"}, {Column: "s", Desc: true}})
		}, 0},
		{"SELECT v * 2 AS d FROM t ORDER BY d", func(p Plan) bool {
			s, ok := p.(*Select)
			return ok && len(s.OrderBy) == 1 && s.OrderBy[0].Field == 1
		}, 0},
		{"SELECT s AS k, COUNT(*) FROM t GROUP BY k", func(p Plan) bool {
			return reflect.DeepEqual(p.(*Select).GroupAliases, map[string]Expr{"k": c("s")})
		}, 0},
	}
	for _, tc := range cases {
		ps, err := Parse(tc.query)
		if err != nil || len(ps) != 1 {
			t.Errorf("Parse(%q): %v", tc.query, err)
			continue
		}
		if !tc.check(ps[0]) {
			t.Errorf("Parse(%q): %s", tc.query, dumpPlans(ps))
		}
		if n := ParamCount(ps[0]); n != tc.params {
			t.Errorf("ParamCount(%q) = %d, want %d", tc.query, n, tc.params)
		}
	}
	for _, q := range []string{"SELECT id FROM t WHERE SUM(v) > 1", "UPDATE t SET v = MAX(v), w = 1"} {
		ps, err := Parse(q)
		var e *Error
		if !errors.As(err, &e) || e.Code != mysqlerr.CodeInvalidGroup {
			t.Errorf("Parse(%q): %v %s, want 1111", q, err, dumpPlans(ps))
		}
	}
}

// ptr is a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
