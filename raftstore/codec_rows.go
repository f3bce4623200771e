package raftstore

import (
	"encoding/json"

	"github.com/ticketd/ticketd/ticket"
)

// Row tables in the log and state formats. Their parts (a command's
// assignments and WHERE, a definition's columns and keys, a table's rows,
// a result's row images) are JSON documents behind their own presence bits
// (cmdRows, defRows, tblData, resImages), so entries, snapshots and state
// files written before row tables existed decode unchanged. JSON because
// these are the small, rarely written tables of the ID schemes, whose
// shapes are richer than the ticket tables' hand-packed fields:
// encoding/json is deterministic for structs, which replicas rely on only
// for byte-identical snapshots, not for correctness.

func appendJSON(b []byte, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		// Only plain structs of strings, numbers and bools go in.
		panic("raftstore: encode row-table part: " + err.Error())
	}
	return appendString(b, string(data))
}

// json decodes a JSON part into v, failing the decoder on bad input.
func (d *decoder) json(v any, what string) {
	raw := d.bytes()
	if d.err != nil {
		return
	}
	if err := json.Unmarshal(raw, v); err != nil {
		d.fail("%s: %v", what, err)
	}
}

func (d *decoder) rowsCommand() *ticket.RowsCommand {
	rc := new(ticket.RowsCommand)
	d.json(rc, "row command")
	// An empty list and none encode alike (omitempty): decode them alike.
	if len(rc.Sets) == 0 {
		rc.Sets = nil
	}
	if len(rc.Where) == 0 {
		rc.Where = nil
	}
	return rc
}

func (d *decoder) rowsDef() *ticket.RowsDef {
	rd := new(ticket.RowsDef)
	d.json(rd, "row table definition")
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
