package schemes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestSegment: Leaf's and Tinyid's segment is (max_id - step, max_id],
// and nonsense from the server is an error, not a range.
func TestSegment(t *testing.T) {
	for _, c := range []struct {
		max, step int64
		lo, hi    uint64
		bad       bool
	}{
		{2001, 2000, 2, 2001, false},       // Leaf's first segment after max_id 1
		{100001, 100000, 2, 100001, false}, // Tinyid's
		{5, 5, 1, 5, false},
		{5, 0, 0, 0, true},  // a zero step would be an empty range
		{5, 6, 0, 0, true},  // below zero
		{5, -1, 0, 0, true}, // a negative step
	} {
		r, err := segment(c.max, c.step)
		if (err != nil) != c.bad || !c.bad && (r.lo != c.lo || r.hi != c.hi) {
			t.Errorf("segment(%d, %d) = [%d, %d], %v", c.max, c.step, r.lo, r.hi, err)
		}
		if c.bad && !errors.Is(err, ErrMismatch) {
			t.Errorf("segment(%d, %d): error %v is not ErrMismatch", c.max, c.step, err)
		}
	}
}

// TestClass: the classes the tests allow or reject, through the wrapping
// the clients add.
func TestClass(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("UPDATE leaf_alloc ...: %w", err) }
	for err, want := range map[error]string{
		nil: "",
		wrap(&mysql.MySQLError{Number: 1290, Message: "no leader"}):                         "1290",
		errSession{fmt.Errorf("%w (and then %v)", &mysql.MySQLError{Number: 1105}, io.EOF)}: "1105",
		wrap(mysql.ErrInvalidConn):                     ClassConn,
		wrap(io.ErrUnexpectedEOF):                      ClassConn,
		wrap(context.DeadlineExceeded):                 ClassConn,
		fmt.Errorf("%w after 3 attempts", ErrConflict): ClassConflict,
		fmt.Errorf("%w: ids differ", ErrMismatch):      ClassMismatch,
		errors.New("sql: no rows in result set"):       ClassOther,
	} {
		if got := Class(err); got != want {
			t.Errorf("Class(%v) = %q, want %q", err, got, want)
		}
	}
}

// TestSetupStatements: each table once, whatever schemes share it, in
// the schemes' own DDL.
func TestSetupStatements(t *testing.T) {
	got := SetupStatements(Leaf, LeafDynamic, Tinyid, TinyidAutocommit, UidGen, NextVal, NextValNoCache, Leaf)
	want := []string{LeafDDL, LeafSeed, TinyidDDL, TinyidSeed, UidGenDDL,
		"CREATE SEQUENCE s START WITH 1 INCREMENT BY 1 CACHE 1000",
		"CREATE SEQUENCE s_nocache START WITH 1 INCREMENT BY 1 NOCACHE"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestUnexpected: only the allowed classes pass.
func TestUnexpected(t *testing.T) {
	s := &Stats{Samples: []string{"conflict: get next segmentId conflict", "1213: Deadlock found"}}
	if u := s.Unexpected(ClassConflict); len(u) != 1 || !strings.HasPrefix(u[0], "1213") {
		t.Errorf("Unexpected = %v, want the deadlock only", u)
	}
	if u := s.Unexpected(ClassConflict, "1213"); len(u) != 0 {
		t.Errorf("Unexpected = %v, want none", u)
	}
}

// TestRunRejects: a workload that cannot run is Run's error.
func TestRunRejects(t *testing.T) {
	ctx := context.Background()
	tgt := Target{Nodes: []Node{{Name: "x", DSN: DSN("127.0.0.1:1", "ids")}}}
	for _, c := range []struct {
		tgt Target
		cfg Config
	}{
		{Target{}, Config{Scheme: Leaf, Clients: 1}},
		{tgt, Config{Scheme: Leaf}},
		{tgt, Config{Scheme: "snowflake", Clients: 1}},
	} {
		if _, err := Run(ctx, c.tgt, c.cfg); err == nil {
			t.Errorf("Run(%+v, %+v) ran", c.tgt, c.cfg)
		}
	}
}
