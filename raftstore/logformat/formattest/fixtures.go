// Package formattest holds the commands, tables and results that the
// tests of the log format (package logformat: the golden files of its
// testdata) and of its use by raftstore (the state machine, the state
// file, mixed-version clusters) share. It is imported only by tests.
package formattest

import "github.com/ticketd/ticketd/ticket"

// LegacyDef is d as a build before command version 8 made it: a row
// table without a collation (the older folding), which members of any
// version take; the goldens and the mixed-version tests use it.
func LegacyDef(d *ticket.TableDef) *ticket.TableDef {
	if d.Rows != nil {
		rd := *d.Rows
		rd.Collation = ticket.CollLegacy
		d.Rows = &rd
	}
	return d
}

// RowsSeedCommands are row-table commands as the wire layer builds them
// (FuzzDecodeBatch's seeds).
func RowsSeedCommands() []ticket.Command {
	def, err := ticket.NewTableDef(&ticket.TableSpec{DB: "d", Name: "leaf_alloc", Columns: []ticket.ColumnSpec{
		{Name: "biz_tag", Type: "varchar", Width: 128, NotNull: true},
		{Name: "max_id", Type: "bigint", NotNull: true, HasDefault: true, Default: ticket.Value{Kind: ticket.ValInt, Int: 1}},
		{Name: "step", Type: "int", NotNull: true},
		{Name: "update_time", Type: "timestamp", NotNull: true, HasDefault: true, DefaultNow: true, OnUpdateNow: true},
	}, Keys: []ticket.KeySpec{{Primary: true, Columns: []string{"biz_tag"}}}})
	if err != nil {
		panic(err)
	}
	return []ticket.Command{
		{Op: ticket.OpCreateTable, DB: "d", Table: "leaf_alloc", Def: LegacyDef(def)},
		{Op: ticket.OpInsert, DB: "d", Table: "leaf_alloc", Columns: []string{"biz_tag", "step", "update_time"},
			Values: [][]ticket.Value{{{Kind: ticket.ValString, Str: "a"}, {Kind: ticket.ValInt, Int: 100}, {Kind: ticket.ValNow}}}},
		{Op: ticket.OpUpdate, DB: "d", Table: "leaf_alloc", Rows: &ticket.RowsCommand{
			Sets: []ticket.RowSet{{Col: "max_id", A: ticket.RowOperand{Col: "max_id"}, Op: '+', B: ticket.RowOperand{Col: "step"}},
				{Col: "update_time", A: ticket.RowOperand{Val: ticket.Value{Kind: ticket.ValNow}}}},
			Where: []ticket.RowCond{{Col: "biz_tag", Val: ticket.Value{Kind: ticket.ValString, Str: "a"}}}}},
		{Op: ticket.OpDelete, DB: "d", Table: "leaf_alloc", Rows: &ticket.RowsCommand{}},
		{Op: ticket.OpAlterTable, DB: "d", Table: "leaf_alloc", DropKeys: []string{"PRIMARY", "k"},
			AddKeys: []ticket.KeySpec{{Name: "u", Unique: true, Columns: []string{"biz_tag", "step"}}, {Primary: true, Columns: []string{"biz_tag"}}}},
		{Op: ticket.OpRestoreRows, DB: "d", Table: "leaf_alloc", RestoreRows: [][]ticket.Datum{
			{{S: "a"}, {S: "1"}, {S: "100"}, {S: "2026-11-22 10:00:00"}}, {{S: "b"}, {Null: true}, {S: ""}, {S: "x"}}}},
	}
}

