// Command benchcompare is `make bench-compare`: make bench's ticket and
// row (ID scheme) figures of an older ticketd and of this checkout's, in
// alternated pairs in one run (old, new, old, new, ...), so that a
// refactoring can show its figures stay within noise of the build before
// it (issue 33). Each half of a pair is one run of the bench-tagged
// integration tests (TestBench, TestBenchSchemes) with the harness's
// TICKETD_BIN set to that side's binary; the test binary is compiled once,
// so both sides run the same load code. It prints, per figure, each
// pair's values and ratio (new ÷ old), the ratios' median and range,
// and the ratios of one build's consecutive runs, the run's noise.
//
// It owns the comparison only: the measurements are the bench tests',
// and the older binary is built from this repository's history as the
// rolling upgrade test builds it (git worktree add, go build).
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	before   string // the older commit
	pairs    int
	duration string // TICKETD_BENCH_DURATION
	only     string // TICKETD_BENCH_ONLY: the ticket targets kept
	conns    string // TICKETD_BENCH_CONNS
	schemes  string // TICKETD_BENCH_SCHEMES: the scheme runs kept
	work     string // where binaries and tables go
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var c config
	fs := flag.NewFlagSet("benchcompare", flag.ContinueOnError)
	fs.StringVar(&c.before, "before", "fd4302c", "the older commit, built from this repository's history")
	fs.IntVar(&c.pairs, "pairs", 3, "how many (old, new) pairs")
	fs.StringVar(&c.duration, "duration", "5s", "each measurement's length (TICKETD_BENCH_DURATION)")
	fs.StringVar(&c.only, "only", "ticketd 3 nodes durable, wal", "the ticket targets measured (TICKETD_BENCH_ONLY, a substring of their names)")
	fs.StringVar(&c.conns, "conns", "16,64", "the ticket targets' connections (TICKETD_BENCH_CONNS)")
	fs.StringVar(&c.schemes, "schemes", "leaf,tinyid", "the ID scheme runs measured (TICKETD_BENCH_SCHEMES); the row figures")
	fs.StringVar(&c.work, "work", "", "directory for the binaries and tables (default: a new temporary one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.pairs < 1 {
		return fmt.Errorf("-pairs %d: at least 1", c.pairs)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if c.work == "" {
		if c.work, err = os.MkdirTemp("", "ticketd-bench-compare-"); err != nil {
			return err
		}
	}
	oldBin, err := buildOld(ctx, root, c.before, c.work)
	if err != nil {
		return err
	}
	newBin := filepath.Join(c.work, "ticketd-new")
	if err := command(ctx, root, nil, "go", "build", "-o", newBin, "./cmd/ticketd"); err != nil {
		return err
	}
	testBin := filepath.Join(c.work, "integration.test")
	if err := command(ctx, root, nil, "go", "test", "-c", "-tags", "bench", "-o", testBin, "./integration/"); err != nil {
		return err
	}
	fmt.Fprintf(out, "bench-compare: %s (old) against this checkout (new), %d pairs of %s runs, ticket targets %q at %s conns, schemes %s; tables in %s\n",
		c.before, c.pairs, c.duration, c.only, c.conns, c.schemes, c.work)
	sides := []struct{ name, bin string }{{"old", oldBin}, {"new", newBin}}
	figs := map[string]*figure{}
	var order []string
	for i := range c.pairs {
		for _, s := range sides {
			table := filepath.Join(c.work, fmt.Sprintf("pair%d-%s.md", i+1, s.name))
			start := time.Now()
			err := command(ctx, filepath.Join(root, "integration"), []string{
				"TICKETD_BIN=" + s.bin, "TICKETD_BENCH_OUT=" + table, "TICKETD_BENCH_DURATION=" + c.duration,
				"TICKETD_BENCH_ONLY=" + c.only, "TICKETD_BENCH_CONNS=" + c.conns, "TICKETD_BENCH_SCHEMES=" + c.schemes,
			}, testBin, "-test.run", "^TestBench(Schemes)?$", "-test.count", "1", "-test.timeout", "30m")
			if err != nil {
				return fmt.Errorf("pair %d, %s: %w", i+1, s.name, err)
			}
			b, err := os.ReadFile(table)
			if err != nil {
				return err
			}
			vals := parseTables(b)
			fmt.Fprintf(out, "pair %d %s: %d figures in %v\n", i+1, s.name, len(vals), time.Since(start).Round(time.Second))
			for _, v := range vals {
				f := figs[v.key]
				if f == nil {
					f = &figure{old: make([]float64, c.pairs), new: make([]float64, c.pairs)}
					figs[v.key] = f
					order = append(order, v.key)
				}
				if s.name == "old" {
					f.old[i] = v.perSec
				} else {
					f.new[i] = v.perSec
				}
			}
		}
	}
	report(out, order, figs)
	return nil
}

