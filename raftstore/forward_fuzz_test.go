package raftstore

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/ticketd/ticketd/raftstore/logformat"
	"github.com/ticketd/ticketd/ticket/model"
)

// forwardFrame is one request as a follower writes it.
func forwardFrame(kind byte, id uint64, timeoutMS uint32, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(reqHeader+len(payload)))
	b = append(b, kind)
	b = binary.BigEndian.AppendUint64(b, id)
	b = binary.BigEndian.AppendUint32(b, timeoutMS)
	return append(b, payload...)
}

// tameMembership rewrites the kind of every whole frame that would change
// the membership into a proposal: a well-formed Join from a member is the
// protocol doing its job (it is what mutual TLS guards), and a phantom
// voter would leave the test node without a quorum.
func tameMembership(data []byte) []byte {
	data = append([]byte(nil), data...)
	for off := 0; off+4+reqHeader <= len(data); {
		size := int(binary.BigEndian.Uint32(data[off:]))
		if size < reqHeader || size > len(data)-off-4 {
			break
		}
		if k := data[off+4]; k == fwdJoin || k == fwdRemove {
			data[off+4] = fwdPropose
		}
		off += 4 + size
	}
	return data
}

// FuzzForwardFrames writes arbitrary bytes to a leader's forwarding server
// (what reaches the Raft port after the routing byte), then hangs up. A
// malformed, truncated or oversized frame may cost the connection, never
// the node: serveForward must return once the peer is gone, and the node
// must still commit. A batch is decoded whole before anything is proposed
// (handleBatch), so a damaged one is refused entirely.
//
//	go test -run '^$' -fuzz '^FuzzForwardFrames$' -fuzztime 1m ./raftstore
func FuzzForwardFrames(f *testing.F) {
	n := openNode(f, testConfig("n1", f.TempDir(), listen(f)))
	must(f, n.WaitReady(ctxT(f, 10*time.Second)))
	proposeRetry(f, n, setupCmds()...)

	batch := logformat.EncodeBatch(nil, []model.Command{replaceCmd("flickr", "Tickets64", "a")})
	f.Add(forwardFrame(fwdPropose, 1, 1000, batch))
	f.Add(append(forwardFrame(fwdCommit, 2, 1000, nil), forwardFrame(fwdPropose, 3, 0, batch)...))
	f.Add(forwardFrame(fwdPropose, 4, 1000, batch[:len(batch)/2]))             // damaged batch
	f.Add(forwardFrame(fwdPropose, 5, 1000, batch)[:20])                       // truncated frame
	f.Add(binary.BigEndian.AppendUint32(nil, maxFrame+1))                      // oversized length
	f.Add(forwardFrame(99, 6, 1000, []byte("unknown kind")))                   // unknown kind
	f.Add(forwardFrame(fwdStatus, 7, 1000, []byte("ignored payload")))         // a member's status
	f.Add(forwardFrame(fwdPropose, 7, 1000, logformat.AppendString(nil, "x"))) // not a batch
	f.Add(forwardFrame(fwdPropose, 8, 1000, logformat.EncodeBatch(nil, []model.Command{
		{Op: model.OpSetGlobal, Name: "auto_increment_increment", Value: 2},
		{Op: model.OpDropTable, DB: "flickr", Table: "nope"},
		{Op: model.OpReserve, DB: "flickr", Table: "Tickets64", Count: 10},
	})))
	f.Add(forwardFrame(fwdPropose, 9, 1000, []byte{logformat.BatchVersion, 1, byte(model.OpCreateTable)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			n.serveForward(server)
			server.Close()
		}()
		go io.Copy(io.Discard, client)
		client.Write(tameMembership(data))
		client.Close()
		<-done
		// A command that decodes but fails in Apply as a storage error
		// stops the state machine, and every replica's at the same entry.
		if err := n.fsm.Err(); err != nil {
			t.Fatalf("state machine failed: %v", err)
		}
		if _, err := n.Propose(ctxT(t, 10*time.Second), []model.Command{createDB("fuzz_alive")}); err != nil {
			t.Fatalf("node no longer commits after the input: %v", err)
		}
	})
}
