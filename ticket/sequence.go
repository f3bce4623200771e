package ticket

import (
	"math"
	"strconv"
	"strings"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

// Sequences are MariaDB's CREATE SEQUENCE objects, kept as tables of their
// database (TableDef.Seq set) so that they share the namespace, SHOW
// TABLES, DROP DATABASE, snapshots and backups with ticket tables. The
// allocation rule is MariaDB 10.11's (sql/sql_sequence.cc): the state is
// the sequence's one row, and Apply plays the part of MariaDB's
// SEQUENCE::next_value, set_value and ALTER SEQUENCE on it.
//
// What differs is where the cache lives: MariaDB caches per server; here
// only the Raft leader caches (alloc/sequence_cache.go), and a range it took is
// committed through Raft first, so values are unique and increasing across
// the cluster.

// errSequenceRows refuses INSERT, REPLACE and UPDATE of a sequence's row
// (MariaDB takes them; SETVAL and ALTER SEQUENCE are ticketd's way).
var errSequenceRows = mysqlerr.NotSupported("INSERT, REPLACE or UPDATE of a sequence (use SETVAL or ALTER SEQUENCE)")

// isSeqOp is model.Op.IsSeq, for Apply.
func isSeqOp(op model.Op) bool { return op.IsSeq() }

// maxAutoIncrement is MariaDB's bound on an increment of 0 (which follows
// auto_increment_increment) in the cache size check.
const maxAutoIncrement = 65535

// seqUsed records which options a statement set, as MariaDB's used_fields.
type seqUsed struct {
	start, min, max, restart, restartWith bool
	restartValue                          int64
}

// setOptions applies opts to d (create: on MariaDB's defaults) and
// returns which were used.
func setOptions(d *model.SequenceDef, opts []model.SeqOption, cacheNeg *bool) seqUsed {
	var u seqUsed
	for _, o := range opts {
		switch o.Kind {
		case model.SeqStart:
			d.Start, u.start = o.Value, true
		case model.SeqIncrement:
			d.Increment = o.Value
		case model.SeqMin:
			d.Min, u.min = o.Value, true
		case model.SeqNoMin:
			u.min = false
			d.Min = math.MinInt64 // resolved by adjust
		case model.SeqMax:
			d.Max, u.max = o.Value, true
		case model.SeqNoMax:
			u.max = false
			d.Max = math.MaxInt64
		case model.SeqCache:
			if o.Value < 0 {
				*cacheNeg = true
			}
			d.Cache = uint64(max(o.Value, 0))
		case model.SeqNoCache:
			d.Cache = 0
		case model.SeqCycle:
			d.Cycle = true
		case model.SeqNoCycle:
			d.Cycle = false
		case model.SeqRestart:
			u.restart, u.restartWith = true, false
		case model.SeqRestartWith:
			u.restart, u.restartWith, u.restartValue = true, true, o.Value
		}
	}
	return u
}

// adjustSequence is MariaDB's sequence_definition::check_and_adjust: defaults that
// depend on the increment's sign, and the consistency check. ok is false
// for options MariaDB refuses with 4085. warn is for the notes later
// MariaDB versions give; 10.11 has none.
func adjustSequence(d *model.SequenceDef, u seqUsed, realInc int64, warn *[]model.Warning) bool {
	if !u.min {
		d.Min = 1
		if realInc < 0 {
			d.Min = math.MinInt64 + 1
		}
	}
	if !u.max {
		d.Max = math.MaxInt64 - 1
		if realInc < 0 {
			d.Max = -1
		}
	}
	if !u.start {
		d.Start = d.Min
		if realInc < 0 {
			d.Start = d.Max
		}
	}
	maxInc := uint64(maxAutoIncrement)
	if d.Increment != 0 {
		maxInc = absInt64(d.Increment)
	}
	// MariaDB 10.11 refuses MAXVALUE and MINVALUE at the int64 limits
	// (later versions truncate them with a note): NEXTVAL's "one past the
	// bound" must stay representable.
	return d.Max >= d.Start && d.Max > d.Min && d.Start >= d.Min &&
		d.Max != math.MaxInt64 && d.Min != math.MinInt64 &&
		d.Cache < (math.MaxInt64-maxInc)/maxInc &&
		(realInc > 0 && d.Next >= d.Min || realInc < 0 && d.Next <= d.Max)
}

func absInt64(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// NewSequenceDef builds the definition of CREATE SEQUENCE db.name with
// opts, MariaDB's defaults filling the rest. Errors are *Error (4085 for
// contradictory options); warnings are the notes MariaDB gives.
func NewSequenceDef(db, name, engine string, opts []model.SeqOption) (*model.TableDef, []model.Warning, error) {
	for _, o := range opts {
		if o.Kind == model.SeqRestart || o.Kind == model.SeqRestartWith {
			return nil, nil, mysqlerr.Syntax("RESTART", 1)
		}
	}
	seq := &model.SequenceDef{Increment: 1, Cache: 1000}
	var cacheNeg bool
	u := setOptions(seq, opts, &cacheNeg)
	var warns []model.Warning
	realInc := seq.Increment
	if realInc == 0 {
		realInc = 1
	}
	// Next is checked against the bounds: set it once START is known.
	probe := *seq
	adjustSequence(&probe, u, realInc, &warns)
	seq.Next = probe.Start
	warns = warns[:0]
	if cacheNeg || !adjustSequence(seq, u, realInc, &warns) {
		return nil, nil, mysqlerr.SequenceInvalidData(db, name)
	}
	seq.Next, seq.Free = seq.Start, seq.Start
	if engine == "" {
		engine = model.DefaultEngine
	}
	return &model.TableDef{DB: db, Name: name, Engine: engine, Seq: seq}, warns, nil
}

// realIncrement is the step the sequence uses: its INCREMENT, or for 0
// the replicated global auto_increment_increment (MariaDB's rule; the
// offset alignment MariaDB also applies is not).
func realIncrement(s Store, d *model.SequenceDef) (int64, error) {
	if d.Increment != 0 {
		return d.Increment, nil
	}
	v, ok, err := s.Global(VarIncrement)
	if err != nil || !ok || v == 0 {
		return 1, err
	}
	return int64(min(v, maxAutoIncrement)), nil
}

// stepSequence is MariaDB's increment_value: v moved by inc, or one past the
// bound when that would cross it (or overflow).
func stepSequence(d *model.SequenceDef, v, inc int64) int64 {
	if inc > 0 {
		if v > math.MaxInt64-inc || v+inc > d.Max {
			return d.Max + 1
		}
		return v + inc
	}
	if v < math.MinInt64-inc || v+inc < d.Min {
		return d.Min - 1
	}
	return v + inc
}

// SeqBefore reports whether a comes before b in the direction of inc.
func SeqBefore(a, b, inc int64) bool {
	if inc > 0 {
		return a < b
	}
	return a > b
}

// applySequence is NEXTVAL, SETVAL or ALTER SEQUENCE of the sequence t.
func applySequence(s Store, t *model.Table, c *model.Command) (model.Result, error) {
	sc := c.Seq
	if sc == nil {
		sc = &model.SeqCommand{}
	}
	// Copy the row: Table's copy shares the definition's pointer.
	seq := *t.Def.Seq
	t.Def.Seq = &seq
	inc, err := realIncrement(s, &seq)
	if err != nil {
		return model.Result{}, err
	}
	var r model.Result
	switch c.Op {
	case model.OpSeqNext:
		r = seqNext(&seq, inc, sc.Count, c)
	case model.OpSetVal:
		r = seqSetVal(&seq, inc, sc)
	case model.OpAlterSeq:
		r = seqAlter(&seq, sc.Options, c)
	default:
		return model.Result{Err: unknownCommand(c)}, nil
	}
	if r.Err != nil || r.Affected == 0 && c.Op == model.OpSetVal {
		return r, nil
	}
	return r, s.PutTable(t)
}

func applyCreateSeq(s Store, c *model.Command) (model.Result, error) {
	if c.Def == nil || c.Def.Seq == nil {
		return model.Result{Err: mysqlerr.New(mysqlerr.CodeUnknown, "CREATE SEQUENCE without a definition")}, nil
	}
	def := *c.Def
	seq := *def.Seq
	def.Seq = &seq
	if done, err := nameFree(s, &def, c.IfExists); done != nil || err != nil {
		if err != nil {
			return model.Result{}, err
		}
		return *done, nil
	}
	return model.Result{}, s.PutTable(&model.Table{Def: def})
}

// seqNext is MariaDB's SEQUENCE::next_value, taking a whole range at
// once: the values First, First+inc, ... before Last (exclusive) are the
// caller's, and Next moves to Last. count 0 takes the sequence's cache
// size. The increment comes back in Matched (the leader's cache steps by
// it). A range never crosses a CYCLE wrap: the wrap starts a new range.
func seqNext(seq *model.SequenceDef, inc int64, count uint64, c *model.Command) model.Result {
	if count == 0 {
		count = max(seq.Cache, 1)
	}
	for round := 0; ; round++ {
		res := seq.Free
		if SeqBefore(res, seq.Next, inc) {
			// A range reserved before SETVAL moved Free back into it.
			end := seq.Next
			if n, ok := stepN(seq, res, inc, count); ok && SeqBefore(n, end, inc) {
				end = n
			}
			seq.Free = end
			return seqRange(res, end, inc)
		}
		next, out := reserveEnd(seq, inc, count)
		if !out {
			seq.Next, seq.Free = next, next
			return seqRange(res, next, inc)
		}
		if !seq.Cycle || round > 0 {
			return model.Result{Err: mysqlerr.SequenceRunOut(c.DB, c.Table)}
		}
		seq.Round++
		seq.Next = seq.Min
		if inc < 0 {
			seq.Next = seq.Max
		}
		seq.Free = seq.Next
	}
}

func seqRange(first, end, inc int64) model.Result {
	return model.Result{First: uint64(first), Last: uint64(end), Matched: uint64(inc)}
}

// stepN is first moved by count steps of inc, ok false on overflow.
func stepN(seq *model.SequenceDef, first, inc int64, count uint64) (int64, bool) {
	a := absInt64(inc)
	if count > math.MaxInt64/a {
		return 0, false
	}
	add := int64(count * a)
	if inc > 0 {
		if first > math.MaxInt64-add {
			return 0, false
		}
		return first + add, true
	}
	if first < math.MinInt64+add {
		return 0, false
	}
	return first - add, true
}

// reserveEnd moves Next by count steps, clamped one past the bound;
// out says no value is left before it.
func reserveEnd(seq *model.SequenceDef, inc int64, count uint64) (int64, bool) {
	res := seq.Free
	n, ok := stepN(seq, seq.Next, inc, count)
	if inc > 0 {
		if !ok || n > seq.Max {
			return seq.Max + 1, res >= seq.Max+1
		}
		return n, false
	}
	if !ok || n < seq.Min {
		return seq.Min - 1, res <= seq.Min-1
	}
	return n, false
}

// seqSetVal is MariaDB's SEQUENCE::set_value with is_used true and round
// 0 (SETVAL's defaults): it returns the value (Affected 1) when the
// sequence now continues after it, or NULL (Affected 0) when the value is
// behind the next one and nothing changed.
func seqSetVal(seq *model.SequenceDef, inc int64, sc *model.SeqCommand) model.Result {
	v := sc.Value
	nextVal := stepSequence(seq, v, inc)
	free := seq.Free
	if sc.HasFree && seq.Free == seq.Next && seq.Next == sc.Until && !SeqBefore(seq.Next, sc.Free, inc) {
		// The leader's dropped cache had handed out values before Free
		// only: the rest of its range is free again.
		free = sc.Free
	}
	if seq.Round > 0 || SeqBefore(nextVal, free, inc) {
		return model.Result{First: uint64(v)}
	}
	seq.Free = nextVal
	if !SeqBefore(nextVal, seq.Next, inc) {
		seq.Next = nextVal
	}
	return model.Result{First: uint64(v), Affected: 1}
}

// seqAlter is MariaDB's ALTER SEQUENCE: options not named keep their
// values, RESTART moves the sequence to START or the given value, and any
// cache is dropped (Free back to Next).
func seqAlter(seq *model.SequenceDef, opts []model.SeqOption, c *model.Command) model.Result {
	nd := *seq
	var cacheNeg bool
	u := setOptions(&nd, opts, &cacheNeg)
	// Unnamed bounds keep their values; NO MINVALUE / NO MAXVALUE take the
	// default for the new increment's sign.
	noMin, noMax := false, false
	for _, o := range opts {
		switch o.Kind {
		case model.SeqNoMin:
			noMin = true
		case model.SeqMin:
			noMin = false
		case model.SeqNoMax:
			noMax = true
		case model.SeqMax:
			noMax = false
		}
	}
	realInc := nd.Increment
	if realInc == 0 {
		realInc = 1
	}
	u.min, u.max, u.start = !noMin, !noMax, true
	if u.restart {
		restart := nd.Start
		if u.restartWith {
			restart = u.restartValue
		}
		nd.Next = restart
	}
	var warns []model.Warning
	if cacheNeg || !adjustSequence(&nd, u, realInc, &warns) {
		return model.Result{Err: mysqlerr.SequenceInvalidData(c.DB, c.Table)}
	}
	nd.Free = nd.Next
	*seq = nd
	return model.Result{Warnings: warns}
}

// SequenceColumns are the columns of a sequence's table.
var SequenceColumns = []string{"next_not_cached_value", "minimum_value", "maximum_value", "start_value",
	"increment", "cache_size", "cycle_option", "cycle_count"}

// CreateSequenceStatement is SHOW CREATE SEQUENCE's text, MariaDB's.
func CreateSequenceStatement(d *model.TableDef) string {
	q := d.Seq
	var b strings.Builder
	b.WriteString("CREATE SEQUENCE " + quoteIdent(d.Name))
	b.WriteString(" start with " + strconv.FormatInt(q.Start, 10))
	b.WriteString(" minvalue " + strconv.FormatInt(q.Min, 10))
	b.WriteString(" maxvalue " + strconv.FormatInt(q.Max, 10))
	b.WriteString(" increment by " + strconv.FormatInt(q.Increment, 10))
	if q.Cache == 0 {
		b.WriteString(" nocache")
	} else {
		b.WriteString(" cache " + strconv.FormatUint(q.Cache, 10))
	}
	if q.Cycle {
		b.WriteString(" cycle")
	} else {
		b.WriteString(" nocycle")
	}
	b.WriteString(" ENGINE=" + d.Engine)
	if d.Comment != "" {
		b.WriteString(" COMMENT=" + quoteString(d.Comment))
	}
	return b.String()
}

// CreateSequenceTableStatement is SHOW CREATE TABLE's text for a
// sequence, MariaDB's.
func CreateSequenceTableStatement(d *model.TableDef) string {
	return "CREATE TABLE " + quoteIdent(d.Name) + " (\n" +
		"  `next_not_cached_value` bigint(21) NOT NULL,\n" +
		"  `minimum_value` bigint(21) NOT NULL,\n" +
		"  `maximum_value` bigint(21) NOT NULL,\n" +
		"  `start_value` bigint(21) NOT NULL COMMENT 'start value when sequences is created or value if RESTART is used',\n" +
		"  `increment` bigint(21) NOT NULL COMMENT 'increment value',\n" +
		"  `cache_size` bigint(21) unsigned NOT NULL,\n" +
		"  `cycle_option` tinyint(1) unsigned NOT NULL COMMENT '0 if no cycles are allowed, 1 if the sequence should begin a new cycle when maximum_value is passed',\n" +
		"  `cycle_count` bigint(21) NOT NULL COMMENT 'How many cycles have been done'\n" +
		") ENGINE=" + d.Engine + " SEQUENCE=1"
}
