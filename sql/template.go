package sql

import (
	"hash/maphash"
	"reflect"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Templates: a driver that interpolates its parameters (go-sql-driver with
// interpolateParams, PHP's PDO by default, most ORMs) sends a new text for
// every key, `SELECT ... WHERE ID = 4711`, which the cache by exact text
// never answers; the parse then costs a third of such a query
// (BenchmarkCacheUnique). A template is the plan of one such text with the
// integers its WHERE compares with turned into '?' placeholders, so a
// later text that differs from it only in those digits runs as a prepared
// statement with the digits as its arguments.
//
// No lexer of ticketd's own decides what those digits are: the parser's
// tree says which literals are compared with, and records where each
// starts (OriginTextPosition). A later text is taken only when it equals
// the template's text byte for byte outside those literals and each of
// them is again a plain run of decimal digits with the same neighbours:
// the parser then reads the same tokens, with other integer values. The
// template's plan is made by parsing the text with '?' in those places and
// is kept only when, bound to the first text's integers, it is the first
// text's own plan (samePlan), field by field.

// maxSlotDigits bounds a template's integer: 18 digits always fit int64,
// so the literal the parser would read is an int64 whatever the digits
// (19 may be a BIGINT UNSIGNED, 20 a DECIMAL, and plans differ by kind).
const maxSlotDigits = 18

// maxRuns bounds the digit runs of a text looked up as a template: the
// lookup walks them all.
const maxRuns = 32

// span is a byte range [start, end) of a query.
type span struct{ start, end int }

// template is a plan whose integer comparands are placeholders; see above.
type template struct {
	text string // the text it was made from
	runs []span // digitRuns of text
	// slot[i] is the placeholder that run i fills, or -1 when run i is
	// not a value and must be the same digits in a text taken.
	slot  []int
	plans []Plan // nil: texts of this shape have no template
}

// isIdentByte reports whether b may be part of an unquoted identifier or
// of a number's token: a digit run touching one is not a number of its own.
func isIdentByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '$' || b >= 0x80
}

// digitRuns appends to runs the maximal runs of decimal digits of q that
// no identifier character touches and no '.' follows (so not part of an
// identifier, a hexadecimal or bit literal, a decimal or an exponent).
// It stops at maxRuns+1 runs. Which runs are values is the template's to
// say; the runs only align two texts.
func digitRuns(q string, runs []span) []span {
	for i := 0; i < len(q); i++ {
		if q[i] < '0' || q[i] > '9' {
			continue
		}
		j := i + 1
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		if (i == 0 || !isIdentByte(q[i-1])) && (j == len(q) || !isIdentByte(q[j]) && q[j] != '.') {
			runs = append(runs, span{i, j})
			if len(runs) > maxRuns {
				return runs
			}
		}
		i = j
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
// digit runs are runs, and false when q is not t's text with other
// digits in t's slots.
func (t *template) bind(q string, runs []span) ([]any, bool) {
	if len(runs) != len(t.runs) {
		return nil, false
	}
	var args []any
	prevT, prevQ := 0, 0
	for i, r := range t.runs {
		qr := runs[i]
		if q[prevQ:qr.start] != t.text[prevT:r.start] {
			return nil, false
		}
		digits := q[qr.start:qr.end]
		if t.slot[i] < 0 {
			if digits != t.text[r.start:r.end] {
				return nil, false
			}
		} else {
			if len(digits) > maxSlotDigits {
				return nil, false
			}
			var v int64
			for k := 0; k < len(digits); k++ {
				v = v*10 + int64(digits[k]-'0')
			}
			if args == nil {
				args = make([]any, 0, len(t.slot))
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

// newTemplate makes the template of q (digit runs runs) with parser p,
// or one with no plans when q's shape has none: not one statement, no
// integer compared with in its WHERE, or a plan that depends on more than
// the integers' values.
func newTemplate(p *parser.Parser, q string, runs []span) *template {
	t := &template{text: q, runs: runs, slot: make([]int, len(runs))}
	for i := range t.slot {
		t.slot[i] = -1
	}
	stmts, _, err := p.ParseSQL(q)
	if err != nil || len(stmts) != 1 {
		return t
	}
	var where ast.ExprNode
	switch s := stmts[0].(type) {
	case *ast.SelectStmt:
		where = s.Where
	case *ast.UpdateStmt:
		where = s.Where
	case *ast.DeleteStmt:
		where = s.Where
	}
	if where == nil {
		return t
	}
	var c comparands
	where.Accept(&c)
	var args []any
	var b strings.Builder
	prev := 0
	for i, r := range runs {
		v, ok := c.at[r.start]
		if !ok || r.end-r.start > maxSlotDigits || r.start > 0 && q[r.start-1] == '.' {
			continue
		}
		if n, err := strconv.ParseInt(q[r.start:r.end], 10, 64); err != nil || n != v {
			continue
		}
		t.slot[i] = len(args)
		args = append(args, v)
		b.WriteString(q[prev:r.start])
		b.WriteByte('?')
		prev = r.end
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

// comparands collects the integer literals that a WHERE compares with
// (operands of = <> < <= > >= <=>, IN's list, BETWEEN's bounds), by the
// offset where each starts.
type comparands struct {
	at map[int]int64
}

func (c *comparands) Enter(n ast.Node) (ast.Node, bool) {
	var ops []ast.ExprNode
	switch x := n.(type) {
	case *ast.BinaryOperationExpr:
		if _, ok := compareOps[x.Op]; ok {
			ops = []ast.ExprNode{x.L, x.R}
		}
	case *ast.PatternInExpr:
		ops = append([]ast.ExprNode{x.Expr}, x.List...)
	case *ast.BetweenExpr:
		ops = []ast.ExprNode{x.Expr, x.Left, x.Right}
	}
	for _, o := range ops {
		v, ok := unparen(o).(*test_driver.ValueExpr)
		if !ok {
			continue
		}
		if i, ok := v.GetValue().(int64); ok {
			if c.at == nil {
				c.at = map[int]int64{}
			}
			c.at[v.OriginTextPosition()] = i
		}
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
			want := Value{Kind: ValInt, Int: args[k].(int64)}
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
