package integration

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values for the parser

	"github.com/ticketd/ticketd/integration/harness"
)

var autoIncOption = regexp.MustCompile(`\bAUTO_INCREMENT=\d+`)

// mtrFiles are the MariaDB regression tests (issue 21) run statement by
// statement against MariaDB and ticketd.
var mtrFiles = []string{
	"main/auto_increment",
	"main/insert",
	"main/insert_update",
	"main/replace",
	"main/update",
	"main/delete",
	"suite/sql_sequence/next",
	// Issue 32: files whose statements are mostly inside ticketd's scope
	// (single-table DML, keys, NULLs, dates, sequences).
	"main/insert_update_autoinc-7150",
	"main/bulk_replace",
	"main/key_primary",
	"main/update_ignore_216",
	"main/group_by_null",
	"main/datetime_456",
	"main/in_datetime_241",
	"main/type_bool",
	"main/type_char",
	"main/type_date",
	"main/null",
	"main/null_key",
	"main/count_distinct",
	"main/func_equal",
	"main/select_safe",
	"main/insert_innodb",
	"main/update_innodb",
	"main/delete_innodb",
	"main/order_by_innodb",
	"main/update_use_source",
	"main/delete_use_source",
	"suite/sql_sequence/default",
	"suite/sql_sequence/rename",
	"suite/sql_sequence/rebuild",
	"suite/sql_sequence/view",
	"suite/sql_sequence/concurrent_create",
	"main/type_uint",
	"main/type_datetime",
	"main/distinct",
	"main/bool",
	"main/having",
}

// mtrDir is where Debian's mariadb-test-data installs MariaDB's tests.
const mtrDir = "/usr/share/mysql/mysql-test"

// Outcome classes of one statement.
const (
	mtSame    = "same"
	mtRefused = "refused"
	mtDiff    = "different"
	mtSkipped = "skipped"
)

// Skip rules: every skipped statement is skipped for one of these.
const (
	skipMysqltest  = "needs mysqltest (a while/if block, eval of $variables, send)"
	skipConnection = "runs on another mysqltest connection"
	skipDiverged   = "touches a table, view, database, user variable or prepared statement that a refused statement left different"
	skipSetParse   = "SET that the parser cannot read (its variables cannot be restored on MariaDB)"
	skipPrevious   = "reports on the statement before it (ROW_COUNT(), FOUND_ROWS(), SHOW WARNINGS), which did not answer alike"
	skipFiles      = "reads or writes the server's files (INTO OUTFILE, LOAD DATA)"
)

