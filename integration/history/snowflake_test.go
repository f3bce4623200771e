package history

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCheckSnowflake: clean logs pass; each kind of violation is found.
func TestCheckSnowflake(t *testing.T) {
	lay := SnowflakeLayout{WorkerBits: 2, SequenceBits: 2, EpochMs: 0}
	id := func(ms int64, slot int, seq int64) string {
		return itoa(ms<<4 | int64(slot)<<2 | seq)
	}
	write := func(dir, name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// a holds slot 1 (epoch 1) until 1000 ms; b takes it at epoch 2 with
	// floor 1000 and issues from 1001 ms; a torn last line is ignored.
	clean := func(dir string, bLines ...string) []string {
		a := write(dir, "a", "C 10 1 1 0 0", "I 100 120 "+id(100, 1, 0)+" "+id(100, 1, 1)+" "+id(101, 1, 0),
			"I 990 1000 "+id(1000, 1, 0), "E 1200 expired")
		b := write(dir, "b", append([]string{"E 500 nofree", "C 2000 1 2 1000 0"}, bLines...)...)
		return []string{a, b}
	}
	dir := t.TempDir()
	paths := clean(dir, "I 2001 2002 "+id(2001, 1, 0), "R 2100 2001", "W 2100 3")
	if err := os.WriteFile(paths[1], append(must(os.ReadFile(paths[1])), "I 22"...), 0o644); err != nil {
		t.Fatal(err)
	}
	st, bad, err := CheckSnowflake(paths, lay)
	if err != nil || len(bad) > 0 {
		t.Fatalf("clean logs: %v %v", bad, err)
	}
	if st.IDs != 5 || st.Claims != 2 || st.Reused != 1 || st.Released != 1 || st.RollbackWaits != 3 || st.Events["nofree"] != 1 || st.Events["expired"] != 1 {
		t.Fatalf("stats %s", st)
	}
	for _, c := range []struct {
		name string
		b    []string
		want string
	}{
		{"duplicate", []string{"I 2001 2002 " + id(1000, 1, 0)}, "issued twice"},
		{"at the floor", []string{"I 2001 2002 " + id(1000, 1, 1)}, "floor"},
		{"other slot", []string{"I 2001 2002 " + id(2001, 2, 0)}, "in slot 2"},
		{"while a still issued", []string{"I 995 2002 " + id(2001, 1, 0)}, "still issued"},
		{"same epoch", nil, "granted twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			paths := clean(dir, c.b...)
			if c.b == nil {
				paths = append(paths, write(dir, "c", "C 3000 1 2 1000 0"))
			}
			_, bad, err := CheckSnowflake(paths, lay)
			if err != nil {
				t.Fatal(err)
			}
			if len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), c.want) {
				t.Fatalf("found %q, want %q", bad, c.want)
			}
		})
	}
	// An earlier holder's timestamps above a later one's.
	dir = t.TempDir()
	a := write(dir, "a", "C 10 3 1 0 0", "I 100 120 "+id(5000, 3, 0))
	b := write(dir, "b", "C 2000 3 2 0 0", "I 2001 2002 "+id(4000, 3, 0))
	if _, bad, _ := CheckSnowflake([]string{a, b}, lay); len(bad) == 0 || !strings.Contains(bad[0], "not above") {
		t.Fatalf("overlapping timestamps: %q", bad)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
