package logformat

import (
	"encoding/json"

	"github.com/ticketd/ticketd/ticket/model"
)

// Row parts as JSON of the Go structs (genJSON): all that clusters below
// command version 7 write, and what this build writes while its cluster
// runs below 7 (FormatAt), so that no member meets a part it cannot read.
// The builds at 544f168 and, until its cluster reaches 7, fd4302c write
// them. Read wherever a row part is (codec_rows.go tells the two forms
// apart by the first byte). This file leaves the tree when the floor
// reaches 7 (legacy.go, DESIGN §4g); FormatAt then always answers
// FormatWire.

// FormatAt is the format an encoder may write while the cluster runs
// command version cluster: the numbered fields once every member reads
// them.
func FormatAt(cluster uint32) Format {
	if cluster >= FormatWireVersion {
		return FormatWire
	}
	return FormatJSON
}

// isJSONPart reports a row part written as JSON (before version 7).
func isJSONPart(b []byte) bool { return len(b) > 0 && (b[0] == '{' || b[0] == '[') }

// appendJSON writes v as JSON: the row parts' format before version 7.
func appendJSON(b []byte, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		// Only plain structs of strings, numbers and bools go in.
		panic("raftstore: encode row-table part: " + err.Error())
	}
	return appendString(b, string(data))
}

// json decodes a JSON part of what into v, failing the decoder on bad
// input, or on any when JSON is below its floor.
func (d *decoder) json(raw []byte, v any, what string) {
	d.legacy(genJSON, what)
	if d.err != nil {
		return
	}
	if err := json.Unmarshal(raw, v); err != nil {
		d.fail("%s: %v", what, err)
	}
}

// jsonRowsCommand decodes a row command written as JSON.
func (d *decoder) jsonRowsCommand(raw []byte, rc *model.RowsCommand) {
	d.json(raw, rc, "row command")
	// An empty list and none encode alike (omitempty): decode them alike.
	if len(rc.Sets) == 0 {
		rc.Sets = nil
	}
	if len(rc.Where) == 0 {
		rc.Where = nil
	}
}
