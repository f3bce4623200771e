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
	for _, q := range []string{
		"CREATE TABLE w (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, u BIGINT UNSIGNED, s VARCHAR(20), d INT, dt DATETIME, KEY (s))",
		"INSERT INTO w (u, s, d, dt) VALUES (18446744073709551615, 'a', 1, '2026-01-01 00:00:00'), (0, '7', -2, NULL), (5, '7x', 7, '2026-11-25 10:00:00'), (NULL, NULL, NULL, NULL)",
		"REPLACE INTO Tickets64 (stub) VALUES ('a')",
	} {
		if _, err := c.query(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	shapes := []string{
		"SELECT id, u, s, d, dt FROM w WHERE id = %d",
		"SELECT * FROM w WHERE %d = id OR u = %d",
		"SELECT id FROM w WHERE s = %d",
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
	}
	values := []int64{0, 1, 2, 3, 4, 5, 7, 18, 255, 256, 1 << 31, 1<<53 + 1, 999999999999999999}
	r := rand.New(rand.NewPCG(3, 4))
	ref := 0
	for _, shape := range shapes {
		n := bytes.Count([]byte(shape), []byte("%d"))
		text := func() string {
			args := make([]any, n)
			for i := range args {
				args[i] = values[r.IntN(len(values))]
			}
			return fmt.Sprintf(shape, args...)
		}
		// Two texts of the shape: the template is made at the second.
		c.reply(text())
		c.reply(text())
		for range 20 {
			q := text()
			before := srv.plans.Parsed()
			got := c.reply(q)
			if p := srv.plans.Parsed() - before; p != 0 {
				t.Fatalf("%s: the parser ran %d times: no template answered", q, p)
			}
			gotWarn := c.reply("SHOW WARNINGS")
			// A comment's digits are not values: the text with a new
			// one is parsed as itself.
			ref++
			want := c.reply(fmt.Sprintf("%s /* %d */", q, ref))
			wantWarn := c.reply("SHOW WARNINGS")
			if !bytes.Equal(got, want) || !bytes.Equal(gotWarn, wantWarn) {
				t.Fatalf("%s:\ntemplate %q\n         %q\nparsed   %q\n         %q", q, got, gotWarn, want, wantWarn)
			}
		}
	}
}
