// Package backupfile owns the format of a ticketd backup file: the
// envelope around a state image, its header (which node took it, when,
// and the last Raft entry the image includes), and the trailer whose
// length and SHA-256 let a reader tell a whole file from a truncated or
// damaged one before it uses a byte of the image.
//
// It must not know what the image is: raftstore writes its bbolt state
// file into it and reads it back out (raftstore/backup.go); which tables
// the image holds, how they decode and how a restore replays them are
// raftstore's and ticket's.
package backupfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"
)

// Backup file format, version 1. Integers are big-endian.
//
//	header   magic "TKTDBKUP" | u16 version | u16 len(node id) | u64 applied index
//	         | u64 applied term | i64 created (Unix ns) | u64 image length | node id
//	image    the image, ImageSize bytes (raftstore's: its bbolt state file as
//	         one read transaction saw it)
//	trailer  magic "TKTDEND\n" | u64 image length | SHA-256 of header, image
//	         and the trailer's first 16 bytes
//
// The image length is in the header so that a reader knows where the image
// ends without trusting the end of the stream, and again in the trailer so
// that a truncated file is told apart from a damaged one. Nothing is
// restored from a file until its whole length has been read and its
// checksum matched.
const (
	magic   = "TKTDBKUP"
	endMark = "TKTDEND\n"
	version = 1

	headerLen  = 8 + 2 + 2 + 8 + 8 + 8 + 8
	trailerLen = 8 + 8 + sha256.Size

	// maxImage bounds the image a reader accepts (it is written out
	// before its checksum can be checked).
	maxImage = 4 << 30
)

// Backup file errors. Each failure to read a backup wraps one of them.
// Their texts keep the "raftstore:" prefix they had before the format
// left raftstore: operators and scripts see them as they were.
var (
	// ErrNotBackup: the file does not start with the backup magic.
	ErrNotBackup = errors.New("raftstore: not a ticketd backup file")
	// ErrVersion: a backup format this binary does not know.
	ErrVersion = errors.New("raftstore: unsupported backup format version")
	// ErrTruncated: the file ends before its trailer does.
	ErrTruncated = errors.New("raftstore: backup file truncated")
	// ErrCorrupt: the checksum does not match or the trailer is damaged;
	// raftstore also wraps it for an image whose tables do not decode.
	ErrCorrupt = errors.New("raftstore: backup file corrupt")
)

// Header describes a backup: which node took it, when, and the last Raft
// entry its state includes.
type Header struct {
	NodeID       string
	AppliedIndex uint64
	AppliedTerm  uint64
	Created      time.Time
	ImageSize    uint64
}

// Size is the length of the whole backup file.
func (h Header) Size() int64 {
	return int64(headerLen+len(h.NodeID)) + int64(h.ImageSize) + trailerLen
}

func (h Header) marshal() []byte {
	b := make([]byte, 0, headerLen+len(h.NodeID))
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint16(b, version)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.NodeID)))
	b = binary.BigEndian.AppendUint64(b, h.AppliedIndex)
	b = binary.BigEndian.AppendUint64(b, h.AppliedTerm)
	b = binary.BigEndian.AppendUint64(b, uint64(h.Created.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, h.ImageSize)
	return append(b, h.NodeID...)
}

// Write writes a whole backup file to w: hdr, the image that image
// writes, which must be hdr.ImageSize bytes, and the trailer.
func Write(w io.Writer, hdr Header, image io.WriterTo) (int64, error) {
	h := sha256.New()
	mw := io.MultiWriter(w, h)
	n, err := mw.Write(hdr.marshal())
	total := int64(n)
	if err != nil {
		return total, fmt.Errorf("raftstore: backup: %w", err)
	}
	img, err := image.WriteTo(mw)
	total += img
	if err != nil {
		return total, fmt.Errorf("raftstore: backup: %w", err)
	}
	if uint64(img) != hdr.ImageSize {
		// The header promised another length: better no trailer (the
		// file reads as truncated) than a file that lies.
		return total, fmt.Errorf("raftstore: backup: image is %d bytes, header says %d", img, hdr.ImageSize)
	}
	n, err = w.Write(trailer(h, hdr.ImageSize))
	total += int64(n)
	if err != nil {
		return total, fmt.Errorf("raftstore: backup: %w", err)
	}
	return total, nil
}

