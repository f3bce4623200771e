package ticket

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

func keyCmd(now int64, k model.KeyCommand) *model.Command {
	return &model.Command{Op: model.OpKeys, Key: &k, Now: time.UnixMilli(now)}
}

func runKey(t *testing.T, s Store, now int64, k model.KeyCommand) model.KeyReply {
	t.Helper()
	r, err := Apply(s, keyCmd(now, k))
	if err != nil {
		t.Fatal(err)
	}
	if r.Err != nil || r.Key == nil {
		t.Fatalf("%+v: result %+v", k, r)
	}
	return *r.Key
}

func TestParseInt(t *testing.T) {
	good := map[string]int64{"0": 0, "1": 1, "-1": -1, "9223372036854775807": math.MaxInt64, "-9223372036854775808": math.MinInt64}
	for s, want := range good {
		if v, ok := ParseInt(s); !ok || v != want {
			t.Errorf("ParseInt(%q) = %d, %v", s, v, ok)
		}
	}
	for _, s := range []string{"", "-", "+1", " 1", "1 ", "01", "-0", "00", "1.5", "9223372036854775808", "-9223372036854775809", "1e3", "0x10"} {
		if v, ok := ParseInt(s); ok {
			t.Errorf("ParseInt(%q) = %d, accepted", s, v)
		}
	}
}

// TestKeyIncr: Redis 7's INCRBY: absent counts as 0, a non-integer or a
// result outside int64 is an error that changes nothing, the expiry stays.
func TestKeyIncr(t *testing.T) {
	s := NewMemStore()
	incr := func(name string, d int64) model.KeyReply {
		return runKey(t, s, 1000, model.KeyCommand{Op: model.KeyIncr, Keys: []string{name}, Delta: d})
	}
	if r := incr("a", 1); r != intReply(1) {
		t.Fatalf("first INCR %+v", r)
	}
	if r := incr("a", 41); r != intReply(42) {
		t.Fatalf("INCRBY 41 %+v", r)
	}
	if r := incr("a", -50); r != intReply(-8) {
		t.Fatalf("DECRBY 50 %+v", r)
	}
	runKey(t, s, 1000, model.KeyCommand{Op: model.KeySet, Keys: []string{"big"}, Value: "9223372036854775806"})
	if r := incr("big", 1); r != intReply(math.MaxInt64) {
		t.Fatalf("to max %+v", r)
	}
	if r := incr("big", 1); r != errReply(ErrOverflow) {
		t.Fatalf("past max %+v", r)
	}
	if v, _, _ := s.Key(0, "big"); v.Val != "9223372036854775807" {
		t.Fatalf("overflow changed the value: %q", v.Val)
	}
	runKey(t, s, 1000, model.KeyCommand{Op: model.KeySet, Keys: []string{"s"}, Value: "x"})
	if r := incr("s", 1); r != errReply(ErrNotInteger) {
		t.Fatalf("INCR of a string %+v", r)
	}
	// Expiry kept; an expired key starts again from 0.
	runKey(t, s, 1000, model.KeyCommand{Op: model.KeyExpire, Keys: []string{"a"}, TTL: 500})
	if r := runKey(t, s, 1100, model.KeyCommand{Op: model.KeyIncr, Keys: []string{"a"}, Delta: 1}); r != intReply(-7) {
		t.Fatalf("INCR before expiry %+v", r)
	}
	if v, _, _ := s.Key(0, "a"); v.ExpireAt != 1500 {
		t.Fatalf("INCR dropped the expiry: %+v", v)
	}
	if r := runKey(t, s, 1500, model.KeyCommand{Op: model.KeyIncr, Keys: []string{"a"}, Delta: 1}); r != intReply(1) {
		t.Fatalf("INCR at expiry %+v", r)
	}
	// Databases are apart.
	if r := runKey(t, s, 1000, model.KeyCommand{Op: model.KeyIncr, DB: 3, Keys: []string{"a"}, Delta: 5}); r != intReply(5) {
		t.Fatalf("db 3 %+v", r)
	}
}

