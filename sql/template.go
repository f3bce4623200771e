package sql

import (
	"hash/maphash"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Templates: a driver that interpolates its parameters (go-sql-driver with
// interpolateParams, PHP's PDO by default, most ORMs) sends a new text for
// every key, `SELECT ... WHERE ID = 4711`, which the cache by exact text
// never answers; the parse then costs a third of such a query
// (BenchmarkCacheUnique). A template is the plan of one such text with its
// values as '?' placeholders: the integers and plain strings that its
// WHERE compares with, that UPDATE's SET assigns (col = value) and that
// INSERT's VALUES lists. A later text that differs from it only in those
// values runs as a prepared statement with them as its arguments.
//
// No lexer of ticketd's own decides what those values are: the parser's
// tree says which literals are values, and records where each starts
// (OriginTextPosition). A later text is taken only when it equals the
// template's text byte for byte outside those literals and each of them
// is again a plain run of decimal digits with the same neighbours, or a
// string between the same single quotes with no quote, backslash or
// invalid UTF-8 inside: the parser then reads the same tokens, with other
// values. The template's plan is made by parsing the text with '?' in
// those places and is kept only when, bound to the first text's values,
// it is the first text's own plan (samePlan), field by field.

// maxSlotDigits bounds a template's integer: 18 digits always fit int64,
// so the literal the parser would read is an int64 whatever the digits
// (19 may be a BIGINT UNSIGNED, 20 a DECIMAL, and plans differ by kind).
const maxSlotDigits = 18

// maxRuns bounds the value runs of a text looked up as a template: the
// lookup walks them all.
const maxRuns = 32

// span is a byte range [start, end) of a query: a run of digits, or the
// inside of a pair of single quotes (str).
type span struct {
	start, end int
	str        bool
}

// template is a plan whose values are placeholders; see above.
type template struct {
	text string // the text it was made from
	runs []span // valueRuns of text
	// slot[i] is the placeholder that run i fills, or -1 when run i is
	// not a value and must be the same bytes in a text taken.
	slot []int
	// neg[i] says that the '-' before run i is the value's: a slot that
	// takes the negated digits.
	neg   []bool
	plans []Plan // nil: texts of this shape have no template
}

// negated is a literal written with a minus sign before its digits (-5),
// which the parser reads as minus 5 and plans hold as -5.
type negated int64

// isIdentByte reports whether b may be part of an unquoted identifier or
// of a number's token: a digit run touching one is not a number of its own.
func isIdentByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '$' || b >= 0x80
}

// valueRuns appends to runs the spans of q that may be values: the maximal
// runs of decimal digits that no identifier character touches and no '.'
// follows (so not part of an identifier, a hexadecimal or bit literal, a
// decimal or an exponent), and the insides of single-quote pairs, paired
// naively (a quote in a comment or an escaped one pairs too). It stops at
// maxRuns+1 runs. Which runs are values is the template's to say; the runs
// only align two texts, which they do whenever the texts differ only in
// the insides of runs that hold no quote.
func valueRuns(q string, runs []span) []span {
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\'':
			j := strings.IndexByte(q[i+1:], '\'')
			if j < 0 {
				return runs
			}
			runs = append(runs, span{i + 1, i + 1 + j, true})
			i += 1 + j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if (i == 0 || !isIdentByte(q[i-1])) && (j == len(q) || !isIdentByte(q[j]) && q[j] != '.') {
				runs = append(runs, span{i, j, false})
			}
			i = j - 1
		default:
			continue
		}
		if len(runs) > maxRuns {
			return runs
		}
	}
	return runs
}

// shapeHash hashes q with its runs left out: texts that may share a
// template hash alike. Equal hashes prove nothing; bind checks the text.
func shapeHash(seed maphash.Seed, q string, runs []span) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	prev := 0
	for _, r := range runs {
		h.WriteString(q[prev:r.start])
		h.WriteByte(0)
		prev = r.end
	}
	h.WriteString(q[prev:])
	return h.Sum64()
}

