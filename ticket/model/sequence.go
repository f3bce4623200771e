package model

// SequenceDef is a sequence's options and its row, MariaDB's
// (next_not_cached_value, minimum_value, maximum_value, start_value,
// increment, cache_size, cycle_option, cycle_count).
type SequenceDef struct {
	Start     int64
	Min       int64
	Max       int64
	Increment int64  // 0: auto_increment_increment's global value
	Cache     uint64 // 0: NOCACHE
	Cycle     bool

	// Next is next_not_cached_value: the end (exclusive) of the values
	// reserved through Raft. Nothing at or beyond it was handed out.
	Next int64
	// Free is the next value to hand out when it lies before Next:
	// SETVAL inside a reserved range moves it there, as MariaDB moves its
	// cache pointer. Otherwise it equals Next.
	Free int64
	// Round is cycle_count: how many times CYCLE wrapped around.
	Round int64
}

// SeqOptionKind is one option of CREATE or ALTER SEQUENCE. The numbers
// are part of the replicated log format (and shared with sql).
type SeqOptionKind uint8

// Sequence options.
const (
	SeqStart       SeqOptionKind = 1  // START [WITH] n
	SeqIncrement   SeqOptionKind = 2  // INCREMENT [BY] n
	SeqMin         SeqOptionKind = 3  // MINVALUE n
	SeqNoMin       SeqOptionKind = 4  // NO MINVALUE
	SeqMax         SeqOptionKind = 5  // MAXVALUE n
	SeqNoMax       SeqOptionKind = 6  // NO MAXVALUE
	SeqCache       SeqOptionKind = 7  // CACHE n
	SeqNoCache     SeqOptionKind = 8  // NOCACHE
	SeqCycle       SeqOptionKind = 9  // CYCLE
	SeqNoCycle     SeqOptionKind = 10 // NOCYCLE
	SeqRestart     SeqOptionKind = 11 // RESTART (ALTER only): back to START
	SeqRestartWith SeqOptionKind = 12 // RESTART WITH n (ALTER only)
)

// SeqOption is one option as written.
type SeqOption struct {
	Kind  SeqOptionKind
	Value int64
}

// SeqCommand is the sequence commands' part of a Command.
type SeqCommand struct {
	// Options are ALTER SEQUENCE's, in statement order.
	Options []SeqOption
	// Value is SETVAL's value.
	Value int64
	// Count is how many values OpSeqNext takes: 0 means the sequence's
	// own cache size (a leader's refill), 1 one value.
	Count uint64
	// HasFree says the leader dropped a cache whose next value was Free,
	// taken when the state's Next was Until: SETVAL then compares with
	// Free, as MariaDB compares with its cache pointer.
	HasFree     bool
	Free, Until int64
}

// SequenceRow is the sequence's row as SELECT * FROM s shows it, in
// MariaDB's column order.
func (d *SequenceDef) SequenceRow() []int64 {
	cycle := int64(0)
	if d.Cycle {
		cycle = 1
	}
	return []int64{d.Next, d.Min, d.Max, d.Start, d.Increment, int64(d.Cache), cycle, d.Round}
}
