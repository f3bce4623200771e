package logformat

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ticketd/ticketd/ticket"
)

// Binary formats. Each begins with a version byte so that a newer binary can
// still read what an older one wrote into the Raft log, snapshots and state
// file. Within a record, a presence mask says which fields follow: zero
// fields cost nothing, and the common REPLACE command is ~20 bytes.
const (
	BatchVersion   = 1
	resultsVersion = 1
	tableVersion   = 1
)

// ErrCorrupt is wrapped by every decoding failure: the bytes are not a
// batch, result list or table this version understands.
var ErrCorrupt = errors.New("raftstore: corrupt encoding")

// Command field presence bits. The bit numbers are part of the log format:
// never renumber, only append.
const (
	cmdDB = 1 << iota
	cmdTable
	cmdReplace
	cmdIgnore
	cmdColumns
	cmdValues
	cmdOnDup
	cmdInc
	cmdOff
	cmdSet
	cmdHasWhere
	cmdWhereCol
	cmdWhere
	cmdIfExists
	cmdDef
	cmdCreateAutoInc
	cmdHasAutoInc
	cmdAutoInc
	cmdHasCache
	cmdCache
	cmdHasComment
	cmdComment
	cmdName
	cmdValue
	cmdCount
	cmdDump
	cmdForce
	cmdSeq         // sequence commands (codec_seq.go); older entries never set it
	cmdRows        // row-table UPDATE/DELETE parts (codec_rows.go)
	cmdKeys        // key changes of ALTER TABLE / CREATE and DROP INDEX (codec_rows.go)
	cmdRestoreRows // a chunk of a restored row table's rows (appendRows)
	// cmdRowsExpr is cmdRows in the row engine's expression form
	// (ticket.RowsCommand.ExprForm): its own bit, so that an older build
	// stops at it instead of applying it without its WHERE.
	cmdRowsExpr
	cmdKeyCmd   // a Redis key command (codec_keys.go)
	cmdDumpKeys // a restore's Redis keys (codec_keys.go)
	cmdKnown    = cmdDumpKeys<<1 - 1
)

// Presence bits that raftstore's tests build a newer build's entry with:
// a command's database and table, and the first bit no field of this
// build has.
const (
	CmdDB      = cmdDB
	CmdTable   = cmdTable
	CmdUnknown = cmdKnown + 1
)

// Update flag bits.
const (
	updAbsolute = 1 << iota
	updSetLastID
	updDelta
	updValue
	updColumn
	updKnown = updColumn<<1 - 1
)

// A Value is written as uvarint(kind<<3 | presence bits), then the
// present fields: one byte of header for every kind used today.
const (
	valInt = 1 << iota
	valUint
	valStr
	valBits = 3
)

// TableDef presence bits.
const (
	defDB = 1 << iota
	defName
	defIDCol
	defIDKind
	defIDUnsigned
	defIDWidth
	defAutoInc
	defIDKey
	defIDNotNull
	defStubCol
	defStubType
	defStubLen
	defStubDefault
	defStubKey
	defStubNotNull
	defStubFirst
	defEngine
	defComment
	defCache
	defSeq   // a sequence's definition and row (codec_seq.go)
	defRows  // a row table's columns and keys (codec_rows.go)
	defKnown = defRows<<1 - 1
)

// Result presence bits.
const (
	resInsertID = 1 << iota
	resSetLastID
	resLastID
	resAffected
	resMatched
	resWarnings
	resErr
	resFirst
	resLast
	resImages // row images of a row-table write (codec_rows.go)
	resKey    // a Redis key command's reply (codec_keys.go)
	resKnown  = resKey<<1 - 1
)

// Table flag bits.
const (
	tblExhausted = 1 << iota
	tblData      // a row table's rows follow the ticket rows (codec_rows.go)
	tblKnown     = tblData<<1 - 1
)

