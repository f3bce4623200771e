package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// JoinTable is one table of a join of information_schema views
// (Connector/J's getPrimaryKeys joins COLUMNS and STATISTICS): the view
// and the name its columns are qualified by, lower case.
type JoinTable struct {
	Table TableName
	Alias string
}

// joinScope is the scope of a FROM that joins information_schema views,
// inner joins only; their ON conditions are ANDed into where. A join of
// anything else stays 1235.
func joinScope(refs *ast.TableRefsClause, where ast.ExprNode) (scope, ast.ExprNode, error) {
	var tables []JoinTable
	var walk func(n ast.ResultSetNode) error
	walk = func(n ast.ResultSetNode) error {
		switch x := n.(type) {
		case *ast.Join:
			if x.Right != nil && (x.Tp != ast.CrossJoin || x.NaturalJoin || x.StraightJoin || len(x.Using) > 0) {
				return unsupported("JOIN other than an inner join of information_schema views")
			}
			if err := walk(x.Left); err != nil {
				return err
			}
			if x.Right != nil {
				if err := walk(x.Right); err != nil {
					return err
				}
			}
			if x.On != nil {
				if where == nil {
					where = x.On.Expr
				} else {
					where = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: x.On.Expr, R: where}
				}
			}
			return nil
		case *ast.TableSource:
			tn, ok := x.Source.(*ast.TableName)
			if !ok || !strings.EqualFold(tn.Schema.O, "information_schema") {
				return unsupported("JOIN other than of information_schema views")
			}
			alias := x.AsName.L
			if alias == "" {
				alias = tn.Name.L
			}
			for _, t := range tables {
				if t.Alias == alias {
					return mysqlerr.New(mysql.ErrNonuniqTable, "Not unique table/alias: '%s'", alias)
				}
			}
			tables = append(tables, JoinTable{Table: *tableName(tn), Alias: alias})
			return nil
		}
		return unsupported("FROM " + nodeSQL(n))
	}
	if err := walk(refs.TableRefs); err != nil {
		return scope{}, nil, err
	}
	return scope{table: &tables[0].Table, join: tables}, where, nil
}

// joinColumn resolves a column of a join: alias.column when qualified, the
// bare name (which the wire layer finds among the views) when not.
func (sc scope) joinColumn(c *ast.ColumnName) (string, error) {
	name := strings.ToLower(c.Name.O)
	if c.Table.O == "" {
		return name, nil
	}
	for _, t := range sc.join {
		if strings.EqualFold(c.Table.O, t.Alias) && (c.Schema.O == "" || strings.EqualFold(c.Schema.O, t.Table.DB)) {
			return t.Alias + "." + name, nil
		}
	}
	return "", mysqlerr.UnknownColumn(columnText(c), "field list")
}
