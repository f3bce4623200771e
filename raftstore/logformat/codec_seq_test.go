package logformat

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/ticketd/ticketd/raftstore/logformat/formattest"
	"github.com/ticketd/ticketd/ticket/model"
)

func TestSeqCommandsRoundTrip(t *testing.T) {
	cmds := formattest.SeqSeedCommands()
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
	// EncodeBatch of formattest.ReplaceCmd("flickr", "Tickets64", "a") by the
	// binary before sequences (main at e23d608).
	old := []byte{1, 1, 1, 183, 3, 6, 102, 108, 105, 99, 107, 114, 9, 84, 105, 99, 107, 101, 116, 115, 54, 52, 1, 4, 115, 116, 117, 98, 1, 1, 44, 1, 97, 1, 1}
	now := EncodeBatch(nil, []model.Command{formattest.ReplaceCmd("flickr", "Tickets64", "a")})
	if !bytes.Equal(now, old) {
		t.Errorf("encoding changed:\n now %v\n old %v", now, old)
	}
	if _, err := DecodeBatch(old); err != nil {
		t.Fatal(err)
	}
}

func TestSequenceTableRoundTrip(t *testing.T) {
	def := formattest.SeqSeedCommands()[0].Def
	tb := model.Table{Def: *def}
	got, err := DecodeTable(AppendTable(nil, &tb, FormatWire))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Def.Seq, def.Seq) {
		t.Fatalf("sequence row: got %+v want %+v", got.Def.Seq, def.Seq)
	}
}
