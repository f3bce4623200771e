package wire

import (
	"context"
	"database/sql"
	"testing"
)

// BenchmarkTicket is one Flickr ticket (REPLACE + SELECT LAST_INSERT_ID()
// on one connection) through the real protocol stack, with replication
// replaced by an in-memory apply, so it measures the wire, sql and ticket
// layers' own cost. -benchmem reports allocations per ticket (client side
// included).
func BenchmarkTicket(b *testing.B) {
	benchConns(b, func(ctx context.Context, conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')"); err != nil {
			return err
		}
		var id uint64
		return conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&id)
	})
}

// BenchmarkSelect1 is the protocol round trip alone, the ceiling for
// BenchmarkTicket's two statements.
func BenchmarkSelect1(b *testing.B) {
	benchConns(b, func(ctx context.Context, conn *sql.Conn) error {
		var n int
		return conn.QueryRowContext(ctx, "SELECT 1").Scan(&n)
	})
}

// benchConns runs op in parallel, each goroutine on its own connection.
func benchConns(b *testing.B, op func(context.Context, *sql.Conn) error) {
	db := benchDB(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		for pb.Next() {
			if err := op(ctx, conn); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchDB(b *testing.B) *sql.DB {
	base := startServer(b)
	setup, err := sql.Open("mysql", base)
	if err != nil {
		b.Fatal(err)
	}
	defer setup.Close()
	setup.SetMaxOpenConns(1)
	for _, q := range []string{"CREATE DATABASE flickr", "USE flickr", flickrDDL} {
		if _, err := setup.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	db, err := sql.Open("mysql", base+"flickr")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxIdleConns(64)
	b.Cleanup(func() { db.Close() })
	return db
}
