package raftstore

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

func keyCommand(k model.KeyCommand) model.Command {
	return model.Command{Op: model.OpKeys, Key: &k}
}

func incrCmd(db uint8, name string, d int64) model.Command {
	return keyCommand(model.KeyCommand{Op: model.KeyIncr, DB: db, Keys: []string{name}, Delta: d})
}

// keyEntry is entry() stamped with a time, which key commands read.
func keyEntry(index uint64, at time.Time, cmds ...model.Command) *raft.Log {
	l := entry(index, cmds...)
	l.AppendedAt = at
	return l
}

func TestKeyCodecRoundTrip(t *testing.T) {
	cmds := []model.Command{
		incrCmd(0, "a", 1),
		incrCmd(15, "", -9),
		keyCommand(model.KeyCommand{Op: model.KeySet, DB: 3, Keys: []string{"k\x00bin"}, Value: "v", Flags: model.KeyNX | model.KeyGet | model.KeyExpires, TTL: 1500}),
		keyCommand(model.KeyCommand{Op: model.KeyDel, Keys: []string{"a", "b", "c"}}),
		keyCommand(model.KeyCommand{Op: model.KeyExpire, Keys: []string{"a"}, Flags: model.KeyAbsolute | model.KeyGT, TTL: -5}),
		{Op: model.OpRestore, Dump: &model.Dump{Keys: []model.KeyEntry{{DB: 1, Name: "x", KeyVal: model.KeyVal{Val: "12", ExpireAt: 99}}}}},
	}
	got, err := logformat.DecodeBatch(logformat.EncodeBatch(nil, cmds))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cmds) {
		t.Fatalf("decoded %+v\nwant %+v", got, cmds)
	}
	rs := []model.Result{
		{Key: &model.KeyReply{Kind: model.ReplyInt, Int: -7}},
		{Key: &model.KeyReply{Kind: model.ReplyBulk, Str: ""}},
		{Key: &model.KeyReply{Kind: model.ReplyNil}},
		{Key: &model.KeyReply{Kind: model.ReplyErr, Str: ticket.ErrOverflow}},
		{Key: &model.KeyReply{Kind: model.ReplyOK}},
	}
	gotRs, err := logformat.DecodeResults(logformat.EncodeResults(nil, rs))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotRs, rs) {
		t.Fatalf("decoded results %+v", gotRs)
	}
	// A key command that Apply could not run is refused by the decoder.
	bad := logformat.EncodeBatch(nil, []model.Command{keyCommand(model.KeyCommand{Op: model.KeyIncr, DB: 16, Keys: []string{"a"}})})
	if _, err := logformat.DecodeBatch(bad); err == nil {
		t.Fatal("decoded a key command for database 16")
	}
	if v := logformat.Version(&cmds[0]); v != 10 {
		t.Fatalf("key command version %d, want 10", v)
	}
	if v := logformat.Version(&cmds[5]); v != 10 {
		t.Fatalf("restore with keys: version %d, want 10", v)
	}
}

func keysOf(t *testing.T, r ticket.Reader) []model.KeyEntry {
	t.Helper()
	var out []model.KeyEntry
	must(t, r.View(func(s ticket.Store) (err error) { out, err = ticket.AllKeys(s); return err }))
	return out
}

