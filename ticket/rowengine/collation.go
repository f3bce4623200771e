package rowengine

import (
	"encoding/binary"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ticketd/ticketd/ticket/model"
	"golang.org/x/text/unicode/norm"
)

// aggColl is the collation MariaDB compares two columns' values by
// (DTCollation::aggregate, both of derivation IMPLICIT): of different
// character sets, utf8mb4's (the superset); of one, the _bin one.
func aggColl(a, b model.Collation) model.Collation {
	switch {
	case a == b || a == model.CollLegacy || b == model.CollLegacy:
		return a
	case a.MB3() != b.MB3():
		if a.MB3() {
			return b
		}
		return a
	case b.Bin():
		return b
	}
	return a
}

// GeneralCIWeight is r's weight in MariaDB's utf8mb4_general_ci: what it
// equals to and orders by. Derived, not copied: the upper case of the
// character's base letter (its canonical decomposition's first
// character) for Latin, Greek and Cyrillic letters, the upper case of
// the character itself elsewhere, with the differences of MariaDB's
// table, which dates from Unicode 3.0 (TestGeneralCIWeights in
// integration checks every BMP character against MariaDB's own
// WEIGHT_STRING):
//
//   - a character beyond the BMP (an emoji) weighs U+FFFD: all of them
//     are equal to each other;
//   - ß weighs S; ϲ (lunate sigma) weighs Σ, its upper case before
//     Unicode 4.0;
//   - Й and й keep their breve (they are not И);
//   - a character whose canonical decomposition is a single other
//     character (U+1F71 ά oxia, U+0340) or that is excluded from
//     composition is not decomposed;
//   - the case pairs Unicode added after 3.0 (noFoldRanges) weigh as
//     themselves.
//
// The weights are stored state (the keys of these tables' rows): they
// must never change, whatever Unicode version Go and x/text bring;
// TestGeneralCIWeightsPinned holds their digest.
func GeneralCIWeight(r rune) rune {
	if r < 0 || r > 0xFFFF {
		return utf8.RuneError
	}
	return rune(generalCITable()[r])
}

// generalCITable is GeneralCIWeight of every BMP character, computed once
// (the derivation normalises, too slow for every comparison).
var generalCITable = sync.OnceValue(func() *[0x10000]uint16 {
	var t [0x10000]uint16
	for r := range rune(0x10000) {
		t[r] = uint16(deriveGeneralCI(r))
	}
	return &t
})

// noFoldRanges are the BMP characters that MariaDB's utf8mb4_general_ci
// weighs as themselves where Go's Unicode data (newer than MariaDB's
// table) has an upper case: mostly lower-case letters whose capital
// Unicode added after 3.0 (Ƀ for ƀ, Ⱥ and the Latin Extended-C/D
// blocks, Cyrillic Supplement, Georgian Mkhedruli's capitals,
// Glagolitic, Coptic, Cherokee's lower case). Found by comparing with
// MariaDB over the BMP; a range may take in characters that weigh as
// themselves anyway.
var noFoldRanges = [...][2]rune{
	{0x0180, 0x0180}, {0x019A, 0x019E}, {0x023C, 0x0252}, {0x025C, 0x025C},
	{0x0261, 0x0261}, {0x0265, 0x0266}, {0x026A, 0x026C}, {0x0271, 0x0271},
	{0x027D, 0x027D}, {0x0282, 0x0282}, {0x0287, 0x0287}, {0x0289, 0x0289},
	{0x028C, 0x028C}, {0x029D, 0x029E}, {0x0371, 0x0385}, {0x03D7, 0x03D9},
	{0x03F3, 0x03FB}, {0x048B, 0x048B}, {0x04C6, 0x04C6}, {0x04CA, 0x04CA},
	{0x04CE, 0x04CF}, {0x04F7, 0x04F7}, {0x04FB, 0x052F}, {0x10D0, 0x1D8E},
	{0x1EFB, 0x1EFF}, {0x1FC1, 0x1FC1}, {0x1FCD, 0x1FCF}, {0x1FDD, 0x1FDF},
	{0x1FED, 0x1FED}, {0x214E, 0x214E}, {0x2184, 0x2184}, {0x2C30, 0xABBF},
}

func deriveGeneralCI(r rune) rune {
	switch r {
	case 0x00DF: // ß
		return 'S'
	case 0x03F2: // ϲ
		return 0x03A3
	}
	if r >= 0xD800 && r <= 0xDFFF {
		return r // surrogates: no character, never in a Go string
	}
	for _, nr := range noFoldRanges {
		if r >= nr[0] && r <= nr[1] {
			return r
		}
	}
	base := r
	if (r < 0x0500 || (r >= 0x1E00 && r < 0x2000)) && r != 0x0419 && r != 0x0439 {
		s := string(r)
		if norm.NFC.String(s) == s {
			if d := norm.NFD.String(s); d != s {
				base, _ = utf8.DecodeRuneInString(d)
			}
		}
	}
	if u := unicode.ToUpper(base); u <= 0xFFFF {
		return u
	}
	return base
}

