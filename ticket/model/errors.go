package model

import "github.com/ticketd/ticketd/sql/mysqlerr"

// NoTable is MariaDB's 1146 for db.name.
func NoTable(db, name string) *Error {
	return mysqlerr.NoSuchTable(db, name)
}

// DupEntry is MariaDB's 1062 for the value val of key.
func DupEntry(val, key string) *Error {
	return mysqlerr.New(mysqlerr.CodeDupEntry, "Duplicate entry '%s' for key '%s'", val, key)
}

// Noted is the answer to an IF [NOT] EXISTS statement that did nothing:
// the error it would have been, as a note.
func Noted(e *Error) Result {
	return Result{Warnings: []Warning{{Level: "Note", Code: e.Code, Message: e.Message}}}
}
