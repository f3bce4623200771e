package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// setStmt converts SET. src is the whole query, to read what was written
// where the grammar loses it.
func setStmt(s *ast.SetStmt, src string) (Plan, error) {
	plan := &Set{Vars: make([]SetVar, 0, len(s.Variables))}
	for _, v := range s.Variables {
		name := strings.ToLower(v.Name)
		switch {
		case v.Name == ast.SetNames || v.Name == ast.SetCharset:
			cs, err := setValue(v.Value, src)
			if err != nil {
				return nil, err
			}
			plan.Vars = append(plan.Vars,
				SetVar{Name: "character_set_client", Value: cs},
				SetVar{Name: "character_set_results", Value: cs})
			if v.Name == ast.SetCharset {
				// SET CHARACTER SET leaves the connection charset to the
				// database's.
				plan.Vars = append(plan.Vars, SetVar{Name: "character_set_connection",
					Value: Expr{Kind: ExprSysVar, Name: "character_set_database"}})
				continue
			}
			plan.Vars = append(plan.Vars, SetVar{Name: "character_set_connection", Value: cs})
			if v.ExtendValue != nil {
				coll, err := setValue(v.ExtendValue, src)
				if err != nil {
					return nil, err
				}
				plan.Vars = append(plan.Vars, SetVar{Name: "collation_connection", Value: coll, NamesCharset: &cs})
			}
			continue
		case !v.IsSystem:
			e, err := expr(v.Value, scope{})
			if err != nil {
				return nil, err
			}
			plan.Vars = append(plan.Vars, SetVar{User: true, Name: name, Value: e})
			continue
		case v.IsInstance:
			return nil, unsupported("SET INSTANCE")
		case name == "tx_isolation_one_shot":
			// SET TRANSACTION without SESSION or GLOBAL is for the next
			// transaction only, and ticketd's transactions are no-ops.
			continue
		case name == "tx_isolation":
			name = "transaction_isolation"
		case name == "tx_read_only":
			// SET [SESSION|GLOBAL] TRANSACTION READ ONLY|WRITE, as 1 or 0.
			name = "transaction_read_only"
			if lit, ok := v.Value.(*test_driver.ValueExpr); ok {
				if str, ok := lit.GetValue().(string); ok && (str == "0" || str == "1") {
					plan.Vars = append(plan.Vars, SetVar{Scope: setScope(v), Name: name,
						Value: Expr{Kind: ExprValue, Value: Value{Kind: ValInt, Int: int64(str[0] - '0')}}})
					continue
				}
			}
		case name == "tx_read_ts":
			return nil, unsupported("SET TRANSACTION READ ONLY AS OF")
		}
		e, err := setValue(v.Value, src)
		if err != nil {
			return nil, err
		}
		plan.Vars = append(plan.Vars, SetVar{Scope: setScope(v), Name: name, Value: e})
	}
	if len(plan.Vars) == 0 {
		return &Empty{}, nil
	}
	return plan, nil
}

// setScope: the grammar does not tell SET SESSION x from SET x, which
// MySQL treats alike.
func setScope(v *ast.VariableAssignment) Scope {
	if v.IsGlobal {
		return ScopeGlobal
	}
	return ScopeDefault
}

// setValue converts the value of a system variable assignment, where
// MySQL takes DEFAULT and a bare word (SET autocommit = OFF) as values.
func setValue(e ast.ExprNode, src string) (Expr, error) {
	switch x := e.(type) {
	case *ast.DefaultExpr:
		if x.Name == nil {
			return Expr{Kind: ExprValue, Value: Value{Kind: ValDefault}}, nil
		}
	case *ast.ColumnNameExpr:
		if x.Name.Table.O == "" {
			return Expr{Kind: ExprIdent, Name: x.Name.Name.O}, nil
		}
	}
	if lit, ok := e.(*test_driver.ValueExpr); ok {
		// The grammar turns the bare keywords ON and BINARY into strings;
		// what was written tells them from 'ON'.
		if s, ok := lit.GetValue().(string); ok && (s == "ON" || s == "BINARY") {
			if off := lit.OriginTextPosition(); off > 0 && off < len(src) && src[off] != '\'' && src[off] != '"' {
				return Expr{Kind: ExprIdent, Name: s}, nil
			}
		}
	}
	return expr(e, scope{})
}