func TestKeySet(t *testing.T) {
	s := NewMemStore()
	set := func(now int64, v string, f model.KeyFlags, ttl int64) model.KeyReply {
		return runKey(t, s, now, model.KeyCommand{Op: model.KeySet, Keys: []string{"k"}, Value: v, Flags: f, TTL: ttl})
	}
	ok, null := model.KeyReply{Kind: model.ReplyOK}, model.KeyReply{Kind: model.ReplyNil}
	bulk := func(s string) model.KeyReply { return model.KeyReply{Kind: model.ReplyBulk, Str: s} }
	steps := []struct {
		v     string
		f     model.KeyFlags
		ttl   int64
		want  model.KeyReply
		stays string // the value after
	}{
		{"a", model.KeyXX, 0, null, ""},
		{"a", model.KeyXX | model.KeyGet, 0, null, ""},
		{"a", model.KeyNX, 0, ok, "a"},
		{"b", model.KeyNX, 0, null, "a"},
		{"b", model.KeyNX | model.KeyGet, 0, bulk("a"), "a"},
		{"b", model.KeyXX | model.KeyGet, 0, bulk("a"), "b"},
		{"c", model.KeyGet, 0, bulk("b"), "c"},
		{"d", 0, 0, ok, "d"},
	}
	for i, st := range steps {
		if r := set(1000, st.v, st.f, st.ttl); r != st.want {
			t.Fatalf("step %d: %+v, want %+v", i, r, st.want)
		}
		v, _, _ := s.Key(0, "k")
		if v.Val != st.stays {
			t.Fatalf("step %d: value %q, want %q", i, v.Val, st.stays)
		}
	}
	set(1000, "e", model.KeyExpires, 100)
	if v, _, _ := s.Key(0, "k"); v.ExpireAt != 1100 {
		t.Fatalf("EX: %+v", v)
	}
	set(1050, "f", model.KeyKeepTTL, 0)
	if v, _, _ := s.Key(0, "k"); v.ExpireAt != 1100 || v.Val != "f" {
		t.Fatalf("KEEPTTL: %+v", v)
	}
	set(1050, "g", 0, 0)
	if v, _, _ := s.Key(0, "k"); v.ExpireAt != 0 {
		t.Fatalf("plain SET kept the expiry: %+v", v)
	}
	if r := set(1050, "h", model.KeyExpires|model.KeyAbsolute, 10); r != ok {
		t.Fatalf("PXAT in the past: %+v", r)
	}
	if _, exists, _ := s.Key(0, "k"); exists {
		t.Fatal("PXAT in the past left the key")
	}
}

func TestKeyExpireDelPersistSweep(t *testing.T) {
	s := NewMemStore()
	for _, k := range []string{"a", "b", "c"} {
		runKey(t, s, 0, model.KeyCommand{Op: model.KeySet, Keys: []string{k}, Value: "1"})
	}
	exp := func(name string, f model.KeyFlags, ttl int64) int64 {
		return runKey(t, s, 1000, model.KeyCommand{Op: model.KeyExpire, Keys: []string{name}, Flags: f, TTL: ttl}).Int
	}
	for i, st := range []struct {
		f    model.KeyFlags
		ttl  int64
		want int64
		at   int64
	}{
		{model.KeyXX, 100, 0, 0},
		{model.KeyGT, 100, 0, 0},
		{model.KeyLT, 500, 1, 1500},
		{model.KeyNX, 100, 0, 1500},
		{model.KeyGT, 400, 0, 1500},
		{model.KeyGT, 600, 1, 1600},
		{model.KeyLT, 700, 0, 1600},
		{model.KeyXX, 200, 1, 1200},
	} {
		if got := exp("a", st.f, st.ttl); got != st.want {
			t.Fatalf("step %d: %d, want %d", i, got, st.want)
		}
		if v, _, _ := s.Key(0, "a"); v.ExpireAt != st.at {
			t.Fatalf("step %d: expires at %d, want %d", i, v.ExpireAt, st.at)
		}
	}
	if got := exp("missing", 0, 100); got != 0 {
		t.Fatalf("EXPIRE of a missing key: %d", got)
	}
	if got := exp("b", 0, -1); got != 1 {
		t.Fatalf("EXPIRE in the past: %d", got)
	}
	if _, ok, _ := s.Key(0, "b"); ok {
		t.Fatal("EXPIRE in the past left the key")
	}
	if r := runKey(t, s, 1000, model.KeyCommand{Op: model.KeyPersist, Keys: []string{"c"}}); r.Int != 0 {
		t.Fatalf("PERSIST without expiry: %+v", r)
	}
	if r := runKey(t, s, 1000, model.KeyCommand{Op: model.KeyPersist, Keys: []string{"a"}}); r.Int != 1 {
		t.Fatalf("PERSIST: %+v", r)
	}
	exp("a", 0, 100)
	// The sweep deletes only what has expired at its time.
	if r := runKey(t, s, 1050, model.KeyCommand{Op: model.KeySweep, Keys: []string{"a", "c"}}); r.Int != 0 {
		t.Fatalf("early sweep: %+v", r)
	}
	if r := runKey(t, s, 1100, model.KeyCommand{Op: model.KeySweep, Keys: []string{"a", "c"}}); r.Int != 1 {
		t.Fatalf("sweep: %+v", r)
	}
	if r := runKey(t, s, 1100, model.KeyCommand{Op: model.KeyDel, Keys: []string{"a", "c", "c", "zz"}}); r.Int != 1 {
		t.Fatalf("DEL: %+v", r)
	}
}

