package history

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Snowflake generator logs (ticketload -scheme snowflake -out FILE), one
// line per event, each written with one write(2) so that a SIGKILL leaves
// whole lines (a torn last line is ignored):
//
//	C <real ms> <slot> <epoch> <floor ms> <reclaimed 0|1>   a claim
//	I <real ms> <real ms> <id> <id> ...                     ids issued under the last claim, between the two times
//	E <real ms> <kind> [<class>]                            expired, lost, backwards, nofree, behind, error (with its class)
//	R <real ms> <last ms>                                   a release on a clean stop
//	W <real ms> <n>                                         NextID calls that waited for a clock set back
//
// Real ms is the process's wall clock (time.Now), which on one machine
// is every process's; the ids carry the generator's own (possibly set
// back) clock.

// SnowflakeLayout is the id layout the logs' ids use.
type SnowflakeLayout struct {
	WorkerBits, SequenceBits uint
	EpochMs                  int64
}

// SnowflakeStats summarises a set of generator logs.
type SnowflakeStats struct {
	IDs, Claims, Reclaims int
	// Reused counts claims of a slot whose previous claim was another
	// instance's.
	Reused int
	// Events counts the E lines by kind; Released the R lines;
	// RollbackWaits the W lines' sum.
	Events        map[string]int
	Released      int
	RollbackWaits int
	Slots         int // distinct slots claimed
}

func (s SnowflakeStats) String() string {
	kinds := make([]string, 0, len(s.Events))
	for k, n := range s.Events {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("ids=%d claims=%d (reclaims of own slot %d, slots reused from another holder %d, distinct slots %d) released=%d rollback_waits=%d events[%s]",
		s.IDs, s.Claims, s.Reclaims, s.Reused, s.Slots, s.Released, s.RollbackWaits, strings.Join(kinds, " "))
}

type sfClaim struct {
	file            string
	slot            int
	epoch, floor    int64
	claimedAt       int64 // real ms
	firstAt, lastAt int64 // real ms of the first and last batch
	minTs, maxTs    int64 // the ids' timestamps
	ids             int
}

// CheckSnowflake reads the generator logs and checks that every id is
// unique, lies in its claim's slot, and carries a timestamp above its
// claim's floor; that no two processes got the same slot and epoch; and
// that, per slot, the claims in epoch order issued in disjoint, ordered
// windows of real time and of id timestamps (no two holders of a slot
// ever issued at once, nor the same timestamps).
func CheckSnowflake(paths []string, lay SnowflakeLayout) (SnowflakeStats, []string, error) {
	st := SnowflakeStats{Events: map[string]int{}}
	var bad []string
	fail := func(f string, a ...any) {
		if len(bad) < 50 {
			bad = append(bad, fmt.Sprintf(f, a...))
		}
	}
	seen := map[int64]string{}
	var claims []*sfClaim
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return st, nil, err
		}
		err = readSnowflakeLog(f, p, lay, &st, seen, &claims, fail)
		f.Close()
		if err != nil {
			return st, nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	bySlot := map[int][]*sfClaim{}
	for _, c := range claims {
		bySlot[c.slot] = append(bySlot[c.slot], c)
	}
	st.Slots = len(bySlot)
	for slot, cs := range bySlot {
		sort.Slice(cs, func(i, j int) bool { return cs[i].epoch < cs[j].epoch })
		var prev *sfClaim // the last claim with ids
		for i, c := range cs {
			if i > 0 && cs[i-1].epoch == c.epoch {
				fail("slot %d epoch %d granted twice: %s and %s", slot, c.epoch, cs[i-1].file, c.file)
			}
			if i > 0 && cs[i-1].file != c.file {
				st.Reused++
			}
			if c.ids == 0 {
				continue
			}
			if prev != nil {
				if c.minTs <= prev.maxTs {
					fail("slot %d: epoch %d (%s) issued timestamp %d, not above %d of epoch %d (%s)", slot, c.epoch, c.file, c.minTs, prev.maxTs, prev.epoch, prev.file)
				}
				if c.firstAt <= prev.lastAt {
					fail("slot %d: epoch %d (%s) issued at %s while epoch %d (%s) still issued until %s",
						slot, c.epoch, c.file, msStamp(c.firstAt), prev.epoch, prev.file, msStamp(prev.lastAt))
				}
			}
			prev = c
		}
	}
	return st, bad, nil
}

func msStamp(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04:05.000") }

func readSnowflakeLog(r io.Reader, name string, lay SnowflakeLayout, st *SnowflakeStats, seen map[int64]string,
	claims *[]*sfClaim, fail func(string, ...any)) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var cur *sfClaim
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			return nil // a torn last line, if any, is ignored
		}
		if err != nil {
			return err
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return fmt.Errorf("line %d: %q", lineNo, line)
		}
		at, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
		nums := func(from int) ([]int64, error) {
			out := make([]int64, 0, len(f)-from)
			for _, s := range f[from:] {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", lineNo, err)
				}
				out = append(out, n)
			}
			return out, nil
		}
		switch f[0] {
		case "C":
			v, err := nums(2)
			if err != nil || len(v) != 4 {
				return fmt.Errorf("line %d: claim %q (%v)", lineNo, line, err)
			}
			cur = &sfClaim{file: name, slot: int(v[0]), epoch: v[1], floor: v[2], claimedAt: at}
			*claims = append(*claims, cur)
			st.Claims++
			if v[3] == 1 {
				st.Reclaims++
			}
		case "I":
			if cur == nil {
				return fmt.Errorf("line %d: ids before any claim", lineNo)
			}
			v, err := nums(2)
			if err != nil || len(v) < 1 {
				return fmt.Errorf("line %d: ids %q (%v)", lineNo, line, err)
			}
			if cur.ids == 0 {
				cur.firstAt = at
			}
			cur.lastAt = v[0]
			for _, id := range v[1:] {
				st.IDs++
				if other, dup := seen[id]; dup {
					fail("id %d issued twice: %s and %s", id, other, name)
				}
				seen[id] = name
				ts := id>>(lay.WorkerBits+lay.SequenceBits) + lay.EpochMs
				slot := int(id >> lay.SequenceBits & (1<<lay.WorkerBits - 1))
				if slot != cur.slot {
					fail("%s: id %d in slot %d under a claim of slot %d", name, id, slot, cur.slot)
				}
				if ts <= cur.floor {
					fail("%s: id %d at %d ms, not above its claim's floor %d (slot %d epoch %d)", name, id, ts, cur.floor, cur.slot, cur.epoch)
				}
				if cur.ids == 0 || ts < cur.minTs {
					cur.minTs = ts
				}
				cur.maxTs = max(cur.maxTs, ts)
				cur.ids++
			}
		case "E":
			if len(f) > 3 {
				st.Events[f[2]+":"+f[3]]++
			} else if len(f) > 2 {
				st.Events[f[2]]++
			}
		case "R":
			st.Released++
		case "W":
			v, err := nums(2)
			if err != nil || len(v) != 1 {
				return fmt.Errorf("line %d: %q", lineNo, line)
			}
			st.RollbackWaits += int(v[0])
		default:
			return fmt.Errorf("line %d: unknown record %q", lineNo, line)
		}
	}
}