// bind returns the arguments that make t's plans the plans of q, whose
// valueRuns are runs, and false when q is not t's text with other values
// in t's slots.
func (t *template) bind(q string, runs []span) ([]any, bool) {
	if len(runs) != len(t.runs) {
		return nil, false
	}
	var args []any
	prevT, prevQ := 0, 0
	for i, r := range t.runs {
		qr := runs[i]
		if qr.str != r.str || q[prevQ:qr.start] != t.text[prevT:r.start] {
			return nil, false
		}
		in := q[qr.start:qr.end]
		switch {
		case t.slot[i] < 0:
			if in != t.text[r.start:r.end] {
				return nil, false
			}
		case r.str:
			if strings.IndexByte(in, '\\') >= 0 || !utf8.ValidString(in) {
				return nil, false
			}
			args = append(args, in)
		default:
			if len(in) > maxSlotDigits {
				return nil, false
			}
			var v int64
			for k := 0; k < len(in); k++ {
				v = v*10 + int64(in[k]-'0')
			}
			if t.neg[i] {
				v = -v
			}
			args = append(args, v)
		}
		prevT, prevQ = r.end, qr.end
	}
	if q[prevQ:] != t.text[prevT:] {
		return nil, false
	}
	return args, true
}

// newTemplate makes the template of q (value runs runs) with parser p,
// or one with no plans when q's shape has none: not one statement, no
// value in a place above, or a plan that depends on more than the values.
func newTemplate(p *parser.Parser, q string, runs []span) *template {
	t := &template{text: q, runs: runs, slot: make([]int, len(runs)), neg: make([]bool, len(runs))}
	for i := range t.slot {
		t.slot[i] = -1
	}
	stmts, _, err := p.ParseSQL(q)
	if err != nil || len(stmts) != 1 {
		return t
	}
	lits := valueLiterals(stmts[0])
	if len(lits) == 0 {
		return t
	}
	var args []any
	var b strings.Builder
	prev := 0
	for i, r := range runs {
		start, end := r.start, r.end
		if r.str {
			// The quotes go with the value.
			start, end = start-1, end+1
		}
		v, ok := lits[start]
		if n, isNeg := lits[start-1].(negated); !ok && isNeg && !r.str && q[start-1] == '-' {
			// The minus sign goes with the value.
			start, v, ok = start-1, int64(n), true
			t.neg[i] = true
		}
		if !ok || !slotFits(q, r, v) {
			t.neg[i] = false
			continue
		}
		if t.neg[i] {
			v = -v.(int64)
		}
		t.slot[i] = len(args)
		args = append(args, v)
		b.WriteString(q[prev:start])
		b.WriteByte('?')
		prev = end
	}
	if len(args) == 0 {
		return t
	}
	b.WriteString(q[prev:])
	lit, _, err := parseWith(p, q)
	if err != nil || len(lit) != 1 {
		return t
	}
	tmpl, _, err := parseWith(p, b.String())
	if err != nil || len(tmpl) != 1 || ParamCount(tmpl[0]) != len(args) {
		return t
	}
	switch tmpl[0].(type) {
	case *Unsupported, *Failed:
		return t
	}
	if !samePlan(reflect.ValueOf(tmpl[0]), reflect.ValueOf(lit[0]), args) {
		return t
	}
	t.plans = tmpl
	return t
}

// slotFits reports whether run r of q is all of literal v and a run that
// bind can take another value into.
func slotFits(q string, r span, v any) bool {
	in := q[r.start:r.end]
	if r.str {
		// A plain string: no introducer or prefix before the quote (x'',
		// N'', _utf8mb4''), no escape inside, and no quote after it
		// ('a''b' is one string, a'b).
		s, ok := v.(string)
		return ok && s == in && (r.start == 1 || !isIdentByte(q[r.start-2])) &&
			(r.end+1 == len(q) || q[r.end+1] != '\'') &&
			strings.IndexByte(in, '\\') < 0 && utf8.ValidString(in)
	}
	n, ok := v.(int64)
	if !ok || len(in) > maxSlotDigits || r.start > 0 && q[r.start-1] == '.' {
		return false
	}
	m, err := strconv.ParseInt(in, 10, 64)
	return err == nil && m == n
}