// GoldenRowsCommands are the row-table commands of the golden files in
// testdata (TestGoldenRows): every field of the row parts set somewhere,
// in the forms wire writes (the expression form) and older builds wrote
// (Sets and Where).
func GoldenRowsCommands() []ticket.Command {
	iv := func(n int64) *ticket.Value { return &ticket.Value{Kind: ticket.ValInt, Int: n} }
	sv := func(s string) *ticket.Value { return &ticket.Value{Kind: ticket.ValString, Str: s} }
	col := func(name string) ticket.RowExpr { return ticket.RowExpr{Op: ticket.ECol, Col: name} }
	val := func(v *ticket.Value) ticket.RowExpr { return ticket.RowExpr{Op: ticket.EVal, Val: v} }
	x := func(op ticket.ExprOp, args ...ticket.RowExpr) ticket.RowExpr {
		return ticket.RowExpr{Op: op, Args: args}
	}
	def := &ticket.TableDef{DB: "d", Name: "w", IDCol: "id", IDType: ticket.IntType{Kind: ticket.BigInt, Unsigned: true, Width: 20},
		AutoInc: true, Engine: "InnoDB", Comment: "worker nodes",
		Rows: &ticket.RowsDef{
			Cols: []ticket.RowCol{
				{Name: "id", Kind: ticket.ColInt, Int: ticket.IntType{Kind: ticket.BigInt, Unsigned: true, Width: 20}, Type: "bigint(20) unsigned", NotNull: true, AutoInc: true},
				{Name: "host", Kind: ticket.ColString, Type: "varchar(64)", Len: 64, NotNull: true, Comment: "host name"},
				{Name: "port", Kind: ticket.ColString, Type: "varchar(64)", Len: 64, HasDefault: true, Default: ticket.Datum{Null: true}},
				{Name: "type", Kind: ticket.ColInt, Int: ticket.IntType{Kind: ticket.Int}, Type: "int", HasDefault: true, Default: ticket.Datum{S: "-1"}},
				{Name: "launch", Kind: ticket.ColDate, Type: "date"},
				{Name: "modified", Kind: ticket.ColTimestamp, Type: "timestamp", NotNull: true, HasDefault: true, DefaultNow: true, OnUpdateNow: true},
				{Name: "created", Kind: ticket.ColDateTime, Type: "datetime", HasDefault: true, Default: ticket.Datum{S: "2026-01-02 03:04:05"}},
			},
			Keys: []ticket.RowKey{{Name: "PRIMARY", Primary: true, Unique: true, Cols: []int{0}}, {Name: "hp", Unique: true, Cols: []int{1, 2}}, {Name: "t", Cols: []int{3}}},
		}}
	return []ticket.Command{
		{Op: ticket.OpCreateTable, DB: "d", Table: "w", IfExists: true, Def: def},
		{Op: ticket.OpInsert, DB: "d", Table: "w", Columns: []string{"host", "port", "launch", "modified"},
			Values: [][]ticket.Value{{*sv("h1"), {Kind: ticket.ValNull}, *sv("2026-11-24"), {Kind: ticket.ValNow}}},
			Rows:   &ticket.RowsCommand{Engine: true, NotStrict: true, NoAutoValueOnZero: true, Now: 1764000000123456}},
		// UPDATE w SET type = type * 2 + 1, host = DEFAULT, launch = launch + INTERVAL -1 DAY
		// WHERE host LIKE 'h!_%' ESCAPE '!' AND id IN (1, 2) OR NOT type BETWEEN -5 AND 18446744073709551615
		// ORDER BY id DESC, host LIMIT 3
		{Op: ticket.OpUpdate, DB: "d", Table: "w", Rows: &ticket.RowsCommand{
			Engine: true,
			Filter: &ticket.RowExpr{Op: ticket.EOr, Args: []ticket.RowExpr{
				x(ticket.EAnd, ticket.RowExpr{Op: ticket.ELike, Escape: '!', Args: []ticket.RowExpr{col("host"), val(sv("h!_%"))}},
					x(ticket.EIn, col("id"), val(iv(1)), val(iv(2)))),
				x(ticket.ENot, x(ticket.EBetween, col("type"), val(iv(-5)), val(&ticket.Value{Kind: ticket.ValUint, Uint: 1<<64 - 1}))),
			}},
			Assigns: []ticket.RowAssign{
				{Col: "type", Expr: x(ticket.EAdd, x(ticket.EMul, col("type"), val(iv(2))), val(&ticket.Value{Kind: ticket.ValDecimal, Str: "1.5"}))},
				{Col: "host", Default: true},
				{Col: "launch", Expr: ticket.RowExpr{Op: ticket.EInterval, Unit: "DAY", Args: []ticket.RowExpr{col("launch"), val(iv(-1))}}},
				{Col: "modified", Expr: x(ticket.ELastID, val(&ticket.Value{Kind: ticket.ValNow}))},
			},
			OrderBy:  []ticket.RowOrder{{Col: "id", Desc: true}, {Col: "host"}},
			HasLimit: true, Limit: 3, Now: -1}},
		// DELETE FROM w WHERE port IS NULL LIMIT 0; a zero Value behind a non-nil pointer.
		{Op: ticket.OpDelete, DB: "d", Table: "w", Rows: &ticket.RowsCommand{Engine: true,
			Filter: &ticket.RowExpr{Op: ticket.EIsNull, Args: []ticket.RowExpr{col("port"), {Op: ticket.EVal, Val: &ticket.Value{}}}}, HasLimit: true}},
		{Op: ticket.OpDelete, DB: "d", Table: "w", Rows: &ticket.RowsCommand{}},
		// The form of builds before the row engine (version 2).
		{Op: ticket.OpUpdate, DB: "d", Table: "w", Rows: &ticket.RowsCommand{
			Sets: []ticket.RowSet{
				{Col: "type", A: ticket.RowOperand{Col: "type"}, Op: '+', B: ticket.RowOperand{Val: *iv(7)}, SetLastID: true},
				{Col: "modified", A: ticket.RowOperand{Val: ticket.Value{Kind: ticket.ValNow}}},
				{Col: "port", A: ticket.RowOperand{Val: ticket.Value{Kind: ticket.ValUint, Uint: 1 << 63}}, Op: '-', B: ticket.RowOperand{Col: "type"}},
			},
			Where: []ticket.RowCond{{Col: "host", Val: *sv("h1")}, {Col: "id", Val: *iv(-9)}}}},
		{Op: ticket.OpUpdate, DB: "d", Table: "w", Rows: &ticket.RowsCommand{Engine: true,
			Assigns: []ticket.RowAssign{{Col: "host", Expr: ticket.RowExpr{Op: ticket.ENotLike, Args: []ticket.RowExpr{col("host"), val(sv("x"))}}}},
			Filter:  &ticket.RowExpr{Op: ticket.ENullEq, Args: []ticket.RowExpr{x(ticket.ENeg, col("id")), x(ticket.EXor, col("type"), val(nil))}}}},
	}
}

