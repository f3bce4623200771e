package wire

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ticketd/ticketd/wire/mysqlconn"
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

// BenchmarkTicketAlloc is BenchmarkTicket as an account of the alloc
// role, whose REPLACE is checked against the table's counter column
// (authorizeCounter).
func BenchmarkTicketAlloc(b *testing.B) {
	db := benchDBAs(b, "app:apppw")
	benchOn(b, db, func(ctx context.Context, conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')"); err != nil {
			return err
		}
		var id uint64
		return conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&id)
	})
}

// BenchmarkTicketNodeScope is BenchmarkTicket on a node-scoped table
// (DESIGN §4c): ids come from the node's block in memory, so its two
// statements should cost about two of BenchmarkSelect1's.
func BenchmarkTicketNodeScope(b *testing.B) {
	benchOn(b, benchDBWith(b, "", flickrDDL+" COMMENT='ticketd:cache=1000,scope=node'"), func(ctx context.Context, conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES ('a')"); err != nil {
			return err
		}
		var id uint64
		return conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&id)
	})
}

// BenchmarkTicketPrepared is BenchmarkTicket through server-side prepared
// statements, prepared once per connection (the binary protocol: the
// stub a string parameter, the id a binary row).
func BenchmarkTicketPrepared(b *testing.B) {
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
		rep, err := conn.PrepareContext(ctx, "REPLACE INTO Tickets64 (stub) VALUES (?)")
		if err != nil {
			b.Error(err)
			return
		}
		defer rep.Close()
		last, err := conn.PrepareContext(ctx, "SELECT LAST_INSERT_ID()")
		if err != nil {
			b.Error(err)
			return
		}
		defer last.Close()
		for pb.Next() {
			if _, err := rep.ExecContext(ctx, "a"); err != nil {
				b.Error(err)
				return
			}
			var id uint64
			if err := last.QueryRowContext(ctx).Scan(&id); err != nil {
				b.Error(err)
				return
			}
		}
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
	benchOn(b, benchDB(b), op)
}

// benchOn runs op in parallel on db, each goroutine on its own connection.
func benchOn(b *testing.B, db *sql.DB, op func(context.Context, *sql.Conn) error) {
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

func benchDB(b *testing.B) *sql.DB { return benchDBAs(b, "") }

// benchDBAs is benchDB for a client logging in as account ("user:pw",
// of the alloc role; "" for the default root).
func benchDBAs(b *testing.B, account string) *sql.DB { return benchDBWith(b, account, flickrDDL) }

// benchDBWith is benchDBAs with the table made by ddl.
func benchDBWith(b *testing.B, account, ddl string) *sql.DB {
	var base, login string
	if account == "" {
		base = startServer(b)
		login = base
	} else {
		users := NewUsers()
		user, pw, _ := strings.Cut(account, ":")
		if err := users.Add("root", ""); err != nil {
			b.Fatal(err)
		}
		if err := users.AddRole(user, pw, mysqlconn.RoleAlloc); err != nil {
			b.Fatal(err)
		}
		addr, _ := startServerWith(b, Config{Users: users})
		base = fmt.Sprintf("root@tcp(%s)/", addr)
		login = fmt.Sprintf("%s@tcp(%s)/", account, addr)
	}
	setup, err := sql.Open("mysql", base)
	if err != nil {
		b.Fatal(err)
	}
	defer setup.Close()
	setup.SetMaxOpenConns(1)
	for _, q := range []string{"CREATE DATABASE flickr", "USE flickr", ddl} {
		if _, err := setup.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	db, err := sql.Open("mysql", login+"flickr")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxIdleConns(64)
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkPointSelect is a point SELECT by primary key on a row table of
// 10,000 rows, each key a new text as a driver that interpolates its
// parameters sends it (issue 22's target: at least half of SELECT 1's
// rate).
func BenchmarkPointSelect(b *testing.B) {
	db := pointSelectDB(b)
	var n atomic.Uint64
	b.ResetTimer()
	benchOn(b, db, func(ctx context.Context, conn *sql.Conn) error {
		k := 1 + n.Add(7919)%pointRows
		var id uint64
		var host, port string
		return conn.QueryRowContext(ctx, fmt.Sprintf("SELECT id, host, port FROM w WHERE id = %d", k)).Scan(&id, &host, &port)
	})
}

// BenchmarkPointSelectSame is BenchmarkPointSelect with one text sent
// again and again (the plan cache's case).
func BenchmarkPointSelectSame(b *testing.B) {
	db := pointSelectDB(b)
	b.ResetTimer()
	benchOn(b, db, func(ctx context.Context, conn *sql.Conn) error {
		var id uint64
		var host, port string
		return conn.QueryRowContext(ctx, "SELECT id, host, port FROM w WHERE id = 77").Scan(&id, &host, &port)
	})
}

// BenchmarkPointSelectPrepared is BenchmarkPointSelect through a
// server-side prepared statement, prepared once per connection and
// executed with the key as a parameter (COM_STMT_EXECUTE, binary rows).
func BenchmarkPointSelectPrepared(b *testing.B) {
	db := pointSelectDB(b)
	var n atomic.Uint64
	b.ResetTimer()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		st, err := conn.PrepareContext(ctx, "SELECT id, host, port FROM w WHERE id = ?")
		if err != nil {
			b.Error(err)
			return
		}
		defer st.Close()
		for pb.Next() {
			var id uint64
			var host, port string
			if err := st.QueryRowContext(ctx, 1+n.Add(7919)%pointRows).Scan(&id, &host, &port); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// pointRows is the size of pointSelectDB's table.
const pointRows = 10000

// pointSelectDB is a server with the table w of pointRows rows, ids 1..pointRows.
func pointSelectDB(b *testing.B) *sql.DB {
	db := benchDBWith(b, "", "CREATE TABLE w (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, host VARCHAR(64) NOT NULL, port VARCHAR(64) NOT NULL)")
	for i := 0; i < pointRows; i += 500 {
		var q strings.Builder
		q.WriteString("INSERT INTO w (host, port) VALUES ")
		for j := 0; j < 500; j++ {
			if j > 0 {
				q.WriteString(",")
			}
			fmt.Fprintf(&q, "('h%d', 'p%d')", i+j, i+j)
		}
		if _, err := db.Exec(q.String()); err != nil {
			b.Fatal(err)
		}
	}
	return db
}