var showKinds = map[ast.ShowStmtType]ShowKind{
	ast.ShowDatabases:      ShowDatabases,
	ast.ShowTables:         ShowTables,
	ast.ShowVariables:      ShowVariables,
	ast.ShowStatus:         ShowStatus,
	ast.ShowWarnings:       ShowWarnings,
	ast.ShowErrors:         ShowErrors,
	ast.ShowTableStatus:    ShowTableStatus,
	ast.ShowCreateTable:    ShowCreateTable,
	ast.ShowCreateDatabase: ShowCreateDatabase,
	ast.ShowColumns:        ShowColumns,
	ast.ShowIndex:          ShowIndex,
	ast.ShowEngines:        ShowEngines,
	ast.ShowCharset:        ShowCharset,
	ast.ShowCollation:      ShowCollation,
	ast.ShowProcessList:    ShowProcessList,
	ast.ShowGrants:         ShowGrants,
	ast.ShowCreateSequence: ShowCreateSequence,
}

func showStmt(s *ast.ShowStmt) (Plan, error) {
	kind, ok := showKinds[s.Tp]
	if !ok {
		return nil, unsupported(stmtReason(s))
	}
	switch {
	case s.CountWarningsOrErrors:
		return nil, unsupported("SHOW COUNT(*)")
	case s.Limit != nil:
		return nil, unsupported("SHOW ... LIMIT")
	}
	plan := &Show{Kind: kind, Full: s.Full, DB: s.DBName}
	if kind == ShowGrants {
		if len(s.Roles) > 0 {
			return nil, unsupported("SHOW GRANTS ... USING")
		}
		if u := s.User; u != nil && !u.CurrentUser {
			plan.User, plan.Host = u.Username, u.Hostname
		}
		return plan, nil
	}
	if s.GlobalScope {
		plan.Scope = ScopeGlobal
	}
	if s.Table != nil {
		plan.Table = *tableName(s.Table)
		// SHOW COLUMNS FROM t FROM db names the table's database.
		if s.DBName != "" {
			plan.Table.DB, plan.DB = s.DBName, ""
		}
	}
	if s.Column != nil {
		// DESCRIBE t col: col is a LIKE pattern.
		plan.HasLike, plan.Like = true, s.Column.Name.O
	}
	if p := s.Pattern; p != nil {
		lit, ok := p.Pattern.(*test_driver.ValueExpr)
		str, isStr := "", false
		if ok {
			str, isStr = lit.GetValue().(string)
		}
		if p.Not || !p.IsLike || !isStr {
			return nil, unsupported("SHOW with this LIKE")
		}
		plan.HasLike, plan.Like = true, str
	}
	if s.Where != nil {
		var err error
		if plan.Where, plan.WhereOr, err = showWhere(s.Where); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// showWhere takes the terms of `c = v AND ...`, `c = v OR ...` and
// `c IN (v, ...)`. The SHOW's columns are not checked here: wire knows them.
func showWhere(e ast.ExprNode) ([]Cond, bool, error) {
	bad := unsupported("SHOW with this WHERE")
	// A table with no name: any unqualified column resolves.
	sc := scope{table: &TableName{}}
	e = unparen(e)
	if in, ok := e.(*ast.PatternInExpr); ok {
		c, isCol := unparen(in.Expr).(*ast.ColumnNameExpr)
		if in.Not || in.Sel != nil || !isCol {
			return nil, false, bad
		}
		name, err := sc.column(c.Name, false)
		if err != nil {
			return nil, false, err
		}
		out := make([]Cond, 0, len(in.List))
		for _, item := range in.List {
			v, ok, err := literal(item)
			if err != nil || !ok {
				return nil, false, bad
			}
			out = append(out, Cond{Column: name, Value: v})
		}
		return out, len(out) > 1, nil
	}
	return terms(e, sc, true)
}

func createTable(s *ast.CreateTableStmt) (Plan, error) {
	switch {
	case s.TemporaryKeyword != ast.TemporaryNone:
		return nil, unsupported("CREATE TEMPORARY TABLE")
	case s.ReferTable != nil:
		return nil, unsupported("CREATE TABLE ... LIKE")
	case s.Select != nil:
		return nil, unsupported("CREATE TABLE ... SELECT")
	case s.Partition != nil:
		return nil, unsupported("PARTITION BY")
	}
	plan := &CreateTable{
		Table:       *tableName(s.Table),
		IfNotExists: s.IfNotExists,
		Columns:     make([]ColumnDef, 0, len(s.Cols)),
	}
	for _, c := range s.Cols {
		col, err := columnDef(c)
		if err != nil {
			return nil, err
		}
		plan.Columns = append(plan.Columns, col)
	}
	for _, c := range s.Constraints {
		k, err := keyDef(c)
		if err != nil {
			return nil, err
		}
		plan.Keys = append(plan.Keys, k)
	}
	for _, o := range s.Options {
		switch o.Tp {
		case ast.TableOptionEngine:
			plan.Engine = o.StrValue
		case ast.TableOptionComment:
			plan.Comment = o.StrValue
		case ast.TableOptionAutoIncrement:
			plan.HasAutoInc, plan.AutoInc = true, o.UintValue
		case ast.TableOptionCharset:
			plan.Charsets = append(plan.Charsets, strings.ToLower(o.StrValue))
		case ast.TableOptionCollate:
			plan.Collates = append(plan.Collates, strings.ToLower(o.StrValue))
		}
		// Row format and the like change no answer.
	}
	return plan, nil
}

func columnDef(c *ast.ColumnDef) (ColumnDef, error) {
	ft := c.Tp
	if ft == nil {
		return ColumnDef{}, unsupported("column without a type")
	}
	col := ColumnDef{
		Name:     c.Name.Name.O,
		Type:     strings.ToLower(types.TypeToStr(ft.GetType(), ft.GetCharset())),
		Unsigned: mysql.HasUnsignedFlag(ft.GetFlag()),
	}
	if w := ft.GetFlen(); w != types.UnspecifiedLength {
		col.Width = w
	}
	if err := typeLimits(&col, ft); err != nil {
		return ColumnDef{}, err
	}
	if col.Type == "char" || col.Type == "varchar" {
		// VARBINARY, BINARY and BLOB are other types (binary charset);
		// the BINARY attribute of a CHAR/VARCHAR is a _bin collation.
		col.Charset = strings.ToLower(ft.GetCharset())
		col.Collate = strings.ToLower(ft.GetCollate())
		col.Binary = mysql.HasBinaryFlag(ft.GetFlag())
	}
	for _, o := range c.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull:
			col.NotNull = true
		case ast.ColumnOptionNull:
			col.NotNull = false
		case ast.ColumnOptionAutoIncrement:
			col.AutoInc = true
		case ast.ColumnOptionPrimaryKey:
			col.PrimaryKey = true
		case ast.ColumnOptionUniqKey:
			col.Unique = true
		case ast.ColumnOptionDefaultValue:
			if isNow(o.Expr) {
				col.HasDefault, col.DefaultNow = true, true
				continue
			}
			v, ok, err := literal(o.Expr)
			if err != nil || !ok || v.Kind == ValParam {
				return ColumnDef{}, unsupported("column DEFAULT expression")
			}
			col.HasDefault, col.Default = true, v
		case ast.ColumnOptionComment:
			v, ok, err := literal(o.Expr)
			if err != nil || !ok || v.Kind != ValString {
				return ColumnDef{}, unsupported("column COMMENT expression")
			}
			col.Comment = v.Str
		case ast.ColumnOptionCollate:
			// A COLLATE on a column of another type changes nothing
			// (MariaDB takes it too).
			if col.Type == "char" || col.Type == "varchar" {
				col.Collate = strings.ToLower(o.StrValue)
			}
		case ast.ColumnOptionNoOption, ast.ColumnOptionColumnFormat,
			ast.ColumnOptionStorage, ast.ColumnOptionSecondaryEngineAttribute:
		case ast.ColumnOptionOnUpdate:
			if !isNow(o.Expr) {
				return ColumnDef{}, unsupported("ON UPDATE other than CURRENT_TIMESTAMP")
			}
			col.OnUpdateNow = true
		case ast.ColumnOptionGenerated:
			return ColumnDef{}, unsupported("generated column")
		case ast.ColumnOptionReference:
			return ColumnDef{}, unsupported("REFERENCES")
		case ast.ColumnOptionCheck:
			return ColumnDef{}, unsupported("CHECK")
		default:
			return ColumnDef{}, unsupported("column option " + nodeSQL(o))
		}
	}
	return col, nil
}