// GoldenUpsertCommands are row-table INSERTs with ON DUPLICATE KEY
// UPDATE and expressions in VALUES (command version 6; their -json file
// was written by the encoder of d81dc0d, a version-6 build).
func GoldenUpsertCommands() []ticket.Command {
	one := ticket.Value{Kind: ticket.ValInt, Int: 1}
	return []ticket.Command{
		{Op: ticket.OpInsert, DB: "d", Table: "t", Columns: []string{"a", "b"},
			Values: [][]ticket.Value{{{Kind: ticket.ValString, Str: "x"}, {Kind: ticket.ValNull}}, {{Kind: ticket.ValDouble, Str: "2.5"}, {Kind: ticket.ValTemporal, Str: "2024-01-02"}}},
			Rows: &ticket.RowsCommand{Engine: true, NotStrict: true,
				Exprs: [][]ticket.RowExpr{{{}, {Op: ticket.EAdd, Args: []ticket.RowExpr{{Op: ticket.EVal, Val: &one}, {Op: ticket.ECol, Col: "b"}}}}, {}},
				OnDup: []ticket.RowAssign{{Col: "b", Expr: ticket.RowExpr{Op: ticket.EValues, Col: "b"}}, {Col: "a", Default: true},
					{Col: "id", Expr: ticket.RowExpr{Op: ticket.ELastID, Args: []ticket.RowExpr{{Op: ticket.ECol, Col: "id"}}}}}}},
		{Op: ticket.OpInsert, DB: "d", Table: "t", Values: [][]ticket.Value{{{Kind: ticket.ValDefault}}},
			Rows: &ticket.RowsCommand{Engine: true, OnDup: []ticket.RowAssign{{Col: "n", Expr: ticket.RowExpr{Op: ticket.EValues, Col: "n"}}}}},
	}
}

// GoldenCollationCommands is a CREATE TABLE of a row table with
// utf8mb4_general_ci (command version 8, RowsDef field 3) and a restore
// carrying it.
func GoldenCollationCommands() []ticket.Command {
	def := *GoldenRowsCommands()[0].Def
	rd := *def.Rows
	rd.Collation = ticket.CollGeneralCI
	def.Rows = &rd
	return []ticket.Command{
		{Op: ticket.OpCreateTable, DB: "d", Table: "w", Def: &def},
		{Op: ticket.OpRestore, Dump: &ticket.Dump{Databases: []string{"d"}, Tables: []ticket.Table{{Def: def, AutoInc: 3}}}},
	}
}