// TestMariaDBRegression runs MariaDB's own regression tests (Debian's
// mariadb-test-data) statement by statement against MariaDB 10.11 and
// ticketd, in a fresh database `test` on each, in order, and compares the
// outcomes: error code, affected rows, insert id, column labels and
// result rows (warnings are the differential test's business). Every
// statement must answer the same or be refused by ticketd (1235, or a
// parse error 1064); one that answers differently fails the test.
//
// The rules, none of them by line number:
//
//   - mysqltest's commands are not statements; SQL inside while/if blocks,
//     eval with $variables and send are skipped (skipMysqltest), as is SQL
//     on a connection other than the default one (skipConnection).
//     sorted_result and replace_column apply to both servers' answers.
//
//   - MariaDB's table has the engine ticketd reports for it, whatever the
//     test asked for: MyISAM for a ticket table (DESIGN §2: it answers as
//     MyISAM), InnoDB for a row table. After a CREATE or ALTER TABLE the
//     runner sets it on MariaDB with ALTER TABLE ... ENGINE=.
//
//   - A table created again under a name that was used before is renamed
//     (t1 -> t1__2, everywhere outside string literals from its CREATE on):
//     ticketd keeps a dropped table's auto-increment high-water mark
//     (OPERATIONS.md), MariaDB starts again at 1.
//
//   - The cascade rule: when ticketd refuses a statement (which changes
//     nothing there), what the statement changed on MariaDB is marked
//     diverged, and nothing else: the tables and sequences whose CHECKSUM
//     TABLE, AUTO_INCREMENT or definition (columns, keys, comment)
//     changed, and, when MariaDB ran it, the temporary tables it writes,
//     the @user variables it assigns, the prepared statement it makes,
//     the databases it creates or drops (under LOCK TABLES, where
//     MariaDB's state cannot be read, the tables a writing statement
//     names). Later statements that name one are skipped (skipDiverged)
//     until a DROP of it, which is run on both servers as DROP ... IF
//     EXISTS; a refused SELECT or SHOW marks nothing. A refused SET of a
//     system variable is undone on MariaDB (the value read before it is
//     set again), so the sessions stay alike. (A statement answered
//     differently fails the test; everything it names is marked.)
//
//   - Both sessions' clocks are pinned (SET timestamp, again after SET
//     timestamp = DEFAULT): NOW() on two servers a few milliseconds apart
//     may fall in different seconds.
//
//   - Rows of a SELECT without ORDER BY and LIMIT are compared as a
//     multiset (InnoDB's order is that of the index it picks); SHOW CREATE
//     TABLE is compared on its AUTO_INCREMENT option (as in
//     TestDifferential); ROW_COUNT(), FOUND_ROWS() and SHOW WARNINGS after
//     a statement that did not answer alike are skipped (skipPrevious), as
//     are INTO OUTFILE and LOAD DATA (skipFiles). After a statement that
//     did not answer alike, MariaDB's LAST_INSERT_ID() is set to ticketd's.
//
// TICKETD_MTR_FILES (comma-separated, e.g. main/replace) runs other files;
// TICKETD_MTR_LOG=FILE writes every statement's class, and what the two
// servers answered where they differ.
func TestMariaDBRegression(t *testing.T) {
	if _, err := os.Stat(filepath.Join(mtrDir, "main", "insert.test")); err != nil {
		t.Fatalf("MariaDB's regression tests are not installed (%v): apt-get install mariadb-test-data", err)
	}
	files := mtrFiles
	if f := os.Getenv("TICKETD_MTR_FILES"); f != "" {
		files = strings.Split(f, ",")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	maria := harness.StartMariaDB(t)
	node := harness.Start(ctx, t, harness.Options{})

	r := &mtRunner{t: t, ctx: ctx, mariaAddr: maria.Addr, tdAddr: node.MySQLAddr(),
		created: map[string]int{}, alias: map[string]string{}}
	if p := os.Getenv("TICKETD_MTR_LOG"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r.log = f
	}
	var totals [4]int
	var table strings.Builder
	fmt.Fprintf(&table, "%-36s %6s %8s %10s %8s\n", "file", "same", "refused", "different", "skipped")
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(mtrDir, f+".test"))
		if err != nil {
			t.Fatalf("%v (apt-get install mariadb-test-data)", err)
		}
		counts := r.runFile(f, string(src))
		fmt.Fprintf(&table, "%-36s %6d %8d %10d %8d\n", f, counts[mtSame], counts[mtRefused], counts[mtDiff], counts[mtSkipped])
		for i, k := range []string{mtSame, mtRefused, mtDiff, mtSkipped} {
			totals[i] += counts[k]
		}
	}
	fmt.Fprintf(&table, "%-36s %6d %8d %10d %8d\n", "total", totals[0], totals[1], totals[2], totals[3])
	t.Logf("MariaDB regression tests, statement by statement:\n%s", table.String())
	fmt.Printf("MariaDB regression tests, statement by statement:\n%s", table.String())
	for _, reason := range slices.Sorted(maps.Keys(r.skips)) {
		t.Logf("skipped %4d: %s", r.skips[reason], reason)
	}
}

// mtRunner runs .test files against both servers in lockstep.
type mtRunner struct {
	t                 *testing.T
	ctx               context.Context
	mariaAddr, tdAddr string

	maria, td *client.Conn
	// mon is a second MariaDB connection for the runner's own queries
	// (tables, checksums, engines), so that they change neither the
	// session's ROW_COUNT() nor its warnings.
	mon *client.Conn
	db  string // the database the session is in (USE changes it)
	// prevAlike: the last statement run answered the same on both.
	prevAlike bool
	// created counts the CREATEs of each table name so far (all files);
	// alias maps a name to what it is called now.
	created map[string]int
	alias   map[string]string
	// diverged holds lower-case names (tables, @vars, prepared statements)
	// whose state may differ between the servers.
	diverged map[string]bool
	// temps are the temporary tables created so far in the file (SHOW
	// TABLES does not list them).
	temps map[string]bool
	skips map[string]int
	log   *os.File // TICKETD_MTR_LOG: every statement's class
}

