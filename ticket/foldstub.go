package ticket

import "strings"

// foldStub is CollLegacy's fold: lower case, trailing spaces dropped (as
// the allocation service folds a ticket table's stubs, alloc.foldStub).
func foldStub(s string) string { return strings.ToLower(strings.TrimRight(s, " ")) }
