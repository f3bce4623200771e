package logformat

import (
	"encoding/binary"

	"github.com/ticketd/ticketd/ticket/model"
)

// Row tables in the log and state formats. Their parts sit behind their
// own presence bits (cmdRows, defRows, tblData, resImages), so entries,
// snapshots and state files written before row tables existed decode
// unchanged. A command's assignments and WHERE, a definition's columns and
// keys and a result's row images are messages of numbered fields
// (codec_wire.go) since command version 7; builds before it wrote them as
// JSON of the Go structs, which this build still reads (old entries
// replay as they were written) and still writes while the cluster runs a
// version below 7 (legacy_json.go). A table's rows, written whole at every
// change in state files before per-row storage and in restores, are a
// packed list (appendRows).

// appendRowsPart appends a row part of v in format f, as a string.
func appendRowsPart[T any](b []byte, f Format, v T, wire func([]byte, T) []byte) []byte {
	if f == FormatJSON {
		return appendJSON(b, v)
	}
	// The length goes first; one byte is reserved for it and the part is
	// moved when it is longer.
	at := len(b)
	b = append(b, 0)
	b = wire(b, v)
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	k := uvarintLen(uint64(n))
	b = append(b, make([]byte, k-1)...)
	copy(b[at+k:], b[at+1:at+1+n])
	binary.PutUvarint(b[at:], uint64(n))
	return b
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendRows writes a row table's rows: a count, then per row a count of
// values and each value as a byte (1 NULL, 0 text) and its text. Not
// JSON: a table of 100,000 rows is written at every change.
func appendRows(b []byte, rows [][]model.Datum) []byte {
	b = binary.AppendUvarint(b, uint64(len(rows)))
	for _, r := range rows {
		b = binary.AppendUvarint(b, uint64(len(r)))
		for _, v := range r {
			if v.Null {
				b = append(b, 1)
				continue
			}
			b = append(b, 0)
			b = appendString(b, v.S)
		}
	}
	return b
}

func (d *decoder) tableRows() [][]model.Datum {
	n := d.count(1)
	rows := make([][]model.Datum, 0, n)
	for range n {
		k := d.count(1)
		if d.err != nil {
			return nil
		}
		r := make([]model.Datum, k)
		for i := range r {
			switch d.byte() {
			case 0:
				r[i].S = d.string()
			case 1:
				r[i].Null = true
			default:
				if d.err == nil {
					d.fail("row value flag")
				}
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// rowsCommand reads a row command; v2 says it is in its version-2 form
// (cmdRows, not cmdRowsExpr: legacy_rows.go).
func (d *decoder) rowsCommand(v2 bool) *model.RowsCommand {
	rc := new(model.RowsCommand)
	raw := d.bytes()
	if v2 {
		d.legacy(genRowsV2, "row command")
	}
	if d.err != nil {
		return rc
	}
	if !isJSONPart(raw) {
		d.wireRowsCommand(raw, rc)
		return rc
	}
	d.jsonRowsCommand(raw, rc)
	return rc
}

func (d *decoder) rowsDef() *model.RowsDef {
	rd := new(model.RowsDef)
	raw := d.bytes()
	switch {
	case d.err != nil:
		return rd
	case isJSONPart(raw):
		d.json(raw, rd, "row table definition")
	default:
		d.wireRowsDef(raw, rd)
	}
	if len(rd.Keys) == 0 {
		rd.Keys = nil
	}
	if d.err == nil {
		for _, k := range rd.Keys {
			for _, c := range k.Cols {
				if c < 0 || c >= len(rd.Cols) {
					d.fail("key %q column %d of %d", k.Name, c, len(rd.Cols))
					return rd
				}
			}
		}
	}
	return rd
}

// images reads a result's row images.
func (d *decoder) images(rows *[][]model.Datum) {
	raw := d.bytes()
	switch {
	case d.err != nil:
	case isJSONPart(raw):
		d.json(raw, rows, "row images")
	default:
		*rows = d.wireImages(raw)
	}
}

// Key change flags.
const (
	keyPrimary = 1 << iota
	keyUnique
	keyKnown = keyUnique<<1 - 1
)

// appendKeyChanges writes the keys an ALTER drops (names) and adds
// (name, flags, columns), numbered fields in a fixed order: no JSON of
// Go structs, so that renaming a field cannot change old entries.
func appendKeyChanges(b []byte, c *model.Command) []byte {
	b = binary.AppendUvarint(b, uint64(len(c.DropKeys)))
	for _, name := range c.DropKeys {
		b = appendString(b, name)
	}
	b = binary.AppendUvarint(b, uint64(len(c.AddKeys)))
	for _, k := range c.AddKeys {
		b = appendString(b, k.Name)
		var f byte
		if k.Primary {
			f |= keyPrimary
		}
		if k.Unique {
			f |= keyUnique
		}
		b = append(b, f)
		b = binary.AppendUvarint(b, uint64(len(k.Columns)))
		for _, col := range k.Columns {
			b = appendString(b, col)
		}
	}
	return b
}

func (d *decoder) keyChanges(c *model.Command) {
	if n := d.count(1); n > 0 {
		c.DropKeys = make([]string, n)
		for i := range c.DropKeys {
			c.DropKeys[i] = d.string()
		}
	}
	if n := d.count(3); n > 0 {
		c.AddKeys = make([]model.KeySpec, n)
		for i := range c.AddKeys {
			k := &c.AddKeys[i]
			k.Name = d.string()
			f := d.byte()
			if f&^keyKnown != 0 && d.err == nil {
				d.fail("key flags %#x", f)
			}
			k.Primary, k.Unique = f&keyPrimary != 0, f&keyUnique != 0
			if m := d.count(1); m > 0 {
				k.Columns = make([]string, m)
				for j := range k.Columns {
					k.Columns[j] = d.string()
				}
			}
		}
	}
}