func keyDef(c *ast.Constraint) (KeyDef, error) {
	k := KeyDef{Name: c.Name}
	switch c.Tp {
	case ast.ConstraintPrimaryKey:
		k.Primary = true
	case ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
		k.Unique = true
	case ast.ConstraintKey, ast.ConstraintIndex:
	case ast.ConstraintForeignKey:
		return KeyDef{}, unsupported("FOREIGN KEY")
	case ast.ConstraintFulltext:
		return KeyDef{}, unsupported("FULLTEXT")
	case ast.ConstraintCheck:
		return KeyDef{}, unsupported("CHECK")
	default:
		return KeyDef{}, unsupported("key " + nodeSQL(c))
	}
	k.Columns = make([]string, 0, len(c.Keys))
	for _, part := range c.Keys {
		if part.Expr != nil || part.Column == nil {
			return KeyDef{}, unsupported("functional key part")
		}
		if part.Length > 0 && (k.Unique || k.Primary) {
			// A prefix of a plain key changes no answer; of a unique
			// key it changes what is a duplicate.
			return KeyDef{}, unsupported("key prefix lengths on unique keys")
		}
		k.Columns = append(k.Columns, part.Column.Name.O)
	}
	return k, nil
}

func dropTable(s *ast.DropTableStmt) (Plan, error) {
	switch {
	case s.IsView:
		return nil, unsupported("DROP VIEW")
	case s.TemporaryKeyword != ast.TemporaryNone:
		return nil, unsupported("DROP TEMPORARY TABLE")
	}
	plan := &DropTable{IfExists: s.IfExists, Tables: make([]TableName, len(s.Tables))}
	for i, t := range s.Tables {
		plan.Tables[i] = *tableName(t)
	}
	return plan, nil
}

