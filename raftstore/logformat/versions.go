package logformat

import (
	"math/bits"

	"github.com/ticketd/ticketd/ticket/model"
)

// The command-version tables: the lowest command version of a build that
// decodes a command and applies it exactly as this build does. How a
// cluster agrees on its version, and refuses what some member cannot
// apply, is raftstore's (version.go); which version each op, presence
// bit, value kind and table definition needs is this package's.
//
// The rule for changes: a new op, a new field (presence bit) of a command
// or table definition, a new value kind, or a change to how Apply treats
// an existing command raises CommandVersion, and the new op, bit or kind
// is entered in the tables below at the new version (a test fails for an
// op, bit or kind without an entry). A changed Apply of an existing op
// raises that op's entry.
// CommandVersion is the highest command version this build decodes and
// applies.
//
// Version 4 changes no command: it changes the time every command reads
// (NOW(), CURRENT_TIMESTAMP), which from then on never goes below the
// last applied entry's (clock.go). No op's entry is raised for it, so a
// cluster that still runs version 3 takes every command as before; the
// state machine itself switches, on every replica at the same entry,
// when the cluster's version reaches clockVersion.
//
// Version 5 adds the value kinds of typed binary-protocol parameters
// (model.ValTemporal, model.ValDouble).
//
// Version 6: INSERT ... ON DUPLICATE KEY UPDATE and expressions in
// VALUES on row tables (model.RowsCommand's OnDup and Exprs), which an
// older build's decoder would drop (Version).
//
// Version 7 reads the row parts of commands, table definitions and
// results in numbered fields (codec_wire.go), which a leader writes only
// once the cluster runs version 7 (FormatAt): no command needs it, so
// no statement is refused for it.
//
// Version 8: a row table's collation (model.RowsDef.Collation, numbered
// field 3 of RowsDef): a CREATE TABLE of this build makes a table that
// compares strings as MariaDB's utf8mb4_general_ci, which an older build
// would refuse to decode (an unknown field) or, reading JSON, create with
// the older folding, keying its rows apart. Such a CREATE TABLE, and a
// restore or key change carrying such a table, is refused (1235, naming
// the members behind) until every member runs version 8. Tables of older
// entries have no collation field and keep the older folding.
//
// Version 9: collations per column and per table (CREATE TABLE's
// COLLATE, CHARACTER SET and BINARY): the table's default collation may
// be utf8mb4_bin, utf8mb3_general_ci or utf8mb3_bin (RowsDef field 3's
// values 2-4), and a string column may have its own (RowCol field 13).
// A version 8 build refuses both when decoding; a CREATE TABLE, restore
// or key change carrying them is refused (1235, naming the members
// behind) until every member runs version 9. A table of the default
// utf8mb4_general_ci everywhere is written as in version 8.
//
// Version 10: the Redis key space (model.OpKeys, ticket/keys.go; codec_keys.go):
// key commands, and a restore carrying keys, which a version 9 build
// cannot decode. The Redis listener's writes are refused (an error naming
// the members behind) until every member runs version 10.
//
// Version 11 changes no command and no encoding: it changes how a row
// table's existing commands apply (model.RulesV11: a strict-mode UPDATE
// fails on the first warning of its WHERE or SET, a failing INSERT or
// REPLACE leaves the auto-increment counter where InnoDB's is, temporal
// literals are read in all of MariaDB's forms). No op's entry is raised:
// the state machine gives each command the cluster's version
// (model.Command.Version), and the new rules apply from the entry that
// raises the cluster to 11, on every replica alike; a cluster of mixed
// builds stays below it and applies the older rules everywhere.
const CommandVersion = 11

// CollationVersion is the command version that creates and carries row
// tables with a collation (model.RowsDef.Collation).
const CollationVersion = 8

// ColumnCollationVersion is the command version that creates and carries
// row tables with another default collation than utf8mb4_general_ci or a
// column collation of its own.
const ColumnCollationVersion = 9

