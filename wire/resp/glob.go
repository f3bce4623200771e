package resp

// match reports whether s matches a Redis glob pattern as KEYS and SCAN
// MATCH read it (Redis's stringmatchlen): '*' any run, '?' one byte,
// '[...]' a class with ranges, '^' negation and '\' escapes, '\' escaping
// any byte. github.com/tidwall/match (redcon's) has no classes, which
// key patterns such as "order:2026112[0-9]" use.
func match(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for len(pattern) > 1 && pattern[1] == '*' {
				pattern = pattern[1:]
			}
			if len(pattern) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if match(pattern[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			var ok bool
			pattern, ok = matchClass(pattern[1:], s[0])
			if !ok {
				return false
			}
			s = s[1:]
			continue
		case '\\':
			if len(pattern) >= 2 {
				pattern = pattern[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || s[0] != pattern[0] {
				return false
			}
			s = s[1:]
		}
		pattern = pattern[1:]
	}
	return len(s) == 0
}

// matchClass matches c against a class whose '[' is consumed; it returns
// the pattern after the class. An unterminated class runs to the end, as
// in Redis.
func matchClass(p string, c byte) (rest string, ok bool) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	found := false
	for len(p) > 0 && p[0] != ']' {
		switch {
		case p[0] == '\\' && len(p) >= 2:
			p = p[1:]
			if p[0] == c {
				found = true
			}
			p = p[1:]
		case len(p) >= 3 && p[1] == '-':
			lo, hi := p[0], p[2]
			if lo > hi {
				lo, hi = hi, lo
			}
			if c >= lo && c <= hi {
				found = true
			}
			p = p[3:]
		default:
			if p[0] == c {
				found = true
			}
			p = p[1:]
		}
	}
	if len(p) > 0 {
		p = p[1:] // the ']'
	}
	return p, found != not
}
