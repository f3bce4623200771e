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
)

// connectorJ is Debian's MariaDB Connector/J (libmariadb-java), which
// make compat uses too.
const connectorJ = "/usr/share/java/mariadb-java-client.jar"

// TestConnectorJParams runs integration/compat/TypedParams.java (MariaDB
// Connector/J with useServerPrepStmts=true: a binary parameter of each
// JDBC type, long data, binary and text rows back) against MariaDB 10.11
// and against ticketd and requires the same output line for every
// statement. Before, its first INSERT (UidGenerator's LAUNCH_DATE through
// setDate) failed on ticketd with 1292.
//
// TICKETD_TYPEDPARAMS_EXPECTED=1 rewrites compat/typedparams.expected,
// MariaDB's output (less the version line), which make compat compares
// ticketd's with (compat/typedparams.sh).
func TestConnectorJParams(t *testing.T) {
	java, src := connectorJProgram(t, "TypedParams.java")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	maria := harness.StartMariaDB(t)
	want := runConnectorJ(ctx, t, java, src, maria.Addr, "cj")
	maria.Stop()
	if os.Getenv("TICKETD_TYPEDPARAMS_EXPECTED") == "1" {
		var keep []string
		for _, l := range strings.SplitAfter(want, "\n") {
			if !strings.HasPrefix(l, "version: ") {
				keep = append(keep, l)
			}
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(src), "typedparams.expected"), []byte(strings.Join(keep, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	node := harness.Start(ctx, t, harness.Options{})
	got := runConnectorJ(ctx, t, java, src, node.MySQLAddr(), "cj")
	compareLines(t, "Connector/J typed parameters", want, got)
}

// runConnectorJ runs the Java program src (one source file, which java
// compiles and runs) with Connector/J against the server at addr, its
// database db, and returns what it printed; the test fails if it fails.
// The Connector/J tests run theirs so against MariaDB and ticketd alike.
func runConnectorJ(ctx context.Context, t *testing.T, java, src, addr, db string) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.CommandContext(ctx, java, "-cp", connectorJ, src)
	cmd.Env = append(os.Environ(), "TICKETD_HOST="+host, "TICKETD_PORT="+port, "TICKETD_USER=root",
		"TICKETD_PASSWORD=", "TICKETD_DB="+db)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s against %s: %v\n%s\n%s", filepath.Base(src), addr, err, out.String(), errOut.String())
	}
	return out.String()
}

// dropVersion removes the driver's version line and joins a statement's
// row lines onto it, so that lines number statements.
func dropVersion(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "version: "):
		case strings.HasPrefix(l, "    (") && len(lines) > 0:
			lines[len(lines)-1] += " " + strings.TrimSpace(l)
		default:
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestMysqliParams runs integration/compat/typedparams.php (PHP mysqli
// with mysqlnd's native prepared statements: doubles, a blob as long
// data with its NULL bit set, re-executions without parameter types)
// against MariaDB 10.11 and against ticketd and requires the same
// output. Before, the long-data blob was stored as NULL.
func TestMysqliParams(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		requireClient(t, "php is not installed (apt-get install php-cli php-mysql)")
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "integration/compat/typedparams.php")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(addr string) string {
		t.Helper()
		host, port, _ := net.SplitHostPort(addr)
		cmd := exec.CommandContext(ctx, php, src)
		cmd.Env = append(os.Environ(), "TICKETD_HOST="+host, "TICKETD_PORT="+port, "TICKETD_USER=root",
			"TICKETD_PASSWORD=", "TICKETD_DB=php")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("typedparams.php against %s: %v\n%s", addr, err, out)
		}
		return dropVersion(string(out))
	}
	maria := harness.StartMariaDB(t)
	want := run(maria.Addr)
	maria.Stop()
	node := harness.Start(ctx, t, harness.Options{})
	if got := run(node.MySQLAddr()); got != want {
		t.Errorf("mysqli typed parameters differ\nmariadb:\n%s\nticketd:\n%s", want, got)
	}
	t.Logf("mysqli typed parameters, MariaDB's output:\n%s", want)
}

// connectorJProgram returns the java command and the path of
// integration/compat/name, a program run with MariaDB Connector/J by
// runConnectorJ; it skips (fails in CI) where Java or Connector/J is
// missing.
func connectorJProgram(t *testing.T, name string) (java, src string) {
	t.Helper()
	java, err := exec.LookPath("java")
	if _, serr := os.Stat(connectorJ); err != nil || serr != nil {
		requireClient(t, "java or libmariadb-java is not installed (apt-get install default-jre-headless libmariadb-java)")
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return java, filepath.Join(root, "integration/compat", name)
}

// requireClient skips a test whose client is not installed, or fails it
// where TICKETD_REQUIRE_CLIENTS=1 (CI, which installs them).
func requireClient(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("TICKETD_REQUIRE_CLIENTS") == "1" {
		t.Fatalf("%s and TICKETD_REQUIRE_CLIENTS=1", why)
	}
	t.Skipf("%s; set TICKETD_REQUIRE_CLIENTS=1 to make this a failure", why)
}
