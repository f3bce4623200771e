package logformat

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket/model"
)

// readHex reads a golden file of testdata: hex, one encoding per file.
func readHex(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// TestGoldenRows: entries, state-file tables and results written by
// earlier builds decode to the same values, and this build's encodings
// are byte for byte the golden ones, so that a renamed Go field or a
// changed encoder shows here and not in a replay. The -json files were
// written by the build at 24b9b3e (command version 3, JSON row parts);
// the -wire files by this encoder (version 7), and must never change: a new field gets
// a new number and new golden files, the old ones stay.
func TestGoldenRows(t *testing.T) {
	cmds := formattest.GoldenRowsCommands()
	// Encoders: the numbered fields at version 7, and while the cluster
	// runs below it exactly what versions 3 and 4 wrote.
	for _, tc := range []struct {
		name string
		enc  []byte
	}{
		{"rows-batch-wire.hex", EncodeBatch(nil, cmds)},
		{"rows-upsert-wire.hex", EncodeBatch(nil, formattest.GoldenUpsertCommands())},
		{"rows-upsert-json.hex", AppendBatch(nil, formattest.GoldenUpsertCommands(), FormatJSON)},
		{"rows-collation-wire.hex", EncodeBatch(nil, formattest.GoldenCollationCommands())},
		{"rows-collation-table-wire.hex", AppendTable(nil, &formattest.GoldenCollationCommands()[1].Dump.Tables[0], FormatWire)},
		{"rows-colcoll-wire.hex", EncodeBatch(nil, formattest.GoldenColumnCollationCommands())},
		{"rows-colcoll-table-wire.hex", AppendTable(nil, &formattest.GoldenColumnCollationCommands()[1].Dump.Tables[0], FormatWire)},
		{"rows-batch-json.hex", AppendBatch(nil, cmds, FormatAt(FormatWireVersion-1))},
		{"rows-batch-wire.hex", AppendBatch(nil, cmds, FormatAt(FormatWireVersion))},
		{"rows-table-wire.hex", AppendTable(nil, formattest.GoldenRowTable(), FormatWire)},
		{"rows-table-json.hex", AppendTable(nil, formattest.GoldenRowTable(), FormatJSON)},
		{"rows-results-wire.hex", EncodeResults(nil, formattest.GoldenResults())},
		{"rows-results-json.hex", AppendResults(nil, formattest.GoldenResults(), FormatJSON)},
	} {
		if want := readHex(t, tc.name); !bytes.Equal(tc.enc, want) {
			if *updateGolden && (strings.HasSuffix(tc.name, "-wire.hex") || tc.name == "rows-upsert-json.hex") {
				if err := os.WriteFile(filepath.Join("testdata", tc.name), []byte(hex.EncodeToString(tc.enc)+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("encoding differs from %s:\n got %x\nwant %x", tc.name, tc.enc, want)
		}
	}

	// Decoders: both formats give the same values.
	for _, name := range []string{"rows-batch-json.hex", "rows-batch-wire.hex"} {
		got, err := DecodeBatch(readHex(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, cmds) {
			t.Errorf("%s decodes to\n%+v\nwant\n%+v", name, got, cmds)
		}
	}
	for _, name := range []string{"rows-upsert-json.hex", "rows-upsert-wire.hex"} {
		got, err := DecodeBatch(readHex(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := formattest.GoldenUpsertCommands(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s decodes to\n%+v\nwant\n%+v", name, got, want)
		}
	}
	if got, err := DecodeBatch(readHex(t, "rows-collation-wire.hex")); err != nil || !reflect.DeepEqual(got, formattest.GoldenCollationCommands()) {
		t.Errorf("rows-collation-wire.hex decodes to\n%+v (%v)\nwant\n%+v", got, err, formattest.GoldenCollationCommands())
	}
	if got, err := DecodeTable(readHex(t, "rows-collation-table-wire.hex")); err != nil || !reflect.DeepEqual(*got, formattest.GoldenCollationCommands()[1].Dump.Tables[0]) {
		t.Errorf("rows-collation-table-wire.hex decodes to\n%+v (%v)", got, err)
	}
	if got, err := DecodeBatch(readHex(t, "rows-colcoll-wire.hex")); err != nil || !reflect.DeepEqual(got, formattest.GoldenColumnCollationCommands()) {
		t.Errorf("rows-colcoll-wire.hex decodes to\n%+v (%v)\nwant\n%+v", got, err, formattest.GoldenColumnCollationCommands())
	}
	if got, err := DecodeTable(readHex(t, "rows-colcoll-table-wire.hex")); err != nil || !reflect.DeepEqual(*got, formattest.GoldenColumnCollationCommands()[1].Dump.Tables[0]) {
		t.Errorf("rows-colcoll-table-wire.hex decodes to\n%+v (%v)", got, err)
	}
	for _, name := range []string{"rows-table-json.hex", "rows-table-wire.hex"} {
		got, err := DecodeTable(readHex(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, formattest.GoldenRowTable()) {
			t.Errorf("%s decodes to\n%+v\nwant\n%+v", name, got, formattest.GoldenRowTable())
		}
	}
	for _, name := range []string{"rows-results-json.hex", "rows-results-wire.hex"} {
		got, err := DecodeResults(readHex(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, formattest.GoldenResults()) {
			t.Errorf("%s decodes to\n%+v\nwant\n%+v", name, got, formattest.GoldenResults())
		}
	}
}

// updateGolden writes missing -wire golden files (go test -run
// TestGoldenRows -update-golden): only for new files, never to change
// what an earlier build of this encoding wrote.
var updateGolden = flag.Bool("update-golden", false, "write the -wire golden files of TestGoldenRows")

// TestWireFieldsNumbered: every field of the row parts' structs has a
// number in codec_wire.go. A field added to one of them fails here until
// it is given a number (and a golden file shows it); without one it
// would be dropped from the log in silence.
func TestWireFieldsNumbered(t *testing.T) {
	for _, tc := range []struct {
		v      any
		fields int
	}{
		{model.RowsCommand{}, 13},
		{model.Value{}, 4},
		{model.RowOperand{}, 2},
		{model.RowSet{}, 5},
		{model.RowCond{}, 2},
		{model.RowExpr{}, 6},
		{model.RowAssign{}, 3},
		{model.RowOrder{}, 2},
		{model.RowsDef{}, 3},
		{model.RowCol{}, 13},
		{model.IntType{}, 3},
		{model.Datum{}, 2},
		{model.RowKey{}, 4},
	} {
		if n := reflect.TypeOf(tc.v).NumField(); n != tc.fields {
			t.Errorf("%T has %d fields, codec_wire.go numbers %d: give the new ones numbers", tc.v, n, tc.fields)
		}
	}
}

// TestWireRejects: a row part with a field this build does not know, a
// field of the wrong wire type, a truncated field or an expression
// nested without end is an error, never a command applied without it.
func TestWireRejects(t *testing.T) {
	rc := formattest.GoldenRowsCommands()[2].Rows
	good := appendWireRowsCommand(nil, rc)
	deep := []byte{}
	for range maxExprDepth + 2 {
		deep = protowire.AppendBytes(protowire.AppendTag(nil, exArgs, protowire.BytesType), deep)
	}
	for name, part := range map[string][]byte{
		"unknown field":   protowire.AppendVarint(protowire.AppendTag(append([]byte{}, good...), 99, protowire.VarintType), 1),
		"wrong wire type": protowire.AppendString(protowire.AppendTag(nil, rcLimit, protowire.BytesType), "x"),
		"fixed64":         protowire.AppendFixed64(protowire.AppendTag(nil, rcLimit, protowire.Fixed64Type), 1),
		"truncated":       good[:len(good)-1],
		"bool 2":          protowire.AppendVarint(protowire.AppendTag(nil, rcEngine, protowire.VarintType), 2),
		"nested unknown":  protowire.AppendBytes(protowire.AppendTag(nil, rcFilter, protowire.BytesType), protowire.AppendVarint(protowire.AppendTag(nil, 40, protowire.VarintType), 1)),
		"nested too deep": protowire.AppendBytes(protowire.AppendTag(nil, rcFilter, protowire.BytesType), deep),
		"op out of range": protowire.AppendBytes(protowire.AppendTag(nil, rcFilter, protowire.BytesType), protowire.AppendVarint(protowire.AppendTag(nil, exOp, protowire.VarintType), 300)),
	} {
		d := decoder{}
		var got model.RowsCommand
		d.wireRowsCommand(part, &got)
		if !errors.Is(d.err, ErrCorrupt) {
			t.Errorf("%s: decoded without an error: %+v", name, got)
		}
	}
	d := decoder{}
	var got model.RowsCommand
	d.wireRowsCommand(good, &got)
	if d.err != nil || !reflect.DeepEqual(&got, rc) {
		t.Fatalf("good part: %v %+v", d.err, got)
	}
}
