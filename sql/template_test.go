package sql

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// warm sends two texts of query's shape (its digit runs replaced) so that
// the cache learns its template.
func warm(t *testing.T, c *Cache, query string) {
	t.Helper()
	for range 2 {
		if _, _, _, err := c.ParseQuery(query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
}

// afterWarm is a new cache's answer to next once it has seen first twice.
func afterWarm(t *testing.T, first, next string) ([]Plan, []any) {
	t.Helper()
	c := NewCache(100)
	warm(t, c, first)
	plans, args, src, err := c.ParseQuery(next)
	if err != nil {
		t.Fatalf("%s: %v", next, err)
	}
	if (src == FromTemplate) != (args != nil) {
		t.Fatalf("%s: source %v with arguments %v", next, src, args)
	}
	return plans, args
}

// checkAnswer asserts that what ParseQuery answered for q is q's own plan:
// a template bound to args, or q's plans as Parse gives them.
func checkAnswer(t *testing.T, q string, plans []Plan, args []any) {
	t.Helper()
	want, err := Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if args == nil {
		if !reflect.DeepEqual(plans, want) {
			t.Fatalf("%s: plans = %s, want %s", q, dumpPlans(plans), dumpPlans(want))
		}
		return
	}
	if len(plans) != 1 || len(want) != 1 || !samePlan(reflect.ValueOf(plans[0]), reflect.ValueOf(want[0]), args) {
		t.Fatalf("%s: template %s with %v is not %s", q, dumpPlans(plans), args, dumpPlans(want))
	}
}

// TestTemplateTakesNewValues: once two texts of a shape were parsed, a
// text that differs only in the integers its WHERE compares with is a
// template with those integers as arguments, and that is its own plan.
func TestTemplateTakesNewValues(t *testing.T) {
	cases := []struct {
		first, next string
		args        []any
	}{
		{"SELECT ID, HOST_NAME, PORT FROM db.WORKER_NODE WHERE ID = 1", "SELECT ID, HOST_NAME, PORT FROM db.WORKER_NODE WHERE ID = 4711", []any{int64(4711)}},
		{"SELECT * FROM t WHERE 7 = id", "SELECT * FROM t WHERE 000123 = id", []any{int64(123)}},
		{"select v from t where a = 1 and b in (2, 3) and c between 4 and (5) limit 10", "select v from t where a = 10 and b in (20, 30) and c between 40 and (50) limit 10", []any{int64(10), int64(20), int64(30), int64(40), int64(50)}},
		{"UPDATE t SET v = 'x' WHERE id = 5", "UPDATE t SET v = 'x' WHERE id = 999999999999999999", []any{"x", int64(999999999999999999)}},
		{"DELETE FROM t WHERE id = 5", "DELETE FROM t WHERE id = 6", []any{int64(6)}},
		{"SELECT t1.v FROM t1 WHERE t1.id >= 5 ORDER BY v", "SELECT t1.v FROM t1 WHERE t1.id >= 0 ORDER BY v", []any{int64(0)}},
		{"SELECT * FROM t WHERE v = '12' AND id = 5", "SELECT * FROM t WHERE v = 'héllo 7' AND id = 5", []any{"héllo 7", int64(5)}},
		{"SELECT * FROM t WHERE v IN ('a', '') AND w BETWEEN '1' AND 'z'", "SELECT * FROM t WHERE v IN ('', 'b') AND w BETWEEN '2' AND 'y'", []any{"", "b", "2", "y"}},
		{"UPDATE rowsbench.WORKER_NODE SET PORT = '123' WHERE ID = 5", "UPDATE rowsbench.WORKER_NODE SET PORT = '777' WHERE ID = 6", []any{"777", int64(6)}},
		{"UPDATE t SET a = 1, b = 'x', c = c + 1, d = NOW() WHERE id = 5", "UPDATE t SET a = 2, b = 'y', c = c + 1, d = NOW() WHERE id = 6", []any{int64(2), "y", int64(6)}},
		{"INSERT INTO w (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) VALUES ('10.1.2.3', '4-5', 1, '2026-11-24', NOW(), NOW())",
			"INSERT INTO w (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) VALUES ('10.9.9.9', '8-9', 2, '2026-11-25', NOW(), NOW())",
			[]any{"10.9.9.9", "8-9", int64(2), "2026-11-25"}},
		{"REPLACE INTO Tickets64 (stub) VALUES ('a')", "REPLACE INTO Tickets64 (stub) VALUES ('b')", []any{"b"}},
		{"SELECT * FROM t WHERE id = -5 AND v IN (-1, 2) AND w = 3-1", "SELECT * FROM t WHERE id = -17 AND v IN (-0, 3) AND w = 3-1", []any{int64(-17), int64(0), int64(3)}},
		{"INSERT INTO t VALUES (-1, 'a')", "INSERT INTO t VALUES (-999999999999999999, 'b')", []any{int64(-999999999999999999), "b"}},
	}
	for _, tc := range cases {
		plans, args := afterWarm(t, tc.first, tc.next)
		if !reflect.DeepEqual(args, tc.args) {
			t.Errorf("%s: args = %v, want %v", tc.next, args, tc.args)
		}
		if ParamCount(plans[0]) != len(tc.args) {
			t.Errorf("%s: template has %d placeholders, want %d", tc.next, ParamCount(plans[0]), len(tc.args))
		}
		checkAnswer(t, tc.next, plans, args)
	}
}

// TestTemplateRefusesOtherTexts: a text of the same shape that differs
// in anything but a compared integer, or whose digits are not a plain
// int64 literal, is parsed as itself.
func TestTemplateRefusesOtherTexts(t *testing.T) {
	cases := []struct{ first, next string }{
		{"SELECT * FROM t WHERE id = 5 LIMIT 5", "SELECT * FROM t WHERE id = 5 LIMIT 6"},
		{"SELECT * FROM t1 WHERE id = 5", "SELECT * FROM t2 WHERE id = 5"},
		{"SELECT 'a' FROM t WHERE id = 5", "SELECT 'b' FROM t WHERE id = 5"},
		{"SELECT * FROM t WHERE v LIKE 'a%' AND id = 5", "SELECT * FROM t WHERE v LIKE 'b%' AND id = 5"},
		{"SELECT * FROM t WHERE v = 'a' AND id = 5", "SELECT * FROM t WHERE v = 'a\\'' AND id = 5"},
		{"SELECT * FROM t WHERE v = 'a' AND id = 5", "SELECT * FROM t WHERE v = 'a\\b' AND id = 5"},
		{"SELECT * FROM t WHERE v = 'a' AND id = 5", "SELECT * FROM t WHERE v = 'a''b' AND id = 5"},
		{"SELECT * FROM t WHERE v = 'a' AND id = 5", "SELECT * FROM t WHERE v = '\xff' AND id = 5"},
		{"SELECT * FROM t WHERE v = _utf8mb4'a' AND id = 5", "SELECT * FROM t WHERE v = _utf8mb4'b' AND id = 5"},
		{"SELECT * FROM t WHERE v = N'a' AND id = 5", "SELECT * FROM t WHERE v = N'b' AND id = 5"},
		{"SELECT * FROM t WHERE v = x'41' AND id = 5", "SELECT * FROM t WHERE v = x'42' AND id = 5"},
		{"SELECT * FROM t WHERE v = 'a' 'b' AND id = 5", "SELECT * FROM t WHERE v = 'a' 'c' AND id = 5"},
		{"SELECT * FROM t /* it's */ WHERE v = 'a'", "SELECT * FROM t /* it's */ WHERE v = 'b'"},
		{"SELECT * FROM t WHERE v = \"a\" AND id = 5", "SELECT * FROM t WHERE v = \"b\" AND id = 5"},
		{"UPDATE t SET c = c + 1 WHERE id = 5", "UPDATE t SET c = c + 2 WHERE id = 5"},
		{"INSERT INTO t VALUES (1, 'a') ON DUPLICATE KEY UPDATE v = 'x'", "INSERT INTO t VALUES (1, 'a') ON DUPLICATE KEY UPDATE v = 'y'"},
		{"SELECT * FROM t WHERE id = 1e3", "SELECT * FROM t WHERE id = 1e4"},
		{"SELECT * FROM t WHERE id = 1.5", "SELECT * FROM t WHERE id = 1.6"},
		{"SELECT * FROM t WHERE id = 5", "SELECT * FROM t WHERE id = 1234567890123456789"},
		{"SELECT * FROM t WHERE id = 5", "SELECT * FROM t WHERE id = 18446744073709551616"},
		{"SELECT * FROM t WHERE id = -5", "SELECT * FROM t WHERE id = - 6"},
		{"SELECT * FROM t WHERE id = id - 5", "SELECT * FROM t WHERE id = id - 6"},
		{"SELECT * FROM t WHERE id = - -5", "SELECT * FROM t WHERE id = - -6"},
		{"SELECT * FROM t WHERE id = 5 + 1", "SELECT * FROM t WHERE id = 5 + 2"},
		{"SELECT 5 FROM t WHERE id = 5", "SELECT 6 FROM t WHERE id = 5"},
		{"SELECT * FROM t WHERE id = 5 /*!50000 AND v = 1 */", "SELECT * FROM t WHERE id = 5 /*!99999 AND v = 1 */"},
		{"SELECT * FROM t WHERE id = 5 -- 7", "SELECT * FROM t WHERE id = 5 -- 8"},
		{"SELECT * FROM t WHERE id = 5; SELECT 1", "SELECT * FROM t WHERE id = 6; SELECT 1"},
		{"SELECT * FROM t WHERE id = 5 AND v = ?", "SELECT * FROM t WHERE id = 6 AND v = ?"},
	}
	for _, tc := range cases {
		plans, args := afterWarm(t, tc.first, tc.next)
		if args != nil {
			t.Errorf("%s: answered by a template with %v", tc.next, args)
		}
		checkAnswer(t, tc.next, plans, args)
	}
}

// TestTemplateIsItsTextsPlan changes the digits of many statements at
// random and checks every answer, template or not, against a fresh
// parse of the same text: a template must never give a plan that the
// text's own parse would not.
func TestTemplateIsItsTextsPlan(t *testing.T) {
	shapes := []string{
		"SELECT ID, HOST_NAME, PORT FROM db.WORKER_NODE WHERE ID = 1",
		"SELECT * FROM t WHERE a = 1 AND b <> 2 OR c < 3 AND d <= 4 OR e > 5 XOR f >= 6 OR g <=> 7",
		"SELECT v FROM t WHERE id IN (1, 2, 3) AND w NOT IN (4) AND x NOT BETWEEN 5 AND 6",
		"SELECT v, 1 FROM t WHERE id = 1 ORDER BY 1 LIMIT 2, 3",
		"SELECT COUNT(*) FROM t WHERE v = 12 GROUP BY w",
		"SELECT * FROM t WHERE v = '1' AND id = 2 AND w = 0x3 AND x = 4.5 AND y = 6e7 AND z = -8",
		"SELECT * FROM t WHERE (((id))) = (1) AND (2) = v",
		"SELECT * FROM t WHERE id = 1 AND d > NOW() - INTERVAL 2 DAY",
		"SELECT * FROM t WHERE id + 1 = 2 AND v = 3 * 4",
		"SELECT * FROM `t 1` WHERE `c 2` = 3 AND c3 = 4",
		"SELECT * FROM t WHERE id = 1 AND v LIKE '2%' AND w IS NOT NULL",
		"UPDATE t SET v = v + 1, w = 2 WHERE id = 3 AND x = 4",
		"UPDATE Tickets64 SET id = LAST_INSERT_ID(id + 1) WHERE stub = 'a' AND id = 5",
		"UPDATE tiny_id_info SET max_id = 2000, version = version + 1 WHERE id = 1 AND max_id = 1000 AND version = 3",
		"DELETE FROM t WHERE id = 1 LIMIT 2",
		"DELETE FROM t WHERE id BETWEEN 1 AND 2 ORDER BY id",
		"SELECT * FROM t WHERE id = 1 /* 2 */ AND v = 3",
		"SELECT * FROM information_schema.TABLES WHERE TABLE_ROWS = 1",
		"SELECT NEXTVAL(s1) FROM t WHERE id = 1",
		"INSERT INTO t VALUES (1, 2)",
		"INSERT INTO t (a, b, c) VALUES ('x', 1, NOW()), ('y', -2, 'z') ON DUPLICATE KEY UPDATE b = 3",
		"INSERT INTO t SET a = 'x', b = 2",
		"REPLACE INTO Tickets64 (stub) VALUES ('a')",
		"INSERT INTO Tickets64 (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id + 1)",
		"UPDATE t SET s = 'a', n = 5 WHERE k = 'b' AND id IN ('1', 2)",
		"UPDATE Tickets64 SET id = 7 WHERE stub = 'a'",
		"SELECT * FROM t WHERE s = 'a' /* 'b' */ AND n = 'c'",
		"SELECT * FROM t WHERE id = 9223372036854775807",
	}
	r := rand.New(rand.NewPCG(1, 2))
	redigit := func(q string) string {
		var b strings.Builder
		prev := 0
		for _, s := range valueRuns(q, nil) {
			b.WriteString(q[prev:s.start])
			if s.str {
				b.WriteString([]string{"", "x", "7", "a b", "é", "\\", "''", "\xff", q[s.start:s.end]}[r.IntN(9)])
				prev = s.end
				continue
			}
			switch r.IntN(4) {
			case 0:
				b.WriteString(q[s.start:s.end])
			case 1:
				fmt.Fprintf(&b, "%d", r.IntN(10))
			case 2:
				fmt.Fprintf(&b, "%0*d", 1+r.IntN(20), r.Uint64()%1_000_000_000_000_000_000)
			default:
				fmt.Fprintf(&b, "%d", r.Int64())
			}
			prev = s.end
		}
		b.WriteString(q[prev:])
		return b.String()
	}
	c := NewCache(1000)
	// Half the shapes learn their template from the text as written, the
	// others from whichever texts come first.
	for i, shape := range shapes {
		if i%2 == 0 {
			warm(t, c, shape)
		}
	}
	templated := 0
	perShape := map[string]int{}
	for range 40 {
		for _, shape := range shapes {
			q := redigit(shape)
			plans, args, _, err := c.ParseQuery(q)
			if want, werr := Parse(q); (err == nil) != (werr == nil) {
				t.Fatalf("%s: error %v, a fresh parse's %v", q, err, werr)
			} else if err != nil {
				if !reflect.DeepEqual(err, werr) {
					t.Fatalf("%s: error %v, want %v", q, err, werr)
				}
				_ = want
				continue
			}
			if args != nil {
				templated++
				perShape[shape]++
			}
			checkAnswer(t, q, plans, args)
		}
	}
	// Most shapes have a template: the test must have checked some.
	for _, s := range shapes {
		t.Logf("%3d %s", perShape[s], s)
	}
	if templated < 100 {
		t.Errorf("only %d answers came from templates", templated)
	}
}

func TestDigitRuns(t *testing.T) {
	q := "SELECT t1.c2, 3, `4`, '5 a', 0x6, 7e8, 9.10, _11, 12$, 13 FROM t WHERE a=14 AND b='' AND c = 'x"
	var got []string
	for _, s := range valueRuns(q, nil) {
		got = append(got, q[s.start:s.end])
	}
	want := []string{"3", "4", "5 a", "10", "13", "14", ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("digitRuns = %q, want %q", got, want)
	}
}

// BenchmarkTemplateHit is a new text of a known shape: what an
// interpolating driver's point SELECT costs to plan (compare
// BenchmarkCacheUnique, a parse per text).
func BenchmarkTemplateHit(b *testing.B) {
	c := NewCache(1000)
	texts := make([]string, 4096)
	for i := range texts {
		texts[i] = fmt.Sprintf("SELECT ID, HOST_NAME, PORT FROM rowsbench.WORKER_NODE WHERE ID = %d", 1000+i)
	}
	for _, q := range texts[:2] {
		if _, _, _, err := c.ParseQuery(q); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, args, _, _ := c.ParseQuery(texts[i%len(texts)]); args == nil {
			b.Fatal("no template")
		}
	}
}

// FuzzTemplate: whatever two texts a cache has seen, its answer to a
// third is that text's own plan (checkAnswer), template or not.
func FuzzTemplate(f *testing.F) {
	f.Add("SELECT * FROM t WHERE id = 1", "SELECT * FROM t WHERE id = 2", "SELECT * FROM t WHERE id = 3")
	f.Add("SELECT * FROM t WHERE id IN (1, 2) AND v BETWEEN 3 AND 4", "SELECT * FROM t WHERE id IN (5, 6) AND v BETWEEN 7 AND 8", "SELECT * FROM t WHERE id IN (9, 10) AND v BETWEEN 11 AND 12")
	f.Add("UPDATE t SET v = 1 WHERE id = 2 AND w = '3'", "UPDATE t SET v = 1 WHERE id = 2 AND w = '3'", "UPDATE t SET v = 1 WHERE id = 4 AND w = '3'")
	f.Add("DELETE FROM t WHERE 1 = id LIMIT 1", "DELETE FROM t WHERE 1 = id LIMIT 1", "DELETE FROM t WHERE 0009 = id LIMIT 1")
	f.Add("SELECT a FROM t WHERE b = -1 OR c <=> (2)", "SELECT a FROM t WHERE b = -1 OR c <=> (2)", "SELECT a FROM t WHERE b = -3 OR c <=> (4)")
	f.Fuzz(func(t *testing.T, a, b, q string) {
		c := NewCache(100)
		for _, s := range []string{a, b} {
			if _, _, _, err := c.ParseQuery(s); err != nil {
				return
			}
		}
		plans, args, _, err := c.ParseQuery(q)
		if err != nil {
			if args != nil {
				t.Fatalf("%q: error %v with arguments", q, err)
			}
			return
		}
		checkAnswer(t, q, plans, args)
	})
}
