package metrics

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ticketd/ticketd/raftstore"
	"github.com/ticketd/ticketd/sql"
	"github.com/ticketd/ticketd/ticket/alloc"
	"github.com/ticketd/ticketd/wire"
)

var (
	_ alloc.Observer     = (*Ticket)(nil)
	_ wire.Observer      = (*Wire)(nil)
	_ raftstore.Observer = (*Store)(nil)
	_ Node               = (*raftstore.Node)(nil)
)

func TestObserversCount(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg)
	m.Ticket.Allocated("flickr", "Tickets64", 3, time.Millisecond, false)
	m.Ticket.Allocated("flickr", "Tickets64", 2, time.Millisecond, true)
	m.Ticket.Allocated("flickr", "Tickets32", 0, time.Millisecond, false) // explicit ids only
	m.Ticket.BatchProposed(20, time.Millisecond, nil)
	m.Ticket.BatchProposed(1, time.Millisecond, errors.New("no quorum"))
	m.Ticket.CompareAndSet(true)
	m.Ticket.CompareAndSet(true)
	m.Ticket.CompareAndSet(false)
	m.Wire.Statement(wire.StmtReplace)
	m.Wire.Statement(wire.StmtReplace)
	m.Wire.Statement(wire.StmtKind(200))
	m.Wire.StatementError(1146)
	m.Wire.QueryPlanned(sql.FromTemplate)
	m.Wire.QueryPlanned(sql.FromTemplate)
	m.Wire.QueryPlanned(sql.FromParser)
	m.Wire.QueryPlanned(sql.PlanSource(200))
	m.Wire.ConnOpened()
	m.Wire.ConnOpened()
	m.Wire.ConnClosed()
	m.Store.SnapshotPersisted(time.Millisecond, errors.New("disk full"))

	for _, c := range []struct {
		got  prometheus.Collector
		want float64
	}{
		{m.Ticket.ids.get(tableKey{"flickr", "Tickets64"}), 5},
		{m.Ticket.hits, 1},
		{m.Ticket.batches[0], 1},
		{m.Ticket.batches[1], 1},
		{m.Ticket.cas[0], 1},
		{m.Ticket.cas[1], 2},
		{m.Wire.stmts[wire.StmtReplace], 2},
		{m.Wire.other, 1},
		{m.Wire.errs.get(1146), 1},
		{m.Wire.plans[sql.FromCache], 0},
		{m.Wire.plans[sql.FromTemplate], 2},
		{m.Wire.plans[sql.FromParser], 1},
		{m.Wire.connsOpen, 1},
		{m.Wire.connsTotal, 2},
		{m.Store.snapshots[1], 1},
	} {
		if v := testutil.ToFloat64(c.got); v != c.want {
			t.Errorf("%v: got %v, want %v", c.got, v, c.want)
		}
	}
	if n, err := testutil.GatherAndCount(reg, "ticketd_ids_allocated_total"); err != nil || n != 1 {
		t.Errorf("ids series: %d, %v; want 1 (a table with no ids gets none)", n, err)
	}
}

func TestTableLabelsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	for i := range MaxTables + 50 {
		m.Ticket.Allocated("db", fmt.Sprintf("t%d", i), 1, 0, false)
	}
	n, err := testutil.GatherAndCount(reg, "ticketd_ids_allocated_total")
	if err != nil || n != MaxTables+1 {
		t.Fatalf("series: %d, %v; want %d", n, err, MaxTables+1)
	}
	if v := testutil.ToFloat64(m.Ticket.ids.get(tableKey{"db", "t120"})); v != 50 {
		t.Errorf("other: %v, want 50", v)
	}
	// A table seen before the cap keeps its own series.
	if v := testutil.ToFloat64(m.Ticket.ids.get(tableKey{"db", "t0"})); v != 1 {
		t.Errorf("t0: %v, want 1", v)
	}
}