// commandMask is the presence mask of c's encoding.
func commandMask(c *ticket.Command) uint64 {
	var m uint64
	set := func(bit uint64, on bool) {
		if on {
			m |= bit
		}
	}
	set(cmdDB, c.DB != "")
	set(cmdTable, c.Table != "")
	set(cmdReplace, c.Replace)
	set(cmdIgnore, c.Ignore)
	set(cmdColumns, c.Columns != nil)
	set(cmdValues, c.Values != nil)
	set(cmdOnDup, c.OnDup != nil)
	set(cmdInc, c.Increment != 0)
	set(cmdOff, c.Offset != 0)
	set(cmdSet, c.Set != ticket.Update{})
	set(cmdHasWhere, c.HasWhere)
	set(cmdWhereCol, c.WhereCol != "")
	set(cmdWhere, c.Where != ticket.Value{})
	set(cmdIfExists, c.IfExists)
	set(cmdDef, c.Def != nil)
	set(cmdCreateAutoInc, c.CreateAutoInc != 0)
	set(cmdHasAutoInc, c.HasAutoInc)
	set(cmdAutoInc, c.AutoInc != 0)
	set(cmdHasCache, c.HasCache)
	set(cmdCache, c.Cache != 0)
	set(cmdHasComment, c.HasComment)
	set(cmdComment, c.Comment != "")
	set(cmdName, c.Name != "")
	set(cmdValue, c.Value != 0)
	set(cmdCount, c.Count != 0)
	set(cmdDump, c.Dump != nil)
	set(cmdForce, c.Force)
	set(cmdSeq, c.Seq != nil)
	set(cmdRows, c.Rows != nil && !c.Rows.ExprForm())
	set(cmdRowsExpr, c.Rows != nil && c.Rows.ExprForm())
	set(cmdKeys, len(c.DropKeys)+len(c.AddKeys) > 0)
	set(cmdRestoreRows, c.RestoreRows != nil)
	set(cmdKeyCmd, c.Key != nil)
	set(cmdDumpKeys, c.Dump != nil && len(c.Dump.Keys) > 0)
	return m
}

// EncodeBatch appends the log encoding of cmds to dst, with the row parts
// in this build's encoding (codec_wire.go).
func EncodeBatch(dst []byte, cmds []ticket.Command) []byte {
	return AppendBatch(dst, cmds, FormatWire)
}

// AppendBatch is EncodeBatch with the row parts in format f: Propose
// writes what every member of the cluster reads (FormatAt).
func AppendBatch(dst []byte, cmds []ticket.Command, f Format) []byte {
	dst = append(dst, BatchVersion)
	dst = binary.AppendUvarint(dst, uint64(len(cmds)))
	for i := range cmds {
		dst = appendCommand(dst, &cmds[i], f)
	}
	return dst
}

func appendCommand(b []byte, c *ticket.Command, f Format) []byte {
	m := commandMask(c)
	b = append(b, byte(c.Op))
	b = binary.AppendUvarint(b, m)
	if m&cmdDB != 0 {
		b = appendString(b, c.DB)
	}
	if m&cmdTable != 0 {
		b = appendString(b, c.Table)
	}
	if m&cmdColumns != 0 {
		// Columns are present even when empty: nil means "the table's
		// column order", an empty list is INSERT INTO t () VALUES ().
		b = binary.AppendUvarint(b, uint64(len(c.Columns)))
		for _, col := range c.Columns {
			b = appendString(b, col)
		}
	}
	if m&cmdValues != 0 {
		b = binary.AppendUvarint(b, uint64(len(c.Values)))
		for _, row := range c.Values {
			b = binary.AppendUvarint(b, uint64(len(row)))
			for i := range row {
				b = appendValue(b, &row[i])
			}
		}
	}
	if m&cmdOnDup != 0 {
		b = appendUpdate(b, c.OnDup)
	}
	if m&cmdInc != 0 {
		b = binary.AppendUvarint(b, c.Increment)
	}
	if m&cmdOff != 0 {
		b = binary.AppendUvarint(b, c.Offset)
	}
	if m&cmdSet != 0 {
		b = appendUpdate(b, &c.Set)
	}
	if m&cmdWhereCol != 0 {
		b = appendString(b, c.WhereCol)
	}
	if m&cmdWhere != 0 {
		b = appendValue(b, &c.Where)
	}
	if m&cmdDef != 0 {
		b = appendDef(b, c.Def, f)
	}
	if m&cmdCreateAutoInc != 0 {
		b = binary.AppendUvarint(b, c.CreateAutoInc)
	}
	if m&cmdAutoInc != 0 {
		b = binary.AppendUvarint(b, c.AutoInc)
	}
	if m&cmdCache != 0 {
		b = binary.AppendUvarint(b, c.Cache)
	}
	if m&cmdComment != 0 {
		b = appendString(b, c.Comment)
	}
	if m&cmdName != 0 {
		b = appendString(b, c.Name)
	}
	if m&cmdValue != 0 {
		b = binary.AppendUvarint(b, c.Value)
	}
	if m&cmdCount != 0 {
		b = binary.AppendUvarint(b, c.Count)
	}
	if m&cmdDump != 0 {
		b = appendDump(b, c.Dump, f)
	}
	if m&cmdSeq != 0 {
		b = appendSeqCommand(b, c.Seq)
	}
	if m&(cmdRows|cmdRowsExpr) != 0 {
		b = appendRowsPart(b, f, c.Rows, appendWireRowsCommand)
	}
	if m&cmdKeys != 0 {
		b = appendKeyChanges(b, c)
	}
	if m&cmdRestoreRows != 0 {
		b = appendRows(b, c.RestoreRows)
	}
	if m&cmdKeyCmd != 0 {
		b = appendKeyCommand(b, c.Key)
	}
	if m&cmdDumpKeys != 0 {
		b = appendKeyEntries(b, c.Dump.Keys)
	}
	return b
}

