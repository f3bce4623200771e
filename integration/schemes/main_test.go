package schemes

import (
	"io"
	"log"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/ticketd/ticketd/integration/harness"
)

// TestMain removes the ticketd binary the harness built. The driver's
// own log of broken connections is noise: every failed allocation is in
// the history and the stats.
func TestMain(m *testing.M) {
	mysql.SetLogger(log.New(io.Discard, "", 0))
	harness.Main(m)
}
