package sql

import "testing"

// TestCounterStep: the counter idioms are read with their step, a unary
// plus ignored; every other expression of the column is not a step, so
// that the alloc role's check (wire/privileges.go) refuses it.
func TestCounterStep(t *testing.T) {
	for _, c := range []struct {
		set  string
		step string // "" no step, "-" not a counter step
	}{
		{"id = id", ""},
		{"id = LAST_INSERT_ID(id)", ""},
		{"id = +id", ""},
		{"id = id + 1", "1"},
		{"id = LAST_INSERT_ID(id + 1)", "1"},
		{"id = +LAST_INSERT_ID(+id + +1)", "1"},
		{"id = 1 + id", "1"},
		{"id = id - 1", "1"},
		{"id = id + ?", "?"},
		{"id = id + 'x'", "x"},
		{"id = id * 2", "-"},
		{"id = -(id)", "-"},
		{"id = -id", "-"},
		{"id = 0 - id", "-"},
		{"id = 1 - id", "-"},
		{"id = -?", "-"},
		{"id = 7", "-"},
		{"id = ?", "-"},
		{"id = other", "-"},
		{"id = other + 1", "-"},
		{"id = id + -(other)", "-"},
		{"id = LAST_INSERT_ID()", "-"},
		{"id = LAST_INSERT_ID(7)", "-"},
		{"id = -LAST_INSERT_ID(id + 1)", "-"},
		{"id = NOW()", "-"},
		{"id = DEFAULT", "-"},
		{"id = NULL", "-"},
	} {
		ps, err := Parse("UPDATE r SET " + c.set)
		if err != nil {
			t.Fatalf("%s: %v", c.set, err)
		}
		u, ok := ps[0].(*Update)
		if !ok {
			t.Fatalf("%s: a %T", c.set, ps[0])
		}
		a := &u.Assigns[0]
		step, ok := a.CounterStep(false)
		got := "-"
		if ok {
			got = ""
			if step != nil {
				switch step.Value.Kind {
				case ValParam:
					got = "?"
				case ValInt:
					got = "1"
				default:
					got = step.Value.Str
				}
			}
		}
		if got != c.step {
			t.Errorf("%s: step %q, want %q", c.set, got, c.step)
		}
	}
	ps, err := Parse("INSERT INTO r (stub) VALUES ('a') ON DUPLICATE KEY UPDATE id = VALUES(id), other = VALUES(id)")
	if err != nil {
		t.Fatal(err)
	}
	odku := ps[0].(*Insert).OnDup
	if step, ok := odku[0].CounterStep(true); !ok || step != nil {
		t.Errorf("ON DUPLICATE KEY UPDATE id = VALUES(id): %v, %v, want no step", step, ok)
	}
	if _, ok := odku[0].CounterStep(false); ok {
		t.Errorf("VALUES(id) outside ON DUPLICATE KEY UPDATE is read as a step")
	}
	if _, ok := odku[1].CounterStep(true); ok {
		t.Errorf("other = VALUES(id) is read as a step of other")
	}
}