// GoldenColumnCollationCommands is a CREATE TABLE of a row table with a
// default collation of its own (utf8mb4_bin, command version 9) and a
// column of another (utf8mb3_general_ci, RowCol field 13), and a restore
// carrying it.
func GoldenColumnCollationCommands() []ticket.Command {
	def := *GoldenRowsCommands()[0].Def
	rd := *def.Rows
	rd.Collation = ticket.CollBin
	rd.Cols = append([]ticket.RowCol(nil), rd.Cols...)
	rd.Cols[2].Collation = ticket.CollGeneralCI3
	def.Rows = &rd
	return []ticket.Command{
		{Op: ticket.OpCreateTable, DB: "d", Table: "w", Def: &def},
		{Op: ticket.OpRestore, Dump: &ticket.Dump{Databases: []string{"d"}, Tables: []ticket.Table{{Def: def, AutoInc: 3}}}},
	}
}

// GoldenRowTable is a row table as the state file holds it.
func GoldenRowTable() *ticket.Table {
	return &ticket.Table{Def: *GoldenRowsCommands()[0].Def, AutoInc: 42}
}

// GoldenResults are answers of row-table writes, with their row images.
func GoldenResults() []ticket.Result {
	return []ticket.Result{
		{InsertID: 7, Affected: 1, Images: [][]ticket.Datum{{{S: "7"}, {S: "h1"}, {Null: true}, {S: "-1"}, {S: "2026-11-24"}, {S: "2026-11-24 21:00:00"}, {Null: true}}}},
		{Affected: 2, Matched: 3, Images: [][]ticket.Datum{{{S: ""}}, {{S: "a"}, {Null: true}}}},
		{Affected: 1},
	}
}

// Tickets64 is the definition of a ticket table as Flickr's tickets64.
func Tickets64(db, name string) *ticket.TableDef {
	return &ticket.TableDef{
		DB: db, Name: name, IDCol: "id",
		IDType:  ticket.IntType{Kind: ticket.BigInt, Unsigned: true, Width: 20},
		AutoInc: true, IDKey: "PRIMARY", IDNotNull: true,
		StubCol: "stub", StubType: "char(1)", StubLen: 1, StubKey: "stub", StubNotNull: true,
		Engine: "MyISAM",
	}
}

// CreateDB is a CREATE DATABASE.
func CreateDB(db string) ticket.Command { return ticket.Command{Op: ticket.OpCreateDB, DB: db} }

// ReplaceCmd is a ticket table's REPLACE, as the wire layer builds it.
func ReplaceCmd(db, table, stub string) ticket.Command {
	return ticket.Command{
		Op: ticket.OpInsert, DB: db, Table: table, Replace: true,
		Columns:   []string{"stub"},
		Values:    [][]ticket.Value{{{Kind: ticket.ValString, Str: stub}}},
		Increment: 1, Offset: 1,
	}
}

// SeqSeedCommands are one of each sequence command, as the wire layer and
// the leader's cache build them (FuzzDecodeBatch's seeds).
func SeqSeedCommands() []ticket.Command {
	def, _, err := ticket.NewSequenceDef("d", "s", "", []ticket.SeqOption{
		{Kind: ticket.SeqIncrement, Value: -3}, {Kind: ticket.SeqCache, Value: 10}, {Kind: ticket.SeqCycle}})
	if err != nil {
		panic(err)
	}
	return []ticket.Command{
		{Op: ticket.OpCreateSeq, DB: "d", Table: "s", Def: def, IfExists: true},
		{Op: ticket.OpSeqNext, DB: "d", Table: "s", Seq: &ticket.SeqCommand{Count: 1}},
		{Op: ticket.OpSeqNext, DB: "d", Table: "s", Seq: &ticket.SeqCommand{}},
		{Op: ticket.OpSetVal, DB: "d", Table: "s", Seq: &ticket.SeqCommand{Value: -42, HasFree: true, Free: -7, Until: -31}},
		{Op: ticket.OpAlterSeq, DB: "d", Table: "s", Seq: &ticket.SeqCommand{Options: []ticket.SeqOption{
			{Kind: ticket.SeqRestartWith, Value: 0}, {Kind: ticket.SeqMax, Value: 1 << 62}}}},
		{Op: ticket.OpDropSeq, DB: "d", Table: "s", IfExists: true},
	}
}

// ReplaceBatch is n REPLACEs into flickr.Tickets64.
func ReplaceBatch(n int) []ticket.Command {
	cmds := make([]ticket.Command, n)
	for i := range cmds {
		cmds[i] = ReplaceCmd("flickr", "Tickets64", "a")
	}
	return cmds
}
