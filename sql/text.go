package sql

import "strings"

// These helpers only skip comments, quotes and whitespace around text the
// TiDB parser has already delimited; they do not parse SQL.

// commentAt reports the length of the comment starting at s[i], 0 if none.
// An unterminated comment runs to the end.
func commentAt(s string, i int) int {
	switch {
	case s[i] == '#':
		return lineCommentLen(s, i)
	case strings.HasPrefix(s[i:], "--") && (i+2 == len(s) || s[i+2] <= ' '):
		// MySQL needs whitespace or a control character after "--".
		return lineCommentLen(s, i)
	case strings.HasPrefix(s[i:], "/*"):
		if j := strings.Index(s[i+2:], "*/"); j >= 0 {
			return j + 4
		}
		return len(s) - i
	}
	return 0
}

func lineCommentLen(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return j + 1
	}
	return len(s) - i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// trimLabel cuts whitespace and comments after an expression: the parser's
// field text runs up to the next comma or keyword, but MySQL's label
// stops at the expression's last token.
func trimLabel(s string) string {
	if !strings.ContainsAny(s, "#-/") {
		return strings.TrimRightFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
	}
	end := 0 // just after the last byte that is neither space nor comment
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == '\'' || c == '"' || c == '`':
			i = quotedEnd(s, i)
			end = i
			continue
		}
		if n := commentAt(s, i); n > 0 {
			i += n
			continue
		}
		i++
		end = i
	}
	return s[:end]
}

// quotedEnd returns the index just after the quoted string or identifier
// that starts at s[i]. A doubled quote is part of the string; so is a quote
// after a backslash, except in identifiers.
func quotedEnd(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// skipBlank returns the index of the first byte of s[i:] that is neither
// whitespace nor in a comment.
func skipBlank(s string, i int) int {
	for i < len(s) {
		if isSpace(s[i]) {
			i++
			continue
		}
		n := commentAt(s, i)
		if n == 0 {
			break
		}
		i += n
	}
	return i
}

// hasComment reports whether a query the parser found no statement in
// holds a comment, rather than being empty.
func hasComment(s string) bool {
	for i := 0; i < len(s); i++ {
		if commentAt(s, i) > 0 {
			return true
		}
	}
	return false
}

// leadingWords returns the first n words of a statement's text, upper
// case, to name it in an error.
func leadingWords(s string, n int) string {
	var words []string
	i := 0
	for len(words) < n {
		i = skipBlank(s, i)
		j := i
		for j < len(s) && (s[j] == '_' || isAlnum(s[j])) {
			j++
		}
		if j == i {
			break
		}
		words = append(words, strings.ToUpper(s[i:j]))
		i = j
	}
	return strings.Join(words, " ")
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
