package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ticketd/ticketd/raftstore"
	"github.com/ticketd/ticketd/wire"
)

// Planned operations (OPERATIONS.md "Restarting and upgrading a cluster"): a
// stop that clients behind a load balancer do not notice, and moving
// leadership on demand.
//
// On SIGTERM a node, at once and together:
//   - answers /readyz with 503, so that load balancers take it out;
//   - stops accepting MySQL connections (HAProxy retries a refused connect
//     on another node) and ends its open ones between statements
//     (wire.Server.Shutdown);
//   - hands leadership to the most up-to-date voter if it leads
//     (raftstore.Node.HandOver), so that the cluster holds no election.
//
// It then stays up, not ready, until --drain-time has passed since the
// signal: a load balancer that checks every second must have seen the
// 503s and marked it down before it goes (and before it comes back, not
// yet caught up). A lone node, the only member of its cluster, does not
// wait: no balancer can send its clients elsewhere. Then it closes Raft
// and exits, and logs "ticketd stopped" with the time the stop took.
// --shutdown-timeout bounds the whole stop; what is still open then is
// closed.

// stopper carries out the planned stop.
type stopper struct {
	draining  atomic.Bool
	drainTime time.Duration
	timeout   time.Duration
	log       *slog.Logger
}

// errDraining is what /readyz says while the node stops.
var errDraining = errors.New("draining: this node is stopping")

// stop runs the drain; the caller then closes the Service and the node.
func (s *stopper) stop(srv *wire.Server, node *raftstore.Node) {
	start := time.Now()
	s.draining.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	s.log.Info("stopping: not ready, draining client connections, handing leadership over",
		"drain_time", s.drainTime, "shutdown_timeout", s.timeout)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Shutdown(ctx); err != nil {
			s.log.Warn("client connections still open at --shutdown-timeout; closed", "err", err)
			return
		}
		s.log.Info("client connections drained", "took", time.Since(start).Round(time.Millisecond))
	})
	wg.Go(func() {
		to, err := node.HandOver(ctx)
		switch {
		case err != nil:
			s.log.Warn("leadership handover failed; the others will elect a leader", "err", err)
		case to != "":
			s.log.Info("leadership handed over", "to", to, "took", time.Since(start).Round(time.Millisecond))
		}
	})
	wg.Wait()
	if lone(node) {
		// The only member: a load balancer has no other node to send
		// its clients to, so there is nothing to drain for, and the
		// connections are closed already.
		s.log.Info("the only member of its cluster: not waiting --drain-time")
		return
	}
	wait := min(time.Until(start.Add(s.drainTime)), time.Until(start.Add(s.timeout)))
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
}

// lone reports whether node is the only member of its cluster's
// configuration.
func lone(node *raftstore.Node) bool {
	m := node.Status().Members
	return len(m) == 1 && m[0].ID == node.ID()
}

// transferStatus is the HTTP status of a failed POST /leader/transfer.
func transferStatus(err error) int {
	switch {
	case errors.Is(err, raftstore.ErrUnknownMember):
		return http.StatusNotFound
	case errors.Is(err, raftstore.ErrMemberConflict), errors.Is(err, raftstore.ErrNoTransferTarget):
		return http.StatusConflict
	default:
		return http.StatusServiceUnavailable
	}
}

// leaderTransferCmd is `ticketd leader-transfer`: ask a node (any member)
// to move leadership, to a named voter or the most up-to-date one.
func leaderTransferCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ticketd leader-transfer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8306", "admin address (host:port) of any member")
	to := fs.String("to", "", "node id of the voter to hand leadership to (default: the most up-to-date one)")
	timeout := fs.Duration("timeout", 15*time.Second, "give up after this long")
	var af adminFlags
	af.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New("usage: ticketd leader-transfer [--addr ADMIN_ADDR] [--to NODE_ID]")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	conn, err := af.dial(getenv, *addr)
	if err != nil {
		return err
	}
	u := "/leader/transfer"
	if *to != "" {
		u += "?to=" + url.QueryEscape(*to)
	}
	req, err := conn.request(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	start := time.Now()
	resp, err := conn.client.Do(req)
	if err != nil {
		return fmt.Errorf("leader-transfer: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("leader-transfer: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintf(stdout, "leader is now %s (%v)\n", strings.TrimSpace(string(body)), time.Since(start).Round(time.Millisecond))
	return nil
}
