package model

import (
	"strconv"
	"strings"
)

// Collation is how a row table's string column compares, orders and
// keys its values. It is part of the column's definition (RowCol) and so
// of the replicated state: the keys of a table's rows (clustering key,
// unique and secondary index keys) are stored encoded by it, so a table
// keeps the collation it was created with, on every replica and across
// every restart and replay.
type Collation uint8

const (
	// CollGeneralCI is MariaDB's utf8mb4_general_ci (the collation of
	// --collation-server=utf8mb4_general_ci): each character weighs
	// GeneralCIWeight, PAD SPACE (the shorter string compares as if
	// padded with spaces). The default of a table created by this build.
	CollGeneralCI Collation = 1
	// CollBin is utf8mb4_bin (command version 9): each character weighs
	// its code point (an emoji too), PAD SPACE.
	CollBin Collation = 2
	// CollGeneralCI3 is utf8mb3_general_ci (utf8_general_ci): the weights
	// of CollGeneralCI, in a character set without the characters beyond
	// the BMP, which such a column refuses to store (1366).
	CollGeneralCI3 Collation = 3
	// CollBin3 is utf8mb3_bin (utf8_bin): CollBin's weights, utf8mb3's
	// characters.
	CollBin3 Collation = 4
)

// collNames are the collations' names as MariaDB 10.11 spells them.
var collNames = [...]string{CollLegacy: "legacy", CollGeneralCI: "utf8mb4_general_ci",
	CollBin: "utf8mb4_bin", CollGeneralCI3: "utf8mb3_general_ci", CollBin3: "utf8mb3_bin"}

// String is the collation's name as MariaDB spells it.
func (c Collation) String() string {
	if int(c) < len(collNames) {
		return collNames[c]
	}
	return "collation " + strconv.Itoa(int(c))
}

// Charset is the character set of c as MariaDB names it (utf8mb4 for
// CollLegacy, whose tables took any character).
func (c Collation) Charset() string {
	if c.MB3() {
		return "utf8mb3"
	}
	return "utf8mb4"
}

// MB3 reports a collation of utf8mb3, whose columns hold only the BMP.
func (c Collation) MB3() bool { return c == CollGeneralCI3 || c == CollBin3 }

// Bin reports a _bin collation: characters weigh their code points.
func (c Collation) Bin() bool { return c == CollBin || c == CollBin3 }

// Known reports a collation this build compares by.
func (c Collation) Known() bool { return c <= CollBin3 }

// charsetDefaults is each character set ticketd holds with its default
// collation, under the names MariaDB takes (utf8 is utf8mb3).
var charsetDefaults = map[string]Collation{
	"utf8mb4": CollGeneralCI, "utf8mb3": CollGeneralCI3, "utf8": CollGeneralCI3,
}

// LookupCharset is the default collation of the character set named cs;
// ok is false for a character set ticketd does not hold.
func LookupCharset(cs string) (c Collation, ok bool) {
	c, ok = charsetDefaults[strings.ToLower(cs)]
	return c, ok
}

// LookupCollation is the collation named name (utf8_bin is utf8mb3_bin,
// as in MariaDB); ok is false for one ticketd does not compare by.
func LookupCollation(name string) (c Collation, ok bool) {
	name = strings.ToLower(name)
	if rest, isUTF8 := strings.CutPrefix(name, "utf8_"); isUTF8 {
		name = "utf8mb3_" + rest
	}
	for c := CollGeneralCI; c <= CollBin3; c++ {
		if collNames[c] == name {
			return c, true
		}
	}
	return 0, false
}

// BinOf is the _bin collation of c's character set.
func (c Collation) BinOf() Collation {
	if c.MB3() {
		return CollBin3
	}
	return CollBin
}
