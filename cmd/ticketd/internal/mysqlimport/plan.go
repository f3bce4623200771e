package mysqlimport

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Source is what was read from one MySQL/MariaDB ticket server.
type Source struct {
	Label     string // "s1", "s2": how the plan refers to it
	Addr      string // user@host:port, no password
	Version   string
	Increment uint64 // @@global.auto_increment_increment
	Offset    uint64 // @@global.auto_increment_offset
	ReadOnly  bool   // @@global.read_only
	Tables    []TableDef
	Rejects   []Reject
	Counters  map[Key]Counter
}

// Counter is one table's counter on one source.
type Counter struct {
	AutoInc uint64 // AUTO_INCREMENT: the next value the server would use (0: unknown)
	MaxID   uint64 // MAX(id); 0 for an empty table
}

// Highest is the largest id the source may have handed out: below its
// AUTO_INCREMENT (rows REPLACE deleted included), and at least MAX(id),
// which InnoDB before MySQL 8.0 recomputes AUTO_INCREMENT from at restart
// and which a client may have inserted explicitly.
func (c Counter) Highest() uint64 {
	h := c.MaxID
	if c.AutoInc > 0 && c.AutoInc-1 > h {
		h = c.AutoInc - 1
	}
	return h
}

// Target is what was read from ticketd.
type Target struct {
	Addr      string
	Version   string
	Increment uint64
	Offset    uint64
	Tables    map[Key]TargetTable
}

// TargetTable is a table ticketd already has.
type TargetTable struct {
	AutoInc uint64 // the next id
	IDType  string // as SHOW COLUMNS shows it
	Max     uint64 // the largest id its type holds; 0: unknown
}

// TablePlan is one table's part of the plan.
type TablePlan struct {
	Def     TableDef // from the first source that has it
	Sources []string // labels of the sources that have it
	Highest uint64   // the largest id any source may have handed out
	Start   uint64   // the counter ticketd gets: Highest + 1 + margin
	Target  *TargetTable
	Notes   []string
	Err     error // the table cannot be imported; Apply refuses the whole plan
}

// Statements are the table's DDL, in order.
func (t *TablePlan) Statements() []string {
	return []string{
		"CREATE DATABASE IF NOT EXISTS " + QuoteIdent(t.Def.Schema),
		t.Def.CreateSQL(),
		"ALTER TABLE " + t.Def.Key.Quoted() + " AUTO_INCREMENT = " + strconv.FormatUint(t.Start, 10),
	}
}

// Plan is the whole migration: what was read and what will be done.
type Plan struct {
	Sources []*Source
	Target  *Target // nil: no --to given (dry run without a target)
	Margin  uint64
	Tables  []*TablePlan
	Rejects []SourceReject
}

// SourceReject is a near-miss table on one source.
type SourceReject struct {
	Source string
	Reject
}

// ErrPlan is returned (wrapped) when some table cannot be imported.
var ErrPlan = errors.New("the plan has errors")

