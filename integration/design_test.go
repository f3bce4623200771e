package integration

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/integration/harness"
)

// designDoc is the design the code's comments cite as "DESIGN §N".
const designDoc = "cmd/ticketd/DESIGN.md"

var (
	designCite    = regexp.MustCompile(`DESIGN §([0-9]+(?:\.[0-9]+|[a-z])?)`)
	designHeading = regexp.MustCompile(`(?m)^#{2,3} ([0-9]+(?:\.[0-9]+|[a-z])?)[. ]`)
)

// TestDesignReferences: every "DESIGN §N" in the repository's Go files and
// docs names a section of the design document in the repository, so that
// a reader with only the repository can follow the reasons the code cites.
// It fails on a citation of a section the document lacks (as every one did
// while the document lived outside the repository).
func TestDesignReferences(t *testing.T) {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, designDoc))
	if err != nil {
		t.Fatalf("the design document is not in the repository: %v", err)
	}
	sections := map[string]bool{}
	for _, m := range designHeading.FindAllStringSubmatch(string(doc), -1) {
		sections[m[1]] = true
	}
	if len(sections) < 10 {
		t.Fatalf("%s has %d numbered sections; headings not recognised?", designDoc, len(sections))
	}
	cites := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "node_modules" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range designCite.FindAllStringSubmatch(line, -1) {
				cites++
				if !sections[m[1]] {
					t.Errorf("%s:%d cites DESIGN §%s, which %s does not have", rel, i+1, m[1], designDoc)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cites == 0 {
		t.Fatal("no DESIGN citation found: is the walk reading the repository?")
	}
	t.Logf("%d citations of %d sections checked", cites, len(sections))
}
