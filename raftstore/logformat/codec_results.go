package logformat

import (
	"encoding/binary"

	"github.com/ticketd/ticketd/ticket/model"
)

// Results (a forwarded batch's answer), tables as the state file holds
// them, and a restore's dump.

// EncodeResults appends the encoding of rs (a forwarded batch's answer),
// with row images in this build's encoding.
func EncodeResults(dst []byte, rs []model.Result) []byte {
	return AppendResults(dst, rs, FormatWire)
}

// AppendResults is EncodeResults with row images in format f: a leader
// answers in what every member reads (FormatAt).
func AppendResults(dst []byte, rs []model.Result, f Format) []byte {
	dst = append(dst, resultsVersion)
	dst = binary.AppendUvarint(dst, uint64(len(rs)))
	for i := range rs {
		dst = appendResult(dst, &rs[i], f)
	}
	return dst
}

func appendResult(b []byte, r *model.Result, f Format) []byte {
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
func AppendTable(b []byte, t *model.Table, f Format) []byte {
	return AppendTableRows(b, t, nil, f)
}

// AppendTableRows appends t with a row table's rows, as a restore's dump
// carries them (and as state files before per-row storage held them).
func AppendTableRows(b []byte, t *model.Table, rows [][]model.Datum, f Format) []byte {
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

// DecodeResults decodes what EncodeResults wrote.
func DecodeResults(data []byte) ([]model.Result, error) {
	d := decoder{b: data}
	d.version(resultsVersion, "results")
	n := d.count(1)
	if d.err != nil {
		return nil, d.err
	}
	rs := make([]model.Result, n)
	for i := range rs {
		d.result(&rs[i])
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return rs, nil
}

func (d *decoder) result(r *model.Result) {
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
		r.Warnings = make([]model.Warning, n)
		for i := range r.Warnings {
			w := &r.Warnings[i]
			w.Level = d.string()
			w.Code = d.code()
			w.Message = d.string()
		}
	}
	if m&resErr != 0 {
		r.Err = &model.Error{Code: d.code()}
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
func DecodeTable(data []byte) (*model.Table, error) {
	t, _, err := DecodeTableRows(data)
	return t, err
}

// DecodeTableRows decodes what AppendTableRows wrote; rows is nil when
// the encoding has none.
func DecodeTableRows(data []byte) (t *model.Table, rows [][]model.Datum, err error) {
	d := decoder{b: data}
	d.version(tableVersion, "table")
	t = new(model.Table)
	d.def(&t.Def)
	t.AutoInc = d.uvarint()
	f := d.mask(tblKnown)
	t.Exhausted = f&tblExhausted != 0
	n := d.count(2)
	if d.err != nil {
		return nil, nil, d.err
	}
	if n > 0 {
		t.Rows = make([]model.Row, n)
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
func appendDump(b []byte, dump *model.Dump, f Format) []byte {
	b = binary.AppendUvarint(b, uint64(len(dump.Databases)))
	for _, db := range dump.Databases {
		b = appendString(b, db)
	}
	b = binary.AppendUvarint(b, uint64(len(dump.Tables)))
	var buf []byte
	for i := range dump.Tables {
		t := &dump.Tables[i]
		var rows [][]model.Datum
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

func (d *decoder) dump() *model.Dump {
	dump := new(model.Dump)
	if n := d.count(1); n > 0 {
		dump.Databases = make([]string, n)
		for i := range dump.Databases {
			dump.Databases[i] = d.string()
		}
	}
	if n := d.count(2); n > 0 {
		dump.Tables = make([]model.Table, n)
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
					dump.Rows = map[string][][]model.Datum{}
				}
				dump.Rows[t.Def.Key()] = rows
			}
		}
	}
	if n := d.count(2); n > 0 {
		dump.Globals = make([]model.Global, n)
		for i := range dump.Globals {
			dump.Globals[i].Name = d.string()
			dump.Globals[i].Value = d.uvarint()
		}
	}
	return dump
}
