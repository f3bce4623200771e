package snowflake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readDoc reads a document of the module, its whitespace collapsed so
// that a phrase may be found across the lines it wraps over.
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// TestDocsStateTheProtocol: the README and the manual, which a second
// client is written from, state what this client does: the defaults
// (MaxWait's was missing), the restart wait against MaxWait, the release
// recording the larger of the floor and the highest timestamp (a holder
// that issued nothing would otherwise erase the floor: checked here on
// the client too), the claim starting the first lease, and what a clock
// stepped forward beyond MaxDrift breaks (issue 34).
func TestDocsStateTheProtocol(t *testing.T) {
	cfg := Config{Service: "s", Instance: "i"}
	if err := cfg.setDefaults(); err != nil {
		t.Fatal(err)
	}
	s := func(d time.Duration) string { return fmt.Sprintf("%d s", d/time.Second) }
	manual := readDoc(t, "cmd/ticketd/OPERATIONS.md")
	readme := readDoc(t, "README.md")
	for _, c := range []struct{ doc, name, text string }{
		{manual, "manual", fmt.Sprintf("longest wait `MaxWait`; the client's defaults %s, %s, %s, %s", s(cfg.Lease), s(cfg.Guard), s(cfg.MaxDrift), s(cfg.MaxWait))},
		{manual, "manual", fmt.Sprintf("With the defaults that is up to %s, more than `MaxWait`", s(cfg.Lease+cfg.MaxDrift))},
		{manual, "manual", "`last_ms` the larger of the floor and the highest timestamp used. A holder that issued nothing writes its floor"},
		{manual, "manual", "(the claim starts the first lease) or of its last successful renewal, whichever is later"},
		{manual, "manual", "a clock stepped forward by more than `D` breaks it"},
		{manual, "manual", "the next holder's floor can fall below ids already issued"},
		{readme, "README", fmt.Sprintf("`MaxWait`, default %s", s(cfg.MaxWait))},
		{readme, "README", fmt.Sprintf("up to the lease plus `MaxDrift`, %s with the defaults", s(cfg.Lease+cfg.MaxDrift))},
		{readme, "README", fmt.Sprintf("`MaxDrift` (default %s)", s(cfg.MaxDrift))},
		{readme, "README", "release on a clean stop, last_ms again the larger of the floor and the highest timestamp used"},
		{readme, "README", "counted from the send of its claim (which starts the first lease) or of its last successful renewal"},
		{readme, "README", "a clock stepped forward by more than that can leave the next holder's floor below ids already issued"},
	} {
		if !strings.Contains(c.doc, c.text) {
			t.Errorf("the %s does not say %q", c.name, c.text)
		}
	}

	// What the release statement above says, on this client: one that
	// issued nothing records its floor; one that issued, its last id's.
	clk := newFakeClock()
	floor := clk.Wall().Add(-time.Hour).UnixMilli()
	st := &fakeStore{claimed: Claim{Slot: 3, RowID: 1, Epoch: 1, Floor: floor}}
	g := startFake(t, clk, st, nil)
	if err := g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := st.get(); !got.released || got.releaseMs != floor {
		t.Errorf("a holder that issued nothing released with last_ms %d, want the floor %d", got.releaseMs, floor)
	}
	st2 := &fakeStore{claimed: Claim{Slot: 3, RowID: 1, Epoch: 2, Floor: floor}}
	g2 := startFake(t, clk, st2, nil)
	id, err := g2.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ms, _, _ := Decode(id, 10, 12, TwitterEpoch); st2.get().releaseMs != ms {
		t.Errorf("released with last_ms %d, the id's timestamp is %d", st2.get().releaseMs, ms)
	}
}
