package schemes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Scheme names a client of one ID scheme.
type Scheme string

const (
	// Leaf is a Leaf-segment server fetching a segment of the row's own
	// step (IDAllocDaoImpl.updateMaxIdAndGetLeafAlloc).
	Leaf Scheme = "leaf"
	// LeafDynamic is a Leaf server with a dynamic step
	// (updateMaxIdByCustomStepAndGetLeafAlloc): the step is a parameter
	// and the segment is (max_id - that step, max_id].
	LeafDynamic Scheme = "leaf-dynamic"
	// Tinyid is a Tinyid server's DbSegmentIdServiceImpl.getNextSegmentId:
	// read, compare-and-set, retry, inside one READ COMMITTED transaction.
	Tinyid Scheme = "tinyid"
	// TinyidAutocommit is the same optimistic loop without the
	// transaction: the two statements alone, each autocommitted, as a
	// Tinyid built without Spring's @Transactional would send them.
	TinyidAutocommit Scheme = "tinyid-autocommit"
	// UidGen is a UidGenerator application starting up and taking a worker
	// id (DisposableWorkerIdAssigner.assignWorkerId).
	UidGen Scheme = "uidgen"
	// NextVal calls NEXTVAL on a sequence with CACHE 1000, alternating
	// SELECT NEXTVAL(s) and SELECT NEXT VALUE FOR s.
	NextVal Scheme = "nextval"
	// NextValNoCache is NextVal on a NOCACHE sequence.
	NextValNoCache Scheme = "nextval-nocache"
	// Ticket is Flickr's ticket server, the scheme ticketd was built
	// for: REPLACE INTO Tickets64 (stub) VALUES ('a') and SELECT
	// LAST_INSERT_ID(), which must agree with the OK packet's insert id.
	Ticket Scheme = "ticket"

	// leafNoTx is a broken Leaf: UPDATE and SELECT autocommitted
	// separately, so another server's UPDATE can land between them and
	// two servers compute the same segment. Tests use it to show that
	// the workload and the checker catch a real lost-update bug.
	leafNoTx Scheme = "leaf-notx"
)

// All lists the exported schemes.
func All() []Scheme {
	return []Scheme{Leaf, LeafDynamic, Tinyid, TinyidAutocommit, UidGen, NextVal, NextValNoCache, Ticket}
}

// Counter names the counter a scheme draws from: schemes with the same
// counter must share one history (a Leaf and a dynamic-step Leaf server
// on the same biz_tag hand out disjoint segments of one space).
func (s Scheme) Counter() string {
	switch s {
	case Leaf, LeafDynamic, leafNoTx:
		return "leaf_alloc/" + LeafTag
	case Tinyid, TinyidAutocommit:
		return "tiny_id_info/" + TinyidBizType
	case UidGen:
		return "WORKER_NODE"
	case NextVal:
		return "sequence/" + SeqCached
	case NextValNoCache:
		return "sequence/" + SeqNoCache
	case Ticket:
		return "Tickets64"
	}
	return string(s)
}

// Sentinel errors of the clients themselves (the server's errors are
// passed through, wrapped).
var (
	// ErrConflict: Tinyid's compare-and-set lost every attempt
	// ("get next segmentId conflict"); expected under contention.
	ErrConflict = errors.New("get next segmentId conflict")
	// ErrMismatch: the server's answers contradict each other (the
	// worker row read back does not carry the generated key, a segment
	// read back is not what the UPDATE made).
	ErrMismatch = errors.New("inconsistent answers")
)

// result is one allocation's ids, [lo, hi], and how many of its
// compare-and-set attempts lost (Tinyid's conflicts; 0 for the others).
type result struct {
	lo, hi  uint64
	retries int
}

// client is one scheme client's state on one connection.
type client struct {
	scheme      Scheme
	id          int
	n           int   // allocations attempted so far
	step        int64 // LeafDynamic's step
	maxAttempts int   // Tinyid's Constants.RETRY
}

