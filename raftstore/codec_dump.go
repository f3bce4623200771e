package raftstore

import (
	"encoding/binary"

	"github.com/ticketd/ticketd/ticket"
)

// A restore's state in the log (OpRestore's Dump), moved out of codec.go
// beside its keys (codec_keys.go's appendKeyEntries, behind their own
// command bit): the encoding is unchanged.

// appendDump writes a restore's state: the databases, each table in its
// state-file encoding (length-prefixed), and the globals.
func appendDump(b []byte, dump *ticket.Dump, f rowsFormat) []byte {
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
		buf = encodeTableRows(buf[:0], t, rows, f)
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
			t, rows, err := decodeTableRows(raw)
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