// BaseVersion is the version of a build from before command versions
// (which announces nothing): what the build at commit 3e891bc, the oldest
// a rolling upgrade starts from, decodes and applies.
const BaseVersion = 1

// Floor is the lowest command version whose log entries, snapshots,
// state files and backups this build reads: everything written by a
// cluster that ran Floor or later. An encoding that only clusters below
// it wrote is refused (ErrBelowFloor, naming the way forward). It rises
// only under the retirement rule of DESIGN §4g. It is BaseVersion: a
// rolling upgrade from the build at 544f168, which predates command
// versions (it counts as version 1) yet writes row parts as JSON and
// row-table UPDATE and DELETE in their version-2 form, must work
// directly (issue 33), so every generation stays (legacy.go lists them).
const Floor = BaseVersion

// opVersions is the version of each op's Apply.
var opVersions = map[model.Op]uint32{
	model.OpInsert:      1,
	model.OpUpdate:      1,
	model.OpCreateDB:    1,
	model.OpCreateTable: 1,
	model.OpAlterTable:  1,
	model.OpSetGlobal:   1,
	model.OpReserve:     1,
	// Version 2. DROP TABLE and DROP DATABASE leave a high-water mark
	// that a re-created table starts above; version 1 drops without it,
	// and its replica of a re-created table would start lower.
	model.OpDropDB:    2,
	model.OpDropTable: 2,
	model.OpRestore:   2,
	model.OpDelete:    2,
	// A restore's row tables' rows, in chunks after OpRestore.
	model.OpRestoreRows: 2,
	model.OpCreateSeq:   2,
	model.OpSeqNext:     2,
	model.OpSetVal:      2,
	model.OpAlterSeq:    2,
	model.OpDropSeq:     2,
	// Version 10: the Redis key space.
	model.OpKeys: 10,
}

// cmdBitVersions is the version of each command presence bit.
var cmdBitVersions = map[uint64]uint32{
	cmdDB: 1, cmdTable: 1, cmdReplace: 1, cmdIgnore: 1, cmdColumns: 1, cmdValues: 1,
	cmdOnDup: 1, cmdInc: 1, cmdOff: 1, cmdSet: 1, cmdHasWhere: 1, cmdWhereCol: 1,
	cmdWhere: 1, cmdIfExists: 1, cmdDef: 1, cmdCreateAutoInc: 1, cmdHasAutoInc: 1,
	cmdAutoInc: 1, cmdHasCache: 1, cmdCache: 1, cmdHasComment: 1, cmdComment: 1,
	cmdName: 1, cmdValue: 1, cmdCount: 1,
	// Version 2: restore, sequences, row tables (and their key changes).
	cmdDump: 2, cmdForce: 2, cmdSeq: 2, cmdRows: 2, cmdKeys: 2, cmdRestoreRows: 2,
	// Version 3: the row engine's commands (ticket/rowengine/engine.go: WHERE
	// predicates, SET expressions, ORDER BY/LIMIT, sql_mode, SET
	// timestamp); a row-table command without it applies as in version 2
	// (ticket/rowengine/legacy.go).
	cmdRowsExpr: 3,
	// Version 10: Redis key commands and a restore's keys.
	cmdKeyCmd: 10, cmdDumpKeys: 10,
}

// defBitVersions is the version of each table definition presence bit.
var defBitVersions = map[uint64]uint32{
	defDB: 1, defName: 1, defIDCol: 1, defIDKind: 1, defIDUnsigned: 1, defIDWidth: 1,
	defAutoInc: 1, defIDKey: 1, defIDNotNull: 1, defStubCol: 1, defStubType: 1,
	defStubLen: 1, defStubDefault: 1, defStubKey: 1, defStubNotNull: 1,
	defStubFirst: 1, defEngine: 1, defComment: 1, defCache: 1,
	// Version 2: sequences, row tables.
	defSeq: 2, defRows: 2,
}

