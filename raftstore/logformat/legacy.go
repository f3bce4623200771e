package logformat

import (
	"errors"
	"fmt"
)

// Old generations of the log format: encodings that no build writes once
// its cluster runs a given command version, and that this build still
// reads because a cluster it joins or replaces may hold them. Each lives
// in a legacy*.go file of its own, named by its generation below, so that
// the day the floor rises past it the file is deleted and nothing else
// (the retirement rule, DESIGN §4g):
//
//   - legacy_json.go: row parts (a row command's WHERE and SET, a row
//     table's columns and keys, a result's row images) as JSON of the Go
//     structs, all that clusters below command version 7 write
//     (genJSON). The builds at 544f168 (before command versions) and at
//     fd4302c (version 9, while its cluster runs below 7) write it, in
//     log entries, restores, state files, snapshots and backups.
//   - legacy_rows.go: the version-2 fields of a row command (Sets,
//     Where: UPDATE and DELETE on a row table before the row engine),
//     which clusters below command version 3 write (genRowsV2): the build
//     at 544f168 writes nothing else for them. Only log entries carry
//     them. ticket/rowengine applies them (its legacy*.go).
//
// Not a generation of the format, and not retired by any floor: a row
// table created below command version 8 has no collation field
// (model.CollLegacy) and keeps its older folding as long as it exists,
// in every encoding; only dropping and re-creating the table changes it.

// ErrBelowFloor is wrapped by a decoding failure on an encoding that only
// clusters below this build's Floor write: the data is sound, this build
// no longer reads it. The error (a *BelowFloorError) names the version
// and the way forward; it also wraps ErrCorrupt, which every decoding
// failure wraps.
var ErrBelowFloor = errors.New("written below this build's command version floor")

// generation is an encoding that clusters stopped writing at a command
// version.
type generation struct {
	name  string // what it is, for the error
	until uint32 // the first cluster command version that no longer writes it
}

var (
	// genJSON is the row parts as JSON (legacy_json.go).
	genJSON = generation{"row parts as JSON", FormatWireVersion}
	// genRowsV2 is a row command's version-2 form (legacy_rows.go).
	genRowsV2 = generation{"a row-table UPDATE or DELETE in its version-2 form (before the row engine)", 3}
)

// generations lists every generation this build reads, for the tests.
var generations = []generation{genJSON, genRowsV2}

// BelowFloorError is the failure of a decoder that meets an encoding of a
// generation below its floor.
type BelowFloorError struct {
	What  string // the record: "row command", "row table definition", ...
	Gen   string // the generation: "row parts as JSON", ...
	Until uint32 // clusters below this command version wrote it
	Floor uint32 // the lowest command version the decoder reads
}

func (e *BelowFloorError) Error() string {
	return fmt.Sprintf("logformat: %s holds %s, written only by clusters below command version %d; "+
		"this build reads what clusters at command version %d and up wrote (its floor): "+
		"roll the cluster forward through a build of command version %d or later that still reads it, "+
		"let every node take a snapshot with that build once the cluster runs its version, "+
		"then roll to this build (OPERATIONS.md, \"Upgrades and command versions\")",
		e.What, e.Gen, e.Until, e.Floor, e.Until)
}

// Unwrap makes the error both ErrBelowFloor and ErrCorrupt.
func (e *BelowFloorError) Unwrap() []error { return []error{ErrBelowFloor, ErrCorrupt} }

// legacy records that the decoder met generation g in what: an error when
// g is below the decoder's floor.
func (d *decoder) legacy(g generation, what string) {
	floor := d.floor
	if floor == 0 {
		floor = Floor
	}
	if d.err == nil && floor >= g.until {
		d.err = &BelowFloorError{What: what, Gen: g.name, Until: g.until, Floor: floor}
		d.b = nil
	}
}
