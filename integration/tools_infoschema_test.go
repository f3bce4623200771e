package integration

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ticketd/ticketd/integration/harness"
	"github.com/ticketd/ticketd/integration/schemes"
)

// TestConnectorJMetaData runs integration/compat/MetaData.java (MariaDB
// Connector/J's DatabaseMetaData.getColumns and getIndexInfo on the
// schemes' tables and a sequence) against MariaDB 10.11 and against
// ticketd and requires the same lines. Before, getColumns failed on
// ticketd with 1235 "doesn't yet support 'this expression'".
func TestConnectorJMetaData(t *testing.T) {
	java, src := connectorJProgram(t, "MetaData.java")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	maria := harness.StartMariaDB(t)
	want := runConnectorJ(ctx, t, java, src, maria.Addr, "cj")
	maria.Stop()
	node := harness.Start(ctx, t, harness.Options{})
	got := runConnectorJ(ctx, t, java, src, node.MySQLAddr(), "cj")
	compareLines(t, "Connector/J DatabaseMetaData", want, got, "getColumns tiny_id_info: 10 rows", "getIndexInfo Tickets64: 2 rows")
}

// TestSQLAlchemyReflection runs integration/compat/Reflect.py
// (SQLAlchemy's inspect(): get_columns, get_pk_constraint, get_indexes,
// get_unique_constraints, has_table, with Debian's python3-sqlalchemy
// and python3-pymysql) on the schemes' tables against MariaDB 10.11 and
// against ticketd and requires the same lines. Before, has_table failed
// on ticketd with 1235 (COUNT(*) of information_schema.tables).
func TestSQLAlchemyReflection(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import sqlalchemy, pymysql").Run(); err != nil {
		requireClient(t, "Debian's python3-sqlalchemy and python3-pymysql are not installed ("+err.Error()+")")
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "integration/compat/Reflect.py")
	ddl := strings.Join(append(schemes.SetupStatements(schemes.Ticket, schemes.Leaf, schemes.Tinyid, schemes.UidGen),
		schemes.SequenceDDL("s", 1000)), "\n")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(addr string) string {
		t.Helper()
		host, port, _ := net.SplitHostPort(addr)
		cmd := exec.CommandContext(ctx, python, src)
		cmd.Env = append(os.Environ(), "TICKETD_HOST="+host, "TICKETD_PORT="+port, "TICKETD_USER=root",
			"TICKETD_PASSWORD=", "TICKETD_DB=reflect")
		cmd.Stdin = strings.NewReader(ddl)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("Reflect.py against %s: %v\n%s\n%s", addr, err, out.String(), errOut.String())
		}
		return out.String()
	}
	maria := harness.StartMariaDB(t)
	want := run(maria.Addr)
	maria.Stop()
	node := harness.Start(ctx, t, harness.Options{})
	got := run(node.MySQLAddr())
	compareLines(t, "SQLAlchemy reflection", want, got,
		"Tickets64 pk: {'constrained_columns': ['id'], 'name': None}", "tiny_id_info has_table: True")
}

// compareLines requires got to have want's lines (version lines aside),
// and want to have each of must, so that two servers failing alike do not
// pass.
func compareLines(t *testing.T, what, want, got string, must ...string) {
	t.Helper()
	for _, m := range must {
		if !strings.Contains(want, m+"\n") {
			t.Errorf("%s: MariaDB's output lacks %q:\n%s", what, m, want)
		}
	}
	w, g := strings.Split(dropVersion(want), "\n"), strings.Split(dropVersion(got), "\n")
	same := 0
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a == b {
			same++
			continue
		}
		t.Errorf("%s, line %d differs:\n  mariadb: %s\n  ticketd: %s", what, i+1, a, b)
	}
	t.Logf("%s: %d/%d lines the same", what, same, len(w))
}