// TestKeysCheckpointSnapshotBackup: keys survive a reopen (checkpoint),
// a snapshot restored elsewhere, and a backup; deleted keys stay deleted.
func TestKeysCheckpointSnapshotBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	f := openTestFSM(t, path)
	at := time.UnixMilli(1_800_000_000_000)
	rs := applyOK(t, f, keyEntry(1, at, incrCmd(0, "day", 1), incrCmd(0, "day", 1), incrCmd(2, "other", 40),
		keyCommand(model.KeyCommand{Op: model.KeySet, Keys: []string{"gone"}, Value: "x"}),
		keyCommand(model.KeyCommand{Op: model.KeyExpire, Keys: []string{"day"}, TTL: 60_000})))
	if rs[1].Key.Int != 2 || rs[2].Key.Int != 40 {
		t.Fatalf("results %+v %+v", rs[1].Key, rs[2].Key)
	}
	must(t, f.checkpoint())
	applyOK(t, f, keyEntry(2, at, keyCommand(model.KeyCommand{Op: model.KeyDel, Keys: []string{"gone"}})))
	want := []model.KeyEntry{
		{DB: 0, Name: "day", KeyVal: model.KeyVal{Val: "2", ExpireAt: at.UnixMilli() + 60_000}},
		{DB: 2, Name: "other", KeyVal: model.KeyVal{Val: "40"}},
	}
	must(t, f.Close())
	f = openTestFSM(t, path)
	if got := keysOf(t, f); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen %+v", got)
	}
	snap, err := f.Snapshot()
	must(t, err)
	var sink bufSink
	must(t, snap.Persist(&sink))
	snap.Release()
	g := openTestFSM(t, "")
	must(t, g.Restore(readCloser{bytes.NewReader(sink.Bytes())}))
	if got := keysOf(t, g); !reflect.DeepEqual(got, want) {
		t.Fatalf("after snapshot restore %+v", got)
	}
	if rs := applyOK(t, g, keyEntry(3, at, incrCmd(0, "day", 1))); rs[0].Key.Int != 3 {
		t.Fatalf("INCR after restore %+v", rs[0].Key)
	}
	data, _ := backupBytes(t, f)
	b, err := ReadBackup(bytes.NewReader(data), t.TempDir())
	must(t, err)
	if !reflect.DeepEqual(b.Dump.Keys, want) {
		t.Fatalf("backup keys %+v", b.Dump.Keys)
	}
}

// TestMixedClusterRefusesKeys: while a member runs command version 9, a
// key command is refused naming it, and nothing is written.
func TestMixedClusterRefusesKeys(t *testing.T) {
	c := startCluster(t, func(cfg *Config) {
		if cfg.NodeID == "n3" {
			cfg.commandVersion = 9
		}
	})
	waitFor(t, "every member's version announced", 10*time.Second, func() bool {
		v := statusVersions(c.nodes["n1"])
		return len(v) == 3 && v["n3"] == 9 && v["n2"] == CommandVersion
	})
	res := proposeRetry(t, c.follower(), incrCmd(0, "a", 1))
	if e := res[0].Err; e == nil || e.Code != model.CodeNotSupported || !strings.Contains(e.Message, "n3 (version 9") || !strings.Contains(e.Message, "Redis") {
		t.Fatalf("INCR in a mixed cluster: %+v", res[0])
	}
	if got := keysOf(t, c.leader()); len(got) != 0 {
		t.Fatalf("keys written: %+v", got)
	}
}

// TestKeySpaceExpiringIndex: the sweep's index holds exactly the keys
// with an expiry, through SET, EXPIRE, PERSIST, DEL and a reopen.
func TestKeySpaceExpiringIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	f := openTestFSM(t, path)
	at := time.UnixMilli(1_800_000_000_000)
	set := func(name string) model.Command {
		return keyCommand(model.KeyCommand{Op: model.KeySet, DB: 1, Keys: []string{name}, Value: "1"})
	}
	expire := func(name string) model.Command {
		return keyCommand(model.KeyCommand{Op: model.KeyExpire, DB: 1, Keys: []string{name}, TTL: 60_000})
	}
	applyOK(t, f, keyEntry(1, at, set("a"), set("b"), set("c"), set("d"), expire("a"), expire("b"), expire("c"),
		keyCommand(model.KeyCommand{Op: model.KeyPersist, DB: 1, Keys: []string{"b"}}),
		keyCommand(model.KeyCommand{Op: model.KeyDel, DB: 1, Keys: []string{"c"}})))
	expiring := func() map[string]int64 {
		out := map[string]int64{}
		must(t, f.View(func(s ticket.Store) error {
			return s.EachExpiring(1, func(name string, at int64) bool { out[name] = at; return true })
		}))
		return out
	}
	want := map[string]int64{"a": at.UnixMilli() + 60_000}
	if got := expiring(); !reflect.DeepEqual(got, want) {
		t.Fatalf("expiring %v, want %v", got, want)
	}
	must(t, f.checkpoint())
	must(t, f.Close())
	f = openTestFSM(t, path)
	if got := expiring(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen: expiring %v, want %v", got, want)
	}
}
