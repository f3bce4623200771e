//go:build !race

package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/wire"
)

// The observers run once per statement: they must not allocate.
func TestObserverAllocs(t *testing.T) {
	m := New(prometheus.NewRegistry())
	db, table := "flickr", "Tickets64"
	m.Ticket.Allocated(db, table, 1, time.Millisecond, false)
	m.Wire.StatementError(1062)
	n := testing.AllocsPerRun(1000, func() {
		m.Wire.Statement(wire.StmtReplace)
		m.Wire.QueryPlanned(sql.FromTemplate)
		m.Ticket.Allocated(db, table, 1, time.Millisecond, false)
		m.Ticket.Allocated(db, table, 1, time.Millisecond, true)
		m.Ticket.BatchProposed(10, time.Millisecond, nil)
		m.Wire.StatementError(1062)
	})
	if n != 0 {
		t.Fatalf("%v allocations per statement, want 0", n)
	}
}
