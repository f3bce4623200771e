// Package snowflake is a reference client of ticketd's worker-id leases
// (DESIGN §4d, README "Snowflake worker ids"): a Snowflake id generator
// (Twitter's layout: time, worker, sequence; the widths configurable)
// whose worker id is a slot leased from a table served by ticketd, or by
// any MySQL-protocol server that runs the same plain SQL (MariaDB 10.11).
// It needs nothing but database/sql and a MySQL driver.
//
// The protocol, every statement of which is in this file:
//
//   - Setup creates the table (one row per service and slot, 0 ..
//     2^WorkerBits-1) if it is missing, and its slot rows.
//   - Start claims a slot with one UPDATE ... LIMIT 1, through Raft on
//     ticketd: the slot this instance held before (its instance name is
//     in the row), else the slot whose lease ended longest ago, free ones
//     first, once it ended more than Guard ago. The same UPDATE copies
//     the slot's previous lease end and recorded timestamp aside (SET
//     assignments run left to right), bumps the slot's epoch (its fencing
//     token) and writes the new lease: UTC_TIMESTAMP() + Lease, on the
//     server's clock, which on ticketd never goes back (the replicated
//     clock). id = LAST_INSERT_ID(id) hands the row's id back in the OK
//     packet; a SELECT by that id then reads the slot, its epoch and the
//     previous holder's marks.
//   - The time floor is the highest timestamp an earlier holder of the
//     slot could have used: its recorded timestamp, and, unless it
//     released the slot, its lease end plus MaxDrift (it may have issued
//     ids until its lease ended, by its own clock). No id carries a
//     timestamp at or below the floor: Start waits while the local clock
//     is behind it (at most MaxWait, else ErrClockBehind, and the slot is
//     released with the floor as its last timestamp). An instance back
//     right after a crash reclaims its slot with its old lease end as the
//     floor, up to Lease + MaxDrift ahead (11s with the defaults, more
//     than MaxWait's 5s): its Start may refuse until the clock gets there.
//   - A background loop renews the lease every RenewEvery with an UPDATE
//     guarded by the row id, instance and epoch, recording the larger of
//     the floor and the highest timestamp used so far. The generator
//     stops issuing (ErrLeaseExpired) once its lease, counted on the local
//     monotonic clock from the send of the claim (which starts the first
//     lease) or of the last successful renewal, has ended; a renewal that
//     finds the slot taken ends the generator (ErrSlotLost).
//   - Close stops renewing and releases the slot: the lease end is reset
//     and the larger of the floor and the highest timestamp used recorded
//     (a holder that issued nothing writes the floor: 0 would erase it),
//     so the next holder's floor is that timestamp, not a lease end.
//
// A clock that goes back is never followed: NextID waits while the clock
// is behind the last timestamp it used, for at most MaxWait, and fails
// with ErrClockBackwards beyond that; it never issues a timestamp twice
// with the same sequence, and never one at or below the floor.
//
// Assumptions (the guarantees rest on them): instance names are unique
// among live processes; the drift between a generator's clock and the
// cluster's during one lease is below MaxDrift (a clock stepped forward
// by more than that, after the last renewal, issues timestamps no floor
// covers if the holder then vanishes without a release: the next
// holder's floor can fall below ids already issued); a process's monotonic
// clock runs at the rate of real time; the statements are not run with a
// pinned session timestamp (SET timestamp).
package snowflake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Sentinel errors. Wrapped errors from the database are returned as they
// are, with context.
var (
	// ErrNoSlot: every slot of the service is held by a live lease (or
	// one that ended less than Guard ago).
	ErrNoSlot = errors.New("snowflake: no free worker slot")
	// ErrClockBehind: the local clock is behind the slot's time floor by
	// more than MaxWait.
	ErrClockBehind = errors.New("snowflake: clock behind the slot's time floor")
	// ErrClockBackwards: the clock went back by more than MaxWait behind
	// the last timestamp used.
	ErrClockBackwards = errors.New("snowflake: clock moved backwards")
	// ErrLeaseExpired: the lease was not renewed before it ended; no id is
	// issued until a renewal succeeds.
	ErrLeaseExpired = errors.New("snowflake: worker lease expired")
	// ErrSlotLost: the slot was claimed by another instance (after this
	// one's lease had ended); this generator issues nothing more.
	ErrSlotLost = errors.New("snowflake: worker slot lost")
	// ErrClosed: Close was called.
	ErrClosed = errors.New("snowflake: generator closed")
	// ErrExhausted: the time bits cannot hold the timestamp any more.
	ErrExhausted = errors.New("snowflake: timestamp does not fit the time bits")
)

