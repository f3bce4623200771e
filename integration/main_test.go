package integration

import (
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestMain starts building the older ticketds TestRollingUpgrade needs,
// one after the other, when that test is to run (oldBinary), and removes
// the ticketd binary the harness built for this run.
func TestMain(m *testing.M) {
	flag.Parse()
	if selected("TestRollingUpgrade") {
		go func() {
			for _, s := range upgradeSources {
				buildOld(s.commit)
			}
		}()
	}
	harness.Main(m)
}

// selected reports whether go test's -run and -skip leave the top-level
// test name to run (a pattern it cannot read counts as selecting it).
func selected(name string) bool {
	matches := func(flagName string) (bool, bool) {
		f := flag.Lookup(flagName)
		if f == nil || f.Value.String() == "" {
			return false, false
		}
		top, _, _ := strings.Cut(f.Value.String(), "/")
		re, err := regexp.Compile(top)
		if err != nil {
			return flagName == "test.run", true
		}
		return re.MatchString(name), true
	}
	if run, set := matches("test.run"); set && !run {
		return false
	}
	if skip, set := matches("test.skip"); set && skip {
		return false
	}
	return true
}