// runFile runs one .test file in a fresh database and connection on
// each server and returns its counts by class.
func (r *mtRunner) runFile(name, src string) map[string]int {
	t := r.t
	counts := map[string]int{}
	if r.skips == nil {
		r.skips = map[string]int{}
	}
	r.diverged = map[string]bool{}
	r.temps = map[string]bool{}
	clear(r.alias)
	for _, addr := range []string{r.mariaAddr, r.tdAddr} {
		c, err := dialClient(r.ctx, addr, "")
		if err != nil {
			t.Fatalf("connect %s: %v", addr, err)
		}
		for _, q := range []string{"DROP DATABASE IF EXISTS test", "CREATE DATABASE test", "USE test", pinClock} {
			if _, err := c.Execute(q); err != nil {
				t.Fatalf("%s on %s: %v", q, addr, err)
			}
		}
		if addr == r.mariaAddr {
			r.maria = c
		} else {
			r.td = c
		}
	}
	defer r.maria.Close()
	defer r.td.Close()
	mon, err := dialClient(r.ctx, r.mariaAddr, "test")
	if err != nil {
		t.Fatalf("connect %s: %v", r.mariaAddr, err)
	}
	// LOCK TABLES on the session holds off mon's CHECKSUM TABLE.
	if _, err := mon.Execute("SET SESSION lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	r.mon, r.db, r.prevAlike = mon, "test", true
	defer mon.Close()

	conn := "default"
	var sorted bool
	var replace map[int]string
	var it mtItem
	skip := func(reason string) {
		counts[mtSkipped]++
		r.skips[reason]++
		if r.log != nil {
			fmt.Fprintf(r.log, "%s.test:%d skipped: %s (%s)\n", name, it.Line, oneLine(it.Text), reason)
		}
	}
	for _, it = range splitMysqltest(src) {
		text := it.Text
		switch it.Cmd {
		case "":
		case "query", "query_vertical", "query_horizontal":
			if text == "" {
				continue
			}
		case "eval":
			if strings.Contains(text, "$") {
				skip(skipMysqltest)
				continue
			}
		case "send", "send_eval":
			if text != "" {
				skip(skipMysqltest)
			}
			continue
		case "connect":
			f := strings.Split(strings.Trim(text, "() "), ",")
			conn = strings.TrimSpace(f[0])
			continue
		case "connection":
			conn = strings.TrimSpace(text)
			continue
		case "sorted_result":
			sorted = true
			continue
		case "replace_column":
			replace = parseReplaceColumn(text)
			continue
		default:
			continue
		}
		if it.Depth > 0 {
			skip(skipMysqltest)
			continue
		}
		if conn != "default" {
			skip(skipConnection)
			continue
		}
		class, detail := r.runStatement(text, sorted, replace, skip)
		sorted, replace = false, nil
		if class == "" {
			continue // skipped, counted by skip
		}
		counts[class]++
		if r.log != nil {
			fmt.Fprintf(r.log, "%s.test:%d %s: %s%s\n", name, it.Line, class, oneLine(text), detail)
		}
		if class == mtDiff {
			t.Errorf("%s.test:%d answers differently: %s%s", name, it.Line, text, detail)
		}
	}
	// The database goes; its names count as used for the next files.
	for _, c := range []*client.Conn{r.maria, r.td} {
		c.Execute("DROP DATABASE IF EXISTS test")
	}
	return counts
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// parseReplaceColumn reads replace_column's "N text N text ...".
func parseReplaceColumn(s string) map[int]string {
	m := map[int]string{}
	f := strings.Fields(s)
	for i := 0; i+1 < len(f); i += 2 {
		if n, err := strconv.Atoi(f[i]); err == nil {
			m[n-1] = strings.Trim(f[i+1], `"'`)
		}
	}
	return m
}

// runStatement applies the rules to one SQL statement, runs it on both
// servers and classifies it. It returns "" when the statement was skipped
// (skip was called).
func (r *mtRunner) runStatement(text string, sorted bool, replace map[int]string, skip func(string)) (class, detail string) {
	t := r.t
	// A CREATE of a name used before gets a new name.
	orig, _ := parser.New().ParseOneStmt(text, "", "")
	for _, n := range createdNames(orig) {
		key := strings.ToLower(n)
		if r.created[key] > 0 && !r.exists(r.aliasOf(n)) {
			r.alias[key] = fmt.Sprintf("%s__%d", n, r.created[key]+1)
		}
		r.created[key]++
	}
	text = r.rename(text)
	stmt, _ := parser.New().ParseOneStmt(text, "", "")
	words := sqlWords(text)

	// Statements on diverged state are skipped; a DROP of it makes the
	// servers alike again.
	var hit []string
	for _, w := range words {
		if r.diverged[w] {
			hit = append(hit, w)
		}
	}
	if len(hit) > 0 {
		if kind, names := dropped(stmt); kind != "" {
			for _, n := range names {
				q := fmt.Sprintf("DROP %s IF EXISTS `%s`", kind, n)
				r.maria.Execute(q)
				r.td.Execute(q)
				delete(r.diverged, strings.ToLower(n))
			}
		}
		skip(skipDiverged)
		return "", ""
	}
	if reportsOnPrevious(stmt, words) && !r.prevAlike {
		skip(skipPrevious)
		return "", ""
	}
	if usesServerFiles(stmt) {
		skip(skipFiles)
		return "", ""
	}
	set, isSet := stmt.(*ast.SetStmt)
	if stmt == nil {
		if w, _ := firstWord(text); w == "set" {
			skip(skipSetParse)
			return "", ""
		}
	}
	// What a refused statement might change on MariaDB: its system
	// variables, and its tables' contents.
	var saved []string
	if isSet {
		saved = r.saveVariables(set)
	}
	s := step{sql: text}
	if sh, ok := stmt.(*ast.ShowStmt); ok && sh.Tp == ast.ShowCreateTable {
		s.createTable = true
	}
	// ticketd first: MariaDB's state is read before and after the
	// statement only when ticketd refuses it (what the refusal leaves
	// different), which spares two queries on every other statement.
	k, err := runStep(r.td, s)
	if err != nil {
		t.Fatalf("ticketd: %q: %v", text, err)
	}
	var before map[string]string
	if refusal(k) {
		before = r.checksums()
	}
	m, err := runStep(r.maria, s)
	if err != nil {
		t.Fatalf("MariaDB: %q: %v", text, err)
	}
	for _, o := range []*outcome{&m, &k} {
		if s.createTable {
			// Only AUTO_INCREMENT is compared: MariaDB's engine is the
			// runner's (keepEngine), the column text is cosmetic
			// (TestDifferential does the same).
			for _, row := range o.Rows {
				row[len(row)-1] = strings.Join(autoIncOption.FindAllString(row[len(row)-1], -1), " ")
			}
		}
		for i, v := range replace {
			for _, row := range o.Rows {
				if i < len(row) {
					row[i] = v
				}
			}
		}
		if sorted || unordered(stmt) {
			slices.SortFunc(o.Rows, func(a, b []string) int { return strings.Compare(strings.Join(a, "\x00"), strings.Join(b, "\x00")) })
		}
	}
	if isSet && setsClockDefault(set) {
		// Back to the real clocks, which differ between the servers.
		for _, c := range []*client.Conn{r.maria, r.td} {
			if _, err := c.Execute(pinClock); err != nil {
				t.Fatalf("%s: %v", pinClock, err)
			}
		}
	}
	if m.ErrCode == 0 {
		r.keepEngine(stmt)
		if u, ok := stmt.(*ast.UseStmt); ok {
			r.db = u.DBName
		}
		if c, ok := stmt.(*ast.CreateTableStmt); ok && c.TemporaryKeyword != ast.TemporaryNone {
			r.temps[strings.ToLower(c.Table.Name.O)] = true
		}
	}
	r.prevAlike = mtrSame(m, k)
	switch {
	case r.prevAlike:
		return mtSame, ""
	case refusal(k):
		class = mtRefused
	default:
		class = mtDiff
	}
	detail = fmt.Sprintf("\n  mariadb: %s\n  ticketd: %s", m, k)
	// The servers may have parted: undo a SET on MariaDB, mark the rest.
	if isSet && m.ErrCode == 0 {
		for _, q := range saved {
			if _, err := r.maria.Execute(q); err != nil {
				t.Logf("restoring %q on MariaDB: %v", q, err)
			}
		}
	}
	r.syncLastInsertID()
	if class == mtDiff {
		// A failure of the test: whatever the statement names may differ.
		r.markNamed(stmt, words, true)
		return class, detail
	}
	r.markRefused(stmt, text, words, before, m.ErrCode == 0)
	return class, detail
}

// refusal reports ticketd's refusals: 1235, or a parse error (1064).
func refusal(k outcome) bool { return k.ErrCode == 1235 || k.ErrCode == 1064 }

// markRefused marks diverged what a statement that ticketd refused
// changed, or would have changed, on MariaDB, and nothing else (the
// cascade rule): the tables and sequences whose contents, counter or
// definition changed there (before is their state before it, ok tells
// whether MariaDB ran it); and, when it ran, what those listings do not
// show: the temporary tables it writes, the user variables it assigns,
// the prepared statement it makes, the databases it creates or drops.
// ticketd changes nothing when it refuses.
func (r *mtRunner) markRefused(stmt ast.StmtNode, text string, words []string, before map[string]string, ok bool) {
	if isOnlyEngine(stmt) {
		return // keepEngine undid the engine change
	}
	after := r.checksums()
	if before[lockedKey] != "" || after[lockedKey] != "" {
		// The session holds a lock (LOCK TABLES): what the statement
		// names, if it writes, is all the runner can know.
		r.markNamed(stmt, words, false)
	}
	for n, sum := range after {
		if before[n] != sum {
			r.diverged[n] = true
		}
	}
	for n := range before {
		if _, ok := after[n]; !ok {
			r.diverged[n] = true
		}
	}
	if !ok {
		return // MariaDB failed too: only what its state shows changed
	}
	if stmt == nil {
		// A statement the runner's parser cannot read: a SELECT ... INTO
		// @v may have assigned the user variables it names; anything else
		// (CREATE TRIGGER, which changes what its table's writes do) may
		// have changed whatever it names.
		if w, _ := firstWord(text); w != "select" {
			r.markNamed(stmt, words, true)
			return
		}
		for _, w := range words {
			if strings.HasPrefix(w, "@") && !strings.HasPrefix(w, "@@") {
				r.diverged[w] = true
			}
		}
		return
	}
	if writes(stmt) {
		for _, w := range words {
			if r.temps[w] {
				r.diverged[w] = true
			}
		}
	}
	for _, n := range createdNames(stmt) {
		r.diverged[strings.ToLower(n)] = true
	}
	if kind, names := dropped(stmt); kind == "DATABASE" {
		for _, n := range names {
			r.diverged[strings.ToLower(n)] = true
		}
	}
	for _, v := range assignedVars(stmt) {
		r.diverged["@"+strings.ToLower(v)] = true
	}
	if p, ok := stmt.(*ast.PrepareStmt); ok {
		r.diverged[strings.ToLower(p.Name)] = true
	}
	if writes(stmt) {
		// Another database's tables are not in the state read: the
		// database it writes in (named, or the current one) is marked.
		f := &schemaFinder{}
		stmt.Accept(f)
		for _, db := range append(f.names, strings.ToLower(r.db)) {
			if db != "test" {
				r.diverged[db] = true
			}
		}
	}
}

// schemaFinder collects the databases a statement's table names name.
type schemaFinder struct{ names []string }

func (f *schemaFinder) Enter(n ast.Node) (ast.Node, bool) {
	if t, ok := n.(*ast.TableName); ok && t.Schema.O != "" {
		f.names = append(f.names, strings.ToLower(t.Schema.O))
	}
	return n, false
}

func (f *schemaFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// markNamed marks diverged every table, database and user variable the
// statement names (all: whatever it reads too; else only if it writes).
func (r *mtRunner) markNamed(stmt ast.StmtNode, words []string, all bool) {
	if !all && stmt != nil && !writes(stmt) {
		return
	}
	known := map[string]bool{}
	for _, q := range []string{"SHOW TABLES FROM test", "SHOW DATABASES"} {
		for _, c := range []*client.Conn{r.mon, r.td} {
			if res, err := c.Execute(q); err == nil {
				for _, row := range res.Values {
					known[strings.ToLower(fieldText(row[0]))] = true
				}
				res.Close()
			}
		}
	}
	delete(known, "test")
	for _, w := range words {
		if known[w] || r.temps[w] || strings.HasPrefix(w, "@") && !strings.HasPrefix(w, "@@") {
			r.diverged[w] = true
		}
	}
	for _, n := range createdNames(stmt) {
		r.diverged[strings.ToLower(n)] = true
	}
	if p, ok := stmt.(*ast.PrepareStmt); ok {
		r.diverged[strings.ToLower(p.Name)] = true
	}
}

// writes reports a statement that may change state: anything but a
// SELECT without INTO, SHOW, EXPLAIN and DESCRIBE.
func writes(stmt ast.StmtNode) bool {
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		return s.SelectIntoOpt != nil || len(assignedVars(s)) > 0
	case *ast.ShowStmt, *ast.ExplainStmt:
		return false
	}
	return true
}

// assignedVars returns the user variables a statement assigns: SET @v
// and @v := expr.
func assignedVars(stmt ast.StmtNode) []string {
	var out []string
	if s, ok := stmt.(*ast.SetStmt); ok {
		for _, v := range s.Variables {
			if !v.IsSystem {
				out = append(out, v.Name)
			}
		}
	}
	if stmt != nil {
		v := &assignFinder{}
		stmt.Accept(v)
		out = append(out, v.names...)
	}
	return out
}

// assignFinder collects @v := expr.
type assignFinder struct{ names []string }

func (f *assignFinder) Enter(n ast.Node) (ast.Node, bool) {
	if v, ok := n.(*ast.VariableExpr); ok && !v.IsSystem && v.Value != nil {
		f.names = append(f.names, v.Name)
	}
	return n, false
}

func (f *assignFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// mtrSame compares what the regression run compares: the error code, or
// affected rows, insert id, labels and rows.
func mtrSame(a, b outcome) bool {
	return a.ErrCode == b.ErrCode && a.Affected == b.Affected && a.InsertID == b.InsertID &&
		a.IsSet == b.IsSet && slices.Equal(a.Columns, b.Columns) &&
		slices.EqualFunc(a.Rows, b.Rows, func(x, y []string) bool { return slices.Equal(x, y) })
}

func (r *mtRunner) aliasOf(name string) string {
	if a, ok := r.alias[strings.ToLower(name)]; ok {
		return a
	}
	return name
}

// exists reports whether MariaDB has a table (or view, or sequence) of
// that name in test.
func (r *mtRunner) exists(name string) bool {
	res, err := r.mon.Execute("SHOW FULL TABLES FROM test")
	if err != nil {
		r.t.Fatalf("MariaDB: SHOW FULL TABLES: %v", err)
	}
	defer res.Close()
	for _, row := range res.Values {
		if strings.EqualFold(fieldText(row[0]), name) {
			return true
		}
	}
	return false
}

// checksums returns CHECKSUM TABLE of MariaDB's base tables and
// sequences in test, by lower-case name (and its views, as "view").
func (r *mtRunner) checksums() map[string]string {
	res, err := r.mon.Execute("SHOW FULL TABLES FROM test")
	if err != nil {
		r.t.Fatalf("MariaDB: SHOW FULL TABLES: %v", err)
	}
	var names []string
	sums := map[string]string{}
	for _, row := range res.Values {
		if fieldText(row[1]) == "VIEW" {
			sums[strings.ToLower(fieldText(row[0]))] = "view"
		} else {
			names = append(names, "test.`"+fieldText(row[0])+"`")
		}
	}
	res.Close()
	if len(names) == 0 {
		return sums
	}
	res, err = r.mon.Execute("CHECKSUM TABLE " + strings.Join(names, ", "))
	if err != nil {
		// The session holds a lock (LOCK TABLES).
		sums[lockedKey] = "1"
		return sums
	}
	for _, row := range res.Values {
		n := fieldText(row[0])
		n = n[strings.IndexByte(n, '.')+1:]
		sums[strings.ToLower(n)] = fieldText(row[1])
	}
	res.Close()
	// A table's counter and definition are its state too (ALTER TABLE ...
	// AUTO_INCREMENT = n, a failed INSERT's ids, a column added): SHOW
	// CREATE TABLE says both (its ENGINE is keepEngine's).
	for _, n := range names {
		res, err := r.mon.Execute("SHOW CREATE TABLE " + n)
		if err != nil {
			sums[lockedKey] = "1"
			return sums
		}
		if len(res.Values) > 0 && len(res.Values[0]) > 1 {
			key := strings.ToLower(strings.Trim(n[strings.IndexByte(n, '.')+1:], "`"))
			sums[key] += "/" + engineOption.ReplaceAllString(fieldText(res.Values[0][1]), "")
		}
		res.Close()
	}
	return sums
}

// engineOption is a table's ENGINE= option in SHOW CREATE TABLE.
var engineOption = regexp.MustCompile(`\bENGINE=\w+`)

// lockedKey, in checksums' map, says MariaDB's state could not be read.
const lockedKey = "\x00locked"

// saveVariables reads, on MariaDB, the system variables a SET changes and
// returns the statements that set them back.
func (r *mtRunner) saveVariables(set *ast.SetStmt) []string {
	var out []string
	for _, v := range set.Variables {
		if !v.IsSystem {
			continue
		}
		scope := "SESSION"
		if v.IsGlobal {
			scope = "GLOBAL"
		}
		res, err := r.maria.Execute(fmt.Sprintf("SELECT @@%s.%s", scope, v.Name))
		if err != nil {
			continue // an unknown variable: the SET fails on MariaDB too
		}
		val := res.Values[0][0]
		lit := fieldText(val)
		switch {
		case val.Type == gmysql.FieldValueTypeNull:
			lit = "NULL"
		case val.Type == gmysql.FieldValueTypeString:
			lit = "'" + strings.ReplaceAll(lit, "'", "''") + "'"
		}
		res.Close()
		out = append(out, fmt.Sprintf("SET %s %s = %s", scope, v.Name, lit))
	}
	return out
}

// keepEngine gives a table that a CREATE or ALTER TABLE made the engine
// ticketd reports for it, on MariaDB only: MyISAM for ticket tables (which
// answer as MyISAM, DESIGN §2), InnoDB for everything else, whatever
// engine the test asked for.
func (r *mtRunner) keepEngine(stmt ast.StmtNode) {
	var name *ast.TableName
	switch s := stmt.(type) {
	case *ast.CreateTableStmt:
		if s.TemporaryKeyword != ast.TemporaryNone {
			return
		}
		name = s.Table
	case *ast.AlterTableStmt:
		name = s.Table
	default:
		return
	}
	db := r.db
	if name.Schema.O != "" {
		db = name.Schema.O
	}
	engineOf := func(c *client.Conn) string {
		res, err := c.Execute(fmt.Sprintf("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s'", db, name.Name.O))
		if err != nil || len(res.Values) == 0 {
			return ""
		}
		defer res.Close()
		return fieldText(res.Values[0][0])
	}
	want := "InnoDB"
	if strings.EqualFold(engineOf(r.td), "MyISAM") {
		want = "MyISAM"
	}
	if have := engineOf(r.mon); have != "" && !strings.EqualFold(have, want) {
		if _, err := r.mon.Execute(fmt.Sprintf("ALTER TABLE `%s`.`%s` ENGINE=%s", db, name.Name.O, want)); err != nil {
			r.t.Logf("MariaDB: ALTER TABLE %s ENGINE=%s: %v", name.Name.O, want, err)
		}
	}
}

// isOnlyEngine reports whether stmt is an ALTER TABLE that only sets the
// engine (which keepEngine undoes on MariaDB).
func isOnlyEngine(stmt ast.StmtNode) bool {
	s, ok := stmt.(*ast.AlterTableStmt)
	if !ok || len(s.Specs) == 0 {
		return false
	}
	for _, spec := range s.Specs {
		if spec.Tp != ast.AlterTableOption || len(spec.Options) != 1 || spec.Options[0].Tp != ast.TableOptionEngine {
			return false
		}
	}
	return true
}

// createdNames returns the names a CREATE TABLE, VIEW or SEQUENCE makes.
func createdNames(stmt ast.StmtNode) []string {
	switch s := stmt.(type) {
	case *ast.CreateTableStmt:
		return []string{s.Table.Name.O}
	case *ast.CreateViewStmt:
		return []string{s.ViewName.Name.O}
	case *ast.CreateSequenceStmt:
		return []string{s.Name.Name.O}
	case *ast.CreateDatabaseStmt:
		// A refused database (its character set) exists on MariaDB only.
		return []string{s.Name.O}
	}
	return nil
}

// dropped returns the kind (TABLE, VIEW, SEQUENCE, DATABASE) and names a
// DROP statement removes.
func dropped(stmt ast.StmtNode) (kind string, names []string) {
	switch s := stmt.(type) {
	case *ast.DropTableStmt:
		kind = "TABLE"
		if s.IsView {
			kind = "VIEW"
		}
		for _, n := range s.Tables {
			names = append(names, n.Name.O)
		}
	case *ast.DropSequenceStmt:
		kind = "SEQUENCE"
		for _, n := range s.Sequences {
			names = append(names, n.Name.O)
		}
	case *ast.DropDatabaseStmt:
		kind, names = "DATABASE", []string{s.Name.O}
	}
	return kind, names
}

// scanSQL calls word for every identifier-like token of s outside string
// literals ('...' and "..."): words, `quoted` names (without the quotes)
// and @variables (with their '@'s), with its byte range in s.
func scanSQL(s string, word func(start, end int, w string)) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				return
			}
			word(i+1, i+1+j, s[i+1:i+1+j])
			i += j + 2
		case c == '@' || isWordByte(c) || c == '$':
			j := i
			for j < len(s) && s[j] == '@' {
				j++
			}
			for j < len(s) && (isWordByte(s[j]) || s[j] == '$') {
				j++
			}
			word(i, j, s[i:j])
			i = j
		default:
			i++
		}
	}
}

