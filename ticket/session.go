package ticket

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
	"github.com/ticketd/ticketd/ticket/rowengine"
)

// Session is one connection's view of ticket state: LAST_INSERT_ID(),
// LASTVAL() of each sequence, the session values of
// auto_increment_increment/offset, and the rows its writes left in the
// open transaction. It belongs to a single connection and is not safe for
// concurrent use.
type Session struct {
	LastInsertID uint64
	Increment    uint64
	Offset       uint64

	// own are the rows this session's writes left in the open
	// transaction, by lower-case "db.table" (Remember).
	own map[string][][]model.Datum
	// lastVal is LASTVAL() per sequence, by "db.name": this session's
	// last NEXTVAL of each.
	lastVal map[string]int64
	// casOwner names the session to the leader's compare-and-set queue
	// (alloc/casgate.go), on any node: random, never 0.
	casOwner uint64
}

// Remember keeps the rows a write of the open transaction left (its
// Result.Images): until EndTxn, the session's SELECTs of the table read
// them over the stored rows, as InnoDB's row locks let a transaction read
// its own writes (Leaf's UPDATE ... max_id = max_id + step; SELECT max_id
// in one transaction). The caller calls it only inside a transaction.
func (s *Session) Remember(db, table string, images [][]model.Datum) {
	if len(images) == 0 {
		return
	}
	if s.own == nil {
		s.own = map[string][][]model.Datum{}
	}
	k := strings.ToLower(db + "." + table)
	s.own[k] = append(s.own[k], images...)
}

// EndTxn forgets the transaction's writes (COMMIT, ROLLBACK, BEGIN).
func (s *Session) EndTxn() { s.own = nil }

// SetLastVal records a NEXTVAL of sequence db.name: LASTVAL()'s value.
func (s *Session) SetLastVal(db, name string, v int64) {
	if s.lastVal == nil {
		s.lastVal = map[string]int64{}
	}
	s.lastVal[db+"."+name] = v
}

// LastVal is LASTVAL() of sequence db.name; ok is false before any
// NEXTVAL of it in this session (LASTVAL() is NULL then).
func (s *Session) LastVal(db, name string) (int64, bool) {
	v, ok := s.lastVal[db+"."+name]
	return v, ok
}

// Select answers q on the row table db.name of st, with the rows this
// session's open transaction wrote over the stored rows (the latest
// write of a row wins). It returns the table as read in the same view,
// for its columns. A missing table, or one that is not a row table, is
// 1146.
func (s *Session) Select(st Store, db, name string, q *rowengine.Query) (*model.Table, *rowengine.QueryResult, error) {
	t, err := st.Table(db, name)
	if err != nil {
		return nil, nil, err
	}
	rows, err := st.Rows(db, name)
	if err != nil {
		return nil, nil, err
	}
	if t == nil || t.Def.Rows == nil || rows == nil {
		return nil, nil, mysqlerr.NoSuchTable(db, name)
	}
	var over func(pk string, r []model.Datum) []model.Datum
	if own := s.own[strings.ToLower(db+"."+name)]; len(own) > 0 {
		mine := make(map[string][]model.Datum, len(own))
		for _, img := range own {
			if k, ok := rowengine.PrimaryKeyOf(t.Def.Rows, img); ok {
				mine[k] = img
			}
		}
		if len(mine) > 0 {
			over = func(pk string, r []model.Datum) []model.Datum {
				if img, ok := mine[pk]; ok {
					return img
				}
				return r
			}
		}
	}
	res, e, err := rowengine.SelectFrom(t, rows, over, q)
	if err != nil {
		return nil, nil, err
	}
	if e != nil {
		return nil, nil, e
	}
	return t, res, nil
}

// NewSession starts a session with the server's global settings.
func NewSession(globalInc, globalOff uint64) *Session {
	return &Session{Increment: orOne(globalInc), Offset: orOne(globalOff), casOwner: rand.Uint64() | 1}
}

// CASOwner names the session to the leader's compare-and-set queue
// (alloc/casgate.go), on any node: random, never 0.
func (s *Session) CASOwner() uint64 { return s.casOwner }

func orOne(v uint64) uint64 {
	if v == 0 {
		return 1
	}
	return v
}

// Observe records a statement's effect on LAST_INSERT_ID().
func (s *Session) Observe(r *model.Result) {
	if r.SetLastID {
		s.LastInsertID = r.LastID
	}
}

// ClampAutoIncVar applies MySQL's range for auto_increment_increment and
// auto_increment_offset (1..65535). Out-of-range values are clamped, with
// the warning MySQL gives (1292) returned as w.
func ClampAutoIncVar(name string, v int64, text string) (uint64, *model.Warning) {
	c := v
	if c < 1 {
		c = 1
	}
	if c > 65535 {
		c = 65535
	}
	if c == v {
		return uint64(v), nil
	}
	if text == "" {
		text = strconv.FormatInt(v, 10)
	}
	return uint64(c), &model.Warning{Level: "Warning", Code: mysqlerr.CodeTruncatedWrongValue,
		Message: "Truncated incorrect " + name + " value: '" + text + "'"}
}
