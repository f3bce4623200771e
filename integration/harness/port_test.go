package harness

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestFreePortBelowEphemeralRange: ports come from below the kernel's
// ephemeral range, never twice, each bindable, each locked for this process
// (another process's flock on its file fails).
func TestFreePortBelowEphemeralRange(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		p := FreePort(t)
		if p < portLow || p > portHigh {
			t.Fatalf("port %d outside [%d, %d]", p, portLow, portHigh)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d not bindable: %v", p, err)
		}
		l.Close()
		// A second open file description stands for another process:
		// flock locks conflict between descriptions, not only processes.
		f, err := os.Open(filepath.Join(os.TempDir(), "ticketd-test-ports", strconv.Itoa(p)))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			t.Errorf("port %d: its lock file is not held", p)
		}
		f.Close()
	}
}
