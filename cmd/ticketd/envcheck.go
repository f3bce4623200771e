package main

import (
	"flag"
	"fmt"
	"maps"
	"sort"
	"strings"
)

// A TICKETD_* variable that names no flag is ignored, as an unknown flag
// is not: run warns about each (a misspelt TICKETD_MYSQL_ADRR used to
// leave the node on its default address without a word). Not warned
// about: the variables ticketd reads besides its flags, and the prefixes
// of its test and benchmark suites' own settings.
var (
	envNotFlags   = []string{adminTokenEnv, "TICKETD_IMPORT_FROM", "TICKETD_IMPORT_TO", "TICKETD_VERSION"}
	envTestPrefix = []string{"TICKETD_REQUIRE_", "TICKETD_BENCH_", "TICKETD_SOAK_", "TICKETD_TEST_"}
)

// envKey is the environment variable of a flag.
func envKey(flagName string) string {
	return "TICKETD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// unknownEnv returns, sorted, the TICKETD_* names in environ (KEY=value
// entries) that are not in known, each with the closest known name when
// one is within a few edits ("" otherwise).
func unknownEnv(environ []string, known map[string]bool) (names, closest []string) {
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "TICKETD_") || known[k] || exemptEnv(k) {
			continue
		}
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		closest = append(closest, closestName(k, maps.Keys(known)))
	}
	return names, closest
}

// closestName is the name in known closest to name, within 3 edits, or "".
func closestName(name string, known func(yield func(string) bool)) string {
	best, bestD := "", 4 // at most 3 edits
	for c := range known {
		if d := editDistance(name, c); d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best
}

// parseFlags is fs.Parse, and for a flag fs does not define it names the
// closest one, as unknownEnv does for a misspelt variable: "flag provided
// but not defined: -mysql-adrr" left the reader to search the --help the
// flag package prints before it.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	name = strings.TrimPrefix(name, "-")
	best := closestName(name, func(yield func(string) bool) {
		fs.VisitAll(func(f *flag.Flag) { _ = yield(f.Name) })
	})
	if best == "" {
		return err
	}
	return fmt.Errorf("%w (did you mean --%s?)", err, best)
}

func exemptEnv(k string) bool {
	for _, n := range envNotFlags {
		if k == n {
			return true
		}
	}
	for _, p := range envTestPrefix {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// editDistance is the Levenshtein distance of two ASCII names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
