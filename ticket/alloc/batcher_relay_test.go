package alloc

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ticketd/ticketd/ticket"
	"github.com/ticketd/ticketd/ticket/model"
)

// stuckForwards is a Replicator standing for a node that has just become
// the leader: proposals made before (forwarded to the old leader) wait
// until release is closed, as they do until the old leader answers;
// proposals made as leader apply at once.
type stuckForwards struct {
	lead    *fakeLead
	release chan struct{}
	mu      sync.Mutex
	started int
	st      *ticket.MemStore
}

func (r *stuckForwards) Propose(ctx context.Context, cmds []model.Command) ([]model.Result, error) {
	if _, leading := r.lead.LeaderTerm(); !leading {
		r.mu.Lock()
		r.started++
		r.mu.Unlock()
		select {
		case <-r.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]model.Result, len(cmds))
	for i := range cmds {
		res, err := ticket.Apply(r.st, &cmds[i])
		if err != nil {
			return nil, err
		}
		out[i] = res
	}
	return out, nil
}

func (r *stuckForwards) View(fn func(ticket.Store) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fn(r.st)
}

// TestRelayNotQueuedBehindStuckWorkers: every worker of a node that has
// just become the leader waits on a batch it forwarded to the old
// leader, and the old leader answers them only after relaying, to this
// node, what it had not started. The relayed batch (ExecBatch) must not
// wait for a worker: it would wait for ever (until the forwards' grace
// ran out, each then answered "outcome unknown").
func TestRelayNotQueuedBehindStuckWorkers(t *testing.T) {
	lead := &fakeLead{term: 1}
	repl := &stuckForwards{lead: lead, release: make(chan struct{}), st: ticket.NewMemStore()}
	for _, c := range []model.Command{{Op: model.OpCreateDB, DB: "flickr"}, {Op: model.OpCreateTable, Def: tickets64("flickr", "T")}} {
		if _, err := ticket.Apply(repl.st, &c); err != nil {
			t.Fatal(err)
		}
	}
	const workers = 3
	svc := NewService(repl, repl, Config{Workers: workers, Leadership: lead}, nil)
	t.Cleanup(svc.Close)
	var once sync.Once
	release := func() { once.Do(func() { close(repl.release) }) }
	t.Cleanup(release) // before svc.Close: its workers must get their answers
	// The clients' statements while this node followed: one per worker,
	// each sent once the one before is stuck in its worker (sent
	// together, one worker may take them all as one batch: 1 of 3
	// workers forwarding, in 1 of 4 runs under -race).
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			c := replace("a")
			if _, err := svc.Exec(context.Background(), &c); err != nil {
				t.Errorf("forwarded statement: %v", err)
			}
		})
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			repl.mu.Lock()
			n := repl.started
			repl.mu.Unlock()
			if n == i+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d workers forwarding", n, i+1)
			}
		}
	}
	lead.set(2, true, nil) // this node now leads
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := svc.ExecBatch(ctx, []model.Command{replace("a")})
	if err != nil || res[0].Err != nil || res[0].InsertID == 0 {
		t.Fatalf("relayed batch on the new leader with every worker forwarding: %+v %v", res, err)
	}
	release() // the old leader answers its forwarders now
	wg.Wait()
}