func appendValue(b []byte, v *ticket.Value) []byte {
	h := uint64(v.Kind) << valBits
	if v.Int != 0 {
		h |= valInt
	}
	if v.Uint != 0 {
		h |= valUint
	}
	if v.Str != "" {
		h |= valStr
	}
	b = binary.AppendUvarint(b, h)
	if v.Int != 0 {
		b = binary.AppendVarint(b, v.Int)
	}
	if v.Uint != 0 {
		b = binary.AppendUvarint(b, v.Uint)
	}
	if v.Str != "" {
		b = appendString(b, v.Str)
	}
	return b
}

func appendUpdate(b []byte, u *ticket.Update) []byte {
	var f byte
	if u.Absolute {
		f |= updAbsolute
	}
	if u.SetLastID {
		f |= updSetLastID
	}
	if u.Delta != 0 {
		f |= updDelta
	}
	if u.Value != 0 {
		f |= updValue
	}
	if u.Column != "" {
		f |= updColumn
	}
	b = append(b, f)
	if u.Delta != 0 {
		b = binary.AppendVarint(b, u.Delta)
	}
	if u.Value != 0 {
		b = binary.AppendUvarint(b, u.Value)
	}
	if u.Column != "" {
		b = appendString(b, u.Column)
	}
	return b
}

// defMask is the presence mask of d's encoding.
func defMask(d *ticket.TableDef) uint64 {
	var m uint64
	set := func(bit uint64, on bool) {
		if on {
			m |= bit
		}
	}
	set(defDB, d.DB != "")
	set(defName, d.Name != "")
	set(defIDCol, d.IDCol != "")
	set(defIDKind, d.IDType.Kind != 0)
	set(defIDUnsigned, d.IDType.Unsigned)
	set(defIDWidth, d.IDType.Width != 0)
	set(defAutoInc, d.AutoInc)
	set(defIDKey, d.IDKey != "")
	set(defIDNotNull, d.IDNotNull)
	set(defStubCol, d.StubCol != "")
	set(defStubType, d.StubType != "")
	set(defStubLen, d.StubLen != 0)
	set(defStubDefault, d.StubDefault != "")
	set(defStubKey, d.StubKey != "")
	set(defStubNotNull, d.StubNotNull)
	set(defStubFirst, d.StubFirst)
	set(defEngine, d.Engine != "")
	set(defComment, d.Comment != "")
	set(defCache, d.Cache != 0)
	set(defSeq, d.Seq != nil)
	set(defRows, d.Rows != nil)
	return m
}

func appendDef(b []byte, d *ticket.TableDef, f Format) []byte {
	m := defMask(d)
	b = binary.AppendUvarint(b, m)
	if m&defDB != 0 {
		b = appendString(b, d.DB)
	}
	if m&defName != 0 {
		b = appendString(b, d.Name)
	}
	if m&defIDCol != 0 {
		b = appendString(b, d.IDCol)
	}
	if m&defIDKind != 0 {
		b = append(b, byte(d.IDType.Kind))
	}
	if m&defIDWidth != 0 {
		b = binary.AppendVarint(b, int64(d.IDType.Width))
	}
	if m&defIDKey != 0 {
		b = appendString(b, d.IDKey)
	}
	if m&defStubCol != 0 {
		b = appendString(b, d.StubCol)
	}
	if m&defStubType != 0 {
		b = appendString(b, d.StubType)
	}
	if m&defStubLen != 0 {
		b = binary.AppendVarint(b, int64(d.StubLen))
	}
	if m&defStubDefault != 0 {
		b = appendString(b, d.StubDefault)
	}
	if m&defStubKey != 0 {
		b = appendString(b, d.StubKey)
	}
	if m&defEngine != 0 {
		b = appendString(b, d.Engine)
	}
	if m&defComment != 0 {
		b = appendString(b, d.Comment)
	}
	if m&defCache != 0 {
		b = binary.AppendUvarint(b, d.Cache)
	}
	if m&defSeq != 0 {
		b = appendSeqDef(b, d.Seq)
	}
	if m&defRows != 0 {
		b = appendRowsPart(b, f, d.Rows, appendWireRowsDef)
	}
	return b
}