// TwitterEpoch is the epoch of Twitter's Snowflake, 2010-11-04 01:42:54.657 UTC.
var TwitterEpoch = time.UnixMilli(1288834974657)

// Clock is the generator's view of time: Wall gives the ids' timestamps
// and may jump (NTP steps, an operator); Mono only moves forward and
// measures leases. Tests inject one.
type Clock interface {
	Wall() time.Time
	Mono() time.Duration
	Sleep(ctx context.Context, d time.Duration) error
}

type systemClock struct{ start time.Time }

func (systemClock) Wall() time.Time       { return time.Now() }
func (c systemClock) Mono() time.Duration { return time.Since(c.start) }
func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SystemClock is the process's clock.
func SystemClock() Clock { return systemClock{start: time.Now()} }

// Config describes a generator. Service and Instance are required.
type Config struct {
	// Service names the id space: each service has its own slots.
	Service string
	// Instance is this process's stable, unique name (a host and port, a
	// pod name): a restarted instance gets its previous slot back.
	Instance string
	// Table is the slot table's name (default snowflake_slots), optionally
	// qualified with its database.
	Table string
	// WorkerBits and SequenceBits are the layout's widths (default 10 and
	// 12, Twitter's); the time gets 63 minus both, in milliseconds since
	// Epoch (default TwitterEpoch).
	WorkerBits, SequenceBits uint
	Epoch                    time.Time
	// Lease is how long a claim or renewal holds the slot, whole seconds
	// (default 10s, at least 3s); RenewEvery is how often it is renewed
	// (default Lease/3). Guard is how long a lease must have ended before
	// another instance may claim the slot (default 2s).
	Lease, RenewEvery, Guard time.Duration
	// MaxDrift bounds the difference between this process's wall clock
	// and the server's during one lease (default 1s). It is added to a
	// vanished holder's lease end to make the floor.
	MaxDrift time.Duration
	// MaxWait is the longest Start waits for the clock to pass the floor,
	// and NextID for a clock that went back to catch up (default 5s; a
	// negative value fails at once).
	MaxWait time.Duration
	// Clock is the time source (default SystemClock()).
	Clock Clock
	// Logger receives renewal failures (default: discard).
	Logger *slog.Logger
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

func (c *Config) setDefaults() error {
	if c.Service == "" || c.Instance == "" {
		return errors.New("snowflake: Service and Instance are required")
	}
	if c.Table == "" {
		c.Table = "snowflake_slots"
	}
	if !identRE.MatchString(c.Table) {
		return fmt.Errorf("snowflake: table name %q", c.Table)
	}
	if c.WorkerBits == 0 {
		c.WorkerBits = 10
	}
	if c.SequenceBits == 0 {
		c.SequenceBits = 12
	}
	if c.WorkerBits > 20 || c.SequenceBits > 22 || c.WorkerBits+c.SequenceBits > 40 {
		return fmt.Errorf("snowflake: %d worker and %d sequence bits leave too few for the time", c.WorkerBits, c.SequenceBits)
	}
	if c.Epoch.IsZero() {
		c.Epoch = TwitterEpoch
	}
	if c.Lease == 0 {
		c.Lease = 10 * time.Second
	}
	if c.Lease < 3*time.Second || c.Lease%time.Second != 0 {
		return fmt.Errorf("snowflake: lease %v: whole seconds, at least 3", c.Lease)
	}
	if c.RenewEvery == 0 {
		c.RenewEvery = c.Lease / 3
	}
	if c.Guard == 0 {
		c.Guard = 2 * time.Second
	}
	if c.Guard < 0 || c.Guard%time.Second != 0 {
		return fmt.Errorf("snowflake: guard %v: whole seconds", c.Guard)
	}
	if c.MaxDrift == 0 {
		c.MaxDrift = time.Second
	}
	if c.MaxWait == 0 {
		c.MaxWait = 5 * time.Second
	}
	if c.Clock == nil {
		c.Clock = SystemClock()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Slots is the number of worker slots of a layout with bits worker bits.
func Slots(bits uint) int { return 1 << bits }

// noLease is the lease end of a slot nobody holds: never claimed, or
// released.
const noLease = "1970-01-02 00:00:00"

// dateTime is how DATETIME values come back as text.
const dateTime = "2006-01-02 15:04:05"

// Statements returns the protocol's statements for a table, lease and
// guard, as this package runs them ('?' are parameters). They are plain
// SQL that MariaDB 10.11 runs unchanged.
func Statements(table string, lease, guard time.Duration) map[string]string {
	ls, gs := int64(lease/time.Second), int64(guard/time.Second)
	cols := "prev_until = lease_until, prev_ms = last_ms, epoch = epoch + 1, "
	return map[string]string{
		"create": "CREATE TABLE IF NOT EXISTS " + table + " (" +
			"id BIGINT NOT NULL AUTO_INCREMENT, " +
			"service VARCHAR(64) NOT NULL, " +
			"slot INT NOT NULL, " +
			"holder VARCHAR(128) NOT NULL DEFAULT '', " +
			"epoch BIGINT NOT NULL DEFAULT 0, " +
			"lease_until DATETIME NOT NULL DEFAULT '" + noLease + "', " +
			"last_ms BIGINT NOT NULL DEFAULT 0, " +
			"prev_until DATETIME NOT NULL DEFAULT '" + noLease + "', " +
			"prev_ms BIGINT NOT NULL DEFAULT 0, " +
			"renewals BIGINT NOT NULL DEFAULT 0, " +
			"PRIMARY KEY (id), UNIQUE KEY service_slot (service, slot), KEY service_holder (service, holder)) ENGINE=InnoDB",
		// The slot rows: "INSERT IGNORE INTO t (service, slot) VALUES (?, 0), (?, 1), ...".
		"slots": "INSERT IGNORE INTO " + table + " (service, slot) VALUES ",
		// Claim, first the slot this instance held before (params: service, instance).
		"reclaim": fmt.Sprintf("UPDATE %s SET %slease_until = UTC_TIMESTAMP() + INTERVAL %d SECOND, id = LAST_INSERT_ID(id) "+
			"WHERE service = ? AND holder = ? LIMIT 1", table, cols, ls),
		// Else the slot whose lease ended longest ago, more than the guard
		// ago (params: instance, service).
		"claim": fmt.Sprintf("UPDATE %s SET %sholder = ?, lease_until = UTC_TIMESTAMP() + INTERVAL %d SECOND, id = LAST_INSERT_ID(id) "+
			"WHERE service = ? AND lease_until < UTC_TIMESTAMP() - INTERVAL %d SECOND ORDER BY lease_until, slot LIMIT 1", table, cols, ls, gs),
		// The claimed row (param: the id of the OK packet).
		"read": "SELECT slot, holder, epoch, prev_until, prev_ms FROM " + table + " WHERE id = ?",
		// Renew and record (params: last_ms, id, instance, epoch).
		"renew": fmt.Sprintf("UPDATE %s SET lease_until = UTC_TIMESTAMP() + INTERVAL %d SECOND, last_ms = ?, renewals = renewals + 1 "+
			"WHERE id = ? AND holder = ? AND epoch = ?", table, ls),
		// Release (params: last_ms, id, instance, epoch).
		"release": "UPDATE " + table + " SET lease_until = '" + noLease + "', last_ms = ?, renewals = renewals + 1 " +
			"WHERE id = ? AND holder = ? AND epoch = ?",
	}
}

// Setup creates the slot table if it is missing and the service's slots
// 0 .. 2^workerBits-1 (existing ones are kept).
func Setup(ctx context.Context, db *sql.DB, table, service string, workerBits uint) error {
	if table == "" {
		table = "snowflake_slots"
	}
	if !identRE.MatchString(table) {
		return fmt.Errorf("snowflake: table name %q", table)
	}
	st := Statements(table, 10*time.Second, 0)
	if _, err := db.ExecContext(ctx, st["create"]); err != nil {
		return fmt.Errorf("snowflake: create %s: %w", table, err)
	}
	n := Slots(workerBits)
	for from := 0; from < n; from += 256 {
		var b strings.Builder
		b.WriteString(st["slots"])
		var args []any
		for s := from; s < min(n, from+256); s++ {
			if s > from {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "(?, %d)", s)
			args = append(args, service)
		}
		if _, err := db.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("snowflake: slots of %s: %w", service, err)
		}
	}
	return nil
}

// Claim is what Start learnt from its claim.
type Claim struct {
	Slot  int
	RowID int64
	Epoch int64
	// Floor is the time floor in Unix milliseconds: no id of this claim
	// has a timestamp at or below it.
	Floor int64
	// Reclaimed says the slot is the one this instance held before.
	Reclaimed bool
}

// store is what a Generator needs of the slot table (sqlStore; tests
// use a fake).
type store interface {
	claim(ctx context.Context) (Claim, error)
	// renew returns false when the slot is no longer this claim's.
	renew(ctx context.Context, c Claim, lastMs int64) (bool, error)
	release(ctx context.Context, c Claim, lastMs int64) error
}

type sqlStore struct {
	db       *sql.DB
	st       map[string]string
	service  string
	instance string
	drift    time.Duration
}

func (s *sqlStore) claim(ctx context.Context) (Claim, error) {
	var c Claim
	res, err := s.db.ExecContext(ctx, s.st["reclaim"], s.service, s.instance)
	if err != nil {
		return c, fmt.Errorf("snowflake: reclaim: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return c, fmt.Errorf("snowflake: reclaim: %w", err)
	}
	c.Reclaimed = n == 1
	if n == 0 {
		if res, err = s.db.ExecContext(ctx, s.st["claim"], s.instance, s.service); err != nil {
			return c, fmt.Errorf("snowflake: claim: %w", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return c, fmt.Errorf("snowflake: claim: %w", err)
		}
		if n == 0 {
			return c, ErrNoSlot
		}
	}
	if c.RowID, err = res.LastInsertId(); err != nil || c.RowID == 0 {
		return c, fmt.Errorf("snowflake: claim: no row id in the answer (%v)", err)
	}
	var holder, prevUntil string
	var prevMs int64
	err = s.db.QueryRowContext(ctx, s.st["read"], c.RowID).Scan(&c.Slot, &holder, &c.Epoch, &prevUntil, &prevMs)
	if err != nil {
		return c, fmt.Errorf("snowflake: read claimed slot: %w", err)
	}
	if holder != s.instance {
		return c, fmt.Errorf("%w: slot %d already held by %q when read", ErrSlotLost, c.Slot, holder)
	}
	c.Floor = prevMs
	if prevUntil != noLease {
		t, err := time.Parse(dateTime, prevUntil)
		if err != nil {
			return c, fmt.Errorf("snowflake: slot %d: prev_until %q: %w", c.Slot, prevUntil, err)
		}
		c.Floor = max(c.Floor, t.Add(s.drift).UnixMilli())
	}
	return c, nil
}

func (s *sqlStore) renew(ctx context.Context, c Claim, lastMs int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.st["renew"], lastMs, c.RowID, s.instance, c.Epoch)
	if err != nil {
		return false, fmt.Errorf("snowflake: renew: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("snowflake: renew: %w", err)
	}
	return n == 1, nil
}

func (s *sqlStore) release(ctx context.Context, c Claim, lastMs int64) error {
	if _, err := s.db.ExecContext(ctx, s.st["release"], lastMs, c.RowID, s.instance, c.Epoch); err != nil {
		return fmt.Errorf("snowflake: release: %w", err)
	}
	return nil
}

// Generator issues ids in one claimed slot. It is safe for concurrent
// use.
type Generator struct {
	cfg   Config
	clock Clock
	store store
	claim Claim

	timeBits       uint
	maxSeq         int64
	epochMs        int64
	maxTs          int64
	renewCancel    context.CancelFunc
	renewDone      chan struct{}
	mu             sync.Mutex
	lastMs         int64         // highest timestamp used (Unix ms); starts at the floor
	seq            int64         // sequence within lastMs
	validUntil     time.Duration // lease end on the monotonic clock
	lost, closed   bool
	waitedRollback int // NextID calls that waited for a clock that went back
}

// Start claims a slot for cfg.Service in db's table, waits until the
// clock is past the slot's floor, and starts renewing in the background.
func Start(ctx context.Context, db *sql.DB, cfg Config) (*Generator, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	s := &sqlStore{db: db, st: Statements(cfg.Table, cfg.Lease, cfg.Guard), service: cfg.Service, instance: cfg.Instance, drift: cfg.MaxDrift}
	return start(ctx, s, cfg)
}

func start(ctx context.Context, s store, cfg Config) (*Generator, error) {
	g := &Generator{cfg: cfg, clock: cfg.Clock, store: s,
		timeBits: 63 - cfg.WorkerBits - cfg.SequenceBits,
		maxSeq:   1<<cfg.SequenceBits - 1, epochMs: cfg.Epoch.UnixMilli()}
	g.maxTs = g.epochMs + 1<<g.timeBits - 1
	sent := g.clock.Mono()
	c, err := s.claim(ctx)
	if err != nil {
		return nil, err
	}
	if c.Slot < 0 || c.Slot >= Slots(cfg.WorkerBits) {
		return nil, fmt.Errorf("snowflake: slot %d outside %d worker bits", c.Slot, cfg.WorkerBits)
	}
	g.claim = c
	g.lastMs = c.Floor
	g.validUntil = g.leaseEnd(sent)
	// Renew from now on: the wait below may outlast the lease.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	g.renewCancel, g.renewDone = cancel, make(chan struct{})
	go g.renewLoop(rctx)
	// Wait for the clock to pass the floor, within MaxWait. A refusal
	// releases the slot with the floor as its last timestamp: nothing
	// was issued.
	if behind := time.Duration(c.Floor+1-g.clock.Wall().UnixMilli()) * time.Millisecond; behind > 0 {
		err := fmt.Errorf("%w: slot %d floor %d is %v ahead of this clock (MaxWait %v)", ErrClockBehind, c.Slot, c.Floor, behind, cfg.MaxWait)
		if behind <= cfg.MaxWait {
			err = g.clock.Sleep(ctx, behind)
		}
		if err != nil {
			g.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return g, nil
}

// leaseEnd is the lease end of a claim or renewal sent at sent: Lease
// later, less one second for the server's DATETIME, which drops the
// fraction of the second it was written in.
func (g *Generator) leaseEnd(sent time.Duration) time.Duration {
	return sent + g.cfg.Lease - time.Second
}

// Claim is the slot this generator holds and its floor.
func (g *Generator) Claim() Claim { return g.claim }

// RollbackWaits counts the NextID calls that waited for the clock to
// come back after it moved backwards.
func (g *Generator) RollbackWaits() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waitedRollback
}

func (g *Generator) renewLoop(ctx context.Context) {
	defer close(g.renewDone)
	for {
		if err := g.clock.Sleep(ctx, g.cfg.RenewEvery); err != nil {
			return
		}
		g.mu.Lock()
		last := g.lastMs
		end := g.validUntil
		g.mu.Unlock()
		sent := g.clock.Mono()
		// A renewal that answers after the lease would have ended is of no
		// use to this one; the next tries again.
		rctx, cancel := context.WithTimeout(ctx, max(end-sent, g.cfg.RenewEvery))
		ok, err := g.store.renew(rctx, g.claim, last)
		cancel()
		if ctx.Err() != nil {
			return
		}
		g.mu.Lock()
		switch {
		case err != nil:
			g.cfg.Logger.Warn("snowflake: renewal failed", "slot", g.claim.Slot, "err", err)
		case !ok:
			g.lost = true
		default:
			g.validUntil = max(g.validUntil, g.leaseEnd(sent))
		}
		lost := g.lost
		g.mu.Unlock()
		if lost {
			g.cfg.Logger.Error("snowflake: slot taken by another instance", "slot", g.claim.Slot)
			return
		}
	}
}

// NextID returns a new id: time since Epoch in ms, the slot, a
// sequence. It waits for the next millisecond when the sequence is used
// up, and for a clock that went back (at most MaxWait).
func (g *Generator) NextID(ctx context.Context) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		switch {
		case g.closed:
			return 0, ErrClosed
		case g.lost:
			return 0, ErrSlotLost
		case g.clock.Mono() >= g.validUntil:
			return 0, ErrLeaseExpired
		}
		now := g.clock.Wall().UnixMilli()
		if now > g.maxTs {
			return 0, ErrExhausted
		}
		if now > g.lastMs {
			g.lastMs, g.seq = now, 0
			return g.id(), nil
		}
		if now == g.lastMs && g.seq < g.maxSeq && g.lastMs > g.claim.Floor {
			g.seq++
			return g.id(), nil
		}
		// Behind the last timestamp used (or the floor), or the
		// millisecond's sequence used up: wait for the clock.
		behind := time.Duration(g.lastMs+1-now) * time.Millisecond
		if now < g.lastMs {
			if behind > g.cfg.MaxWait {
				return 0, fmt.Errorf("%w: %v behind the last timestamp used (MaxWait %v)", ErrClockBackwards, behind, g.cfg.MaxWait)
			}
			g.waitedRollback++
		}
		g.mu.Unlock()
		err := g.clock.Sleep(ctx, behind)
		g.mu.Lock()
		if err != nil {
			return 0, err
		}
	}
}

func (g *Generator) id() int64 {
	return (g.lastMs-g.epochMs)<<(g.cfg.WorkerBits+g.cfg.SequenceBits) | int64(g.claim.Slot)<<g.cfg.SequenceBits | g.seq
}

// Decode splits an id of a layout (worker and sequence bits, epoch) into
// its Unix-ms timestamp, slot and sequence.
func Decode(id int64, workerBits, sequenceBits uint, epoch time.Time) (ms int64, slot int, seq int64) {
	ms = id>>(workerBits+sequenceBits) + epoch.UnixMilli()
	slot = int(id >> sequenceBits & (1<<workerBits - 1))
	seq = id & (1<<sequenceBits - 1)
	return ms, slot, seq
}

// Close stops issuing and renewing and releases the slot, recording the
// highest timestamp used, so that the next holder's floor is that
// timestamp. A generator whose slot was lost, or whose release fails,
// leaves the lease to run out.
func (g *Generator) Close(ctx context.Context) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	lost, last := g.lost, g.lastMs
	g.mu.Unlock()
	g.renewCancel()
	<-g.renewDone
	if lost {
		return nil
	}
	return g.store.release(ctx, g.claim, last)
}
