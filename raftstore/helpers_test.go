package raftstore

import (
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

func createTickets(db, name string) model.Command {
	return model.Command{Op: model.OpCreateTable, DB: db, Table: name, Def: formattest.Tickets64(db, name)}
}

// testLogger discards unless the tests run with -v, when Warn and above go
// to stderr (t.Log would panic for Raft goroutines outliving a test).
func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.DiscardHandler)
}

// nextIDs returns the InsertID of every result, failing on statement
// errors.
func insertIDs(t testing.TB, rs []model.Result) []uint64 {
	t.Helper()
	ids := make([]uint64, len(rs))
	for i, r := range rs {
		if r.Err != nil {
			t.Fatalf("result %d: %v", i, r.Err)
		}
		ids[i] = r.InsertID
	}
	return ids
}

// autoInc reads a table's counter through a Reader.
func autoInc(t testing.TB, r ticket.Reader, db, name string) uint64 {
	t.Helper()
	var v uint64
	err := r.View(func(s ticket.Store) error {
		tb, err := s.Table(db, name)
		if tb != nil {
			v = tb.AutoInc
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// rebootEveryStart makes each Open of cfg's node see a new boot of the
// machine (unsynced.go): a state file written without fsync is rebuilt
// from the snapshot and the log at every start.
func rebootEveryStart(cfg *Config) {
	var n atomic.Int64
	cfg.bootIDFunc = func() []byte { return fmt.Appendf(nil, "test-boot-%d", n.Add(1)) }
}