// figure is one row of the tables across the pairs.
type figure struct{ old, new []float64 }

// report prints each figure's pairs, the spread of their ratios, and
// the noise of the run: the ratios of one build's consecutive runs (old
// to old, new to new), which a difference between the builds must
// stand out of.
func report(out io.Writer, order []string, figs map[string]*figure) {
	fmt.Fprintf(out, "\n| figure | old per s | new per s | new ÷ old per pair | median | range | same build, run to run |\n|---|---|---|---|---|---|---|\n")
	var medians []float64
	for _, k := range order {
		f := figs[k]
		var ratios []float64
		for i := range f.old {
			if f.old[i] > 0 && f.new[i] > 0 {
				ratios = append(ratios, f.new[i]/f.old[i])
			}
		}
		med, lo, hi := spread(ratios)
		if len(ratios) > 0 {
			medians = append(medians, med)
		}
		_, nlo, nhi := spread(append(successive(f.old), successive(f.new)...))
		fmt.Fprintf(out, "| %s | %s | %s | %s | %.2f | %.2f–%.2f | %.2f–%.2f |\n",
			k, join(f.old, "%.0f"), join(f.new, "%.0f"), join(ratios, "%.2f"), med, lo, hi, nlo, nhi)
	}
	med, lo, hi := spread(medians)
	fmt.Fprintf(out, "\nmedian of the figures' median ratios (new ÷ old): %.2f (figures %.2f–%.2f)\n", med, lo, hi)
}

// successive is the ratios of each run to the one before it.
func successive(xs []float64) []float64 {
	var r []float64
	for i := 1; i < len(xs); i++ {
		if xs[i-1] > 0 && xs[i] > 0 {
			r = append(r, xs[i]/xs[i-1])
		}
	}
	return r
}

// spread is the median, minimum and maximum of xs (zeros when empty).
func spread(xs []float64) (med, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med = s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return med, s[0], s[len(s)-1]
}

func join(xs []float64, format string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, ", ")
}

// value is one ticketd row of a bench table.
type value struct {
	key    string
	perSec float64
}

// parseTables reads the ticketd rows of the tables TestBench and
// TestBenchSchemes write (TICKETD_BENCH_OUT): in the ticket table,
// "| target | conns | per s | ...", in the schemes table, "| target |
// scheme | conns | fetches/s | ...". MariaDB's rows and rows without a
// figure (a refused scheme) are left out.
func parseTables(b []byte) []value {
	var vals []value
	schemes := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "target" {
			schemes = len(cells) > 1 && cells[1] == "scheme"
			continue
		}
		if !strings.HasPrefix(cells[0], "ticketd") {
			continue
		}
		key, at := fmt.Sprintf("ticket: %s x%s", cells[0], cells[1]), 2
		if schemes && len(cells) > 3 {
			key, at = fmt.Sprintf("%s: %s x%s", cells[1], cells[0], cells[2]), 3
		}
		if at >= len(cells) {
			continue
		}
		v, err := strconv.ParseFloat(cells[at], 64)
		if err != nil {
			continue
		}
		vals = append(vals, value{key, v})
	}
	return vals
}

// buildOld builds the ticketd of commit into work, or takes the one the
// rolling upgrade test cached (integration/upgrade_test.go: the same
// build, named by the commit).
func buildOld(ctx context.Context, root, commit, work string) (string, error) {
	cached := filepath.Join(os.TempDir(), "ticketd-upgrade-"+commit, "ticketd")
	if st, err := os.Stat(cached); err == nil && st.Mode().IsRegular() && st.Mode()&0o100 != 0 {
		return cached, nil
	}
	src := filepath.Join(work, "src-"+commit)
	if err := command(ctx, root, nil, "git", "worktree", "add", "--detach", src, commit); err != nil {
		return "", err
	}
	defer exec.Command("git", "-C", root, "worktree", "remove", "--force", src).Run()
	bin := filepath.Join(work, "ticketd-"+commit)
	if err := command(ctx, src, []string{"GOFLAGS=-buildvcs=false"}, "go", "build", "-o", bin, "./cmd/ticketd"); err != nil {
		return "", err
	}
	return bin, nil
}

// command runs name in dir with env added, its output to stderr.
func command(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	return filepath.Dir(mod), nil
}
