package rowengine

import (
	mb "math/big"
	"strings"
	"unicode/utf8"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// The catalogue's functions (ECase, ECall): CASE (and IF, IFNULL, which
// the wire layer writes as CASE), CAST AS SIGNED/UNSIGNED, and the string
// functions Connector/J's DatabaseMetaData sends to information_schema.
// They evaluate over in-memory rows (catalog.go); no row-table statement
// carries them.

// Functions of ECall, by Unit.
const (
	FnSigned    = "SIGNED"   // CAST(Args[0] AS SIGNED)
	FnUnsigned  = "UNSIGNED" // CAST(Args[0] AS UNSIGNED)
	FnUpper     = "UPPER"
	FnLower     = "LOWER"
	FnSubstring = "SUBSTRING" // SUBSTRING(s, pos[, n])
	FnLocate    = "LOCATE"    // LOCATE(sub, s[, pos])
	FnLeast     = "LEAST"
	FnGreatest  = "GREATEST"
	FnConcat    = "CONCAT"
)

// caseOf is CASE WHEN c THEN r ... ELSE e END: the result of the first
// condition that is true (not false, not NULL), else the last argument.
func (env *evalEnv) caseOf(x *model.RowExpr) (val, *model.Error) {
	n := len(x.Args)
	for i := 0; i+1 < n; i += 2 {
		t, e := env.truth(&x.Args[i])
		if e != nil {
			return val{}, e
		}
		if t == tTrue {
			return env.eval(&x.Args[i+1])
		}
	}
	if n%2 == 1 {
		return env.eval(&x.Args[n-1])
	}
	return val{}, nil
}

// call is ECall: a function of its arguments, NULL when one is (LEAST,
// GREATEST and CONCAT included, as in MariaDB).
func (env *evalEnv) call(x *model.RowExpr) (val, *model.Error) {
	switch x.Unit {
	case FnLeast, FnGreatest:
		return env.extreme(x)
	}
	args := make([]val, len(x.Args))
	for i := range x.Args {
		v, e := env.eval(&x.Args[i])
		if e != nil {
			return val{}, e
		}
		if v.k == vNull {
			return val{}, nil
		}
		args[i] = v
	}
	switch x.Unit {
	case FnSigned, FnUnsigned:
		return env.castInt(args[0], &x.Args[0], x.Unit == FnUnsigned)
	case FnUpper:
		return val{k: vStr, s: strings.ToUpper(args[0].text())}, nil
	case FnLower:
		return val{k: vStr, s: strings.ToLower(args[0].text())}, nil
	case FnConcat:
		var b strings.Builder
		for _, a := range args {
			b.WriteString(a.text())
		}
		return val{k: vStr, s: b.String()}, nil
	case FnSubstring:
		n := make([]int64, len(args)-1)
		for i := range n {
			n[i] = env.intArg(args[i+1], &x.Args[i+1])
		}
		return val{k: vStr, s: substring(args[0].text(), n)}, nil
	case FnLocate:
		if e := env.literalStrings(args[0], args[1]); e != nil {
			return val{}, e
		}
		var from []int64
		if len(args) > 2 {
			from = []int64{env.intArg(args[2], &x.Args[2])}
		}
		return val{k: vInt, i: locate(collFor(env.rd, x.Args), args[0].text(), args[1].text(), from)}, nil
	}
	return val{}, mysqlerr.NotSupported("function " + x.Unit)
}

// extreme is LEAST and GREATEST: the argument that orders first (last)
// under the comparison rules of the whole group.
func (env *evalEnv) extreme(x *model.RowExpr) (val, *model.Error) {
	best := 0
	for i := range x.Args {
		v, e := env.eval(&x.Args[i])
		if e != nil || v.k == vNull {
			return val{}, e
		}
		if i == 0 {
			continue
		}
		c, _, e := env.compare(&x.Args[i], &x.Args[best], x.Args)
		if e != nil {
			return val{}, e
		}
		if x.Unit == FnLeast && c < 0 || x.Unit == FnGreatest && c > 0 {
			best = i
		}
	}
	return env.eval(&x.Args[best])
}

// intArg is a function's integer argument (a position, a length): a
// number rounded, a string read as one (with MariaDB's warning).
func (env *evalEnv) intArg(v val, x *model.RowExpr) int64 {
	r := roundHalfAway(env.numeric(v, x))
	if !r.IsInt64() {
		if r.Sign() < 0 {
			return -1 << 63
		}
		return 1<<63 - 1
	}
	return r.Int64()
}

// castInt is CAST(v AS SIGNED|UNSIGNED): a string read as a number (its
// numeric prefix, with warning 1292 when something was cut), a decimal
// rounded half away from zero, a value outside the type wrapped with
// MariaDB's note 1105.
func (env *evalEnv) castInt(v val, x *model.RowExpr, unsigned bool) (val, *model.Error) {
	if v.k == vTime {
		return val{}, mysqlerr.NotSupported("CAST of a date AS an integer")
	}
	var n *mb.Int
	switch v.k {
	case vInt:
		n = mb.NewInt(v.i)
	case vUint:
		n = new(mb.Int).SetUint64(v.u)
	case vStr:
		n = roundHalfAway(env.strDecimal(v.s, "INTEGER"))
	default:
		n = roundHalfAway(v.rat())
	}
	if unsigned {
		if n.Sign() < 0 {
			env.warn("Note", mysqlerr.CodeUnknown, "Cast to unsigned converted negative integer to it's positive complement")
			if !n.IsInt64() {
				return val{k: vUint}, nil
			}
			return val{k: vUint, u: uint64(n.Int64())}, nil
		}
		if !n.IsUint64() {
			return val{k: vUint, u: 1<<64 - 1}, nil
		}
		return val{k: vUint, u: n.Uint64()}, nil
	}
	if n.IsInt64() {
		return val{k: vInt, i: n.Int64()}, nil
	}
	env.warn("Note", mysqlerr.CodeUnknown, "Cast to signed converted positive out-of-range integer to it's negative complement")
	if n.IsUint64() {
		return val{k: vInt, i: int64(n.Uint64())}, nil
	}
	return val{k: vInt, i: 1<<63 - 1}, nil
}

// substring is SUBSTRING(s, pos[, n]) in characters: pos 1 is the first,
// a negative pos counts from the end, pos 0 is the empty string.
func substring(s string, args []int64) string {
	r := []rune(s)
	pos := args[0]
	switch {
	case pos > 0:
		pos--
	case pos < 0:
		pos += int64(len(r))
		if pos < 0 {
			return ""
		}
	default:
		return ""
	}
	if pos >= int64(len(r)) {
		return ""
	}
	end := int64(len(r))
	if len(args) > 1 {
		n := args[1]
		if n <= 0 {
			return ""
		}
		end = min(end, pos+n)
	}
	return string(r[pos:end])
}

// locate is LOCATE(sub, s[, pos]): the 1-based character position of sub
// in s from pos on, 0 when absent; compared in coll (without regard to
// case unless it is a _bin one).
func locate(coll model.Collation, sub, s string, args []int64) int64 {
	start := int64(1)
	if len(args) > 0 {
		start = args[0]
		if start < 1 {
			return 0
		}
	}
	if !coll.Bin() {
		sub, s = strings.ToLower(sub), strings.ToLower(s)
	}
	r := []rune(s)
	if start > int64(len(r))+1 {
		return 0
	}
	rest := string(r[start-1:])
	i := strings.Index(rest, sub)
	if i < 0 {
		return 0
	}
	return start + int64(utf8.RuneCountInString(rest[:i]))
}