// trailer completes h with the trailer's first fields and returns the
// trailer.
func trailer(h hash.Hash, imageSize uint64) []byte {
	t := append([]byte(endMark), binary.BigEndian.AppendUint64(nil, imageSize)...)
	h.Write(t)
	return h.Sum(t)
}

// Read reads a whole backup file from r and checks it: magic, version,
// length, trailer and checksum. It copies the image to image as it
// reads; what image got may be used only when Read returns no error.
// Errors wrap ErrNotBackup, ErrVersion, ErrTruncated or ErrCorrupt, or
// are image's or r's own.
func Read(r io.Reader, image io.Writer) (Header, error) {
	h := sha256.New()
	tr := io.TeeReader(r, h)
	fixed := make([]byte, headerLen)
	if n, err := io.ReadFull(tr, fixed); err != nil {
		if n >= len(magic) && string(fixed[:len(magic)]) == magic {
			return Header{}, fmt.Errorf("%w: %d header bytes of %d", ErrTruncated, n, headerLen)
		}
		return Header{}, fmt.Errorf("%w: %d bytes, shorter than a header", ErrNotBackup, n)
	}
	if string(fixed[:8]) != magic {
		return Header{}, fmt.Errorf("%w: starts with %q", ErrNotBackup, fixed[:8])
	}
	if v := binary.BigEndian.Uint16(fixed[8:]); v != version {
		return Header{}, fmt.Errorf("%w: version %d, this binary reads %d", ErrVersion, v, version)
	}
	hdr := Header{
		AppliedIndex: binary.BigEndian.Uint64(fixed[12:]),
		AppliedTerm:  binary.BigEndian.Uint64(fixed[20:]),
		Created:      time.Unix(0, int64(binary.BigEndian.Uint64(fixed[28:]))),
		ImageSize:    binary.BigEndian.Uint64(fixed[36:]),
	}
	if hdr.ImageSize > maxImage {
		return Header{}, fmt.Errorf("%w: image length %d", ErrCorrupt, hdr.ImageSize)
	}
	id := make([]byte, binary.BigEndian.Uint16(fixed[10:]))
	if _, err := io.ReadFull(tr, id); err != nil {
		return Header{}, fmt.Errorf("%w: in the header", ErrTruncated)
	}
	hdr.NodeID = string(id)

	if n, err := io.CopyN(image, tr, int64(hdr.ImageSize)); err != nil {
		if errors.Is(err, io.EOF) {
			return Header{}, fmt.Errorf("%w: image has %d of %d bytes", ErrTruncated, n, hdr.ImageSize)
		}
		return Header{}, fmt.Errorf("raftstore: read backup: %w", err)
	}
	// The trailer is read past the hash, which then takes its first
	// fields, as the writer's did.
	tail := make([]byte, trailerLen+1)
	n, err := io.ReadFull(r, tail)
	switch {
	case err == nil:
		return Header{}, fmt.Errorf("%w: data after the trailer", ErrCorrupt)
	case n < trailerLen:
		return Header{}, fmt.Errorf("%w: trailer has %d of %d bytes", ErrTruncated, n, trailerLen)
	case !errors.Is(err, io.ErrUnexpectedEOF):
		return Header{}, fmt.Errorf("raftstore: read backup: %w", err)
	}
	tail = tail[:trailerLen]
	if string(tail[:8]) != endMark || binary.BigEndian.Uint64(tail[8:]) != hdr.ImageSize {
		return Header{}, fmt.Errorf("%w: bad trailer", ErrCorrupt)
	}
	h.Write(tail[:16])
	if !bytes.Equal(h.Sum(nil), tail[16:]) {
		return Header{}, fmt.Errorf("%w: SHA-256 mismatch", ErrCorrupt)
	}
	return hdr, nil
}
