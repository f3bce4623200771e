package sql

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vagueReason reports whether a 1235 reason names nothing: "this
// expression", "this statement" and the like, which is all a user saw of
// Connector/J's getColumns (issue 34).
func vagueReason(r string) bool {
	r = strings.TrimSpace(strings.ToLower(r))
	if r == "" {
		return true
	}
	for _, w := range []string{"this ", "that ", "it", "something", "unknown"} {
		if strings.HasPrefix(r, w) {
			return true
		}
	}
	return false
}

// TestRefusalSitesName walks the module's source for every 1235 it can
// answer (calls of unsupported() and mysqlerr.NotSupported(), and
// Unsupported plans) and fails on a reason that starts as a vague one
// ("this expression"): each must name the construct refused, or be
// built from what names it.
func TestRefusalSitesName(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	sites := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var arg ast.Expr
			switch x := n.(type) {
			case *ast.CallExpr:
				name := ""
				switch fn := x.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				}
				if (name == "unsupported" || name == "NotSupported") && len(x.Args) == 1 {
					arg = x.Args[0]
				}
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok && k.Name == "Reason" {
					arg = x.Value
				}
			}
			if arg == nil {
				return true
			}
			sites++
			if lit := leadingLiteral(arg); lit != "" && vagueReason(lit) {
				t.Errorf("%s: 1235 reason %q names nothing", fset.Position(arg.Pos()), lit)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sites < 100 {
		t.Fatalf("found only %d refusal sites under %s: the walk is broken", sites, root)
	}
	t.Logf("%d refusal sites checked", sites)
}

// leadingLiteral is the string literal a reason starts with: the whole
// literal, or the first operand of a concatenation; "" for anything else.
func leadingLiteral(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				s, err := strconv.Unquote(x.Value)
				if err == nil {
					return s
				}
			}
			return ""
		case *ast.BinaryExpr:
			e = x.X
		case *ast.CallExpr:
			// fmt.Sprintf("...", ...): its format.
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(x.Args) > 0 {
				e = x.Args[0]
				continue
			}
			return ""
		default:
			return ""
		}
	}
}

// TestRefusalsNameConstruct parses statements ticketd refuses and
// requires each 1235 to quote the construct refused.
func TestRefusalsNameConstruct(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"SELECT 'a' REGEXP 'b'", "REGEXP"},
		{"SELECT id FROM t WHERE stub REGEXP 'b'", "REGEXP"},
		{"SELECT (SELECT 1)", "subquery"},
		{"SELECT id FROM t WHERE (id, stub) = (1, 'a')", "row constructor"},
		{"SELECT JSON_EXTRACT('{}', '$.a')", "JSON_EXTRACT()"},
		{"SELECT 5 DIV 2", "operator DIV"},
		{"SELECT 'a' COLLATE utf8mb4_bin", "COLLATE"},
		{"SELECT BINARY 'a'", "BINARY"},
		{"SELECT CAST(1 AS CHAR)", "CAST(1 AS CHAR)"},
		{"SELECT ROW_NUMBER() OVER ()", "ROW_NUMBER()"},
		{"SELECT id FROM t WHERE MATCH (stub) AGAINST ('x')", "MATCH ... AGAINST"},
		{"SELECT id FROM t WHERE id IS TRUE", "IS TRUE"},
		{"CREATE TABLE t (id INT, v INT AS (id + 1))", "generated column"},
		{"CREATE SEQUENCE s NOCYCLE NOMAXVALUE KEEP", ""},
	} {
		plans, err := Parse(c.q)
		if err != nil {
			if c.want == "" {
				continue // a syntax error: not a refusal
			}
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		reason := ""
		switch p := plans[0].(type) {
		case *Unsupported:
			reason = p.Reason
		case *Select:
			if p.WhereErr != nil && p.FilterErr != nil {
				reason = p.FilterErr.Error()
			}
		}
		if reason == "" {
			if c.want != "" {
				t.Errorf("%s: not refused (%T)", c.q, plans[0])
			}
			continue
		}
		if vagueReason(reason) || !strings.Contains(reason, c.want) {
			t.Errorf("%s: refused with %q, want it to name %q", c.q, reason, c.want)
		}
	}
}

// TestDescribeNamesEveryKind requires a name for every expression kind,
// so that a refusal of one never reads "an expression of kind N".
func TestDescribeNamesEveryKind(t *testing.T) {
	for k := ExprValue; k <= ExprCast; k++ {
		x := Expr{Kind: k, Name: "f", Op: '+'}
		if d := x.Describe(); strings.Contains(d, "of kind") || vagueReason(d) {
			t.Errorf("kind %d is described as %q", k, d)
		}
	}
}
