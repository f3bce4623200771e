package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// funcArgs says how many arguments each function ticketd evaluates takes:
// {min, max}, max -1 for any.
var funcArgs = map[string][2]int{
	"database":          {0, 0},
	"schema":            {0, 0},
	"version":           {0, 0},
	"connection_id":     {0, 0},
	"user":              {0, 0},
	"current_user":      {0, 0},
	"session_user":      {0, 0},
	"system_user":       {0, 0},
	"row_count":         {0, 0},
	"found_rows":        {0, 0},
	"now":               {0, 1},
	"current_timestamp": {0, 1},
	"utc_timestamp":     {0, 1},
	"concat":            {1, -1},
}

func funcCall(f *ast.FuncCallExpr, sc scope) (Expr, error) {
	name := f.FnName.L
	if e, ok, err := sequenceCall(f, sc); ok {
		return e, err
	}
	if f.Schema.O != "" {
		return Expr{}, unsupported("stored function")
	}
	out := Expr{Kind: ExprFunc, Name: strings.ToUpper(name)}
	if name == "last_insert_id" {
		if len(f.Args) > 1 {
			return Expr{}, unsupported("LAST_INSERT_ID with several arguments")
		}
		out = Expr{Kind: ExprLastInsertID}
	} else {
		n, ok := funcArgs[name]
		if !ok {
			n, ok = catalogFuncs[name]
		}
		if !ok {
			return Expr{}, unsupported(strings.ToUpper(name) + "()")
		}
		if len(f.Args) < n[0] || (n[1] >= 0 && len(f.Args) > n[1]) {
			return Expr{}, unsupported(strings.ToUpper(name) + "() with these arguments")
		}
	}
	if len(f.Args) > 0 {
		out.Args = make([]Expr, len(f.Args))
		for i, a := range f.Args {
			var err error
			if out.Args[i], err = expr(a, sc); err != nil {
				return Expr{}, err
			}
		}
	}
	return out, nil
}
