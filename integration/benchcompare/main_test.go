package main

import (
	"reflect"
	"testing"
)

// TestParseTables reads the ticketd rows of both bench tables, as the
// bench tests write them, and leaves out MariaDB's and refused rows.
func TestParseTables(t *testing.T) {
	in := `
make bench, ID schemes: 2s per run; a fetch is a Leaf or Tinyid segment or one NEXTVAL

| target | scheme | conns | fetches/s | ids/s | p50 ms | p99 ms | lost CAS per fetch | errors | × MariaDB |
|---|---|---|---|---|---|---|---|---|---|
| MariaDB InnoDB | leaf | 1 | 957 | 1913294 | 1.02 | 1.69 |  |  |  |
| ticketd 1 node | leaf | 16 | 7297 | 14594213 | 2.10 | 4.48 |  |  | 5.1 |
| ticketd 3 nodes | tinyid | 16 | - | - | - | - | - | 1235 refused | |

make bench: sysbench, 2s per run, tickets/s (queries/s for SELECT 1), latency per ticket

| target | conns | per s | p50 ms | p99 ms | errors | CPU µs each | × InnoDB | × MyISAM |
|---|---|---|---|---|---|---|---|---|
| ticketd 3 nodes durable, wal | 16 | 6725 | 2.26 | 4.82 | 0 | 193 | 7.2 | 2.0 |
| ticketd 3 nodes durable, wal, leader only | 64 | 14346.5 | 4.33 | 7.30 | 0 | 75 | | |
`
	want := []value{
		{"leaf: ticketd 1 node x16", 7297},
		{"ticket: ticketd 3 nodes durable, wal x16", 6725},
		{"ticket: ticketd 3 nodes durable, wal, leader only x64", 14346.5},
	}
	if got := parseTables([]byte(in)); !reflect.DeepEqual(got, want) {
		t.Errorf("parseTables:\n got %v\nwant %v", got, want)
	}
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		in          []float64
		med, lo, hi float64
	}{
		{nil, 0, 0, 0},
		{[]float64{1.1}, 1.1, 1.1, 1.1},
		{[]float64{1.2, 0.8, 1.0}, 1.0, 0.8, 1.2},
		{[]float64{1.2, 0.8, 1.0, 0.9}, 0.95, 0.8, 1.2},
	} {
		med, lo, hi := spread(tc.in)
		if med != tc.med || lo != tc.lo || hi != tc.hi {
			t.Errorf("spread(%v) = %v %v %v, want %v %v %v", tc.in, med, lo, hi, tc.med, tc.lo, tc.hi)
		}
	}
}

func TestSuccessive(t *testing.T) {
	if got := successive([]float64{100, 50, 0, 75, 150}); !reflect.DeepEqual(got, []float64{0.5, 2}) {
		t.Errorf("successive: %v, want [0.5 2] (runs without a figure left out)", got)
	}
}
