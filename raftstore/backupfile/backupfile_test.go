package backupfile

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// testFile is a backup file around an opaque image: the envelope is all
// this package reads.
func testFile(t *testing.T) ([]byte, Header, []byte) {
	t.Helper()
	img := make([]byte, 4096)
	for i := range img {
		img[i] = byte(i*7 + i/256)
	}
	hdr := Header{NodeID: "n7", AppliedIndex: 2, AppliedTerm: 1, Created: time.Unix(1700000000, 5), ImageSize: uint64(len(img))}
	var buf bytes.Buffer
	n, err := Write(&buf, hdr, bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n != hdr.Size() {
		t.Fatalf("Write says %d bytes, wrote %d, header says %d", n, buf.Len(), hdr.Size())
	}
	return buf.Bytes(), hdr, img
}

func TestRoundTrip(t *testing.T) {
	data, hdr, img := testFile(t)
	var got bytes.Buffer
	read, err := Read(bytes.NewReader(data), &got)
	if err != nil {
		t.Fatal(err)
	}
	if !read.Created.Equal(hdr.Created) {
		t.Errorf("created %v, wrote %v", read.Created, hdr.Created)
	}
	read.Created = hdr.Created
	if read != hdr {
		t.Errorf("read header %+v, wrote %+v", read, hdr)
	}
	if !bytes.Equal(got.Bytes(), img) {
		t.Errorf("image of %d bytes read back as %d different bytes", len(img), got.Len())
	}
}

// TestRefusesDamage: every damaged file is refused with the error that
// says what is wrong.
func TestRefusesDamage(t *testing.T) {
	data, hdr, _ := testFile(t)
	read := func(b []byte) error {
		_, err := Read(bytes.NewReader(b), io.Discard)
		if err == nil {
			t.Errorf("damaged file of %d bytes accepted", len(b))
		}
		return err
	}
	flip := func(i int) []byte {
		b := bytes.Clone(data)
		b[i] ^= 0x40
		return b
	}
	hLen := headerLen + len(hdr.NodeID)
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"wrong magic", flip(0), ErrNotBackup},
		{"empty", nil, ErrNotBackup},
		{"not a backup", []byte("CREATE TABLE Tickets64 (id bigint)"), ErrNotBackup},
		{"version", flip(9), ErrVersion},
		{"applied index byte", flip(19), ErrCorrupt},
		{"node id byte", flip(hLen - 1), ErrCorrupt},
		{"first image byte", flip(hLen), ErrCorrupt},
		{"middle image byte", flip(hLen + int(hdr.ImageSize)/2), ErrCorrupt},
		{"last image byte", flip(hLen + int(hdr.ImageSize) - 1), ErrCorrupt},
		{"trailer magic", flip(len(data) - trailerLen), ErrCorrupt},
		{"checksum byte", flip(len(data) - 1), ErrCorrupt},
		{"trailing data", append(bytes.Clone(data), '\n'), ErrCorrupt},
		{"header cut", data[:20], ErrTruncated},
		{"image cut", data[:hLen+100], ErrTruncated},
		{"trailer missing", data[:len(data)-trailerLen], ErrTruncated},
		{"last byte missing", data[:len(data)-1], ErrTruncated},
	}
	for _, c := range cases {
		if err := read(c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
	// Every truncation is refused, whatever the length.
	for n := 0; n < len(data); n += 1 + n/7 {
		if err := read(data[:n]); !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNotBackup) {
			t.Errorf("cut to %d of %d bytes: %v", n, len(data), err)
		}
	}
}

// TestWriteRefusesWrongImageSize: an image of another length than the
// header says gets no trailer, so that the file reads as truncated
// rather than as a file that lies about its image.
func TestWriteRefusesWrongImageSize(t *testing.T) {
	hdr := Header{NodeID: "n1", AppliedIndex: 1, ImageSize: 100, Created: time.Now()}
	var buf bytes.Buffer
	if _, err := Write(&buf, hdr, bytes.NewReader(make([]byte, 99))); err == nil {
		t.Fatal("a 99-byte image written under a header of 100")
	}
	if _, err := Read(bytes.NewReader(buf.Bytes()), io.Discard); !errors.Is(err, ErrTruncated) {
		t.Errorf("reading what was written: %v, want ErrTruncated", err)
	}
}