// EncodeResults appends the encoding of rs (a forwarded batch's answer),
// with row images in this build's encoding.
func EncodeResults(dst []byte, rs []ticket.Result) []byte {
	return AppendResults(dst, rs, FormatWire)
}

// AppendResults is EncodeResults with row images in format f: a leader
// answers in what every member reads (FormatAt).
func AppendResults(dst []byte, rs []ticket.Result, f Format) []byte {
	dst = append(dst, resultsVersion)
	dst = binary.AppendUvarint(dst, uint64(len(rs)))
	for i := range rs {
		dst = appendResult(dst, &rs[i], f)
	}
	return dst
}

func appendResult(b []byte, r *ticket.Result, f Format) []byte {
	var m uint64
	set := func(bit uint64, on bool) {
		if on {
			m |= bit
		}
	}
	set(resInsertID, r.InsertID != 0)
	set(resSetLastID, r.SetLastID)
	set(resLastID, r.LastID != 0)
	set(resAffected, r.Affected != 0)
	set(resMatched, r.Matched != 0)
	set(resWarnings, len(r.Warnings) > 0)
	set(resErr, r.Err != nil)
	set(resFirst, r.First != 0)
	set(resLast, r.Last != 0)
	set(resImages, len(r.Images) > 0)
	set(resKey, r.Key != nil)

	b = binary.AppendUvarint(b, m)
	if m&resInsertID != 0 {
		b = binary.AppendUvarint(b, r.InsertID)
	}
	if m&resLastID != 0 {
		b = binary.AppendUvarint(b, r.LastID)
	}
	if m&resAffected != 0 {
		b = binary.AppendUvarint(b, r.Affected)
	}
	if m&resMatched != 0 {
		b = binary.AppendUvarint(b, r.Matched)
	}
	if m&resWarnings != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.Warnings)))
		for _, w := range r.Warnings {
			b = appendString(b, w.Level)
			b = binary.AppendUvarint(b, uint64(w.Code))
			b = appendString(b, w.Message)
		}
	}
	if m&resErr != 0 {
		b = binary.AppendUvarint(b, uint64(r.Err.Code))
		b = appendString(b, r.Err.State)
		b = appendString(b, r.Err.Message)
	}
	if m&resFirst != 0 {
		b = binary.AppendUvarint(b, r.First)
	}
	if m&resLast != 0 {
		b = binary.AppendUvarint(b, r.Last)
	}
	if m&resImages != 0 {
		b = appendRowsPart(b, f, r.Images, appendWireImages)
	}
	if m&resKey != 0 {
		b = appendKeyReply(b, r.Key)
	}
	return b
}

// AppendTable appends the state-file encoding of t. A row table's rows
// are not in it: the state file stores them per row (memstate.go).
func AppendTable(b []byte, t *ticket.Table, f Format) []byte {
	return AppendTableRows(b, t, nil, f)
}

