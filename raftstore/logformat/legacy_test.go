package logformat

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket/model"
)

// decodeAt decodes data, a batch, a state-file table or a result list,
// as the exported decoder of its kind does, with the decoder's floor set
// to floor.
func decodeAt(kind string, data []byte, floor uint32) (any, error) {
	d := decoder{b: data, floor: floor}
	switch kind {
	case "batch":
		d.version(BatchVersion, "batch")
		cmds := make([]model.Command, d.count(2))
		for i := range cmds {
			d.command(&cmds[i], len(cmds)-i)
		}
		return cmds, d.done()
	case "table":
		d.version(tableVersion, "table")
		t := new(model.Table)
		d.def(&t.Def)
		t.AutoInc = d.uvarint()
		f := d.mask(tblKnown)
		t.Exhausted = f&tblExhausted != 0
		if n := d.count(2); n > 0 {
			t.Rows = make([]model.Row, n)
			for i := range t.Rows {
				t.Rows[i].ID = d.uvarint()
				t.Rows[i].Stub = d.string()
			}
		}
		return t, d.done()
	case "results":
		d.version(resultsVersion, "results")
		rs := make([]model.Result, d.count(1))
		for i := range rs {
			d.result(&rs[i])
		}
		return rs, d.done()
	}
	panic(kind)
}

// TestBelowFloorRefused: every old generation this build reads decodes
// with a floor just below the version that stopped writing it, exactly
// as the exported decoders decode it at Floor, and is refused, with an
// error naming the version and the way forward, by a floor at that
// version: the log entries (batches), the state files and snapshots
// (tables) and the leader's answers (results) that hold it.
func TestBelowFloorRefused(t *testing.T) {
	v2 := formattest.GoldenRowsCommands()[5:6]
	if v2[0].Rows.ExprForm() || v2[0].Rows.Sets == nil {
		t.Fatalf("fixture 5 is not a version-2 row command: %+v", v2[0].Rows)
	}
	cases := []struct {
		name string
		kind string
		data []byte
		gen  generation
	}{
		// JSON and the version-2 form: the lower floor refuses it first.
		{"rows-batch-json.hex", "batch", readHex(t, "rows-batch-json.hex"), genRowsV2},
		{"rows-upsert-json.hex", "batch", readHex(t, "rows-upsert-json.hex"), genJSON},
		{"rows-table-json.hex", "table", readHex(t, "rows-table-json.hex"), genJSON},
		{"rows-results-json.hex", "results", readHex(t, "rows-results-json.hex"), genJSON},
		{"rows-batch-wire.hex", "batch", readHex(t, "rows-batch-wire.hex"), genRowsV2},
		{"version-2 UPDATE, numbered fields", "batch", EncodeBatch(nil, v2), genRowsV2},
		{"version-2 UPDATE, JSON", "batch", AppendBatch(nil, v2, FormatJSON), genRowsV2},
	}
	seen := map[generation]bool{}
	for _, tc := range cases {
		seen[tc.gen] = true
		var want any
		var err error
		switch tc.kind {
		case "batch":
			want, err = DecodeBatch(tc.data)
		case "table":
			want, err = DecodeTable(tc.data)
		case "results":
			want, err = DecodeResults(tc.data)
		}
		if err != nil {
			t.Fatalf("%s at Floor %d: %v", tc.name, Floor, err)
		}
		got, err := decodeAt(tc.kind, tc.data, tc.gen.until-1)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s at floor %d: %v\n%+v\nwant\n%+v", tc.name, tc.gen.until-1, err, got, want)
		}
		_, err = decodeAt(tc.kind, tc.data, tc.gen.until)
		var bf *BelowFloorError
		if !errors.Is(err, ErrBelowFloor) || !errors.Is(err, ErrCorrupt) || !errors.As(err, &bf) || bf.Gen != tc.gen.name {
			t.Errorf("%s at floor %d: %v, want a refusal of %s", tc.name, tc.gen.until, err, tc.gen.name)
			continue
		}
		for _, want := range []string{
			fmt.Sprintf("below command version %d", tc.gen.until),
			fmt.Sprintf("command version %d and up", tc.gen.until),
			"snapshot", "OPERATIONS.md",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal does not say %q: %v", tc.name, want, err)
			}
		}
	}
	for _, g := range generations {
		if !seen[g] {
			t.Errorf("generation %q has no case here", g.name)
		}
	}
}

// TestFloorKeepsDirectUpgrades: the floor reads every generation the
// builds a rolling upgrade starts from directly write (issue 33: 544f168,
// from before command versions, and fd4302c, version 9), checked against
// the real builds by integration's TestRollingUpgrade. Raising the floor
// past one of them ends the direct upgrade from that build; the rule of
// DESIGN §4g says when that may be.
func TestFloorKeepsDirectUpgrades(t *testing.T) {
	if Floor != BaseVersion {
		t.Errorf("Floor is %d, want %d (BaseVersion)", Floor, BaseVersion)
	}
	for _, src := range []struct {
		commit string
		writes []generation
	}{
		// Row parts as JSON, row UPDATE and DELETE only in the version-2
		// form; it announces no version (1).
		{"544f168", []generation{genJSON, genRowsV2}},
		// Version 9: JSON while its cluster runs below 7 (a cluster
		// upgraded from 544f168), version-2 row commands below 3.
		{"fd4302c", []generation{genJSON, genRowsV2}},
	} {
		for _, g := range src.writes {
			if Floor >= g.until {
				t.Errorf("Floor %d refuses %s, which the build at %s writes", Floor, g.name, src.commit)
			}
		}
	}
}