// Err reports every table the plan cannot import, or nil.
func (p *Plan) Err() error {
	var bad []string
	for _, t := range p.Tables {
		if t.Err != nil {
			bad = append(bad, t.Def.Key.String()+": "+t.Err.Error())
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrPlan, strings.Join(bad, "; "))
}

// NotReadOnly lists the sources that still accept writes.
func (p *Plan) NotReadOnly() []*Source {
	var out []*Source
	for _, s := range p.Sources {
		if !s.ReadOnly {
			out = append(out, s)
		}
	}
	return out
}

// Build computes the plan. Every table found on any source is imported;
// its start is above the highest id any source may have issued for it,
// whatever that source's increment and offset: a session may have
// overridden the global ones, so only AUTO_INCREMENT and MAX(id) bound
// what was handed out.
func Build(sources []*Source, target *Target, margin uint64) *Plan {
	p := &Plan{Sources: sources, Target: target, Margin: margin}
	byKey := map[Key]*TablePlan{}
	for _, s := range sources {
		for _, r := range s.Rejects {
			p.Rejects = append(p.Rejects, SourceReject{Source: s.Label, Reject: r})
		}
		for _, d := range s.Tables {
			tp := byKey[d.Key]
			if tp == nil {
				tp = &TablePlan{Def: d}
				byKey[d.Key] = tp
				p.Tables = append(p.Tables, tp)
			} else if ok, why := tp.Def.sameShape(&d); !ok && tp.Err == nil {
				tp.Err = fmt.Errorf("sources disagree on the table's definition: %s on %s, %s", why, tp.Sources[0], s.Label)
			}
			tp.Sources = append(tp.Sources, s.Label)
			if h := s.Counters[d.Key].Highest(); h > tp.Highest {
				tp.Highest = h
			}
		}
	}
	// A table that is a ticket table on one source but not on another
	// has a counter there too that the import cannot read safely.
	for _, r := range p.Rejects {
		if tp := byKey[r.Key]; tp != nil && tp.Err == nil {
			tp.Err = fmt.Errorf("not a ticket table on %s: %s", r.Source, r.Why)
		}
	}
	sort.Slice(p.Tables, func(i, j int) bool { return p.Tables[i].Def.Key.String() < p.Tables[j].Def.Key.String() })
	for _, tp := range p.Tables {
		p.finish(tp)
	}
	return p
}

// finish computes a table's start and checks it against the id type and
// what ticketd already has.
func (p *Plan) finish(tp *TablePlan) {
	max := tp.Def.ID.Max()
	start := tp.Highest + 1
	if start == 0 || start+p.Margin < start {
		start = 0 // wrapped around uint64
	} else {
		start += p.Margin
	}
	tp.Start = start
	if tp.Err == nil && (start == 0 || start > max) {
		tp.Err = fmt.Errorf("counter %s would exceed the %s maximum %d (highest id handed out %d, margin %d)",
			fmtStart(start), tp.Def.ID.Type(), max, tp.Highest, p.Margin)
	}
	if len(tp.Sources) < len(p.Sources) {
		tp.Notes = append(tp.Notes, fmt.Sprintf("only on %s", strings.Join(tp.Sources, ", ")))
	}
	if p.Target == nil {
		return
	}
	tt, ok := p.Target.Tables[tp.Def.Key]
	if !ok {
		return
	}
	tp.Target = &tt
	if tt.Max != 0 && tp.Err == nil && start > tt.Max {
		tp.Err = fmt.Errorf("ticketd's table exists with id type %s, whose maximum %d is below the counter %d", tt.IDType, tt.Max, start)
	}
	if tt.AutoInc >= start {
		tp.Notes = append(tp.Notes, fmt.Sprintf("exists in ticketd with next id %d >= %d: its counter stays (ALTER never moves it back)", tt.AutoInc, start))
	} else {
		tp.Notes = append(tp.Notes, fmt.Sprintf("exists in ticketd with next id %d: moves up to %d", tt.AutoInc, start))
	}
}

func fmtStart(v uint64) string {
	if v == 0 {
		return "(past 18446744073709551615)"
	}
	return strconv.FormatUint(v, 10)
}

func onOff(b bool) string {
	if b {
		return "ON"
	}
	return "OFF"
}

// Write prints the plan for an operator. apply says whether it is about
// to be carried out or is a dry run.
func (p *Plan) Write(w io.Writer, apply bool) {
	if apply {
		fmt.Fprintln(w, "ticketd import plan (--apply: running it now)")
	} else {
		fmt.Fprintln(w, "ticketd import plan (dry run: nothing is changed; add --apply to run it)")
	}
	fmt.Fprintln(w, "\nsources:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tserver\tversion\tauto_increment_increment\tauto_increment_offset\tread_only")
	for _, s := range p.Sources {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%s\n", s.Label, s.Addr, s.Version, s.Increment, s.Offset, onOff(s.ReadOnly))
	}
	tw.Flush()
	for _, s := range p.NotReadOnly() {
		fmt.Fprintf(w, "\nWARNING: %s (%s) is NOT read-only: it can hand out ids after this import, and ticketd may\n"+
			"  issue them again. Run SET GLOBAL read_only=ON on it first (and stop the accounts read_only lets\n"+
			"  through: SUPER on MySQL, READ ONLY ADMIN on MariaDB, root on both), or pass --margin larger than\n"+
			"  the ids it can issue meanwhile.\n", s.Label, s.Addr)
	}
	if p.Target != nil {
		fmt.Fprintf(w, "\ntarget: %s (%s), global auto_increment_increment=%d auto_increment_offset=%d\n",
			p.Target.Addr, p.Target.Version, p.Target.Increment, p.Target.Offset)
	} else {
		fmt.Fprintln(w, "\ntarget: none given (--to): tables already in ticketd are not checked")
	}
	if len(p.Tables) == 0 {
		fmt.Fprintln(w, "\nno ticket tables found")
	}
	for _, tp := range p.Tables {
		fmt.Fprintf(w, "\ntable %s: %s %s AUTO_INCREMENT (max %d), stub %s %s\n", tp.Def.Key,
			QuoteIdent(tp.Def.ID.Name), tp.Def.ID.Type(), tp.Def.ID.Max(), QuoteIdent(tp.Def.Stub.Name), tp.Def.Stub.Type())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  source\tincrement/offset\tread_only\tAUTO_INCREMENT\tMAX(id)\thighest id it may have issued\t")
		for _, s := range p.Sources {
			c, ok := s.Counters[tp.Def.Key]
			if !ok || !contains(tp.Sources, s.Label) {
				fmt.Fprintf(tw, "  %s\t%d/%d\t%s\t-\t-\t(no such table)\t\n", s.Label, s.Increment, s.Offset, onOff(s.ReadOnly))
				continue
			}
			fmt.Fprintf(tw, "  %s\t%d/%d\t%s\t%d\t%d\t%d\t\n", s.Label, s.Increment, s.Offset, onOff(s.ReadOnly), c.AutoInc, c.MaxID, c.Highest())
		}
		tw.Flush()
		fmt.Fprintf(w, "  start: ticketd's next id %s (highest %d + 1 + margin %d)\n", fmtStart(tp.Start), tp.Highest, p.Margin)
		for _, n := range tp.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		if tp.Err != nil {
			fmt.Fprintf(w, "  ERROR: %v\n", tp.Err)
			continue
		}
		if p.Target != nil && tp.Target == nil {
			fmt.Fprintln(w, "  ticketd: not there yet, will be created")
		}
		for _, st := range tp.Statements() {
			fmt.Fprintf(w, "    %s;\n", st)
		}
	}
	if len(p.Rejects) > 0 {
		fmt.Fprintln(w, "\nnot ticket tables (skipped):")
		for _, r := range p.Rejects {
			fmt.Fprintf(w, "  %s %s: %s\n", r.Source, r.Key, r.Why)
		}
	}
	p.writeSettings(w)
}

// writeSettings tells the operator what the global auto-increment
// settings of ticketd should be: one counter per table replaces the
// odd/even pair, so 1/1 unless they have a reason.
func (p *Plan) writeSettings(w io.Writer) {
	fmt.Fprintln(w, "\nsettings:")
	switch {
	case p.Target == nil:
		fmt.Fprintln(w, "  ticketd's global auto_increment_increment/offset: not read (no --to)")
	case p.Target.Increment == 1 && p.Target.Offset == 1:
		fmt.Fprintln(w, "  ticketd's global auto_increment_increment=1, auto_increment_offset=1: right, nothing to set")
	default:
		fmt.Fprintf(w, "  ticketd's global auto_increment_increment=%d, auto_increment_offset=%d: one ticketd counter\n"+
			"  replaces the odd/even servers, so set them back unless you mean otherwise:\n", p.Target.Increment, p.Target.Offset)
	}
	if p.Target == nil || p.Target.Increment != 1 || p.Target.Offset != 1 {
		fmt.Fprintln(w, "    SET GLOBAL auto_increment_increment = 1; SET GLOBAL auto_increment_offset = 1;")
	}
	fmt.Fprintln(w, "  clients that SET [SESSION] auto_increment_increment/offset themselves keep working: every id\n"+
		"  is still above the start, only spaced as they ask")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
