package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// TestRestoreRowTableInChunks: a row table larger than one restore row
// command (restoreChunk) is backed up and restored into an empty node in
// several commands, every row in its place, and the restored table goes
// on generating ids above the backup's.
func TestRestoreRowTableInChunks(t *testing.T) {
	src := startTestNode(t)
	src.exec(t, model.Command{Op: model.OpCreateDB, DB: "ids"})
	def, err := ticket.NewTableDef(&model.TableSpec{DB: "ids", Name: "WORKER_NODE", Columns: []model.ColumnSpec{
		{Name: "ID", Type: "bigint", NotNull: true, AutoInc: true},
		{Name: "HOST_NAME", Type: "varchar", Width: 64, NotNull: true},
		{Name: "PORT", Type: "varchar", Width: 64, NotNull: true}},
		Keys: []model.KeySpec{{Primary: true, Columns: []string{"ID"}}}})
	if err != nil {
		t.Fatal(err)
	}
	src.exec(t, model.Command{Op: model.OpCreateTable, Def: def})
	const rows = 30000 // about 2.5 MB stored: three row commands
	for done := 0; done < rows; done += 1000 {
		c := model.Command{Op: model.OpInsert, DB: "ids", Table: "WORKER_NODE", Columns: []string{"HOST_NAME", "PORT"}, Increment: 1, Offset: 1}
		for i := range 1000 {
			c.Values = append(c.Values, []model.Value{{Kind: model.ValString, Str: fmt.Sprintf("host-%06d.example.com", done+i)},
				{Kind: model.ValString, Str: strings.Repeat("p", 40)}})
		}
		r, err := src.svc.Exec(context.Background(), &c)
		if err != nil || r.Err != nil {
			t.Fatal(err, r.Err)
		}
	}
	backup := src.backup(t)
	if len(backup) < 2*restoreChunk {
		t.Fatalf("backup of %d bytes: too small to need several row commands", len(backup))
	}
	dst := startTestNode(t)
	code, body := dst.restore(t, "advance=10", backup)
	if code != http.StatusOK {
		t.Fatalf("restore: %d %s", code, body)
	}
	var ans restoreAnswer
	if err := json.Unmarshal([]byte(body), &ans); err != nil || ans.Rows != rows {
		t.Fatalf("restore answer %s (%v): want %d rows", body, err, rows)
	}
	var got []string
	err = dst.svc.View(func(s ticket.Store) error {
		tr, err := s.Rows("ids", "WORKER_NODE")
		if err != nil || tr == nil {
			return fmt.Errorf("rows: %v", err)
		}
		return tr.Scan(rowengine.ClusterIndex, "", "", func(_ string, r []model.Datum) bool {
			got = append(got, r[0].S+"="+r[1].S)
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != rows || got[0] != "1=host-000000.example.com" || got[rows-1] != fmt.Sprintf("%d=host-%06d.example.com", rows, rows-1) {
		t.Fatalf("restored %d rows, first %q", len(got), got[:1])
	}
	r, err := dst.svc.Exec(context.Background(), &model.Command{Op: model.OpInsert, DB: "ids", Table: "WORKER_NODE",
		Columns: []string{"HOST_NAME", "PORT"}, Increment: 1, Offset: 1, Values: [][]model.Value{{{Kind: model.ValString, Str: "h"}, {Kind: model.ValString, Str: "p"}}}})
	if err != nil || r.Err != nil || r.LastID != rows+11 {
		t.Fatalf("insert after the restore: id %d, %v %v; want %d (next id + 10)", r.LastID, err, r.Err, rows+11)
	}
}

// TestProgressLine: on a terminal, a transfer shows MiB so far of the
// total and the step after it; elsewhere nothing.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, what: "restore: upload", total: 4 << 20, on: true, next: "Waiting.", last: time.Now()}
	p.add(1 << 20) // within the first second: not shown
	p.last = p.last.Add(-2e9)
	p.add(1 << 20)
	p.add(2 << 20)
	want := "\rrestore: upload: 2.0 of 4.0 MiB (50%)\rrestore: upload: 4.0 MiB done. Waiting.\n"
	if buf.String() != want {
		t.Fatalf("progress wrote %q, want %q", buf.String(), want)
	}
	quiet := newProgress(&buf, "x", 1)
	if quiet.on {
		t.Fatal("a buffer is not a terminal")
	}
	if f, err := os.CreateTemp(t.TempDir(), "p"); err == nil {
		if newProgress(f, "x", 1).on {
			t.Fatal("a file is not a terminal")
		}
		f.Close()
	}
}
