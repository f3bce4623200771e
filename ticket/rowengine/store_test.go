package rowengine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/ticketd/ticketd/ticket/model"
)

// TestKeyBytesOrder: the key encoding orders values as the column type
// compares them (compareDatum), equal exactly when they compare equal, in
// either collation.
func TestKeyBytesOrder(t *testing.T) {
	cols := []model.RowCol{
		{Kind: model.ColInt, Int: model.IntType{Kind: model.BigInt}},
		{Kind: model.ColInt, Int: model.IntType{Kind: model.BigInt, Unsigned: true}},
		{Kind: model.ColString, Len: 8},
		{Kind: model.ColDateTime},
	}
	vals := [][]model.Datum{
		{{Null: true}, {S: "-9223372036854775808"}, {S: "-5"}, {S: "-1"}, {S: "0"}, {S: "1"}, {S: "255"}, {S: "256"}, {S: "9223372036854775807"}},
		{{Null: true}, {S: "0"}, {S: "1"}, {S: "9223372036854775808"}, {S: "18446744073709551615"}},
		{{Null: true}, {S: ""}, {S: "a"}, {S: "A "}, {S: "a\x00"}, {S: "ab"}, {S: "B"}, {S: "b\x00c"}, {S: "b\x01"},
			{S: "é"}, {S: "E"}, {S: "_"}, {S: "ß"}, {S: "s"}, {S: "😀"}, {S: "🚀"}, {S: "a\t"}, {S: "a b"}},
		{{Null: true}, {S: "2024-01-01 00:00:00"}, {S: "2024-01-01 00:00:01"}, {S: "2025-01-01 00:00:00"}},
	}
	for _, coll := range []model.Collation{model.CollLegacy, model.CollGeneralCI, model.CollBin, model.CollGeneralCI3, model.CollBin3} {
		for i := range cols {
			col := &cols[i]
			for _, a := range vals[i] {
				for _, b := range vals[i] {
					ka, kb := string(keyBytes(nil, coll, col, a)), string(keyBytes(nil, coll, col, b))
					want := compareDatum(coll, col, a, b)
					got := 0
					if ka < kb {
						got = -1
					} else if ka > kb {
						got = 1
					}
					if got != want {
						t.Errorf("%v, kind %d: %q vs %q: keys compare %d, values %d", coll, col.Kind, a.S, b.S, got, want)
					}
				}
			}
		}
	}
}

