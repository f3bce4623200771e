// Package sql turns query text into ticketd's small, closed set of plans
// (see Plan), using the TiDB parser. It is pure: no I/O, no catalog. Plans
// are cached by query text because drivers send the same few strings over
// and over.
package sql