// valueLiterals are the literals of stmt that a template may make values,
// by the offset where each starts: what a WHERE compares with (operands
// of = <> < <= > >= <=>, IN's list, BETWEEN's bounds), what UPDATE's SET
// assigns, and INSERT's VALUES; integers and strings only.
func valueLiterals(stmt ast.StmtNode) map[int]any {
	lits := map[int]any{}
	add := func(e ast.ExprNode) {
		e = unparen(e)
		if u, ok := e.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus {
			if v, ok := u.V.(*test_driver.ValueExpr); ok {
				if n, ok := v.GetValue().(int64); ok {
					lits[u.OriginTextPosition()] = negated(n)
				}
			}
			return
		}
		v, ok := e.(*test_driver.ValueExpr)
		if !ok {
			return
		}
		switch x := v.GetValue().(type) {
		case int64, string:
			lits[v.OriginTextPosition()] = x
		}
	}
	var where ast.ExprNode
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		where = s.Where
	case *ast.UpdateStmt:
		where = s.Where
		for _, a := range s.List {
			add(a.Expr)
		}
	case *ast.DeleteStmt:
		where = s.Where
	case *ast.InsertStmt:
		for _, row := range s.Lists {
			for _, e := range row {
				add(e)
			}
		}
	}
	if where != nil {
		where.Accept(&comparands{add: add})
	}
	return lits
}

// comparands hands add the operands of the comparisons it visits.
type comparands struct {
	add func(ast.ExprNode)
}

func (c *comparands) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.BinaryOperationExpr:
		if _, ok := compareOps[x.Op]; ok {
			c.add(x.L)
			c.add(x.R)
		}
	case *ast.PatternInExpr:
		c.add(x.Expr)
		for _, e := range x.List {
			c.add(e)
		}
	case *ast.BetweenExpr:
		c.add(x.Expr)
		c.add(x.Left)
		c.add(x.Right)
	}
	return n, false
}

func (c *comparands) Leave(n ast.Node) (ast.Node, bool) { return n, true }

var valueType = reflect.TypeFor[Value]()

// samePlan reports whether tmpl, its placeholder k read as the integer
// args[k], is lit: the same types and fields all the way down.
func samePlan(tmpl, lit reflect.Value, args []any) bool {
	if tmpl.Type() != lit.Type() {
		return false
	}
	switch tmpl.Kind() {
	case reflect.Pointer, reflect.Interface:
		if tmpl.IsNil() || lit.IsNil() {
			return tmpl.IsNil() == lit.IsNil()
		}
		return samePlan(tmpl.Elem(), lit.Elem(), args)
	case reflect.Struct:
		if tmpl.Type() == valueType && ValueKind(tmpl.FieldByName("Kind").Uint()) == ValParam {
			k := int(tmpl.FieldByName("Param").Int())
			if k >= len(args) {
				return false
			}
			var want Value
			switch a := args[k].(type) {
			case int64:
				want = Value{Kind: ValInt, Int: a}
			case string:
				want = Value{Kind: ValString, Str: a}
			default:
				return false
			}
			return samePlan(reflect.ValueOf(want), lit, nil)
		}
		for i := range tmpl.NumField() {
			if !samePlan(tmpl.Field(i), lit.Field(i), args) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if tmpl.IsNil() != lit.IsNil() {
			return false
		}
		fallthrough
	case reflect.Array:
		if tmpl.Len() != lit.Len() {
			return false
		}
		for i := range tmpl.Len() {
			if !samePlan(tmpl.Index(i), lit.Index(i), args) {
				return false
			}
		}
		return true
	case reflect.Map:
		if tmpl.IsNil() != lit.IsNil() || tmpl.Len() != lit.Len() {
			return false
		}
		for _, k := range tmpl.MapKeys() {
			lv := lit.MapIndex(k)
			if !lv.IsValid() || !samePlan(tmpl.MapIndex(k), lv, args) {
				return false
			}
		}
		return true
	case reflect.String:
		return tmpl.String() == lit.String()
	case reflect.Bool:
		return tmpl.Bool() == lit.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return tmpl.Int() == lit.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return tmpl.Uint() == lit.Uint()
	case reflect.Float32, reflect.Float64:
		return tmpl.Float() == lit.Float()
	}
	// Functions, channels and the rest have no place in a plan: refuse
	// rather than guess.
	return false
}