// TestRowTreeMatchesSlice: random writes to a RowTree with a unique and a
// plain secondary key, against a sorted slice: the clustering order,
// every index's order, and duplicate refusals agree.
func TestRowTreeMatchesSlice(t *testing.T) {
	d, err := newTableDef(&model.TableSpec{DB: "d", Name: "t", Columns: []model.ColumnSpec{
		{Name: "id", Type: "int", NotNull: true}, {Name: "u", Type: "varchar", Width: 4}, {Name: "v", Type: "int"}},
		Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}, {Unique: true, Name: "u", Columns: []string{"u"}}, {Name: "v", Columns: []string{"v", "u"}}}})
	if err != nil {
		t.Fatal(err)
	}
	rd := d.Rows
	rt := NewRowTree(rd)
	ref := map[string][]model.Datum{} // by id
	r := rand.New(rand.NewPCG(3, 4))
	for step := range 20000 {
		id := strconv.Itoa(r.IntN(300) - 100)
		if r.IntN(3) == 0 {
			pk, _ := IndexKey(rd, 0, []model.Datum{{S: id}, {}, {}})
			must(t, rt.Delete(pk))
			delete(ref, id)
			continue
		}
		row := []model.Datum{{S: id}, {S: string(rune('a' + r.IntN(26)))}, {S: strconv.Itoa(r.IntN(10))}}
		if r.IntN(4) == 0 {
			row[1] = model.Datum{Null: true}
		}
		dup := false
		for oid, o := range ref {
			if oid != id && !row[1].Null && !o[1].Null && compareColl(rd.Collation, o[1].S, row[1].S) == 0 {
				dup = true
			}
		}
		_, err := rt.Put("", row)
		if dup != (err != nil) {
			t.Fatalf("step %d: put %v: err %v, duplicate %v", step, row, err, dup)
		}
		if err == nil {
			ref[id] = row
		}
	}
	if rt.Len() != len(ref) {
		t.Fatalf("%d rows, want %d", rt.Len(), len(ref))
	}
	want := slices.Collect(func(yield func([]model.Datum) bool) {
		for _, row := range ref {
			if !yield(row) {
				return
			}
		}
	})
	for _, index := range []int{ClusterIndex, 1, 2} {
		order := func(a, b []model.Datum) int {
			switch index {
			case 1:
				if c := compareDatum(rd.Collation, &rd.Cols[1], a[1], b[1]); c != 0 {
					return c
				}
			case 2:
				if c := compareDatum(rd.Collation, &rd.Cols[2], a[2], b[2]); c != 0 {
					return c
				}
				if c := compareDatum(rd.Collation, &rd.Cols[1], a[1], b[1]); c != 0 {
					return c
				}
			}
			return compareDatum(rd.Collation, &rd.Cols[0], a[0], b[0])
		}
		slices.SortFunc(want, order)
		var got [][]model.Datum
		must(t, rt.Scan(index, "", "", func(_ string, row []model.Datum) bool { got = append(got, row); return true }))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("index %d order:\n got %v\nwant %v", index, got, want)
		}
	}
	// A range of the secondary key: v = 3.
	lo := ValueKey(rd, 2, []model.Datum{{S: "3"}})
	n := 0
	must(t, rt.Scan(2, lo, PrefixEnd(lo), func(_ string, row []model.Datum) bool {
		if row[2].S != "3" {
			t.Errorf("v=3 range gave %v", row)
		}
		n++
		return true
	}))
	for _, row := range ref {
		if row[2].S == "3" {
			n--
		}
	}
	if n != 0 {
		t.Errorf("v=3 range missed or added %d rows", n)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRowTreeMemory reports the heap a WORKER_NODE row costs in a
// RowTree (bytes/row), over 1,000,000 rows.
func BenchmarkRowTreeMemory(b *testing.B) {
	d, err := newTableDef(workerSpec())
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000000
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rt := NewRowTree(d.Rows)
		for i := range n {
			row := []model.Datum{{S: strconv.Itoa(i + 1)}, {S: fmt.Sprintf("10.0.%d.%d", i/250%250, i%250)},
				{S: strconv.Itoa(i) + "-1732000000000"}, {S: "2026-11-24"}, {S: "2026-11-24 10:00:00"}}
			if _, err := rt.Put("", row); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/row")
		runtime.KeepAlive(rt)
	}
}

// TestChangedIsTheTree: what the changed set (EachChanged) reports for
// each key (the stored row, or gone) is what the tree holds under it at
// that moment, through
// puts, replacements, deletes, failed puts (a duplicate unique key),
// re-indexing (Rebuild, which moves rows to other clustering keys) and
// ClearChanged, and every key written since ClearChanged is listed.
// Checkpoints write exactly this into the state file.
func TestChangedIsTheTree(t *testing.T) {
	spec := func(keys ...model.KeySpec) *model.RowsDef {
		s := workerSpec()
		s.Columns[0].AutoInc = false
		s.Keys = keys
		d, err := newTableDef(s)
		if err != nil {
			t.Fatal(err)
		}
		return d.Rows
	}
	defs := []*model.RowsDef{
		spec(model.KeySpec{Primary: true, Columns: []string{"ID"}}),
		spec(model.KeySpec{Primary: true, Columns: []string{"ID"}}, model.KeySpec{Name: "p", Unique: true, Columns: []string{"PORT"}}),
		spec(model.KeySpec{Name: "p", Unique: true, Columns: []string{"PORT"}}), // clustered by PORT
	}
	r := rand.New(rand.NewPCG(3, 4))
	rt := NewRowTree(defs[0])
	rt.TrackChanges()
	written := map[string]bool{}
	rebuilt := make([]int, len(defs))
	for step := range 3000 {
		switch op := r.IntN(100); {
		case op < 60:
			id := r.IntN(300) + 1
			// Mostly a port of the row's own, sometimes one that may be
			// another row's (a duplicate under the unique key).
			port := "p" + strconv.Itoa(id)
			if r.IntN(20) == 0 {
				port = "p" + strconv.Itoa(r.IntN(300)+1)
			}
			row := []model.Datum{{S: strconv.Itoa(id)}, {S: "h" + strconv.Itoa(r.IntN(5))}, {S: port},
				{S: "2026-11-24"}, {S: "2026-11-24 10:00:00"}}
			if pk, err := rt.Put("", row); err == nil {
				written[pk] = true
			}
		case op < 90:
			var pks []string
			rt.rows.Ascend(func(it rowItem) bool { pks = append(pks, it.key()); return len(pks) < 50 })
			if len(pks) > 0 {
				pk := pks[r.IntN(len(pks))]
				if err := rt.Delete(pk); err != nil {
					t.Fatal(err)
				}
				written[pk] = true
			}
		case op < 95:
			rt.ClearChanged()
			clear(written)
		default:
			to := r.IntN(len(defs))
			n, err := rt.Rebuild(defs[to])
			if err != nil {
				continue // a duplicate under the new unique key
			}
			rebuilt[to]++
			rt.rows.Ascend(func(it rowItem) bool { written[it.key()] = true; return true })
			n.rows.Ascend(func(it rowItem) bool { written[it.key()] = true; return true })
			rt = n
		}
		seen := map[string]bool{}
		last := ""
		err := EachChanged(rt.changed, func(pk, stored string, ok bool) error {
			if len(seen) > 0 && pk <= last {
				return fmt.Errorf("key %q after %q: not in order", pk, last)
			}
			last = pk
			seen[pk] = true
			it, has := rt.rows.Get(probe(pk))
			if ok != has || (has && stored != it.b[it.klen:]) {
				return fmt.Errorf("key %q: the changed set says %q present %v, the tree holds %q present %v", pk, stored, ok, it.b, has)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for pk := range written {
			if !seen[pk] {
				t.Fatalf("step %d: key %q written since ClearChanged, not listed by Changed", step, pk)
			}
		}
	}
	for i, n := range rebuilt {
		if n < 3 {
			t.Errorf("re-indexed to definition %d %d times: the test no longer moves rows between layouts", i, n)
		}
	}
}

// countingRows counts a TableRows' writes.
type countingRows struct {
	TableRows
	puts, deletes int
}

func (c *countingRows) Put(pk string, row []model.Datum) (string, error) {
	c.puts++
	return c.TableRows.Put(pk, row)
}

func (c *countingRows) Delete(pk string) error {
	c.deletes++
	return c.TableRows.Delete(pk)
}

// TestReplaceKeepsKeyInOneWrite: an updated row that keeps its
// clustering key is one put over the old row (it was a delete and a
// put); one that moves to another key is a delete and a put; rolling
// the statement back restores both rows as they were.
func TestReplaceKeepsKeyInOneWrite(t *testing.T) {
	d, err := newTableDef(workerSpec())
	if err != nil {
		t.Fatal(err)
	}
	rt := NewRowTree(d.Rows)
	row := func(id int, port string) []model.Datum {
		return []model.Datum{{S: strconv.Itoa(id)}, {S: "h"}, {S: port}, {S: "2026-11-24"}, {S: "2026-11-24 10:00:00"}}
	}
	pks := map[int]string{}
	for id := 1; id <= 3; id++ {
		if pks[id], err = rt.Put("", row(id, "p")); err != nil {
			t.Fatal(err)
		}
	}
	var before []string
	_ = rt.ScanStored(func(pk, stored string) error { before = append(before, pk+stored); return nil })

	cr := &countingRows{TableRows: rt}
	tx := newRowsTx(d.Rows, cr)
	if err := tx.replace(pks[2], row(2, "new port")); err != nil {
		t.Fatal(err)
	}
	if cr.puts != 1 || cr.deletes != 0 {
		t.Errorf("same key: %d puts, %d deletes, want 1 put", cr.puts, cr.deletes)
	}
	if got, _ := rt.Get(pks[2]); got[2].S != "new port" || rt.Len() != 3 {
		t.Errorf("same key: row %v, %d rows", got, rt.Len())
	}
	if err := tx.replace(pks[3], row(9, "moved")); err != nil {
		t.Fatal(err)
	}
	if cr.puts != 2 || cr.deletes != 1 {
		t.Errorf("new key: %d puts, %d deletes in all, want 2 and 1", cr.puts, cr.deletes)
	}
	if _, ok := rt.Get(pks[3]); ok || rt.Len() != 3 {
		t.Errorf("new key: the old key still holds a row, or %d rows", rt.Len())
	}
	if err := tx.rollback(); err != nil {
		t.Fatal(err)
	}
	var after []string
	_ = rt.ScanStored(func(pk, stored string) error { after = append(after, pk+stored); return nil })
	if !slices.Equal(before, after) {
		t.Errorf("after rollback:\n%q\nwant\n%q", after, before)
	}
}
