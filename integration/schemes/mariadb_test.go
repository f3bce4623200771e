package schemes

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/history"
)

// startMariaDB starts MariaDB with database db and returns its target
// and the DSN of db.
func startMariaDB(ctx context.Context, t *testing.T, db string) (Target, string) {
	t.Helper()
	m := harness.StartMariaDB(t)
	createDB(ctx, t, m.Addr, db)
	dsn := DSN(m.Addr, db)
	return Target{Name: "MariaDB", Nodes: []Node{{Name: "mariadb", DSN: dsn}}}, dsn
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
	tgt, dsn := startMariaDB(ctx, t, "ids")
	if err := Setup(ctx, dsn, allSchemes(mix)...); err != nil {
		t.Fatal(err)
	}
	o := runMix(ctx, t, tgt, mix, 4*time.Second, nil)
	checkMix(t, o, 20, ClassConflict)
	if err := o.CheckState(ctx, dsn); err != nil {
		t.Error(err)
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
	tgt, dsn := startMariaDB(ctx, t, "ids")
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