func alterTable(s *ast.AlterTableStmt) (Plan, error) {
	plan := &AlterTable{Table: *tableName(s.Table)}
	const what = "ALTER TABLE other than AUTO_INCREMENT, COMMENT and ADD/DROP of keys"
	for _, spec := range s.Specs {
		switch spec.Tp {
		case ast.AlterTableOption:
			for _, o := range spec.Options {
				switch o.Tp {
				case ast.TableOptionAutoIncrement:
					plan.HasAutoInc, plan.AutoInc = true, o.UintValue
				case ast.TableOptionComment:
					plan.HasComment, plan.Comment = true, o.StrValue
				default:
					return nil, unsupported(what)
				}
			}
		case ast.AlterTableAddConstraint:
			if spec.Constraint == nil {
				return nil, unsupported(what)
			}
			k, err := keyDef(spec.Constraint)
			if err != nil {
				return nil, err
			}
			if spec.IfNotExists {
				return nil, unsupported("ADD INDEX IF NOT EXISTS")
			}
			plan.AddKeys = append(plan.AddKeys, k)
		case ast.AlterTableDropIndex:
			if spec.IfExists {
				return nil, unsupported("DROP INDEX IF EXISTS in ALTER TABLE")
			}
			plan.DropKeys = append(plan.DropKeys, spec.Name)
		case ast.AlterTableDropPrimaryKey:
			plan.DropKeys = append(plan.DropKeys, "PRIMARY")
		default:
			return nil, unsupported(what)
		}
	}
	if !plan.HasAutoInc && !plan.HasComment && len(plan.AddKeys)+len(plan.DropKeys) == 0 {
		return nil, unsupported(what)
	}
	return plan, nil
}

// createIndex is CREATE [UNIQUE] INDEX name ON t (cols): ALTER TABLE t
// ADD [UNIQUE] INDEX name (cols).
func createIndex(s *ast.CreateIndexStmt) (Plan, error) {
	k := KeyDef{Name: s.IndexName}
	switch s.KeyType {
	case ast.IndexKeyTypeNone:
	case ast.IndexKeyTypeUnique:
		k.Unique = true
	default:
		return nil, unsupported("FULLTEXT and SPATIAL indexes")
	}
	for _, part := range s.IndexPartSpecifications {
		if part.Expr != nil || part.Column == nil {
			return nil, unsupported("functional key part")
		}
		if part.Length > 0 && k.Unique {
			return nil, unsupported("key prefix lengths on unique keys")
		}
		k.Columns = append(k.Columns, part.Column.Name.O)
	}
	return &AlterTable{Table: *tableName(s.Table), AddKeys: []KeyDef{k}, IfNotExists: s.IfNotExists}, nil
}

// dropIndex is DROP INDEX name ON t.
func dropIndex(s *ast.DropIndexStmt) (Plan, error) {
	if s.IsHypo {
		return nil, unsupported("hypothetical indexes")
	}
	return &AlterTable{Table: *tableName(s.Table), DropKeys: []string{s.IndexName}, IfExists: s.IfExists}, nil
}

// typeLimits is MariaDB's error for a width or precision its column type
// cannot have, which the grammar takes: INT(300) is 1439, DATETIME(7)
// 1426. Fractional seconds, which ticketd does not keep, are refused
// (DATETIME(3) would drop what MariaDB shows).
func typeLimits(col *ColumnDef, ft *types.FieldType) error {
	switch col.Type {
	case "tinyint", "smallint", "mediumint", "int", "bigint":
		if col.Width > 255 {
			return mysqlerr.New(mysql.ErrTooBigDisplaywidth, "Display width out of range for '%s' (max = 255)", col.Name)
		}
	case "datetime", "timestamp":
		switch d := ft.GetDecimal(); {
		case d > 6:
			return mysqlerr.New(mysql.ErrTooBigPrecision, "Too big precision specified for '%s'. Maximum is 6", col.Name)
		case d > 0:
			return unsupported(fmt.Sprintf("fractional seconds (%s(%d))", col.Type, d))
		}
	}
	return nil
}
