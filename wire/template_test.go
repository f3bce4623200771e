package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// reply is every packet of the answer to a text query, as sent.
func (c *rawClient) reply(q string) []byte {
	c.t.Helper()
	b, err := c.command(mysql.COM_QUERY, []byte(q))
	if err != nil {
		c.t.Fatalf("%s: %v", q, err)
	}
	out := append([]byte(nil), b...)
	if b[0] == mysql.OK_HEADER || b[0] == mysql.ERR_HEADER {
		return out
	}
	for eofs := 0; eofs < 2; {
		b = c.mustRead()
		out = append(out, b...)
		if b[0] == mysql.EOF_HEADER && len(b) < 9 {
			eofs++
		}
	}
	return out
}

// TestTemplateAnswersAsParse: texts that a template answers (the same
// statement with other integers in its WHERE, as an interpolating driver
// sends) get, packet for packet, the answer of the same text parsed as
// itself, warnings included; and the parser does not run for them.
func TestTemplateAnswersAsParse(t *testing.T) {
	addr, srv := startServerWith(t, Config{})
	c := flickrSession(t, addr, "")
	const fill = "INSERT INTO w (id, u, s, d, dt) VALUES (1, 18446744073709551615, 'a', 1, '2026-01-01 00:00:00'), (2, 0, '7', -2, NULL), (3, 5, '7x', 7, '2026-11-25 10:00:00'), (4, NULL, NULL, NULL, NULL)"
	refill := []string{"DELETE FROM w", fill, "ALTER TABLE w AUTO_INCREMENT = 5"}
	for _, q := range []string{
		"CREATE TABLE w (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, u BIGINT UNSIGNED, s VARCHAR(20), d INT, dt DATETIME, KEY (s))",
		fill,
		"REPLACE INTO Tickets64 (stub) VALUES ('a')",
	} {
		if _, err := c.query(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// A shape's %d are integers, its %s strings; reset, when set, runs
	// before each text, so that a write answers alike twice.
	type shape struct {
		text  string
		reset []string
		// nonzero: no 0 for %d (an INSERT's id 0 takes the next
		// AUTO_INCREMENT value, which differs from run to run)
		nonzero bool
	}
	shapes := []shape{
		{text: "SELECT id FROM w WHERE s = '%s' OR s IN ('%s', '%s')"},
		{text: "SELECT id, s FROM w WHERE dt < '%s' AND id > %d"},
		{text: "UPDATE w SET s = '%s', d = %d WHERE id = %d", reset: refill},
		{text: "INSERT IGNORE INTO w (id, s) VALUES (%d, '%s')", reset: refill, nonzero: true},
		{text: "INSERT INTO w (id, s, d) VALUES (1, '%s', %d)", reset: refill},
		{text: "INSERT INTO w (id, s, d) VALUES (%d, '%s', %d)", reset: refill, nonzero: true},
	}
	for _, q := range []string{
		"SELECT id, u, s, d, dt FROM w WHERE id = %d",
		"SELECT * FROM w WHERE %d = id OR u = %d",
		"SELECT id FROM w WHERE s = %d",
		"SELECT id, d FROM w WHERE d = -%d OR d IN (-%d, %d)",
		"SELECT id FROM w WHERE d >= %d AND d < %d ORDER BY id DESC",
		"SELECT COUNT(*), MAX(id) FROM w WHERE u IN (%d, %d, %d)",
		"SELECT id FROM w WHERE dt > %d",
		"SELECT id FROM w WHERE id BETWEEN %d AND %d LIMIT 2",
		"SELECT id, stub FROM Tickets64 WHERE id = %d",
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'flickr' AND TABLE_ROWS >= %d",
		"UPDATE w SET s = s WHERE id = %d",
		"DELETE FROM w WHERE id = %d AND s = 'none'",
		"SELECT id FROM nosuch WHERE id = %d",
		"SELECT nosuch FROM w WHERE id = %d",
	} {
		shapes = append(shapes, shape{text: q})
	}
	values := []int64{0, 1, 2, 3, 4, 5, 7, 18, 255, 256, 1 << 31, 1<<53 + 1, 999999999999999999}
	strs := []string{"", "a", "A", "7", "7x", " 7", "2026-01-01", "2026-11-25 10:00:00", "é", "a b", "x\x00y", "abcdefghijklmnopqrstuvwxyz"}
	r := rand.New(rand.NewPCG(3, 4))
	ref := 0
	for _, sh := range shapes {
		text := func() string {
			var args []any
			for i := 0; i < len(sh.text)-1; i++ {
				switch sh.text[i : i+2] {
				case "%d":
					v := values[r.IntN(len(values))]
					if v == 0 && sh.nonzero {
						v = 7
					}
					args = append(args, v)
				case "%s":
					args = append(args, strs[r.IntN(len(strs))])
				}
			}
			return fmt.Sprintf(sh.text, args...)
		}
		run := func(q string) []byte {
			for _, q := range sh.reset {
				if _, err := c.query(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			return c.reply(q)
		}
		// Two texts of the shape: the template is made at the second.
		run(text())
		run(text())
		for range 20 {
			q := text()
			// The resets are parsed when new, exact hits after.
			run("DO 0")
			before := srv.plans.Parsed()
			got := run(q)
			if p := srv.plans.Parsed() - before; p != 0 {
				t.Fatalf("%s: the parser ran %d times: no template answered", q, p)
			}
			gotWarn := c.reply("SHOW WARNINGS")
			// A comment's digits are not values: the text with a new
			// one is parsed as itself.
			ref++
			want := run(fmt.Sprintf("%s /* %d */", q, ref))
			wantWarn := c.reply("SHOW WARNINGS")
			if !bytes.Equal(got, want) || !bytes.Equal(gotWarn, wantWarn) {
				t.Fatalf("%s:\ntemplate %q\n         %q\nparsed   %q\n         %q", q, got, gotWarn, want, wantWarn)
			}
		}
	}
	// Flickr's statement with other stubs: each text takes the next id
	// of its own stub's row, through the template.
	before := srv.plans.Parsed()
	for i, stub := range []string{"b", "c", "b", "d", "c"} {
		if got := mustQuery(t, c, "REPLACE INTO Tickets64 (stub) VALUES ('"+stub+"')"); got != "" {
			t.Fatalf("REPLACE answered %q", got)
		}
		id := mustQuery(t, c, "SELECT LAST_INSERT_ID()")
		if got := mustQuery(t, c, "SELECT stub FROM Tickets64 WHERE id = "+id); got != stub {
			t.Fatalf("REPLACE %d ('%s'): the new id's row has stub %q", i, stub, got)
		}
	}
	if p := srv.plans.Parsed() - before; p > 6 {
		t.Errorf("the parser ran %d times for 15 statements of three shapes", p)
	}
}