// AppendTableRows appends t with a row table's rows, as a restore's dump
// carries them (and as state files before per-row storage held them).
func AppendTableRows(b []byte, t *ticket.Table, rows [][]ticket.Datum, f Format) []byte {
	b = append(b, tableVersion)
	b = appendDef(b, &t.Def, f)
	b = binary.AppendUvarint(b, t.AutoInc)
	var flags uint64
	if t.Exhausted {
		flags |= tblExhausted
	}
	if rows != nil {
		flags |= tblData
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(len(t.Rows)))
	for _, r := range t.Rows {
		b = binary.AppendUvarint(b, r.ID)
		b = appendString(b, r.Stub)
	}
	if flags&tblData != 0 {
		b = appendRows(b, rows)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads the formats above. The first error sticks; later reads
// return zero values, so callers check err once at the end.
type decoder struct {
	b   []byte
	err error
	// Batches repeat the same database and table names and column lists;
	// reusing the previous command's saves allocations per command.
	lastDB, lastTable string
	lastColumns       []string
	// names are the column names of the row parts read so far
	// (codec_wire.go).
	names map[string]string
	// Slabs: one backing array each for the values and rows of all
	// commands of a batch.
	values []ticket.Value
	rows   [][]ticket.Value
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("unexpected end")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads an element count and checks it against the bytes left, each
// element taking at least min bytes, so that garbage cannot make us
// allocate gigabytes.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail("count %d exceeds input", n)
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("string length %d exceeds input", n)
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) string() string { return string(d.bytes()) }

// nonEmpty reads a string that the presence mask says is not empty: a
// zero-length one would not round-trip.
func (d *decoder) nonEmpty() string {
	b := d.bytes()
	if len(b) == 0 && d.err == nil {
		d.fail("empty string marked present")
	}
	return string(b)
}

func (d *decoder) interned(last *string) string {
	b := d.bytes()
	if len(b) == 0 && d.err == nil {
		d.fail("empty string marked present")
	}
	if string(b) == *last {
		return *last
	}
	*last = string(b)
	return *last
}

// nonZero reads a uvarint the presence mask says is not zero.
func (d *decoder) nonZero() uint64 {
	v := d.uvarint()
	if v == 0 && d.err == nil {
		d.fail("zero value marked present")
	}
	return v
}

func (d *decoder) mask(known uint64) uint64 {
	m := d.uvarint()
	if m&^known != 0 {
		d.fail("unknown fields %#x", m&^known)
	}
	return m
}

func (d *decoder) version(want byte, what string) {
	if v := d.byte(); d.err == nil && v != want {
		d.fail("%s version %d, want %d", what, v, want)
	}
}

func (d *decoder) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

// DecodeBatch decodes a batch written by EncodeBatch. The result does not
// alias data, but its commands may share Columns slices with each other:
// commands are read-only once decoded.
func DecodeBatch(data []byte) ([]ticket.Command, error) {
	return DecodeBatchInto(nil, data)
}

// DecodeBatchInto is DecodeBatch reusing buf's array when it is big
// enough: a Command is some 400 bytes, and the FSM decodes batches of
// hundreds, one after the other.
func DecodeBatchInto(buf []ticket.Command, data []byte) ([]ticket.Command, error) {
	d := decoder{b: data}
	d.version(BatchVersion, "batch")
	n := d.count(2)
	if d.err != nil {
		return nil, d.err
	}
	var cmds []ticket.Command
	if cap(buf) >= n {
		cmds = buf[:n]
		clear(cmds)
	} else {
		cmds = make([]ticket.Command, n)
	}
	for i := range cmds {
		d.command(&cmds[i], n-i)
		if d.err != nil {
			return nil, d.err
		}
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return cmds, nil
}

func (d *decoder) command(c *ticket.Command, left int) {
	c.Op = ticket.Op(d.byte())
	m := d.mask(cmdKnown)
	if m&cmdDB != 0 {
		c.DB = d.interned(&d.lastDB)
	}
	if m&cmdTable != 0 {
		c.Table = d.interned(&d.lastTable)
	}
	c.Replace = m&cmdReplace != 0
	c.Ignore = m&cmdIgnore != 0
	if m&cmdColumns != 0 {
		c.Columns = d.columns()
	}
	if m&cmdValues != 0 {
		c.Values = d.valueRows(left)
	}
	if m&cmdOnDup != 0 {
		c.OnDup = new(ticket.Update)
		d.update(c.OnDup)
	}
	if m&cmdInc != 0 {
		c.Increment = d.nonZero()
	}
	if m&cmdOff != 0 {
		c.Offset = d.nonZero()
	}
	if m&cmdSet != 0 {
		d.update(&c.Set)
		if c.Set == (ticket.Update{}) && d.err == nil {
			d.fail("zero update marked present")
		}
	}
	c.HasWhere = m&cmdHasWhere != 0
	if m&cmdWhereCol != 0 {
		c.WhereCol = d.nonEmpty()
	}
	if m&cmdWhere != 0 {
		d.value(&c.Where)
		if c.Where == (ticket.Value{}) && d.err == nil {
			d.fail("zero value marked present")
		}
	}
	c.IfExists = m&cmdIfExists != 0
	if m&cmdDef != 0 {
		c.Def = new(ticket.TableDef)
		d.def(c.Def)
	}
	if m&cmdCreateAutoInc != 0 {
		c.CreateAutoInc = d.nonZero()
	}
	c.HasAutoInc = m&cmdHasAutoInc != 0
	if m&cmdAutoInc != 0 {
		c.AutoInc = d.nonZero()
	}
	c.HasCache = m&cmdHasCache != 0
	if m&cmdCache != 0 {
		c.Cache = d.nonZero()
	}
	c.HasComment = m&cmdHasComment != 0
	if m&cmdComment != 0 {
		c.Comment = d.nonEmpty()
	}
	if m&cmdName != 0 {
		c.Name = d.nonEmpty()
	}
	if m&cmdValue != 0 {
		c.Value = d.nonZero()
	}
	if m&cmdCount != 0 {
		c.Count = d.nonZero()
	}
	if m&cmdDump != 0 {
		c.Dump = d.dump()
	}
	c.Force = m&cmdForce != 0
	if m&cmdSeq != 0 {
		c.Seq = d.seqCommand()
	}
	if m&(cmdRows|cmdRowsExpr) != 0 {
		c.Rows = d.rowsCommand()
	}
	if m&cmdKeys != 0 {
		d.keyChanges(c)
	}
	if m&cmdRestoreRows != 0 {
		c.RestoreRows = d.tableRows()
	}
	if m&cmdKeyCmd != 0 {
		c.Key = d.keyCommand()
	}
	if m&cmdDumpKeys != 0 {
		keys := d.keyEntries()
		if c.Dump == nil && d.err == nil {
			d.fail("restore keys without a restore")
		}
		if d.err == nil {
			c.Dump.Keys = keys
		}
	}
	d.check(c)
}

// check refuses a command that no encoder writes and that ticket.Apply
// would fail as a storage error (or a nil dereference) rather than as a
// statement error (CheckCommand).
func (d *decoder) check(c *ticket.Command) {
	if d.err != nil {
		return
	}
	if err := CheckCommand(c); err != nil {
		d.fail("%v", err)
	}
}

// ErrMalformed is wrapped by CheckCommand's failures.
var ErrMalformed = errors.New("malformed command")

// CheckCommand refuses a command that no statement's encoder writes but
// the codec can carry, and that ticket.Apply would fail as a storage
// error (or a nil dereference). Such a command in a log entry would stop
// the state machine of every replica at the same index, at every restart:
// Propose refuses it before anything is written, and the decoder refuses
// it too, so that a forwarded batch holding one is refused whole. Found
// by FuzzForward: a SET GLOBAL without a name.
func CheckCommand(c *ticket.Command) error {
	switch c.Op {
	case ticket.OpSetGlobal:
		if c.Name == "" {
			return fmt.Errorf("%w: set global without a name", ErrMalformed)
		}
	case ticket.OpCreateDB, ticket.OpDropDB:
		if c.DB == "" {
			return fmt.Errorf("%w: database command without a database", ErrMalformed)
		}
	case ticket.OpCreateTable:
		if c.Def == nil || c.Def.DB == "" || c.Def.Name == "" {
			return fmt.Errorf("%w: create table without a definition", ErrMalformed)
		}
	case ticket.OpRestoreRows:
		if c.DB == "" || c.Table == "" {
			return fmt.Errorf("%w: restored rows without a table", ErrMalformed)
		}
	case ticket.OpKeys:
		if !c.Key.Valid() {
			return fmt.Errorf("%w: key command without a valid key part", ErrMalformed)
		}
	}
	return nil
}

// columns reads a column list, returning the previous command's slice
// when the list is the same.
func (d *decoder) columns() []string {
	n := d.count(1)
	if d.err != nil {
		return nil
	}
	last := d.lastColumns
	same := last != nil && len(last) == n
	save := d.b
	for i := 0; same && i < n; i++ {
		if string(d.bytes()) != last[i] {
			same = false
		}
	}
	if same && d.err == nil {
		return last
	}
	d.b = save
	cols := make([]string, n)
	for i := range cols {
		cols[i] = d.string()
	}
	if d.err == nil {
		d.lastColumns = cols
	}
	return cols
}

// valueRows reads the VALUES tuples of a command; left is the number of
// commands still to decode, to size the slabs for a batch of look-alikes.
func (d *decoder) valueRows(left int) [][]ticket.Value {
	n := d.count(1)
	if n == 0 {
		return [][]ticket.Value{}
	}
	if cap(d.rows)-len(d.rows) < n {
		d.rows = make([][]ticket.Value, 0, max(n, left))
	}
	start := len(d.rows)
	for range n {
		k := d.count(1)
		if d.err != nil {
			return nil
		}
		if k == 0 {
			d.rows = append(d.rows, nil)
			continue
		}
		if cap(d.values)-len(d.values) < k {
			// Every value takes a byte at least: garbage cannot make this big.
			d.values = make([]ticket.Value, 0, max(k, min(k*left, len(d.b))))
		}
		vs := d.values[len(d.values) : len(d.values)+k : len(d.values)+k]
		for i := range vs {
			d.value(&vs[i])
		}
		d.values = d.values[:len(d.values)+k]
		d.rows = append(d.rows, vs)
	}
	return d.rows[start:len(d.rows):len(d.rows)]
}

func (d *decoder) value(v *ticket.Value) {
	h := d.uvarint()
	kind := h >> valBits
	if kind > 255 && d.err == nil {
		d.fail("value kind %d", kind)
	}
	v.Kind = ticket.ValueKind(kind)
	if h&valInt != 0 {
		v.Int = d.varint()
		if v.Int == 0 && d.err == nil {
			d.fail("zero int marked present")
		}
	}
	if h&valUint != 0 {
		v.Uint = d.nonZero()
	}
	if h&valStr != 0 {
		v.Str = d.nonEmpty()
	}
}

func (d *decoder) update(u *ticket.Update) {
	f := d.byte()
	if f&^updKnown != 0 {
		d.fail("unknown update flags %#x", f)
		return
	}
	u.Absolute = f&updAbsolute != 0
	u.SetLastID = f&updSetLastID != 0
	if f&updDelta != 0 {
		u.Delta = d.varint()
		if u.Delta == 0 && d.err == nil {
			d.fail("zero delta marked present")
		}
	}
	if f&updValue != 0 {
		u.Value = d.nonZero()
	}
	if f&updColumn != 0 {
		u.Column = d.nonEmpty()
	}
}

func (d *decoder) int() int {
	v := d.varint()
	if v == 0 && d.err == nil {
		d.fail("zero value marked present")
	}
	if int64(int(v)) != v && d.err == nil {
		d.fail("int %d out of range", v)
	}
	return int(v)
}

func (d *decoder) def(t *ticket.TableDef) {
	m := d.mask(defKnown)
	if m&defDB != 0 {
		t.DB = d.nonEmpty()
	}
	if m&defName != 0 {
		t.Name = d.nonEmpty()
	}
	if m&defIDCol != 0 {
		t.IDCol = d.nonEmpty()
	}
	if m&defIDKind != 0 {
		t.IDType.Kind = ticket.IntKind(d.byte())
		if t.IDType.Kind == 0 && d.err == nil {
			d.fail("zero kind marked present")
		}
	}
	t.IDType.Unsigned = m&defIDUnsigned != 0
	if m&defIDWidth != 0 {
		t.IDType.Width = d.int()
	}
	t.AutoInc = m&defAutoInc != 0
	if m&defIDKey != 0 {
		t.IDKey = d.nonEmpty()
	}
	t.IDNotNull = m&defIDNotNull != 0
	if m&defStubCol != 0 {
		t.StubCol = d.nonEmpty()
	}
	if m&defStubType != 0 {
		t.StubType = d.nonEmpty()
	}
	if m&defStubLen != 0 {
		t.StubLen = d.int()
	}
	if m&defStubDefault != 0 {
		t.StubDefault = d.nonEmpty()
	}
	if m&defStubKey != 0 {
		t.StubKey = d.nonEmpty()
	}
	t.StubNotNull = m&defStubNotNull != 0
	t.StubFirst = m&defStubFirst != 0
	if m&defEngine != 0 {
		t.Engine = d.nonEmpty()
	}
	if m&defComment != 0 {
		t.Comment = d.nonEmpty()
	}
	if m&defCache != 0 {
		t.Cache = d.nonZero()
	}
	if m&defSeq != 0 {
		t.Seq = d.seqDef()
	}
	if m&defRows != 0 {
		t.Rows = d.rowsDef()
	}
}

// DecodeResults decodes what EncodeResults wrote.
func DecodeResults(data []byte) ([]ticket.Result, error) {
	d := decoder{b: data}
	d.version(resultsVersion, "results")
	n := d.count(1)
	if d.err != nil {
		return nil, d.err
	}
	rs := make([]ticket.Result, n)
	for i := range rs {
		d.result(&rs[i])
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return rs, nil
}

func (d *decoder) result(r *ticket.Result) {
	m := d.mask(resKnown)
	if m&resInsertID != 0 {
		r.InsertID = d.nonZero()
	}
	r.SetLastID = m&resSetLastID != 0
	if m&resLastID != 0 {
		r.LastID = d.nonZero()
	}
	if m&resAffected != 0 {
		r.Affected = d.nonZero()
	}
	if m&resMatched != 0 {
		r.Matched = d.nonZero()
	}
	if m&resWarnings != 0 {
		n := d.count(3)
		if n == 0 && d.err == nil {
			d.fail("empty warnings marked present")
		}
		r.Warnings = make([]ticket.Warning, n)
		for i := range r.Warnings {
			w := &r.Warnings[i]
			w.Level = d.string()
			w.Code = d.code()
			w.Message = d.string()
		}
	}
	if m&resErr != 0 {
		r.Err = &ticket.Error{Code: d.code()}
		r.Err.State = d.string()
		r.Err.Message = d.string()
	}
	if m&resFirst != 0 {
		r.First = d.nonZero()
	}
	if m&resLast != 0 {
		r.Last = d.nonZero()
	}
	if m&resImages != 0 {
		d.images(&r.Images)
		if len(r.Images) == 0 {
			r.Images = nil
		}
	}
	if m&resKey != 0 {
		r.Key = d.keyReply()
	}
}

func (d *decoder) code() uint16 {
	v := d.uvarint()
	if v > 1<<16-1 && d.err == nil {
		d.fail("error code %d out of range", v)
	}
	return uint16(v)
}

// DecodeTable decodes what AppendTable wrote.
func DecodeTable(data []byte) (*ticket.Table, error) {
	t, _, err := DecodeTableRows(data)
	return t, err
}

// DecodeTableRows decodes what AppendTableRows wrote; rows is nil when
// the encoding has none.
func DecodeTableRows(data []byte) (t *ticket.Table, rows [][]ticket.Datum, err error) {
	d := decoder{b: data}
	d.version(tableVersion, "table")
	t = new(ticket.Table)
	d.def(&t.Def)
	t.AutoInc = d.uvarint()
	f := d.mask(tblKnown)
	t.Exhausted = f&tblExhausted != 0
	n := d.count(2)
	if d.err != nil {
		return nil, nil, d.err
	}
	if n > 0 {
		t.Rows = make([]ticket.Row, n)
		for i := range t.Rows {
			t.Rows[i].ID = d.uvarint()
			t.Rows[i].Stub = d.string()
		}
	}
	if f&tblData != 0 {
		rows = d.tableRows()
		if d.err == nil && t.Def.Rows != nil {
			for _, r := range rows {
				if len(r) != len(t.Def.Rows.Cols) {
					d.fail("row of %d values in a table of %d columns", len(r), len(t.Def.Rows.Cols))
					break
				}
			}
		}
	}
	if err := d.done(); err != nil {
		return nil, nil, err
	}
	return t, rows, nil
}

// appendDump writes a restore's state: the databases, each table in its
// state-file encoding (length-prefixed), and the globals.
func appendDump(b []byte, dump *ticket.Dump, f Format) []byte {
	b = binary.AppendUvarint(b, uint64(len(dump.Databases)))
	for _, db := range dump.Databases {
		b = appendString(b, db)
	}
	b = binary.AppendUvarint(b, uint64(len(dump.Tables)))
	var buf []byte
	for i := range dump.Tables {
		t := &dump.Tables[i]
		var rows [][]ticket.Datum
		if t.Def.Rows != nil {
			rows = dump.Rows[t.Def.Key()]
		}
		buf = AppendTableRows(buf[:0], t, rows, f)
		b = binary.AppendUvarint(b, uint64(len(buf)))
		b = append(b, buf...)
	}
	b = binary.AppendUvarint(b, uint64(len(dump.Globals)))
	for _, g := range dump.Globals {
		b = appendString(b, g.Name)
		b = binary.AppendUvarint(b, g.Value)
	}
	return b
}

func (d *decoder) dump() *ticket.Dump {
	dump := new(ticket.Dump)
	if n := d.count(1); n > 0 {
		dump.Databases = make([]string, n)
		for i := range dump.Databases {
			dump.Databases[i] = d.string()
		}
	}
	if n := d.count(2); n > 0 {
		dump.Tables = make([]ticket.Table, n)
		for i := range dump.Tables {
			raw := d.bytes()
			if d.err != nil {
				return nil
			}
			t, rows, err := DecodeTableRows(raw)
			if err != nil {
				d.fail("dump table %d: %v", i, err)
				return nil
			}
			dump.Tables[i] = *t
			if t.Def.Rows != nil && len(rows) > 0 {
				if dump.Rows == nil {
					dump.Rows = map[string][][]ticket.Datum{}
				}
				dump.Rows[t.Def.Key()] = rows
			}
		}
	}
	if n := d.count(2); n > 0 {
		dump.Globals = make([]ticket.Global, n)
		for i := range dump.Globals {
			dump.Globals[i].Name = d.string()
			dump.Globals[i].Value = d.uvarint()
		}
	}
	return dump
}
