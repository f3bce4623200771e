package wire

import (
	_ "embed"
	"strings"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// mariadbVariablesText lists MariaDB 10.11's system variables.
//
//go:embed mariadb_variables.txt
var mariadbVariablesText string

// mariadbVariables is the set of mariadbVariablesText's names.
var mariadbVariables = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(mariadbVariablesText, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			m[l] = true
		}
	}
	return m
}()

// unknownVariable is the error for a system variable ticketd does not
// have: 1235 when MariaDB has it (setting or reading it there would
// succeed, so 1193 would be a different answer), else 1193 as MariaDB
// gives.
func unknownVariable(name string) error {
	if mariadbVariables[strings.ToLower(name)] {
		return unsupported("the system variable " + name)
	}
	return mysqlerr.UnknownSystemVar(name)
}
