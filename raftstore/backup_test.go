package raftstore

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"hash"
	"reflect"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// backupBytes takes a backup of f's state.
func backupBytes(t testing.TB, f *FSM) ([]byte, BackupHeader) {
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

// TestBackupRefusesDamage: every damaged file is refused with the error
// that says what is wrong, and nothing is returned to restore from.
func TestBackupRefusesDamage(t *testing.T) {
	f := openTestFSM(t, "")
	setupTickets(t, f)
	applyOK(t, f, entry(2, replaceCmd("flickr", "Tickets64", "a")))
	data, hdr := backupBytes(t, f)
	dir := t.TempDir()
	read := func(b []byte) error {
		got, err := ReadBackup(bytes.NewReader(b), dir)
		if err == nil || got != nil {
			t.Errorf("damaged file accepted: %+v", got)
		}
		return err
	}
	flip := func(i int) []byte {
		b := bytes.Clone(data)
		b[i] ^= 0x40
		return b
	}
	headerLen := backupHeaderLen + len(hdr.NodeID)
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"wrong magic", flip(0), ErrNotBackup},
		{"empty", nil, ErrNotBackup},
		{"not a backup", []byte("CREATE TABLE Tickets64 (id bigint)"), ErrNotBackup},
		{"version", flip(9), ErrBackupVersion},
		{"applied index byte", flip(19), ErrBackupCorrupt},
		{"node id byte", flip(headerLen - 1), ErrBackupCorrupt},
		{"first image byte", flip(headerLen), ErrBackupCorrupt},
		{"middle image byte", flip(headerLen + int(hdr.ImageSize)/2), ErrBackupCorrupt},
		{"last image byte", flip(headerLen + int(hdr.ImageSize) - 1), ErrBackupCorrupt},
		{"trailer magic", flip(len(data) - backupTrailerLen), ErrBackupCorrupt},
		{"checksum byte", flip(len(data) - 1), ErrBackupCorrupt},
		{"trailing data", append(bytes.Clone(data), '\n'), ErrBackupCorrupt},
		{"header cut", data[:20], ErrBackupTruncated},
		{"image cut", data[:headerLen+100], ErrBackupTruncated},
		{"trailer missing", data[:len(data)-backupTrailerLen], ErrBackupTruncated},
		{"last byte missing", data[:len(data)-1], ErrBackupTruncated},
	}
	for _, c := range cases {
		if err := read(c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
	// Every truncation is refused, whatever the length.
	for n := 0; n < len(data); n += 1 + n/7 {
		if err := read(data[:n]); !errors.Is(err, ErrBackupTruncated) && !errors.Is(err, ErrNotBackup) {
			t.Errorf("cut to %d of %d bytes: %v", n, len(data), err)
		}
	}
}

// TestBackupChecksumCoversImageDecoding: a file whose checksum is right
// but whose image is not a state file (a writer bug, not disk damage) is
// still refused before anything is restored.
func TestBackupChecksumCoversImageDecoding(t *testing.T) {
	hdr := BackupHeader{NodeID: "n1", AppliedIndex: 1, ImageSize: 4096, Created: time.Now()}
	img := bytes.Repeat([]byte{0xAB}, 4096)
	var buf bytes.Buffer
	buf.Write(hdr.marshal())
	buf.Write(img)
	h := newSHA()
	h.Write(buf.Bytes())
	buf.Write(trailer(h, hdr.ImageSize))
	_, err := ReadBackup(&buf, t.TempDir())
	if !errors.Is(err, ErrBackupCorrupt) {
		t.Fatalf("err %v, want ErrBackupCorrupt", err)
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

func newSHA() hash.Hash { return sha256.New() }
