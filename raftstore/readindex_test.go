package raftstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket/model"
)

// TestReadRoundsBatch: readers that arrive while a round is under way
// share the next round, and none of them is answered by the round that
// had started before it arrived (its index may miss a write acknowledged
// in between).
func TestReadRoundsBatch(t *testing.T) {
	var (
		r       readRounds
		rounds  atomic.Uint64
		release = make(chan struct{})
		started = make(chan struct{}, 10)
	)
	round := func() (uint64, error) {
		n := rounds.Add(1)
		started <- struct{}{}
		if n == 1 {
			<-release
		}
		return n, nil
	}
	ctx := ctxT(t, 10*time.Second)
	first := make(chan uint64)
	go func() {
		idx, err := r.do(ctx, round)
		if err != nil {
			t.Error(err)
		}
		first <- idx
	}()
	<-started // round 1 is under way
	const late = 50
	var wg sync.WaitGroup
	got := make([]uint64, late)
	for i := range late {
		wg.Go(func() {
			idx, err := r.do(ctx, round)
			if err != nil {
				t.Error(err)
			}
			got[i] = idx
		})
	}
	time.Sleep(20 * time.Millisecond) // let them queue behind round 1
	close(release)
	if idx := <-first; idx != 1 {
		t.Errorf("first reader answered by round %d, want 1", idx)
	}
	wg.Wait()
	for i, idx := range got {
		if idx != 2 {
			t.Fatalf("late reader %d answered by round %d, want 2 (the round after its arrival)", i, idx)
		}
	}
	if n := rounds.Load(); n != 2 {
		t.Errorf("%d rounds for 51 readers, want 2", n)
	}
}

// TestFollowerReadIndex: with CommitTimeout an hour, a follower learns of
// a write another node acknowledged only when it asks; WaitRead returns
// once its state holds the write.
func TestFollowerReadIndex(t *testing.T) {
	c := startCluster(t, func(cfg *Config) { cfg.CommitTimeout = time.Hour })
	l := c.leader()
	ctx := ctxT(t, 20*time.Second)
	if _, err := l.Propose(ctx, []model.Command{createDB("flickr"), createTickets("flickr", "Tickets64")}); err != nil {
		t.Fatal(err)
	}
	res, err := l.Propose(ctx, []model.Command{replaceCmd("flickr", "Tickets64", "a")})
	if err != nil {
		t.Fatal(err)
	}
	f := c.follower()
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := f.WaitRead(wait); err != nil {
		t.Fatalf("follower read index: %v", err)
	}
	if got := autoInc(t, f, "flickr", "Tickets64"); got != res[0].InsertID+1 {
		t.Errorf("follower's auto_increment %d after WaitRead; the leader acknowledged id %d", got, res[0].InsertID)
	}
	if err := l.WaitRead(wait); err != nil {
		t.Fatalf("leader read index: %v", err)
	}
}

// BenchmarkReadIndex: what a read that must see every acknowledged write
// costs, on the leader and through a follower, 16 readers at once (their
// rounds are shared), with a writer keeping the cluster busy.
func BenchmarkReadIndex(b *testing.B) {
	c := startCluster(b)
	l := c.leader()
	proposeRetry(b, l, setupCmds()...)
	busyWriter(b, l)
	for _, n := range []*Node{l, c.follower()} {
		name := "leader"
		if n != l {
			name = "follower"
		}
		b.Run(name, func(b *testing.B) { benchWaitRead(b, n) })
	}
}

// BenchmarkReadIndexLone is BenchmarkReadIndex on a single node, the
// lone voter of its cluster, with a writer keeping it busy.
func BenchmarkReadIndexLone(b *testing.B) {
	cfg := testConfig("n1", b.TempDir(), nil)
	cfg.RaftAddr = "127.0.0.1:0"
	n := openNode(b, cfg)
	if err := n.WaitReady(ctxT(b, 5*time.Second)); err != nil {
		b.Fatal(err)
	}
	proposeRetry(b, n, setupCmds()...)
	busyWriter(b, n)
	b.ReportAllocs()
	benchWaitRead(b, n)
}

// busyWriter keeps n proposing a REPLACE after another until the
// benchmark's run ends.
func busyWriter(b *testing.B, n *Node) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			n.Propose(context.Background(), []model.Command{replaceCmd("flickr", "Tickets64", "a")})
		}
	})
	b.Cleanup(func() { close(stop); wg.Wait() })
}

// benchWaitRead times WaitRead on n from 16 readers at once and reports
// their rate.
func benchWaitRead(b *testing.B, n *Node) {
	b.SetParallelism(8) // 16 readers on 2 cores
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if err := n.WaitRead(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reads/s")
}
