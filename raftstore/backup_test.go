package raftstore

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/ticketd/ticketd/raftstore/backupfile"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// backupBytes takes a backup of f's state.
func backupBytes(t testing.TB, f *FSM) ([]byte, backupfile.Header) {
	t.Helper()
	b, err := f.beginBackup("n7", time.Unix(1700000000, 5))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var buf bytes.Buffer
	n, err := b.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n != b.Header().Size() {
		t.Fatalf("WriteTo says %d bytes, wrote %d, header says %d", n, buf.Len(), b.Header().Size())
	}
	return buf.Bytes(), b.Header()
}

func TestBackupRoundTrip(t *testing.T) {
	f := openTestFSM(t, "")
	setupTickets(t, f)
	applyOK(t, f, entry(2, replaceCmd("flickr", "Tickets64", "a"), replaceCmd("flickr", "Tickets64", "b"),
		createDB("empty"), model.Command{Op: model.OpSetGlobal, Name: "auto_increment_increment", Value: 3}))
	data, hdr := backupBytes(t, f)
	if hdr.AppliedIndex != 2 || hdr.AppliedTerm != 1 || hdr.NodeID != "n7" {
		t.Errorf("header %+v", hdr)
	}
	b, err := ReadBackup(bytes.NewReader(data), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if b.Header != hdr {
		t.Errorf("read header %+v, wrote %+v", b.Header, hdr)
	}
	if b.FileSize != int64(len(data)) {
		t.Errorf("file size %d, want %d", b.FileSize, len(data))
	}
	d := b.Dump
	if !reflect.DeepEqual(d.Databases, []string{"empty", "flickr"}) {
		t.Errorf("databases %v", d.Databases)
	}
	if len(d.Tables) != 1 || d.Tables[0].Def.Key() != "flickr.Tickets64" || d.Tables[0].AutoInc != 3 || len(d.Tables[0].Rows) != 2 {
		t.Errorf("tables %+v", d.Tables)
	}
	if !reflect.DeepEqual(d.Globals, []model.Global{{Name: "auto_increment_increment", Value: 3}}) {
		t.Errorf("globals %+v", d.Globals)
	}
}

// TestBackupRefusesDamage: ReadBackup refuses a damaged file with the
// envelope's error (backupfile's tests go through every kind of damage),
// returns nothing to restore from, and leaves no staged image behind.
func TestBackupRefusesDamage(t *testing.T) {
	f := openTestFSM(t, "")
	setupTickets(t, f)
	applyOK(t, f, entry(2, replaceCmd("flickr", "Tickets64", "a")))
	data, hdr := backupBytes(t, f)
	if hdr.ImageSize < 4096 {
		t.Fatalf("image of %d bytes: the flip below may miss it", hdr.ImageSize)
	}
	dir := t.TempDir()
	flip := func(i int) []byte {
		b := bytes.Clone(data)
		b[i] ^= 0x40
		return b
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"wrong magic", flip(0), backupfile.ErrNotBackup},
		{"version", flip(9), backupfile.ErrVersion},
		{"image byte", flip(len(data) / 2), backupfile.ErrCorrupt}, // the image is all but ~110 bytes
		{"checksum byte", flip(len(data) - 1), backupfile.ErrCorrupt},
		{"image cut", data[:len(data)/2], backupfile.ErrTruncated},
		{"last byte missing", data[:len(data)-1], backupfile.ErrTruncated},
	}
	for _, c := range cases {
		got, err := ReadBackup(bytes.NewReader(c.data), dir)
		if !errors.Is(err, c.want) || got != nil {
			t.Errorf("%s: %+v, err %v, want %v", c.name, got, err, c.want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("refused files left %d staged images in %s", len(left), dir)
	}
}

// TestBackupChecksumCoversImageDecoding: a file whose checksum is right
// but whose image is not a state file (a writer bug, not disk damage) is
// still refused before anything is restored.
func TestBackupChecksumCoversImageDecoding(t *testing.T) {
	hdr := backupfile.Header{NodeID: "n1", AppliedIndex: 1, ImageSize: 4096, Created: time.Now()}
	var buf bytes.Buffer
	if _, err := backupfile.Write(&buf, hdr, bytes.NewReader(bytes.Repeat([]byte{0xAB}, 4096))); err != nil {
		t.Fatal(err)
	}
	_, err := ReadBackup(&buf, t.TempDir())
	if !errors.Is(err, backupfile.ErrCorrupt) {
		t.Fatalf("err %v, want ErrCorrupt", err)
	}
}

// TestRestoreCommand replays a backup through OpRestore on another FSM:
// the state is replaced as a whole, refused over existing databases
// without Force, and reserved ranges (the counter past them) survive
// Advance only as a higher counter.
func TestRestoreCommand(t *testing.T) {
	src := openTestFSM(t, "")
	setupTickets(t, src)
	applyOK(t, src, entry(2, replaceCmd("flickr", "Tickets64", "a"),
		model.Command{Op: model.OpReserve, DB: "flickr", Table: "Tickets64", Count: 100}))
	data, _ := backupBytes(t, src)
	b, err := ReadBackup(bytes.NewReader(data), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ticket.AdvanceDump(&b.Dump, 1000, 0); err != nil {
		t.Fatal(err)
	}

	dst := openTestFSM(t, "")
	applyOK(t, dst, entry(1, createDB("other")))
	rs := applyOK(t, dst, entry(2, model.Command{Op: model.OpRestore, Dump: &b.Dump}))
	if rs[0].Err == nil {
		t.Fatal("restore over an existing database accepted without Force")
	}
	rs = applyOK(t, dst, entry(3, model.Command{Op: model.OpRestore, Dump: &b.Dump, Force: true}))
	if rs[0].Err != nil {
		t.Fatal(rs[0].Err)
	}
	// 1 id, then 100 reserved: the counter was 102, now 1102.
	if got := autoInc(t, dst, "flickr", "Tickets64"); got != 1102 {
		t.Errorf("restored counter %d, want 1102", got)
	}
	err = dst.View(func(s ticket.Store) error {
		if ok, _ := s.Database("other"); ok {
			t.Error("database 'other' survived a forced restore")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rs = applyOK(t, dst, entry(4, replaceCmd("flickr", "Tickets64", "a")))
	if rs[0].InsertID != 1102 {
		t.Errorf("first id after restore %d, want 1102", rs[0].InsertID)
	}
}