// fetch performs one allocation on c.
func (cl *client) fetch(ctx context.Context, c *sql.Conn) (result, error) {
	cl.n++
	switch cl.scheme {
	case Leaf, LeafDynamic:
		return cl.leaf(ctx, c)
	case leafNoTx:
		return cl.leafWithoutTx(ctx, c)
	case Tinyid:
		return cl.tinyid(ctx, c, true)
	case TinyidAutocommit:
		return cl.tinyid(ctx, c, false)
	case UidGen:
		return cl.uidgen(ctx, c)
	case NextVal:
		return cl.nextval(ctx, c, SeqCached)
	case NextValNoCache:
		return cl.nextval(ctx, c, SeqNoCache)
	case Ticket:
		return cl.ticket(ctx, c)
	}
	return result{}, fmt.Errorf("unknown scheme %q", cl.scheme)
}

// exec runs one statement, naming it in the error.
func exec(ctx context.Context, c *sql.Conn, q string, args ...any) (sql.Result, error) {
	r, err := c.ExecContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	return r, nil
}

// endTx finishes a transaction the way the Java stacks do on failure:
// ROLLBACK, then restore the session (MyBatis resetAutoCommit, Spring's
// cleanup). An error here means the session is in an unknown state.
func endTx(ctx context.Context, c *sql.Conn, restore ...string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := exec(ctx, c, "ROLLBACK"); err != nil {
		return err
	}
	for _, q := range restore {
		if _, err := exec(ctx, c, q); err != nil {
			return err
		}
	}
	return nil
}

// errSession marks an error after which the connection's session state
// is unknown: the runner drops the connection.
type errSession struct{ err error }

func (e errSession) Error() string { return e.err.Error() }
func (e errSession) Unwrap() error { return e.err }

// failTx rolls back after err; if that fails too the connection is
// marked for replacement.
func failTx(ctx context.Context, c *sql.Conn, err error, restore ...string) error {
	if rerr := endTx(ctx, c, restore...); rerr != nil {
		return errSession{fmt.Errorf("%w (and then %v)", err, rerr)}
	}
	return err
}

