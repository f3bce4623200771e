package raftstore

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/ticketd/ticketd/ticket"
)

// seqSeedCommands are one of each sequence command, as the wire layer and
// the leader's cache build them (FuzzDecodeBatch's seeds).
func seqSeedCommands() []ticket.Command {
	def, _, err := ticket.NewSequenceDef("d", "s", "", []ticket.SeqOption{
		{Kind: ticket.SeqIncrement, Value: -3}, {Kind: ticket.SeqCache, Value: 10}, {Kind: ticket.SeqCycle}})
	if err != nil {
		panic(err)
	}
	return []ticket.Command{
		{Op: ticket.OpCreateSeq, DB: "d", Table: "s", Def: def, IfExists: true},
		{Op: ticket.OpSeqNext, DB: "d", Table: "s", Seq: &ticket.SeqCommand{Count: 1}},
		{Op: ticket.OpSeqNext, DB: "d", Table: "s", Seq: &ticket.SeqCommand{}},
		{Op: ticket.OpSetVal, DB: "d", Table: "s", Seq: &ticket.SeqCommand{Value: -42, HasFree: true, Free: -7, Until: -31}},
		{Op: ticket.OpAlterSeq, DB: "d", Table: "s", Seq: &ticket.SeqCommand{Options: []ticket.SeqOption{
			{Kind: ticket.SeqRestartWith, Value: 0}, {Kind: ticket.SeqMax, Value: 1 << 62}}}},
		{Op: ticket.OpDropSeq, DB: "d", Table: "s", IfExists: true},
	}
}

func TestSeqCommandsRoundTrip(t *testing.T) {
	cmds := seqSeedCommands()
	got, err := DecodeBatch(EncodeBatch(nil, cmds))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cmds) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, cmds)
	}
}

// TestPreSequenceEncodingUnchanged: a command without sequence fields
// encodes exactly as before sequences existed (no new presence bit), so
// logs and state files written by older binaries read the same, and the
// older binaries' bytes are what a newer one writes for them.
func TestPreSequenceEncodingUnchanged(t *testing.T) {
	// EncodeBatch of replaceCmd("flickr", "Tickets64", "a") by the
	// binary before sequences (main at e23d608).
	old := []byte{1, 1, 1, 183, 3, 6, 102, 108, 105, 99, 107, 114, 9, 84, 105, 99, 107, 101, 116, 115, 54, 52, 1, 4, 115, 116, 117, 98, 1, 1, 44, 1, 97, 1, 1}
	now := EncodeBatch(nil, []ticket.Command{replaceCmd("flickr", "Tickets64", "a")})
	if !bytes.Equal(now, old) {
		t.Errorf("encoding changed:\n now %v\n old %v", now, old)
	}
	if _, err := DecodeBatch(old); err != nil {
		t.Fatal(err)
	}
}

func TestSequenceTableRoundTrip(t *testing.T) {
	def := seqSeedCommands()[0].Def
	tb := ticket.Table{Def: *def}
	got, err := decodeTable(encodeTable(nil, &tb, rowsWire))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Def.Seq, def.Seq) {
		t.Fatalf("sequence row: got %+v want %+v", got.Def.Seq, def.Seq)
	}
}
