package raftstore

import "github.com/ticketd/ticketd/raftstore/logformat/formattest"

// The two fixtures of formattest nearly every test here builds its
// commands with; the others are named in full where they are used.
var (
	createDB   = formattest.CreateDB
	replaceCmd = formattest.ReplaceCmd
)