// leaf is IDAllocDaoImpl.updateMaxIdAndGetLeafAlloc (or its custom-step
// twin) through MyBatis over Connector/J: openSession() takes autocommit
// off, the mapper's UPDATE and SELECT run in that transaction, commit()
// sends COMMIT, close() puts autocommit back.
func (cl *client) leaf(ctx context.Context, c *sql.Conn) (result, error) {
	const reset = "SET autocommit=1"
	if _, err := exec(ctx, c, "SET autocommit=0"); err != nil {
		return result{}, err
	}
	step := int64(0)
	var err error
	if cl.scheme == LeafDynamic {
		step = cl.step
		_, err = exec(ctx, c, "UPDATE leaf_alloc SET max_id = max_id + ? WHERE biz_tag = ?", step, LeafTag)
	} else {
		_, err = exec(ctx, c, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?", LeafTag)
	}
	if err != nil {
		return result{}, failTx(ctx, c, err, reset)
	}
	var tag string
	var maxID, rowStep int64
	if err := c.QueryRowContext(ctx, leafSelect, LeafTag).Scan(&tag, &maxID, &rowStep); err != nil {
		return result{}, failTx(ctx, c, fmt.Errorf("%s: %w", leafSelect, err), reset)
	}
	if _, err := exec(ctx, c, "COMMIT"); err != nil {
		// The outcome is unknown: the segment may or may not be ours.
		return result{}, failTx(ctx, c, err, reset)
	}
	// MyBatis ignores a failure to reset autocommit (and the pool then
	// drops the connection); the segment is committed either way.
	if _, err := exec(ctx, c, reset); err != nil {
		return result{}, errSession{fmt.Errorf("after COMMIT: %w", err)}
	}
	if step == 0 {
		step = rowStep // SegmentIDGenImpl: buffer.setStep(leafAlloc.getStep())
	}
	return segment(maxID, step)
}

// leafWithoutTx is leaf with autocommit left on: a lost-update bug.
func (cl *client) leafWithoutTx(ctx context.Context, c *sql.Conn) (result, error) {
	if _, err := exec(ctx, c, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?", LeafTag); err != nil {
		return result{}, err
	}
	var tag string
	var maxID, step int64
	if err := c.QueryRowContext(ctx, leafSelect, LeafTag).Scan(&tag, &maxID, &step); err != nil {
		return result{}, err
	}
	return segment(maxID, step)
}

// segment is the range (maxID - step, maxID].
func segment(maxID, step int64) (result, error) {
	if step <= 0 || maxID-step < 0 {
		return result{}, fmt.Errorf("%w: max_id %d, step %d", ErrMismatch, maxID, step)
	}
	return result{lo: uint64(maxID - step + 1), hi: uint64(maxID)}, nil
}

// The schemes' statements that more than one function sends, verbatim
// from their mappers and DAOs.
const (
	leafSelect   = "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?"
	tinyidSelect = "select id, biz_type, begin_id, max_id, step, delta, remainder, create_time, update_time, version from tiny_id_info where biz_type = ?"
	tinyidCAS    = "update tiny_id_info set max_id= ?, update_time=now(), version=version+1 where id=? and max_id=? and version=? and biz_type=?"
)

// Tinyid's session changes, in the order Spring's
// DataSourceTransactionManager makes and undoes them through Connector/J
// (setTransactionIsolation, setAutoCommit).
const (
	tinyidIsolation = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"
	tinyidRestoreAC = "SET autocommit=1"
	tinyidRestoreIL = "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"
)

// tinyid is DbSegmentIdServiceImpl.getNextSegmentId: up to maxAttempts
// times, read the row and try to move max_id on by step where nobody
// else has (the version and the old max_id unchanged). inTx wraps the
// loop in @Transactional(isolation = READ_COMMITTED), as the source does
// so that the query and the update share a connection and each read sees
// other servers' commits.
func (cl *client) tinyid(ctx context.Context, c *sql.Conn, inTx bool) (result, error) {
	var restore []string
	if inTx {
		if _, err := exec(ctx, c, tinyidIsolation); err != nil {
			return result{}, err
		}
		if _, err := exec(ctx, c, "SET autocommit=0"); err != nil {
			return result{}, failTx(ctx, c, err, tinyidRestoreIL)
		}
		restore = []string{tinyidRestoreAC, tinyidRestoreIL}
	}
	fail := func(err error) (result, error) {
		if inTx {
			return result{}, failTx(ctx, c, err, restore...)
		}
		return result{}, err
	}
	const query, cas = tinyidSelect, tinyidCAS
	for attempt := range cl.maxAttempts {
		var (
			id                     uint64
			bizType                string
			beginID, maxID         int64
			step                   sql.NullInt64
			delta, remainder       int64
			createTime, updateTime string
			version                int64
		)
		if err := c.QueryRowContext(ctx, query, TinyidBizType).Scan(&id, &bizType, &beginID, &maxID, &step,
			&delta, &remainder, &createTime, &updateTime, &version); err != nil {
			return fail(fmt.Errorf("%s: %w", query, err))
		}
		newMax := maxID + step.Int64
		r, err := exec(ctx, c, cas, newMax, id, maxID, version, bizType)
		if err != nil {
			return fail(err)
		}
		n, err := r.RowsAffected()
		if err != nil {
			return fail(err)
		}
		if n != 1 {
			continue // "getNextSegmentId conflict": someone else moved it
		}
		if inTx {
			if _, err := exec(ctx, c, "COMMIT"); err != nil {
				return fail(err)
			}
			for _, q := range restore {
				if _, err := exec(ctx, c, q); err != nil {
					return result{}, errSession{fmt.Errorf("after COMMIT: %w", err)}
				}
			}
		}
		res, err := segment(newMax, step.Int64)
		res.retries = attempt
		return res, err
	}
	res, err := fail(fmt.Errorf("%w after %d attempts", ErrConflict, cl.maxAttempts))
	res.retries = cl.maxAttempts
	return res, err
}

// uidgen is DisposableWorkerIdAssigner.assignWorkerId: insert this
// launch's WORKER_NODE row and take the generated key as the worker id
// (MyBatis useGeneratedKeys reads the OK packet's insert id). The row is
// then read back by host and port, as WorkerNodeDAO.getWorkerNodeByHostPort
// does, and must carry that id. HOST_NAME and PORT are unique per launch
// (UidGenerator's PORT is "<millis>-<random>"; the client and sequence
// number make it certain here).
func (cl *client) uidgen(ctx context.Context, c *sql.Conn) (result, error) {
	host := fmt.Sprintf("10.0.%d.%d", cl.id/250, cl.id%250+1)
	port := fmt.Sprintf("%d-%d", time.Now().UnixMilli(), cl.n)
	const actual = 2 // WorkerNodeType.ACTUAL
	r, err := exec(ctx, c, "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) VALUES (?, ?, ?, ?, NOW(), NOW())",
		host, port, actual, time.Now().Format(time.DateOnly))
	if err != nil {
		return result{}, err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return result{}, fmt.Errorf("generated key: %w", err)
	}
	const q = "SELECT ID, HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED FROM WORKER_NODE WHERE HOST_NAME = ? AND PORT = ?"
	rows, err := c.QueryContext(ctx, q, host, port)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	var got []int64
	for rows.Next() {
		var rid int64
		var h, p, typ, launch, mod, created string
		if err := rows.Scan(&rid, &h, &p, &typ, &launch, &mod, &created); err != nil {
			return result{}, fmt.Errorf("%s: %w", q, err)
		}
		got = append(got, rid)
	}
	if err := rows.Err(); err != nil {
		return result{}, fmt.Errorf("%s: %w", q, err)
	}
	if len(got) != 1 || got[0] != id || id <= 0 {
		return result{}, fmt.Errorf("%w: INSERT generated worker id %d, SELECT by host and port found ids %v", ErrMismatch, id, got)
	}
	return result{lo: uint64(id), hi: uint64(id)}, nil
}

// nextval takes one value from sequence seq, in MariaDB's function
// syntax and in the standard's, turn about.
func (cl *client) nextval(ctx context.Context, c *sql.Conn, seq string) (result, error) {
	q := "SELECT NEXTVAL(" + seq + ")"
	if cl.n%2 == 0 {
		q = "SELECT NEXT VALUE FOR " + seq
	}
	var v int64
	if err := c.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return result{}, fmt.Errorf("%s: %w", q, err)
	}
	if v <= 0 {
		return result{}, fmt.Errorf("%w: %s returned %d", ErrMismatch, q, v)
	}
	return result{lo: uint64(v), hi: uint64(v)}, nil
}

// ticket is Flickr's ticket: the id from the OK packet, checked against
// SELECT LAST_INSERT_ID() on the same connection.
func (cl *client) ticket(ctx context.Context, c *sql.Conn) (result, error) {
	r, err := exec(ctx, c, "REPLACE INTO Tickets64 (stub) VALUES ('a')")
	if err != nil {
		return result{}, err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return result{}, err
	}
	var lii int64
	if err := c.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&lii); err != nil {
		return result{}, fmt.Errorf("SELECT LAST_INSERT_ID(): %w", err)
	}
	if lii != id || id <= 0 {
		return result{}, fmt.Errorf("%w: OK packet insert id %d, SELECT LAST_INSERT_ID() %d", ErrMismatch, id, lii)
	}
	return result{lo: uint64(id), hi: uint64(id)}, nil
}
