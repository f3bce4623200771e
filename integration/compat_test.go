package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestCompatNodeWithoutModules runs make compat's node-mysql2 script where
// no node_modules can be found (a copy outside the repository), as on a
// checkout where npm ci has not been run: it must end with make compat's
// skip line saying what to run, not a stack trace that make compat
// reports as FAIL (issue 24, papercut 8).
func TestCompatNodeWithoutModules(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: make compat skips node-mysql2 too")
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "integration/compat/node/mysql2.js"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "mysql2.js")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "NODE_PATH=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "skip: ") || !strings.Contains(string(out), "npm ci --prefix integration/compat/node") {
		t.Errorf("without node_modules: exit %v, output:\n%s\nwant exit 0 and a skip line naming npm ci", err, out)
	}
}