func TestKeyMalformed(t *testing.T) {
	s := NewMemStore()
	for _, k := range []model.KeyCommand{{}, {Op: model.KeyIncr}, {Op: model.KeyIncr, DB: 16, Keys: []string{"a"}}, {Op: 99, Keys: []string{"a"}}, {Op: model.KeyIncr, Keys: []string{"a", "b"}}} {
		r, err := Apply(s, keyCmd(0, k))
		if err != nil || r.Err == nil {
			t.Errorf("%+v: %+v %v", k, r, err)
		}
	}
}

// TestKeysRestoreAndAdvance: a restore replaces the key space, and moves
// integer keys as it moves tables' counters.
func TestKeysRestoreAndAdvance(t *testing.T) {
	d := model.Dump{Keys: []model.KeyEntry{
		{DB: 0, Name: "day", KeyVal: model.KeyVal{Val: "41"}},
		{DB: 0, Name: "neg", KeyVal: model.KeyVal{Val: "-5"}},
		{DB: 2, Name: "s", KeyVal: model.KeyVal{Val: "text", ExpireAt: 99}},
	}}
	if _, err := AdvanceDump(&d, 1000, 0); err != nil {
		t.Fatal(err)
	}
	if d.Keys[0].Val != "1041" || d.Keys[1].Val != "-5" || d.Keys[2].Val != "text" {
		t.Fatalf("advanced: %+v", d.Keys)
	}
	if _, err := AdvanceDump(&d, 0, 5000); err != nil || d.Keys[0].Val != "4999" {
		t.Fatalf("floor: %+v %v", d.Keys, err)
	}
	big := model.Dump{Keys: []model.KeyEntry{{Name: "m", KeyVal: model.KeyVal{Val: "9223372036854775800"}}}}
	if _, err := AdvanceDump(&big, 100, 0); !errors.Is(err, ErrAdvanceOverflow) || big.Keys[0].Val != "9223372036854775800" {
		t.Fatalf("overflow: %v %+v", err, big.Keys)
	}
	s := NewMemStore()
	runKey(t, s, 0, model.KeyCommand{Op: model.KeySet, Keys: []string{"old"}, Value: "1"})
	r, err := Apply(s, &model.Command{Op: model.OpRestore, Dump: &d})
	if err != nil || r.Err == nil {
		t.Fatalf("restore over keys, unforced: %+v %v", r, err)
	}
	r, err = Apply(s, &model.Command{Op: model.OpRestore, Dump: &d, Force: true})
	if err != nil || r.Err != nil {
		t.Fatalf("forced restore: %+v %v", r, err)
	}
	got, _ := AllKeys(s)
	if len(got) != 3 || got[0] != d.Keys[0] || got[2] != d.Keys[2] {
		t.Fatalf("keys after restore %+v", got)
	}
	bad := model.Dump{Keys: []model.KeyEntry{{DB: 0, Name: "b"}, {DB: 0, Name: "a"}}}
	if err := ValidateDump(&bad); !errors.Is(err, ErrBadDump) {
		t.Fatalf("unsorted keys: %v", err)
	}
}