// sqlWords returns s's identifier-like tokens in lower case.
func sqlWords(s string) []string {
	var out []string
	scanSQL(s, func(_, _ int, w string) { out = append(out, strings.ToLower(w)) })
	return out
}

// rename replaces the names of re-created tables by their aliases.
func (r *mtRunner) rename(s string) string {
	if len(r.alias) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	scanSQL(s, func(start, end int, w string) {
		if a, ok := r.alias[strings.ToLower(w)]; ok && !strings.HasPrefix(w, "@") {
			b.WriteString(s[last:start])
			b.WriteString(a)
			last = end
		}
	})
	b.WriteString(s[last:])
	return b.String()
}

// pinClock stops NOW() on a session: the two servers' clocks differ, and
// a statement run on one and then the other may straddle a second.
const pinClock = "SET timestamp = 1700000000"

// setsClockDefault reports SET timestamp = DEFAULT.
func setsClockDefault(set *ast.SetStmt) bool {
	for _, v := range set.Variables {
		if _, ok := v.Value.(*ast.DefaultExpr); ok && strings.EqualFold(v.Name, "timestamp") {
			return true
		}
	}
	return false
}

// reportsOnPrevious reports whether a statement shows what the statement
// before it did.
func reportsOnPrevious(stmt ast.StmtNode, words []string) bool {
	if sh, ok := stmt.(*ast.ShowStmt); ok && (sh.Tp == ast.ShowWarnings || sh.Tp == ast.ShowErrors) {
		return true
	}
	for _, w := range words {
		switch strings.TrimPrefix(w, "@@") {
		case "row_count", "found_rows", "warning_count", "error_count":
			return true
		}
	}
	return false
}

