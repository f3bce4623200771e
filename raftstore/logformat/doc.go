// Package logformat owns ticketd's log format: how the commands of package
// ticket, their batches, their results, a table of the state file and a
// snapshot's tables and key space are written as bytes and read back, and
// the command-version tables that say which builds decode and apply each
// command as this one does (Version). What is written here is in every
// Raft log, snapshot and state file, and crosses the wire between builds
// of different versions: it never changes for a given version (the golden
// files of testdata hold the bytes), and a new field, op or value kind
// raises CommandVersion (versions.go).
//
// The log format: a batch is a version byte, a count and the commands,
// each an op byte, a presence mask and the present fields, packed by hand
// (codec.go): the ticket commands of the hot path decode in about a
// microsecond. The row-table parts (a command's WHERE and SET, a table's
// columns and keys, a result's row images) are messages of numbered
// fields in Protocol Buffers' wire format, written and read by hand with
// protowire (codec_wire.go, whose comment is their schema): renaming a Go
// field changes nothing written, a field this build does not know stops
// the decoder instead of being skipped, and golden files in testdata hold
// entries of earlier builds, which must decode to the same commands, and
// this build's encodings, which must not change. Builds before command
// version 7 wrote these parts as JSON of the Go structs; this build reads
// both (JSON begins with '{' or '[', which no numbered-field message
// does) and writes JSON while the cluster runs below version 7, so that
// no member meets a part it cannot read (FormatAt). Such old generations
// live in legacy*.go files of their own, read down to this build's Floor
// and refused below it; legacy.go lists them, and DESIGN §4g says when one
// may leave.
//
// It knows the domain (package ticket) and nothing of replication: no
// Raft, no bbolt, no Node. How a cluster agrees on its version, when an
// entry is proposed and how the state machine applies it are raftstore's;
// raftstore calls this package for the bytes.
package logformat
