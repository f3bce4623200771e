package logformat

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ticketd/ticketd/ticket/model"
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
	// (model.RowsCommand.ExprForm): its own bit, so that an older build
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
func commandMask(c *model.Command) uint64 {
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
	set(cmdSet, c.Set != model.Update{})
	set(cmdHasWhere, c.HasWhere)
	set(cmdWhereCol, c.WhereCol != "")
	set(cmdWhere, c.Where != model.Value{})
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
func EncodeBatch(dst []byte, cmds []model.Command) []byte {
	return AppendBatch(dst, cmds, FormatWire)
}

// AppendBatch is EncodeBatch with the row parts in format f: Propose
// writes what every member of the cluster reads (FormatAt).
func AppendBatch(dst []byte, cmds []model.Command, f Format) []byte {
	dst = append(dst, BatchVersion)
	dst = binary.AppendUvarint(dst, uint64(len(cmds)))
	for i := range cmds {
		dst = appendCommand(dst, &cmds[i], f)
	}
	return dst
}

func appendCommand(b []byte, c *model.Command, f Format) []byte {
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

func appendValue(b []byte, v *model.Value) []byte {
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

func appendUpdate(b []byte, u *model.Update) []byte {
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

// DecodeBatch decodes a batch written by EncodeBatch. The result does not
// alias data, but its commands may share Columns slices with each other:
// commands are read-only once decoded.
func DecodeBatch(data []byte) ([]model.Command, error) {
	return DecodeBatchInto(nil, data)
}

// DecodeBatchInto is DecodeBatch reusing buf's array when it is big
// enough: a Command is some 400 bytes, and the FSM decodes batches of
// hundreds, one after the other.
func DecodeBatchInto(buf []model.Command, data []byte) ([]model.Command, error) {
	d := decoder{b: data}
	d.version(BatchVersion, "batch")
	n := d.count(2)
	if d.err != nil {
		return nil, d.err
	}
	var cmds []model.Command
	if cap(buf) >= n {
		cmds = buf[:n]
		clear(cmds)
	} else {
		cmds = make([]model.Command, n)
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

func (d *decoder) command(c *model.Command, left int) {
	c.Op = model.Op(d.byte())
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
		c.OnDup = new(model.Update)
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
		if c.Set == (model.Update{}) && d.err == nil {
			d.fail("zero update marked present")
		}
	}
	c.HasWhere = m&cmdHasWhere != 0
	if m&cmdWhereCol != 0 {
		c.WhereCol = d.nonEmpty()
	}
	if m&cmdWhere != 0 {
		d.value(&c.Where)
		if c.Where == (model.Value{}) && d.err == nil {
			d.fail("zero value marked present")
		}
	}
	c.IfExists = m&cmdIfExists != 0
	if m&cmdDef != 0 {
		c.Def = new(model.TableDef)
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
		c.Rows = d.rowsCommand(m&cmdRows != 0)
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
func (d *decoder) check(c *model.Command) {
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
func CheckCommand(c *model.Command) error {
	switch c.Op {
	case model.OpSetGlobal:
		if c.Name == "" {
			return fmt.Errorf("%w: set global without a name", ErrMalformed)
		}
	case model.OpCreateDB, model.OpDropDB:
		if c.DB == "" {
			return fmt.Errorf("%w: database command without a database", ErrMalformed)
		}
	case model.OpCreateTable:
		if c.Def == nil || c.Def.DB == "" || c.Def.Name == "" {
			return fmt.Errorf("%w: create table without a definition", ErrMalformed)
		}
	case model.OpRestoreRows:
		if c.DB == "" || c.Table == "" {
			return fmt.Errorf("%w: restored rows without a table", ErrMalformed)
		}
	case model.OpKeys:
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
func (d *decoder) valueRows(left int) [][]model.Value {
	n := d.count(1)
	if n == 0 {
		return [][]model.Value{}
	}
	if cap(d.rows)-len(d.rows) < n {
		d.rows = make([][]model.Value, 0, max(n, left))
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
			d.values = make([]model.Value, 0, max(k, min(k*left, len(d.b))))
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

func (d *decoder) value(v *model.Value) {
	h := d.uvarint()
	kind := h >> valBits
	if kind > 255 && d.err == nil {
		d.fail("value kind %d", kind)
	}
	v.Kind = model.ValueKind(kind)
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

func (d *decoder) update(u *model.Update) {
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
