package schemes

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
)

// startMariaDB starts MariaDB with database db and returns it, its
// target and the DSN of db.
func startMariaDB(ctx context.Context, t *testing.T, db string) (*harness.MariaDB, Target, string) {
	t.Helper()
	m := harness.StartMariaDB(t)
	createDB(ctx, t, m.Addr, db)
	dsn := DSN(m.Addr, db)
	return m, Target{Name: "MariaDB", Nodes: []Node{{Name: "mariadb", DSN: dsn}}}, dsn
}

func createDB(ctx context.Context, t *testing.T, addr, db string) {
	t.Helper()
	c, err := sql.Open("mysql", DSN(addr, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatalf("CREATE DATABASE %s: %v", db, err)
	}
}

// TestSchemesMariaDB runs every scheme's clients concurrently against
// MariaDB InnoDB, the reference: it validates the clients (they must
// get disjoint, increasing segments from a server that is known to
// serialise them) and the range checker on real histories, and checks
// the final rows against what was handed out. Only Tinyid's exhausted
// retries are allowed as errors.
func TestSchemesMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, tgt, dsn := startMariaDB(ctx, t, "ids")
	if err := Setup(ctx, dsn, allSchemes(mix)...); err != nil {
		t.Fatal(err)
	}
	o := runMix(ctx, t, tgt, mix, 4*time.Second, nil)
	checkMix(t, o, 20, ClassConflict)
	if err := o.CheckState(ctx, dsn); err != nil {
		t.Error(err)
	}

	// Failover: with a dead node first in the list, clients that start
	// there move on to the next node and every launch succeeds there.
	dead := Node{Name: "dead", DSN: DSN(harness.FreeAddr(t), "ids")}
	h := history.New()
	st, err := Run(ctx, Target{Name: "failover", Nodes: []Node{dead, tgt.Nodes[0]}},
		Config{Scheme: UidGen, Clients: 2, Ops: 10, Failover: true}, h)
	if err != nil {
		t.Fatal(err)
	}
	if st.OK != 20 || st.Failed != 0 || st.ConnFails == 0 {
		t.Errorf("failover: %d ok, %d failed, %d failed connects; want 20, 0 and some", st.OK, st.Failed, st.ConnFails)
	}
	for _, op := range h.Ops() {
		if op.Node != tgt.Nodes[0].Name {
			t.Errorf("failover: an allocation recorded on node %q", op.Node)
			break
		}
	}
	if vs := h.Check(); len(vs) > 0 {
		t.Errorf("failover: %s", history.Report(vs, 5))
	}
}

// TestBrokenLeafCaught shows the workload and the checker have teeth: a
// Leaf server that runs its UPDATE and SELECT outside one transaction
// (autocommit on) lets another server's UPDATE in between, and two
// servers then compute the same segment. Against MariaDB, eight such
// servers must produce an overlap that history.Check reports.
func TestBrokenLeafCaught(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, tgt, dsn := startMariaDB(ctx, t, "ids")
	if err := Setup(ctx, dsn, leafNoTx); err != nil {
		t.Fatal(err)
	}
	h := history.New()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		st, err := Run(ctx, tgt, Config{Scheme: leafNoTx, Clients: 8, Ops: 50}, h)
		if err != nil {
			t.Fatal(err)
		}
		if st.Failed > 0 {
			t.Fatalf("broken Leaf: %d errors: %v", st.Failed, st.Samples)
		}
		if vs := h.Check(); len(vs) > 0 {
			t.Logf("caught after %d fetches: %s", len(h.Ops()), history.Report(vs, 1))
			for _, v := range vs {
				if v.Kind != history.Overlap && v.Kind != history.NotIncreasing {
					t.Errorf("unexpected kind %s", v)
				}
			}
			return
		}
	}
	t.Fatalf("%d fetches of a Leaf without its transaction and no overlap detected", len(h.Ops()))
}

// TestSchemesMariaDBKill runs the mix against MariaDB, kills mariadbd
// with SIGKILL in the middle and restarts it on the same data: the
// clients' error paths (a statement failing mid-transaction, a COMMIT
// whose outcome is unknown, reconnecting) under a real crash of the
// reference server. InnoDB is durable (innodb_flush_log_at_trx_commit=1
// by default), so nothing acknowledged may come back: the histories must
// stay clean across the crash and the rows must hold every id handed
// out. This is TestSchemesTicketdKill's reference run.
//
// Except for sequences: MariaDB 10.11 hands out some NEXTVAL values
// again after a SIGKILL even with innodb_flush_log_at_trx_commit=1 (in
// 5 of 7 runs here, 1 to ~100 values, seen on the NOCACHE sequence: its
// row update is evidently not made durable before NEXTVAL answers). That is
// logged, not failed; ticketd's kill test holds sequences to DESIGN §5.3.
func TestSchemesMariaDBKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, tgt, dsn := startMariaDB(ctx, t, "ids")
	if err := Setup(ctx, dsn, allSchemes(mix)...); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Mix)
	go func() { done <- runMix(ctx, t, tgt, mix, 8*time.Second, nil) }()
	time.Sleep(2 * time.Second)
	m.Kill()
	killed := time.Now()
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Logf("mariadbd killed at %s, answering again after %v", killed.Format("15:04:05.000"), time.Since(killed).Round(time.Millisecond))
	o := <-done
	// 1927/1053/2013-style refusals during shutdown do not happen on a
	// SIGKILL: in-flight statements lose their connection.
	checkMixLax(t, o, []string{NextVal.Counter(), NextValNoCache.Counter()}, 20, ClassConflict, ClassConn)
	checkServedAfter(t, o, killed)
	if err := o.CheckState(ctx, dsn); err != nil {
		t.Error(err)
	}
}