// kindVersions is the version of each value kind.
var kindVersions = map[model.ValueKind]uint32{
	model.ValNull: 1, model.ValDefault: 1, model.ValInt: 1, model.ValUint: 1,
	model.ValString: 1, model.ValDecimal: 1,
	model.ValNow: 2,
	// Version 5: binary-protocol parameters keep their type
	// (ticket/rowengine/values_typed.go); version 4 would not convert them.
	model.ValTemporal: 5, model.ValDouble: 5,
}

// Version is the lowest command version that applies c as this
// build does. Anything without an entry is taken as needing this build.
func Version(c *model.Command) uint32 {
	v, ok := opVersions[c.Op]
	if !ok {
		return CommandVersion
	}
	v = max(v, maskVersion(commandMask(c), cmdBitVersions))
	if c.Def != nil {
		v = max(v, maskVersion(defMask(c.Def), defBitVersions), DefVersion(c.Def))
	}
	if c.Dump != nil {
		for i := range c.Dump.Tables {
			v = max(v, DefVersion(&c.Dump.Tables[i].Def))
		}
	}
	for _, row := range c.Values {
		for i := range row {
			v = max(v, kindVersion(row[i].Kind))
		}
	}
	if c.Where != (model.Value{}) {
		v = max(v, kindVersion(c.Where.Kind))
	}
	if r := c.Rows; r != nil {
		for i := range r.Sets {
			v = max(v, kindVersion(r.Sets[i].A.Val.Kind), kindVersion(r.Sets[i].B.Val.Kind))
		}
		for i := range r.Where {
			v = max(v, kindVersion(r.Where[i].Val.Kind))
		}
		if r.Filter != nil {
			v = max(v, exprVersion(r.Filter))
		}
		for i := range r.Assigns {
			v = max(v, exprVersion(&r.Assigns[i].Expr))
		}
		for i := range r.OnDup {
			v = max(v, exprVersion(&r.OnDup[i].Expr))
		}
		for _, row := range r.Exprs {
			for i := range row {
				v = max(v, exprVersion(&row[i]))
			}
		}
		if r.NeedsV6() {
			// Version 6: INSERT ... ON DUPLICATE KEY UPDATE and
			// expressions in VALUES on row tables, which an older
			// build's decoder would drop.
			v = max(v, 6)
		}
	}
	return v
}

// DefVersion is the version of what a table definition holds beyond its
// presence bits: a row table's collations.
func DefVersion(d *model.TableDef) uint32 {
	rd := d.Rows
	if rd == nil {
		return BaseVersion
	}
	if rd.Collation > model.CollGeneralCI {
		return ColumnCollationVersion
	}
	for i := range rd.Cols {
		if rd.Cols[i].Collation != model.CollLegacy {
			return ColumnCollationVersion
		}
	}
	if rd.Collation != model.CollLegacy {
		return CollationVersion
	}
	return BaseVersion
}

// exprVersion is the version of the values in a row-engine expression.
func exprVersion(x *model.RowExpr) uint32 {
	v := uint32(BaseVersion)
	if x.Val != nil {
		v = kindVersion(x.Val.Kind)
	}
	for i := range x.Args {
		v = max(v, exprVersion(&x.Args[i]))
	}
	return v
}

func maskVersion(m uint64, versions map[uint64]uint32) uint32 {
	v := uint32(BaseVersion)
	for m != 0 {
		bit := uint64(1) << bits.TrailingZeros64(m)
		m &^= bit
		bv, ok := versions[bit]
		if !ok {
			return CommandVersion
		}
		v = max(v, bv)
	}
	return v
}

func kindVersion(k model.ValueKind) uint32 {
	if k == 0 {
		return BaseVersion // no value (an operand that is a column)
	}
	if v, ok := kindVersions[k]; ok {
		return v
	}
	return CommandVersion
}