// The key encoding of every collation but CollLegacy (collKey): the
// weights (code points in a _bin collation), as UTF-8
// (whose byte order is the code points' order), with MariaDB's PAD SPACE
// built in so that comparing two keys byte by byte is comparing the
// strings. PAD SPACE compares the shorter string as if followed by
// spaces without end: 'a' = 'a  ', 'a\t' < 'a' < 'a b'. So a run of k
// spaces is written with what follows it, and the end as "spaces for
// ever":
//
//   - a character after no space: its weight, as UTF-8; those below
//     space start with 0x00-0x1F, those above with 0x21 or more;
//   - k > 0 spaces then a character weighing below space: 0x20, k
//     ascending (one byte 0x01-0x7E, or 0x7F and four bytes), the weight;
//   - the end (trailing spaces are not written): 0x20 0x80;
//   - k > 0 spaces then a character weighing above space: 0x20, k
//     descending (one byte 0xFF-k, 0x82-0xFE, or 0x81 and four bytes of
//     ^k), the weight.
//
// The end never starts another unit, so a key is never a prefix of
// another and the keys of several columns concatenate in order.
const (
	collSpace    = 0x20
	collEnd      = 0x80
	collShortMax = 0x7E
)

// appendCollKey appends s's key in collation c.
func appendCollKey(b []byte, c model.Collation, s string) []byte {
	if c == model.CollLegacy {
		return appendEscaped(b, legacyFold(s))
	}
	s = strings.TrimRight(s, " ")
	table := generalCITable()
	bin := c.Bin()
	spaces := 0
	for _, r := range s {
		w := r
		switch {
		case bin:
		case r <= 0xFFFF:
			w = rune(table[r])
		default:
			w = utf8.RuneError
		}
		if w == collSpace {
			spaces++
			continue
		}
		if spaces > 0 {
			b = append(b, collSpace)
			switch {
			case w < collSpace && spaces <= collShortMax:
				b = append(b, byte(spaces))
			case w < collSpace:
				b = binary.BigEndian.AppendUint32(append(b, 0x7F), uint32(spaces))
			case spaces <= collShortMax-1:
				b = append(b, byte(0xFF-spaces))
			default:
				b = binary.BigEndian.AppendUint32(append(b, 0x81), ^uint32(spaces))
			}
			spaces = 0
		}
		b = utf8.AppendRune(b, w)
	}
	return append(b, collSpace, collEnd)
}

// compareColl compares a and b as collation c does: -1, 0 or 1. For
// every collation but CollLegacy it is MariaDB's own walk (what appendCollKey's byte order
// agrees with): weight by weight, then the rest of the longer string
// against spaces.
func compareColl(c model.Collation, a, b string) int {
	if c == model.CollLegacy {
		return strings.Compare(legacyFold(a), legacyFold(b))
	}
	bin := c.Bin()
	for len(a) > 0 && len(b) > 0 {
		wa, na := nextWeight(bin, a)
		wb, nb := nextWeight(bin, b)
		if wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	if len(a) > 0 {
		return againstSpaces(bin, a)
	}
	if len(b) > 0 {
		return -againstSpaces(bin, b)
	}
	return 0
}

// nextWeight is the weight of s's first character and its length: in a
// _bin collation (bin) its code point.
func nextWeight(bin bool, s string) (rune, int) {
	if c := s[0]; c < utf8.RuneSelf {
		if 'a' <= c && c <= 'z' && !bin {
			c -= 'a' - 'A'
		}
		return rune(c), 1
	}
	r, n := utf8.DecodeRuneInString(s)
	if bin {
		return r, n
	}
	if r > 0xFFFF {
		return utf8.RuneError, n
	}
	return rune(generalCITable()[r]), n
}

// againstSpaces compares the rest of a longer string with the spaces
// PAD SPACE gives the shorter one.
func againstSpaces(bin bool, s string) int {
	for len(s) > 0 {
		w, n := nextWeight(bin, s)
		switch {
		case w < collSpace:
			return -1
		case w > collSpace:
			return 1
		}
		s = s[n:]
	}
	return 0
}

// likeRunes is s as LIKE compares it in collation c: character by
// character (no padding), each by its weight.
func likeRunes(c model.Collation, s string) []rune {
	switch {
	case c == model.CollLegacy:
		return []rune(strings.ToLower(s))
	case c.Bin():
		return []rune(s)
	}
	out := make([]rune, 0, len(s))
	for _, r := range s {
		out = append(out, GeneralCIWeight(r))
	}
	return out
}

// likeChar is one character of a LIKE pattern: raw is the character
// itself (what % _ and the escape are recognised by), w what it matches
// by (its weight, or its lower case in CollLegacy).
type likeChar struct{ raw, w rune }

// likePattern is the pattern p of LIKE in collation c. In CollLegacy the
// metacharacters were recognised in the lower-cased pattern: raw is that.
func likePattern(c model.Collation, p string) []likeChar {
	if c == model.CollLegacy {
		p = strings.ToLower(p)
	}
	out := make([]likeChar, 0, len(p))
	for _, r := range p {
		w := r
		if c != model.CollLegacy && !c.Bin() {
			w = GeneralCIWeight(r)
		}
		out = append(out, likeChar{raw: r, w: w})
	}
	return out
}

// likeMatch is LIKE of s (likeRunes) against p: % is any run of
// characters, _ one character, esc makes the next character literal, as
// MariaDB recognises them: by the pattern's characters themselves (with
// ESCAPE 'x', 'X' is a letter). Trailing spaces count (LIKE does not
// pad).
func likeMatch(s []rune, p []likeChar, esc rune) bool {
	for len(p) > 0 {
		switch c := p[0]; {
		case c.raw == '%':
			for len(p) > 0 && p[0].raw == '%' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if likeMatch(s[i:], p, esc) {
					return true
				}
			}
			return false
		case c.raw == '_':
			if len(s) == 0 {
				return false
			}
			s, p = s[1:], p[1:]
		default:
			if esc != 0 && c.raw == esc && len(p) > 1 {
				p = p[1:]
				c = p[0]
			}
			if len(s) == 0 || s[0] != c.w {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return len(s) == 0
}
