package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/ticket/snowflake"
)

// snowflakeFlags are -scheme snowflake's own flags.
type snowflakeFlags struct {
	instance, service, table, out string
	bits                          uint
	lease, guard, renew, rollback time.Duration
	pace                          time.Duration
	batch                         int
}

func (f *snowflakeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.instance, "instance", "", "-scheme snowflake: instance name (default: the host name and pid); with -conns > 1, suffixed -1, -2, ...")
	fs.StringVar(&f.service, "service", "ticketload", "-scheme snowflake: service whose slots are claimed")
	fs.StringVar(&f.table, "table-slots", "snowflake_slots", "-scheme snowflake: slot table")
	fs.StringVar(&f.out, "out", "", "-scheme snowflake: append every claim and every id issued to this file (integration/history's snowflake log)")
	fs.UintVar(&f.bits, "bits", 10, "-scheme snowflake: worker bits (2^bits slots)")
	fs.DurationVar(&f.lease, "lease", 10*time.Second, "-scheme snowflake: lease (whole seconds)")
	fs.DurationVar(&f.guard, "guard", 2*time.Second, "-scheme snowflake: guard after a lease ends before another claims the slot")
	fs.DurationVar(&f.renew, "renew", 0, "-scheme snowflake: renewal period (default lease/3)")
	fs.DurationVar(&f.rollback, "rollback", 0, "-scheme snowflake: set the generators' clock back by up to this, at random times (an injected clock); 0: never")
	fs.DurationVar(&f.pace, "pace", 0, "-scheme snowflake: pause between batches of ids (0: none)")
	fs.IntVar(&f.batch, "batch", 8, "-scheme snowflake: ids per batch (one log write per batch)")
}

// skewClock is the system clock set back by an offset in [-max, 0] that
// changes at random times: an NTP step back, and later forward again.
// Only the wall clock moves: Mono and Sleep are snowflake.SystemClock's,
// as leases are measured with it.
type skewClock struct {
	snowflake.Clock
	offset atomic.Int64 // ns, <= 0
}

func (c *skewClock) Wall() time.Time { return c.Clock.Wall().Add(time.Duration(c.offset.Load())) }

