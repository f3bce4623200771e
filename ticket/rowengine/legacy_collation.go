package rowengine

import "strings"

// legacyFold is model.CollLegacy's folding, the string comparison of the
// row tables created by builds before command version 8: the value
// lower-cased with its trailing spaces removed, then compared byte by
// byte. (ticket's reservation cache folds ticket-table stubs the same
// way, for its own reason: SameStub.)
func legacyFold(s string) string { return strings.ToLower(strings.TrimRight(s, " ")) }
