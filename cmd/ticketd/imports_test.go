package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTestTreeImports checks that no shipped command (cmd/...) depends on
// the test tree (integration/...): the load tool that used its history
// checker and scheme clients moved there (issue 24).
func TestNoTestTreeImports(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/...")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const testTree = "github.com/ticketd/ticketd/integration"
	n := 0
	for _, p := range strings.Fields(string(out)) {
		n++
		if p == testTree || strings.HasPrefix(p, testTree+"/") {
			t.Errorf("a command under cmd/ depends on %s", p)
		}
	}
	if n < 10 {
		t.Fatalf("go list listed %d packages: %s", n, out)
	}
}