// usesServerFiles reports SELECT ... INTO OUTFILE/DUMPFILE and LOAD DATA.
func usesServerFiles(stmt ast.StmtNode) bool {
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		return s.SelectIntoOpt != nil
	case *ast.LoadDataStmt:
		return true
	}
	return false
}

// unordered reports a SELECT whose rows come in no defined order (no
// ORDER BY, no LIMIT): its rows are compared as a multiset. InnoDB reads
// them in the order of whichever index it picks (a covering secondary
// index gives that index's order), which SQL leaves open.
func unordered(stmt ast.StmtNode) bool {
	s, ok := stmt.(*ast.SelectStmt)
	return ok && s.OrderBy == nil && s.Limit == nil
}

// syncLastInsertID gives MariaDB's session ticketd's LAST_INSERT_ID()
// after a statement that did not answer alike (a refused INSERT generated
// ids on MariaDB only).
func (r *mtRunner) syncLastInsertID() {
	get := func(c *client.Conn) string {
		res, err := c.Execute("SELECT LAST_INSERT_ID()")
		if err != nil {
			r.t.Fatalf("SELECT LAST_INSERT_ID(): %v", err)
		}
		defer res.Close()
		return fieldText(res.Values[0][0])
	}
	if m, k := get(r.maria), get(r.td); m != k {
		if _, err := r.maria.Execute("SELECT LAST_INSERT_ID(" + k + ")"); err != nil {
			r.t.Fatalf("MariaDB: SELECT LAST_INSERT_ID(%s): %v", k, err)
		}
	}
}