func (c *skewClock) wander(ctx context.Context, most time.Duration) {
	for {
		t := time.NewTimer(time.Duration(500+rand.IntN(2500)) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if rand.IntN(3) == 0 {
			c.offset.Store(0)
		} else {
			c.offset.Store(-rand.Int64N(int64(most)))
		}
	}
}

// multiConnector dials the DSNs in turn, starting after the last one
// that failed: a generator reaches any node of a cluster.
type multiConnector struct {
	cs   []driver.Connector
	next atomic.Int64
}

func (m *multiConnector) Connect(ctx context.Context) (driver.Conn, error) {
	var errs []error
	start := int(m.next.Load())
	for i := range m.cs {
		k := (start + i) % len(m.cs)
		c, err := m.cs[k].Connect(ctx)
		if err == nil {
			return c, nil
		}
		m.next.Store(int64(k + 1))
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func (m *multiConnector) Driver() driver.Driver { return m.cs[0].Driver() }

// SnowflakeReport is one -scheme snowflake run's outcome.
type SnowflakeReport struct {
	Scheme        string         `json:"scheme"`
	Conns         int            `json:"conns"`
	IDs           int64          `json:"ids"`
	Claims        int64          `json:"claims"`
	Reclaims      int64          `json:"reclaims"`
	Events        map[string]int `json:"events"`
	RollbackWaits int            `json:"rollback_waits"`
	Elapsed       time.Duration  `json:"elapsed_ns"`
	PerSec        float64        `json:"per_sec"`
	ClaimP50      time.Duration  `json:"claim_p50_ns"`
	FirstErr      string         `json:"first_error,omitempty"`
}

// runSnowflake runs conns generators of ticket/snowflake against the
// DSNs (comma-separated: the nodes of a cluster), each claiming a slot,
// renewing it in the background and issuing ids until dur ends or the
// process is stopped (SIGINT, SIGTERM: a clean stop releases the slots).
func runSnowflake(ctx context.Context, out io.Writer, f *snowflakeFlags, dsns string, conns int, dur time.Duration, setup, asJSON bool) error {
	var mc multiConnector
	for _, d := range strings.Split(dsns, ",") {
		cfg, err := mysql.ParseDSN(d)
		if err != nil {
			return fmt.Errorf("-dsn: %w", err)
		}
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			return err
		}
		mc.cs = append(mc.cs, c)
	}
	db := sql.OpenDB(&mc)
	defer db.Close()
	if setup {
		if err := snowflake.Setup(ctx, db, f.table, f.service, f.bits); err != nil {
			return err
		}
	}
	var log *os.File
	if f.out != "" {
		var err error
		if log, err = os.OpenFile(f.out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			return err
		}
		defer log.Close()
	}
	instance := f.instance
	if instance == "" {
		h, _ := os.Hostname()
		instance = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	clk := &skewClock{Clock: snowflake.SystemClock()}
	rctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	if f.rollback > 0 {
		go clk.wander(rctx, f.rollback)
	}
	var (
		mu       sync.Mutex
		events   = map[string]int{}
		ids      atomic.Int64
		claims   atomic.Int64
		reclaims atomic.Int64
		waits    atomic.Int64
		claimLat []time.Duration
		firstErr string
		wg       sync.WaitGroup
	)
	write := func(line string) {
		if log != nil {
			log.WriteString(line) // one write(2) per line: a kill leaves whole lines
		}
	}
	event := func(kind string, err error) {
		mu.Lock()
		events[kind]++
		if firstErr == "" && err != nil && kind == "error" {
			firstErr = err.Error()
		}
		mu.Unlock()
		line := fmt.Sprintf("E %d %s", time.Now().UnixMilli(), kind)
		if err != nil {
			line += " " + errClass(err)
		}
		write(line + "\n")
	}
	start := time.Now()
	for i := range conns {
		name := instance
		if conns > 1 {
			name = fmt.Sprintf("%s-%d", instance, i+1)
		}
		cfg := snowflake.Config{Service: f.service, Instance: name, Table: f.table, WorkerBits: f.bits,
			Lease: f.lease, Guard: f.guard, RenewEvery: f.renew, Clock: clk}
		wg.Go(func() {
			for rctx.Err() == nil {
				t0 := time.Now()
				g, err := snowflake.Start(rctx, db, cfg)
				switch {
				case rctx.Err() != nil:
					return
				case errors.Is(err, snowflake.ErrNoSlot):
					event("nofree", nil)
					sleep(rctx, 200*time.Millisecond)
					continue
				case errors.Is(err, snowflake.ErrClockBehind):
					event("behind", nil)
					sleep(rctx, 200*time.Millisecond)
					continue
				case err != nil:
					event("error", err)
					sleep(rctx, 200*time.Millisecond)
					continue
				}
				c := g.Claim()
				mu.Lock()
				claimLat = append(claimLat, time.Since(t0))
				mu.Unlock()
				claims.Add(1)
				rc := 0
				if c.Reclaimed {
					rc = 1
					reclaims.Add(1)
				}
				write(fmt.Sprintf("C %d %d %d %d %d\n", time.Now().UnixMilli(), c.Slot, c.Epoch, c.Floor, rc))
				generate(rctx, g, f, write, event, &ids)
				waits.Add(int64(g.RollbackWaits()))
				if rctx.Err() != nil {
					// A clean stop: release, recording the last timestamp.
					if err := g.Close(context.Background()); err == nil {
						write(fmt.Sprintf("R %d\n", time.Now().UnixMilli()))
					}
					write(fmt.Sprintf("W %d %d\n", time.Now().UnixMilli(), g.RollbackWaits()))
					return
				}
				g.Close(context.Background())
				write(fmt.Sprintf("W %d %d\n", time.Now().UnixMilli(), g.RollbackWaits()))
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	r := SnowflakeReport{Scheme: "snowflake", Conns: conns, IDs: ids.Load(), Claims: claims.Load(), Reclaims: reclaims.Load(),
		Events: events, RollbackWaits: int(waits.Load()), Elapsed: el, PerSec: float64(ids.Load()) / el.Seconds(), FirstErr: firstErr}
	if len(claimLat) > 0 {
		r.ClaimP50 = percentile(claimLat, 50)
	}
	if asJSON {
		return json.NewEncoder(out).Encode(r)
	}
	fmt.Fprintf(out, "snowflake conns=%d ids=%d per_sec=%.0f claims=%d reclaims=%d claim_p50=%.1fms rollback_waits=%d events=%v\n",
		r.Conns, r.IDs, r.PerSec, r.Claims, r.Reclaims, ms(r.ClaimP50), r.RollbackWaits, r.Events)
	if r.FirstErr != "" {
		fmt.Fprintln(out, "first error:", r.FirstErr)
	}
	return nil
}

// generate issues ids in batches until the generator stops for good or
// ctx ends: a lease that lapsed or a clock set back too far pauses it.
func generate(ctx context.Context, g *snowflake.Generator, f *snowflakeFlags, write func(string), event func(string, error), n *atomic.Int64) {
	buf := make([]byte, 0, 32*f.batch)
	for ctx.Err() == nil {
		buf = append(buf[:0], 'I', ' ')
		buf = strconv.AppendInt(buf, time.Now().UnixMilli(), 10)
		buf = append(buf, ' ')
		mark := len(buf) // the batch's end time goes here
		got := 0
		var err error
		for range f.batch {
			var id int64
			if id, err = g.NextID(ctx); err != nil {
				break
			}
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, id, 10)
			got++
		}
		if got > 0 {
			// The batch's times: before its first id and after its last
			// (NextID may wait in between).
			line := append(strconv.AppendInt(append([]byte(nil), buf[:mark]...), time.Now().UnixMilli(), 10), buf[mark:]...)
			write(string(append(line, '\n')))
			n.Add(int64(got))
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return
		case errors.Is(err, snowflake.ErrLeaseExpired):
			event("expired", nil)
			sleep(ctx, 100*time.Millisecond)
		case errors.Is(err, snowflake.ErrClockBackwards):
			event("backwards", nil)
			sleep(ctx, 100*time.Millisecond)
		case errors.Is(err, snowflake.ErrSlotLost):
			event("lost", nil)
			return
		default:
			event("error", err)
			return
		}
		if f.pace > 0 {
			sleep(ctx, f.pace)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// errClass names an error for the log: a MySQL error number, or what
// kind of failure.
func errClass(err error) string {
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me):
		return strconv.Itoa(int(me.Number))
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, snowflake.ErrSlotLost):
		return "lost"
	default:
		return "conn"
	}
}
