package wire

import (
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// tableSpec is p in ticket's terms; ticket decides what a table may look like.
func tableSpec(db string, p *sql.CreateTable) (*model.TableSpec, error) {
	spec := &model.TableSpec{DB: db, Name: p.Table.Name, Engine: p.Engine, Comment: p.Comment,
		Charsets: p.Charsets, Collates: p.Collates,
		Columns: make([]model.ColumnSpec, len(p.Columns)), Keys: make([]model.KeySpec, len(p.Keys))}
	for i, c := range p.Columns {
		spec.Columns[i] = model.ColumnSpec{Name: c.Name, Type: c.Type, Unsigned: c.Unsigned, Width: c.Width,
			NotNull: c.NotNull, AutoInc: c.AutoInc, HasDefault: c.HasDefault, PrimaryKey: c.PrimaryKey, Unique: c.Unique,
			DefaultNow: c.DefaultNow, OnUpdateNow: c.OnUpdateNow, Comment: c.Comment,
			Charset: c.Charset, Collate: c.Collate, Binary: c.Binary}
		if c.HasDefault && !c.DefaultNow {
			v, err := bind(c.Default, nil)
			if err != nil {
				return nil, err
			}
			spec.Columns[i].Default = v
		}
	}
	for i, k := range p.Keys {
		spec.Keys[i] = model.KeySpec{Name: k.Name, Primary: k.Primary, Unique: k.Unique, Columns: k.Columns}
	}
	return spec, nil
}

func (s *session) createTable(p *sql.CreateTable) (*mysql.Result, error) {
	db, err := s.dbFor(p.Table)
	if err != nil {
		return nil, err
	}
	spec, err := tableSpec(db, p)
	if err != nil {
		return nil, err
	}
	spec.NotStrict = s.rowsCommand().NotStrict
	def, err := ticket.NewTableDef(spec)
	if err != nil {
		return nil, err
	}
	c := &model.Command{Op: model.OpCreateTable, DB: db, Table: def.Name, Def: def, IfExists: p.IfNotExists}
	if p.HasAutoInc {
		c.CreateAutoInc = p.AutoInc
	}
	r, err := s.exec(c)
	return s.ok(r), err
}

// dropTable drops each table; unknown ones are reported together, as
// MySQL does, after the known ones are gone.
func (s *session) dropTable(p *sql.DropTable) (*mysql.Result, error) {
	var unknown []string
	for _, t := range p.Tables {
		db, err := s.dbFor(t)
		if err != nil {
			return nil, err
		}
		r, err := s.exec(&model.Command{Op: model.OpDropTable, DB: db, Table: t.Name, IfExists: p.IfExists})
		s.warnings = append(s.warnings, r.Warnings...)
		if r.Err != nil && r.Err.Code == mysqlerr.CodeBadTable {
			unknown = append(unknown, db+"."+t.Name)
			continue
		}
		if err != nil {
			return nil, err
		}
	}
	if len(unknown) > 0 {
		return nil, mysqlerr.New(mysqlerr.CodeBadTable, "Unknown table '%s'", strings.Join(unknown, ","))
	}
	return okResult(0, 0), nil
}

func (s *session) alterTable(p *sql.AlterTable) (*mysql.Result, error) {
	db, err := s.dbFor(p.Table)
	if err != nil {
		return nil, err
	}
	c := &model.Command{Op: model.OpAlterTable, DB: db, Table: p.Table.Name,
		HasAutoInc: p.HasAutoInc, AutoInc: p.AutoInc, HasComment: p.HasComment, Comment: p.Comment,
		DropKeys: p.DropKeys, IfExists: p.IfExists || p.IfNotExists}
	for _, k := range p.AddKeys {
		c.AddKeys = append(c.AddKeys, model.KeySpec{Name: k.Name, Primary: k.Primary, Unique: k.Unique, Columns: k.Columns})
	}
	if p.HasComment {
		c.Cache, c.HasCache = ticket.CacheOption(p.Comment)
		if !c.HasCache {
			c.HasCache = true // a comment without the option turns the cache off
		}
	}
	r, err := s.exec(c)
	return s.ok(r), err
}
