package sql

import (
	"testing"

	"github.com/ticketd/ticketd/sql/mysqlerr"
)

// TestSyntaxErrorAfterGoodStatements: MySQL runs the statements before a
// bad one in a multi-statement query, so Parse keeps them and ends with a
// Failed plan carrying the 1064.
func TestSyntaxErrorAfterGoodStatements(t *testing.T) {
	plans, err := Parse("REPLACE INTO t (stub) VALUES ('a;'); SELEC 1; REPLACE INTO t (stub) VALUES ('a')")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(plans) != 2 {
		t.Fatalf("got %d plans, want the REPLACE and a Failed", len(plans))
	}
	if ins, ok := plans[0].(*Insert); !ok || ins.Rows[0][0].Str != "a;" {
		t.Fatalf("first plan %#v", plans[0])
	}
	f, ok := plans[1].(*Failed)
	if !ok || f.Err.Code != mysqlerr.CodeParse {
		t.Fatalf("second plan %#v", plans[1])
	}
	if _, err := Parse("SELEC 1; SELECT 2"); err == nil {
		t.Fatalf("a bad first statement must fail the whole query")
	}
}
