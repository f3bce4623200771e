package ticket

import (
	"errors"
	"math"
	"testing"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// seqStore is a MemStore with database d and the sequence d.s made with opts.
func seqStore(t *testing.T, opts ...model.SeqOption) *MemStore {
	t.Helper()
	st := NewMemStore()
	mustApply(t, st, &model.Command{Op: model.OpCreateDB, DB: "d"})
	def, _, err := NewSequenceDef("d", "s", "", opts)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, st, &model.Command{Op: model.OpCreateSeq, DB: "d", Table: "s", Def: def})
	return st
}

func mustApply(t *testing.T, st Store, c *model.Command) model.Result {
	t.Helper()
	r, err := Apply(st, c)
	if err != nil || r.Err != nil {
		t.Fatalf("%v: %v %v", c, err, r.Err)
	}
	return r
}

// nextval takes one value through Apply (NOCACHE's path), or the error code.
func nextval(t *testing.T, st Store) (int64, uint16) {
	t.Helper()
	r, err := Apply(st, &model.Command{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{Count: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Err != nil {
		return 0, r.Err.Code
	}
	return int64(r.First), 0
}

func seqRow(t *testing.T, st Store) model.SequenceDef {
	t.Helper()
	tb, err := st.Table("d", "s")
	if err != nil || tb == nil || tb.Def.Seq == nil {
		t.Fatalf("no sequence: %v", err)
	}
	return *tb.Def.Seq
}

func wantValues(t *testing.T, st Store, want ...int64) {
	t.Helper()
	for i, w := range want {
		v, code := nextval(t, st)
		if code != 0 || v != w {
			t.Fatalf("value %d: got %d (error %d), want %d", i, v, code, w)
		}
	}
}

func TestSequenceDefaults(t *testing.T) {
	def, _, err := NewSequenceDef("d", "s", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := model.SequenceDef{Start: 1, Min: 1, Max: math.MaxInt64 - 1, Increment: 1, Cache: 1000, Next: 1, Free: 1}
	if *def.Seq != want {
		t.Fatalf("got %+v want %+v", *def.Seq, want)
	}
	if got := CreateSequenceStatement(def); got != "CREATE SEQUENCE `s` start with 1 minvalue 1 maxvalue 9223372036854775806 increment by 1 cache 1000 nocycle ENGINE=InnoDB" {
		t.Fatal(got)
	}
	neg, _, err := NewSequenceDef("d", "n", "", []model.SeqOption{{Kind: model.SeqIncrement, Value: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if s := neg.Seq; s.Start != -1 || s.Max != -1 || s.Min != math.MinInt64+1 {
		t.Fatalf("negative defaults %+v", *s)
	}
}

func TestSequenceInvalidOptions(t *testing.T) {
	for _, opts := range [][]model.SeqOption{
		{{Kind: model.SeqStart, Value: 10}, {Kind: model.SeqMax, Value: 5}},
		{{Kind: model.SeqMin, Value: 10}, {Kind: model.SeqMax, Value: 5}},
		{{Kind: model.SeqMin, Value: 5}, {Kind: model.SeqMax, Value: 5}},
		{{Kind: model.SeqCache, Value: -1}},
		{{Kind: model.SeqStart, Value: 0}},
		{{Kind: model.SeqMax, Value: math.MaxInt64}}, // MariaDB 10.11: 4085, not a truncation
		{{Kind: model.SeqIncrement, Value: math.MaxInt64 / 2}, {Kind: model.SeqCache, Value: 1000}},
	} {
		_, _, err := NewSequenceDef("d", "s", "", opts)
		var e *model.Error
		if !errors.As(err, &e) || e.Code != mysqlerr.CodeSequenceInvalidData {
			t.Errorf("%v: got %v, want 4085", opts, err)
		}
	}
}

func TestSequenceBoundsAndRunOut(t *testing.T) {
	st := seqStore(t, model.SeqOption{Kind: model.SeqMax, Value: 3}, model.SeqOption{Kind: model.SeqNoCache})
	wantValues(t, st, 1, 2, 3)
	if row := seqRow(t, st); row.Next != 4 {
		t.Fatalf("next_not_cached_value %d, want 4 (MariaDB: max+1)", row.Next)
	}
	for range 2 {
		if _, code := nextval(t, st); code != mysqlerr.CodeSequenceRunOut {
			t.Fatalf("past MAXVALUE: error %d, want 4084", code)
		}
	}
	if row := seqRow(t, st); row.Next != 4 || row.Round != 0 {
		t.Fatalf("a failed NEXTVAL changed the row: %+v", row)
	}
}

func TestSequenceCycleAndRanges(t *testing.T) {
	// MariaDB 10.11: max 3, cache 2, cycle gives 1 2 3 1 2 and the row
	// (3, ..., cycle_count 1).
	st := seqStore(t, model.SeqOption{Kind: model.SeqMax, Value: 3}, model.SeqOption{Kind: model.SeqCache, Value: 2}, model.SeqOption{Kind: model.SeqCycle})
	var got []int64
	var ranges [][2]int64
	for len(got) < 5 {
		r := mustApply(t, st, &model.Command{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{}})
		first, end, inc := int64(r.First), int64(r.Last), int64(r.Matched)
		ranges = append(ranges, [2]int64{first, end})
		for v := first; v < end && len(got) < 5; v += inc {
			got = append(got, v)
		}
	}
	want := []int64{1, 2, 3, 1, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("values %v, want %v", got, want)
		}
	}
	// No range straddles the wrap: [1,3) [3,4) [1,3).
	if len(ranges) != 3 || ranges[1] != [2]int64{3, 4} || ranges[2] != [2]int64{1, 3} {
		t.Fatalf("ranges %v", ranges)
	}
	if row := seqRow(t, st); row.Next != 3 || row.Round != 1 {
		t.Fatalf("row %+v, want next 3 cycle_count 1", row)
	}
}

func TestSequenceNegativeIncrement(t *testing.T) {
	st := seqStore(t, model.SeqOption{Kind: model.SeqIncrement, Value: -2}, model.SeqOption{Kind: model.SeqMin, Value: -5},
		model.SeqOption{Kind: model.SeqMax, Value: 0}, model.SeqOption{Kind: model.SeqNoCache}, model.SeqOption{Kind: model.SeqCycle})
	wantValues(t, st, 0, -2, -4, 0, -2)
	if row := seqRow(t, st); row.Round != 1 {
		t.Fatalf("row %+v", row)
	}
	st2 := seqStore(t, model.SeqOption{Kind: model.SeqIncrement, Value: -1})
	r := mustApply(t, st2, &model.Command{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{}})
	if int64(r.First) != -1 || int64(r.Last) != -1001 || seqRow(t, st2).Next != -1001 {
		t.Fatalf("negative range [%d, %d)", int64(r.First), int64(r.Last))
	}
}

func setval(t *testing.T, st Store, v int64, sc *model.SeqCommand) (int64, bool) {
	t.Helper()
	if sc == nil {
		sc = &model.SeqCommand{}
	}
	sc.Value = v
	r := mustApply(t, st, &model.Command{Op: model.OpSetVal, DB: "d", Table: "s", Seq: sc})
	return int64(r.First), r.Affected == 1
}

func TestSequenceSetVal(t *testing.T) {
	// MariaDB 10.11, START 10 INCREMENT 5 MAXVALUE 100 NOCACHE.
	st := seqStore(t, model.SeqOption{Kind: model.SeqStart, Value: 10}, model.SeqOption{Kind: model.SeqIncrement, Value: 5},
		model.SeqOption{Kind: model.SeqMax, Value: 100}, model.SeqOption{Kind: model.SeqNoCache})
	if v, ok := setval(t, st, 20, nil); !ok || v != 20 {
		t.Fatalf("SETVAL 20: %d %v", v, ok)
	}
	wantValues(t, st, 25)
	if _, ok := setval(t, st, 15, nil); ok {
		t.Fatal("SETVAL behind the next value must answer NULL")
	}
	if _, ok := setval(t, st, 26, nil); !ok {
		t.Fatal("SETVAL 26")
	}
	wantValues(t, st, 31)
	if _, ok := setval(t, st, 200, nil); !ok {
		t.Fatal("SETVAL past MAXVALUE is taken")
	}
	if _, code := nextval(t, st); code != mysqlerr.CodeSequenceRunOut {
		t.Fatalf("after SETVAL past MAXVALUE: %d", code)
	}
	if row := seqRow(t, st); row.Next != 101 {
		t.Fatalf("row %+v, want next 101", row)
	}
}

func TestSequenceSetValInsideLeaderRange(t *testing.T) {
	// CACHE 1000: the leader reserved [1, 1001) and handed out 1 and 2.
	st := seqStore(t)
	mustApply(t, st, &model.Command{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{}})
	// Without the leader's position the state only knows 1001: 500 is behind.
	if _, ok := setval(t, st, 500, nil); ok {
		t.Fatal("SETVAL inside the reserved range without the cache position")
	}
	// With it (the leader dropped its cache at 3), 500 is ahead: MariaDB
	// answers 500 and continues at 501, keeping next_not_cached_value.
	if _, ok := setval(t, st, 500, &model.SeqCommand{HasFree: true, Free: 3, Until: 1001}); !ok {
		t.Fatal("SETVAL 500 after the leader's 2")
	}
	if row := seqRow(t, st); row.Next != 1001 || row.Free != 501 {
		t.Fatalf("row %+v", row)
	}
	r := mustApply(t, st, &model.Command{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{}})
	if r.First != 501 || r.Last != 1001 {
		t.Fatalf("range after SETVAL [%d, %d)", r.First, r.Last)
	}
	// A stale position (the state moved on since) is ignored.
	if _, ok := setval(t, st, 1500, &model.SeqCommand{HasFree: true, Free: 3, Until: 1001}); !ok {
		t.Fatal("SETVAL 1500")
	}
	if _, ok := setval(t, st, 1400, &model.SeqCommand{HasFree: true, Free: 3, Until: 1001}); ok {
		t.Fatal("a stale cache position moved the sequence back")
	}
}

func TestSequenceAlter(t *testing.T) {
	st := seqStore(t, model.SeqOption{Kind: model.SeqStart, Value: 10}, model.SeqOption{Kind: model.SeqIncrement, Value: 5},
		model.SeqOption{Kind: model.SeqMax, Value: 100}, model.SeqOption{Kind: model.SeqCache, Value: 3})
	alter := func(opts ...model.SeqOption) *model.Error {
		r, err := Apply(st, &model.Command{Op: model.OpAlterSeq, DB: "d", Table: "s", Seq: &model.SeqCommand{Options: opts}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Err
	}
	mustApply(t, st, &model.Command{Op: model.OpSeqNext, DB: "d", Table: "s", Seq: &model.SeqCommand{}})
	if e := alter(model.SeqOption{Kind: model.SeqRestart}); e != nil {
		t.Fatal(e)
	}
	wantValues(t, st, 10)
	if e := alter(model.SeqOption{Kind: model.SeqRestartWith, Value: 42}); e != nil {
		t.Fatal(e)
	}
	wantValues(t, st, 42)
	if row := seqRow(t, st); row.Start != 10 {
		t.Fatalf("RESTART WITH changed start_value: %+v", row)
	}
	if e := alter(model.SeqOption{Kind: model.SeqStart, Value: 500}); e == nil || e.Code != mysqlerr.CodeSequenceInvalidData {
		t.Fatalf("START above MAXVALUE: %v", e)
	}
	if e := alter(model.SeqOption{Kind: model.SeqIncrement, Value: 2}, model.SeqOption{Kind: model.SeqCache, Value: 10}, model.SeqOption{Kind: model.SeqCycle}); e != nil {
		t.Fatal(e)
	}
	row := seqRow(t, st)
	if row.Increment != 2 || row.Cache != 10 || !row.Cycle || row.Free != row.Next {
		t.Fatalf("row %+v", row)
	}
	if r, _ := Apply(st, &model.Command{Op: model.OpAlterSeq, DB: "d", Table: "nosuch", Seq: &model.SeqCommand{}}); r.Err == nil || r.Err.Code != mysqlerr.CodeUnknownSequence {
		t.Fatalf("ALTER of an unknown sequence: %v", r.Err)
	}
}

func TestSequenceNamespace(t *testing.T) {
	st := seqStore(t)
	def, _, _ := NewSequenceDef("d", "s", "", nil)
	r, _ := Apply(st, &model.Command{Op: model.OpCreateSeq, DB: "d", Table: "s", Def: def})
	if r.Err == nil || r.Err.Code != mysqlerr.CodeTableExists {
		t.Fatalf("second CREATE SEQUENCE: %v", r.Err)
	}
	r, _ = Apply(st, &model.Command{Op: model.OpCreateTable, Def: tickets64("d", "s")})
	if r.Err == nil || r.Err.Code != mysqlerr.CodeTableExists {
		t.Fatalf("CREATE TABLE over a sequence: %v", r.Err)
	}
	mustApply(t, st, &model.Command{Op: model.OpCreateTable, Def: tickets64("d", "T")})
	r, _ = Apply(st, &model.Command{Op: model.OpSeqNext, DB: "d", Table: "T"})
	if r.Err == nil || r.Err.Code != mysqlerr.CodeNotSequence {
		t.Fatalf("NEXTVAL of a table: %v", r.Err)
	}
	r, _ = Apply(st, &model.Command{Op: model.OpDropSeq, DB: "d", Table: "T"})
	if r.Err == nil || r.Err.Code != mysqlerr.CodeNotSequence2 {
		t.Fatalf("DROP SEQUENCE of a table: %v", r.Err)
	}
	mustApply(t, st, &model.Command{Op: model.OpDropSeq, DB: "d", Table: "s"})
	r, _ = Apply(st, &model.Command{Op: model.OpDropSeq, DB: "d", Table: "s", IfExists: true})
	if r.Err != nil || len(r.Warnings) != 1 || r.Warnings[0].Code != mysqlerr.CodeUnknownSequence {
		t.Fatalf("DROP SEQUENCE IF EXISTS: %+v", r)
	}
	mustApply(t, st, &model.Command{Op: model.OpCreateSeq, DB: "d", Table: "s", Def: def})
	mustApply(t, st, &model.Command{Op: model.OpDropDB, DB: "d"})
	if tb, _ := st.Table("d", "s"); tb != nil {
		t.Fatal("DROP DATABASE left the sequence")
	}
}
