package wire

import (
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// Querying information_schema's views: the WHERE (with MariaDB's lookup
// of names), COUNT(), ORDER BY a select item's value, and inner joins.

// catalogFilter keeps the rows of an information_schema view that the
// WHERE matches. As MariaDB, it first looks up the schemas and tables
// that top-level `TABLE_SCHEMA = 'x'` and `TABLE_NAME = 'x'` terms name,
// by exact (case-sensitive) name, as a file system does; then the whole
// WHERE is evaluated, its strings compared as utf8mb3_general_ci.
func (src *source) catalogFilter(e *evalCtx, where *sql.Expr) error {
	if where == nil {
		return nil
	}
	if err := src.checkColumns(where); err != nil {
		return err
	}
	e.over(src.cols, src.rows)
	var lookups []struct {
		col  int
		want string
	}
	var walk func(x *sql.Expr) error
	walk = func(x *sql.Expr) error {
		switch {
		case x.Kind == sql.ExprLogic && x.Name == "AND":
			if err := walk(&x.Args[0]); err != nil {
				return err
			}
			return walk(&x.Args[1])
		case x.Kind == sql.ExprCompare && x.Name == "=":
			col, val := &x.Args[0], &x.Args[1]
			if col.Kind != sql.ExprColumn {
				col, val = val, col
			}
			if col.Kind != sql.ExprColumn || hasColumnRef(val) {
				return nil
			}
			if base := col.Name[strings.LastIndexByte(col.Name, '.')+1:]; base != "table_schema" && base != "table_name" {
				return nil
			}
			v, err := e.eval(val)
			if err != nil {
				return err
			}
			if t, ok := v.(string); ok {
				lookups = append(lookups, struct {
					col  int
					want string
				}{src.colIndex(col.Name), t})
			}
		}
		return nil
	}
	if err := walk(where); err != nil {
		return err
	}
	kept := src.rows[:0]
rows:
	for _, r := range src.rows {
		for _, l := range lookups {
			if got, _ := r[l.col].(string); got != l.want {
				continue rows
			}
		}
		e.row = r
		ok, err := e.match(where)
		if err != nil {
			return err
		}
		if ok {
			kept = append(kept, r)
		}
	}
	src.rows = kept
	return nil
}

// checkColumns answers 1054 for a column of the WHERE the view lacks.
func (src *source) checkColumns(x *sql.Expr) error {
	if x.Kind == sql.ExprColumn && src.colIndex(x.Name) < 0 {
		return errColumn(src.cols, x.Name, "where clause")
	}
	for i := range x.Args {
		if err := src.checkColumns(&x.Args[i]); err != nil {
			return err
		}
	}
	return nil
}

// hasColumnRef reports whether x reads a column.
func hasColumnRef(x *sql.Expr) bool {
	if x.Kind == sql.ExprColumn {
		return true
	}
	for i := range x.Args {
		if hasColumnRef(&x.Args[i]) {
			return true
		}
	}
	return false
}

// count replaces a view's selected rows with the answer of a select list
// of COUNT(*) and COUNT(column) (SQLAlchemy's has_table asks
// `SELECT COUNT(*) FROM information_schema.tables WHERE ...`), which the
// row engine computes as a row table's aggregates: one row, BIGINT as
// MariaDB types it, cut by LIMIT.
func (src *source) count(p *sql.Select) error {
	out := rowset{cols: make([]column, len(p.Fields))}
	q := &rowengine.Query{Aggs: make([]rowengine.Agg, len(p.Fields)), HasLimit: p.HasLimit, Limit: p.Limit, Offset: p.Offset}
	for i := range p.Fields {
		x := &p.Fields[i].Expr
		if x.Kind != sql.ExprAgg || x.Name != "COUNT" {
			return unsupported(x.Describe() + " beside COUNT() on an information_schema view")
		}
		out.cols[i] = column{name: p.Fields[i].Name, typ: mysql.MYSQL_TYPE_LONGLONG}
		q.Aggs[i].Fn = "COUNT"
		if len(x.Args) == 1 {
			j := src.colIndex(x.Args[0].Name)
			if j < 0 {
				return errUnknownColumn(x.Args[0].Name, "field list")
			}
			q.Aggs[i].Col = src.cols[j].name
		}
	}
	rd, rows := src.datums()
	res, me := rowengine.SelectRows(&model.Table{Def: model.TableDef{Rows: rd}}, rows, q)
	if me != nil {
		return me
	}
	for _, g := range res.Groups {
		row := make([]any, len(g))
		for i, a := range g {
			row[i] = datumValue(&model.RowCol{Kind: model.ColInt}, a.Value)
		}
		out.rows = append(out.rows, row)
	}
	src.rowset, src.counted = out, true
	return nil
}

// lateOrder reports an ORDER BY of a select item's value (an alias of an
// expression, a position), which orderProjected applies.
func lateOrder(p *sql.Select) bool {
	for _, o := range p.OrderBy {
		if o.Field != 0 {
			return true
		}
	}
	return false
}

// orderProjected orders the projected rows of a view (out, one per row of
// src, in step) by p's ORDER BY, a term naming a select item by that
// item's value, and applies LIMIT (Connector/J's getTables orders by
// `IF(TABLE_TYPE='BASE TABLE', 'TABLE', TABLE_TYPE) as TABLE_TYPE`).
func orderProjected(p *sql.Select, src *source, out *rowset) error {
	if hasStar(p) {
		return unsupported("ORDER BY an expression's alias or position beside *")
	}
	terms := make([]orderKey, len(p.OrderBy))
	for i, o := range p.OrderBy {
		terms[i] = orderKey{field: o.Field - 1, col: -1, desc: o.Desc}
		if o.Field == 0 {
			if terms[i].col = src.colIndex(o.Column); terms[i].col < 0 {
				return errColumn(src.cols, o.Column, "order clause")
			}
		}
	}
	srd, srows := src.datums()
	outSrc := source{rowset: *out, catalog: true}
	ord, orows := outSrc.datums()
	idx := sortRows(len(out.rows), func(a, b int) int {
		for _, t := range terms {
			var c int
			if t.col >= 0 {
				c = rowengine.CompareRows(srd, t.col, srows[a], srows[b])
			} else {
				c = rowengine.CompareRows(ord, t.field, orows[a], orows[b])
			}
			if c != 0 {
				return t.sign(c)
			}
		}
		return 0
	})
	rows := make([][]any, len(idx))
	for i, j := range idx {
		rows[i] = out.rows[j]
	}
	if p.HasLimit {
		lo := min(p.Offset, uint64(len(rows)))
		rows = rows[lo:min(lo+p.Limit, uint64(len(rows)))]
	}
	out.rows = rows
	return nil
}

// joinViews is the FROM of a join of information_schema views: each view
// materialised with its columns named alias.column, narrowed by the WHERE
// terms that read only its columns (with catalogFilter's name lookup),
// then their product, which selectRows filters with the whole WHERE.
func (s *session) joinViews(p *sql.Select, args []any) (*source, error) {
	out := &source{catalog: true}
	out.rows = [][]any{nil}
	terms := conjuncts(p.Filter)
	for _, jt := range p.Join {
		v, err := s.infoSchema(jt.Table.Name)
		if err != nil {
			return nil, err
		}
		cols := make([]column, len(v.cols))
		for i, c := range v.cols {
			c.name = jt.Alias + "." + strings.ToLower(c.name)
			cols[i] = c
		}
		v.cols = cols
		for _, t := range terms {
			if onlyAlias(t, jt.Alias) {
				if err := v.catalogFilter(&evalCtx{s: s, args: args, catalog: true}, t); err != nil {
					return nil, err
				}
			}
		}
		out.cols = append(out.cols, v.cols...)
		product := make([][]any, 0, len(out.rows)*len(v.rows))
		for _, a := range out.rows {
			for _, b := range v.rows {
				product = append(product, append(append(make([]any, 0, len(a)+len(b)), a...), b...))
			}
		}
		out.rows = product
	}
	return out, nil
}

// conjuncts are the terms of x's top-level ANDs.
func conjuncts(x *sql.Expr) []*sql.Expr {
	if x == nil {
		return nil
	}
	if x.Kind == sql.ExprLogic && x.Name == "AND" {
		return append(conjuncts(&x.Args[0]), conjuncts(&x.Args[1])...)
	}
	return []*sql.Expr{x}
}

// onlyAlias reports whether x reads columns, all qualified by alias.
func onlyAlias(x *sql.Expr, alias string) bool {
	seen := false
	var walk func(x *sql.Expr) bool
	walk = func(x *sql.Expr) bool {
		if x.Kind == sql.ExprColumn {
			seen = true
			return strings.HasPrefix(x.Name, alias+".")
		}
		for i := range x.Args {
			if !walk(&x.Args[i]) {
				return false
			}
		}
		return true
	}
	return walk(x) && seen
}
