package logformat

import "github.com/ticketd/ticketd/raftstore/logformat/formattest"

// The fixtures shared with the other package's tests (formattest).
var (
	goldenRowsCommands            = formattest.GoldenRowsCommands
	goldenUpsertCommands          = formattest.GoldenUpsertCommands
	goldenCollationCommands       = formattest.GoldenCollationCommands
	goldenColumnCollationCommands = formattest.GoldenColumnCollationCommands
	goldenRowTable                = formattest.GoldenRowTable
	goldenResults                 = formattest.GoldenResults
	rowsSeedCommands              = formattest.RowsSeedCommands
	legacyDef                     = formattest.LegacyDef
	tickets64                     = formattest.Tickets64
	createDB                      = formattest.CreateDB
	replaceCmd                    = formattest.ReplaceCmd
	seqSeedCommands               = formattest.SeqSeedCommands
	replaceBatch                  = formattest.ReplaceBatch
)
