// Package formattest holds the commands, tables and results that the
// tests of the log format (package logformat: the golden files of its
// testdata) and of its use by raftstore (the state machine, the state
// file, mixed-version clusters) share. It is imported only by tests.
package formattest

import (
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// LegacyDef is d as a build before command version 8 made it: a row
// table without a collation (the older folding), which members of any
// version take; the goldens and the mixed-version tests use it.
func LegacyDef(d *model.TableDef) *model.TableDef {
	if d.Rows != nil {
		rd := *d.Rows
		rd.Collation = model.CollLegacy
		d.Rows = &rd
	}
	return d
}

// RowsSeedCommands are row-table commands as the wire layer builds them
// (FuzzDecodeBatch's seeds).
func RowsSeedCommands() []model.Command {
	def, err := ticket.NewTableDef(&model.TableSpec{DB: "d", Name: "leaf_alloc", Columns: []model.ColumnSpec{
		{Name: "biz_tag", Type: "varchar", Width: 128, NotNull: true},
		{Name: "max_id", Type: "bigint", NotNull: true, HasDefault: true, Default: model.Value{Kind: model.ValInt, Int: 1}},
		{Name: "step", Type: "int", NotNull: true},
		{Name: "update_time", Type: "timestamp", NotNull: true, HasDefault: true, DefaultNow: true, OnUpdateNow: true},
	}, Keys: []model.KeySpec{{Primary: true, Columns: []string{"biz_tag"}}}})
	if err != nil {
		panic(err)
	}
	return []model.Command{
		{Op: model.OpCreateTable, DB: "d", Table: "leaf_alloc", Def: LegacyDef(def)},
		{Op: model.OpInsert, DB: "d", Table: "leaf_alloc", Columns: []string{"biz_tag", "step", "update_time"},
			Values: [][]model.Value{{{Kind: model.ValString, Str: "a"}, {Kind: model.ValInt, Int: 100}, {Kind: model.ValNow}}}},
		{Op: model.OpUpdate, DB: "d", Table: "leaf_alloc", Rows: &model.RowsCommand{
			Sets: []model.RowSet{{Col: "max_id", A: model.RowOperand{Col: "max_id"}, Op: '+', B: model.RowOperand{Col: "step"}},
				{Col: "update_time", A: model.RowOperand{Val: model.Value{Kind: model.ValNow}}}},
			Where: []model.RowCond{{Col: "biz_tag", Val: model.Value{Kind: model.ValString, Str: "a"}}}}},
		{Op: model.OpDelete, DB: "d", Table: "leaf_alloc", Rows: &model.RowsCommand{}},
		{Op: model.OpAlterTable, DB: "d", Table: "leaf_alloc", DropKeys: []string{"PRIMARY", "k"},
			AddKeys: []model.KeySpec{{Name: "u", Unique: true, Columns: []string{"biz_tag", "step"}}, {Primary: true, Columns: []string{"biz_tag"}}}},
		{Op: model.OpRestoreRows, DB: "d", Table: "leaf_alloc", RestoreRows: [][]model.Datum{
			{{S: "a"}, {S: "1"}, {S: "100"}, {S: "2026-11-22 10:00:00"}}, {{S: "b"}, {Null: true}, {S: ""}, {S: "x"}}}},
	}
}

// GoldenRowsCommands are the row-table commands of the golden files in
// testdata (TestGoldenRows): every field of the row parts set somewhere,
// in the forms wire writes (the expression form) and older builds wrote
// (Sets and Where).
func GoldenRowsCommands() []model.Command {
	iv := func(n int64) *model.Value { return &model.Value{Kind: model.ValInt, Int: n} }
	sv := func(s string) *model.Value { return &model.Value{Kind: model.ValString, Str: s} }
	col := func(name string) model.RowExpr { return model.RowExpr{Op: model.ECol, Col: name} }
	val := func(v *model.Value) model.RowExpr { return model.RowExpr{Op: model.EVal, Val: v} }
	x := func(op model.ExprOp, args ...model.RowExpr) model.RowExpr {
		return model.RowExpr{Op: op, Args: args}
	}
	def := &model.TableDef{DB: "d", Name: "w", IDCol: "id", IDType: model.IntType{Kind: model.BigInt, Unsigned: true, Width: 20},
		AutoInc: true, Engine: "InnoDB", Comment: "worker nodes",
		Rows: &model.RowsDef{
			Cols: []model.RowCol{
				{Name: "id", Kind: model.ColInt, Int: model.IntType{Kind: model.BigInt, Unsigned: true, Width: 20}, Type: "bigint(20) unsigned", NotNull: true, AutoInc: true},
				{Name: "host", Kind: model.ColString, Type: "varchar(64)", Len: 64, NotNull: true, Comment: "host name"},
				{Name: "port", Kind: model.ColString, Type: "varchar(64)", Len: 64, HasDefault: true, Default: model.Datum{Null: true}},
				{Name: "type", Kind: model.ColInt, Int: model.IntType{Kind: model.Int}, Type: "int", HasDefault: true, Default: model.Datum{S: "-1"}},
				{Name: "launch", Kind: model.ColDate, Type: "date"},
				{Name: "modified", Kind: model.ColTimestamp, Type: "timestamp", NotNull: true, HasDefault: true, DefaultNow: true, OnUpdateNow: true},
				{Name: "created", Kind: model.ColDateTime, Type: "datetime", HasDefault: true, Default: model.Datum{S: "2026-01-02 03:04:05"}},
			},
			Keys: []model.RowKey{{Name: "PRIMARY", Primary: true, Unique: true, Cols: []int{0}}, {Name: "hp", Unique: true, Cols: []int{1, 2}}, {Name: "t", Cols: []int{3}}},
		}}
	return []model.Command{
		{Op: model.OpCreateTable, DB: "d", Table: "w", IfExists: true, Def: def},
		{Op: model.OpInsert, DB: "d", Table: "w", Columns: []string{"host", "port", "launch", "modified"},
			Values: [][]model.Value{{*sv("h1"), {Kind: model.ValNull}, *sv("2026-11-24"), {Kind: model.ValNow}}},
			Rows:   &model.RowsCommand{Engine: true, NotStrict: true, NoAutoValueOnZero: true, Now: 1764000000123456}},
		// UPDATE w SET type = type * 2 + 1, host = DEFAULT, launch = launch + INTERVAL -1 DAY
		// WHERE host LIKE 'h!_%' ESCAPE '!' AND id IN (1, 2) OR NOT type BETWEEN -5 AND 18446744073709551615
		// ORDER BY id DESC, host LIMIT 3
		{Op: model.OpUpdate, DB: "d", Table: "w", Rows: &model.RowsCommand{
			Engine: true,
			Filter: &model.RowExpr{Op: model.EOr, Args: []model.RowExpr{
				x(model.EAnd, model.RowExpr{Op: model.ELike, Escape: '!', Args: []model.RowExpr{col("host"), val(sv("h!_%"))}},
					x(model.EIn, col("id"), val(iv(1)), val(iv(2)))),
				x(model.ENot, x(model.EBetween, col("type"), val(iv(-5)), val(&model.Value{Kind: model.ValUint, Uint: 1<<64 - 1}))),
			}},
			Assigns: []model.RowAssign{
				{Col: "type", Expr: x(model.EAdd, x(model.EMul, col("type"), val(iv(2))), val(&model.Value{Kind: model.ValDecimal, Str: "1.5"}))},
				{Col: "host", Default: true},
				{Col: "launch", Expr: model.RowExpr{Op: model.EInterval, Unit: "DAY", Args: []model.RowExpr{col("launch"), val(iv(-1))}}},
				{Col: "modified", Expr: x(model.ELastID, val(&model.Value{Kind: model.ValNow}))},
			},
			OrderBy:  []model.RowOrder{{Col: "id", Desc: true}, {Col: "host"}},
			HasLimit: true, Limit: 3, Now: -1}},
		// DELETE FROM w WHERE port IS NULL LIMIT 0; a zero Value behind a non-nil pointer.
		{Op: model.OpDelete, DB: "d", Table: "w", Rows: &model.RowsCommand{Engine: true,
			Filter: &model.RowExpr{Op: model.EIsNull, Args: []model.RowExpr{col("port"), {Op: model.EVal, Val: &model.Value{}}}}, HasLimit: true}},
		{Op: model.OpDelete, DB: "d", Table: "w", Rows: &model.RowsCommand{}},
		// The form of builds before the row engine (version 2).
		{Op: model.OpUpdate, DB: "d", Table: "w", Rows: &model.RowsCommand{
			Sets: []model.RowSet{
				{Col: "type", A: model.RowOperand{Col: "type"}, Op: '+', B: model.RowOperand{Val: *iv(7)}, SetLastID: true},
				{Col: "modified", A: model.RowOperand{Val: model.Value{Kind: model.ValNow}}},
				{Col: "port", A: model.RowOperand{Val: model.Value{Kind: model.ValUint, Uint: 1 << 63}}, Op: '-', B: model.RowOperand{Col: "type"}},
			},
			Where: []model.RowCond{{Col: "host", Val: *sv("h1")}, {Col: "id", Val: *iv(-9)}}}},
		{Op: model.OpUpdate, DB: "d", Table: "w", Rows: &model.RowsCommand{Engine: true,
			Assigns: []model.RowAssign{{Col: "host", Expr: model.RowExpr{Op: model.ENotLike, Args: []model.RowExpr{col("host"), val(sv("x"))}}}},
			Filter:  &model.RowExpr{Op: model.ENullEq, Args: []model.RowExpr{x(model.ENeg, col("id")), x(model.EXor, col("type"), val(nil))}}}},
	}
}

// GoldenUpsertCommands are row-table INSERTs with ON DUPLICATE KEY
// UPDATE and expressions in VALUES (command version 6; their -json file
// was written by the encoder of d81dc0d, a version-6 build).
func GoldenUpsertCommands() []model.Command {
	one := model.Value{Kind: model.ValInt, Int: 1}
	return []model.Command{
		{Op: model.OpInsert, DB: "d", Table: "t", Columns: []string{"a", "b"},
			Values: [][]model.Value{{{Kind: model.ValString, Str: "x"}, {Kind: model.ValNull}}, {{Kind: model.ValDouble, Str: "2.5"}, {Kind: model.ValTemporal, Str: "2024-01-02"}}},
			Rows: &model.RowsCommand{Engine: true, NotStrict: true,
				Exprs: [][]model.RowExpr{{{}, {Op: model.EAdd, Args: []model.RowExpr{{Op: model.EVal, Val: &one}, {Op: model.ECol, Col: "b"}}}}, {}},
				OnDup: []model.RowAssign{{Col: "b", Expr: model.RowExpr{Op: model.EValues, Col: "b"}}, {Col: "a", Default: true},
					{Col: "id", Expr: model.RowExpr{Op: model.ELastID, Args: []model.RowExpr{{Op: model.ECol, Col: "id"}}}}}}},
		{Op: model.OpInsert, DB: "d", Table: "t", Values: [][]model.Value{{{Kind: model.ValDefault}}},
			Rows: &model.RowsCommand{Engine: true, OnDup: []model.RowAssign{{Col: "n", Expr: model.RowExpr{Op: model.EValues, Col: "n"}}}}},
	}
}

// GoldenCollationCommands is a CREATE TABLE of a row table with
// utf8mb4_general_ci (command version 8, RowsDef field 3) and a restore
// carrying it.
func GoldenCollationCommands() []model.Command {
	def := *GoldenRowsCommands()[0].Def
	rd := *def.Rows
	rd.Collation = model.CollGeneralCI
	def.Rows = &rd
	return []model.Command{
		{Op: model.OpCreateTable, DB: "d", Table: "w", Def: &def},
		{Op: model.OpRestore, Dump: &model.Dump{Databases: []string{"d"}, Tables: []model.Table{{Def: def, AutoInc: 3}}}},
	}
}

// GoldenColumnCollationCommands is a CREATE TABLE of a row table with a
// default collation of its own (utf8mb4_bin, command version 9) and a
// column of another (utf8mb3_general_ci, RowCol field 13), and a restore
// carrying it.
func GoldenColumnCollationCommands() []model.Command {
	def := *GoldenRowsCommands()[0].Def
	rd := *def.Rows
	rd.Collation = model.CollBin
	rd.Cols = append([]model.RowCol(nil), rd.Cols...)
	rd.Cols[2].Collation = model.CollGeneralCI3
	def.Rows = &rd
	return []model.Command{
		{Op: model.OpCreateTable, DB: "d", Table: "w", Def: &def},
		{Op: model.OpRestore, Dump: &model.Dump{Databases: []string{"d"}, Tables: []model.Table{{Def: def, AutoInc: 3}}}},
	}
}

// GoldenRowTable is a row table as the state file holds it.
func GoldenRowTable() *model.Table {
	return &model.Table{Def: *GoldenRowsCommands()[0].Def, AutoInc: 42}
}

// GoldenResults are answers of row-table writes, with their row images.
func GoldenResults() []model.Result {
	return []model.Result{
		{InsertID: 7, Affected: 1, Images: [][]model.Datum{{{S: "7"}, {S: "h1"}, {Null: true}, {S: "-1"}, {S: "2026-11-24"}, {S: "2026-11-24 21:00:00"}, {Null: true}}}},
		{Affected: 2, Matched: 3, Images: [][]model.Datum{{{S: ""}}, {{S: "a"}, {Null: true}}}},
		{Affected: 1},
	}
}

// Tickets64 is the definition of a ticket table as Flickr's tickets64.
func Tickets64(db, name string) *model.TableDef {
	return &model.TableDef{
		DB: db, Name: name, IDCol: "id",
		IDType:  model.IntType{Kind: model.BigInt, Unsigned: true, Width: 20},
		AutoInc: true, IDKey: "PRIMARY", IDNotNull: true,
		StubCol: "stub", StubType: "char(1)", StubLen: 1, StubKey: "stub", StubNotNull: true,
		Engine: "MyISAM",
	}
}

// CreateDB is a CREATE DATABASE.
func CreateDB(db string) model.Command { return model.Command{Op: model.OpCreateDB, DB: db} }

// ReplaceCmd is a ticket table's REPLACE, as the wire layer builds it.
func ReplaceCmd(db, table, stub string) model.Command {
	return model.Command{
		Op: model.OpInsert, DB: db, Table: table, Replace: true,
		Columns:   []string{"stub"},
		Values:    [][]model.Value{{{Kind: model.ValString, Str: stub}}},
		Increment: 1, Offset: 1,
	}
}

// SeqSeedCommands are one of each sequence command, as the wire layer and
// the leader's cache build them (FuzzDecodeBatch's seeds).
func SeqSeedCommands() []model.Command {
	def, _, err := ticket.NewSequenceDef("d", "s", "", []model.SeqOption{
		{Kind: model.SeqIncrement, Value: -3}, {Kind: model.SeqCache, Value: 10}, {Kind: model.SeqCycle}})
	if err != nil {
		panic(err)
	}
	return []model.Command{
		{Op: model.OpCreateSeq, DB: "d", Table: "s", Def: def, IfExists: true},
		{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{Count: 1}},
		{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{}},
		{Op: model.OpSetVal, DB: "d", Table: "s", Seq: &model.SeqCommand{Value: -42, HasFree: true, Free: -7, Until: -31}},
		{Op: model.OpAlterSeq, DB: "d", Table: "s", Seq: &model.SeqCommand{Options: []model.SeqOption{
			{Kind: model.SeqRestartWith, Value: 0}, {Kind: model.SeqMax, Value: 1 << 62}}}},
		{Op: model.OpDropSeq, DB: "d", Table: "s", IfExists: true},
	}
}

// ReplaceBatch is n REPLACEs into flickr.Tickets64.
func ReplaceBatch(n int) []model.Command {
	cmds := make([]model.Command, n)
	for i := range cmds {
		cmds[i] = ReplaceCmd("flickr", "Tickets64", "a")
	}
	return cmds
}
