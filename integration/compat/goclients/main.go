// Command goclients is make compat's Go client check: "goclients
// go-sql-driver" drives database/sql with go-sql-driver/mysql (text and
// server-side prepared statements, interpolated parameters,
// multi-statements, clientFoundRows, TLS, a pool that pings and resets
// connections), "goclients go-mysql" drives go-mysql's client package.
// The server comes from TICKETD_* variables (see run.sh); it prints
// "version: ..." and "ok" on success.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

type env struct{ host, port, user, password, db, table, ca string }

func main() {
	e := env{os.Getenv("TICKETD_HOST"), os.Getenv("TICKETD_PORT"), os.Getenv("TICKETD_USER"),
		os.Getenv("TICKETD_PASSWORD"), os.Getenv("TICKETD_DB"), os.Getenv("TICKETD_TABLE"), os.Getenv("TICKETD_TLS_CA")}
	var err error
	switch arg := ""; {
	case len(os.Args) > 1 && os.Args[1] == "go-sql-driver":
		fmt.Println("version: go-sql-driver/mysql", modVersion("github.com/go-sql-driver/mysql"))
		err = goSQLDriver(e)
	case len(os.Args) > 1 && os.Args[1] == "go-mysql":
		fmt.Println("version: go-mysql", modVersion("github.com/go-mysql-org/go-mysql"))
		err = goMySQL(e)
	default:
		err = fmt.Errorf("usage: goclients go-sql-driver|go-mysql%s", arg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("ok")
}

func modVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "?"
}

func (e env) ddl() string {
	return "CREATE TABLE IF NOT EXISTS " + e.table + " (id bigint(20) unsigned NOT NULL auto_increment, " +
		"stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM"
}

// ids checks a driver's insert id against LAST_INSERT_ID() and that ids
// strictly increase.
type ids struct{ prev int64 }

func (i *ids) check(what string, driverID, lastInsertID int64) error {
	if driverID != lastInsertID {
		return fmt.Errorf("%s: driver insert id %d, LAST_INSERT_ID() %d", what, driverID, lastInsertID)
	}
	if driverID <= i.prev {
		return fmt.Errorf("%s: id %d not above %d", what, driverID, i.prev)
	}
	i.prev = driverID
	return nil
}

func goSQLDriver(e env) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(e.ca)
	if err != nil {
		return err
	}
	pool.AppendCertsFromPEM(pem)
	if err := mysql.RegisterTLSConfig("compat", &tls.Config{RootCAs: pool, ServerName: e.host}); err != nil {
		return err
	}
	base := fmt.Sprintf("%s:%s@tcp(%s:%s)/", e.user, e.password, e.host, e.port)
	setup, err := sql.Open("mysql", base)
	if err != nil {
		return err
	}
	defer setup.Close()
	if _, err := setup.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+e.db); err != nil {
		return err
	}
	var id ids
	for _, opts := range []string{"", "?interpolateParams=true", "?multiStatements=true&clientFoundRows=true", "?tls=compat"} {
		db, err := sql.Open("mysql", base+e.db+opts)
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(2)
		db.SetConnMaxIdleTime(time.Minute)
		if err := db.PingContext(ctx); err != nil {
			return fmt.Errorf("%s: ping: %w", opts, err)
		}
		if _, err := db.ExecContext(ctx, e.ddl()); err != nil {
			return fmt.Errorf("%s: %w", opts, err)
		}
		// One connection: the insert id and LAST_INSERT_ID() are per session.
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		for _, q := range []struct {
			query string
			args  []any
		}{
			{"REPLACE INTO " + e.table + " (stub) VALUES ('a')", nil},
			{"REPLACE INTO " + e.table + " (stub) VALUES (?)", []any{"a"}}, // server-side prepared unless interpolated
		} {
			r, err := conn.ExecContext(ctx, q.query, q.args...)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", opts, q.query, err)
			}
			got, _ := r.LastInsertId()
			var lid int64
			if err := conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&lid); err != nil {
				return err
			}
			if err := id.check(opts+" "+q.query, got, lid); err != nil {
				return err
			}
		}
		var row int64
		if err := conn.QueryRowContext(ctx, "SELECT id FROM "+e.table+" WHERE stub = ?", "a").Scan(&row); err != nil || row != id.prev {
			return fmt.Errorf("%s: row a = %d, %v; want %d", opts, row, err, id.prev)
		}
		if opts == "?multiStatements=true&clientFoundRows=true" {
			rows, err := conn.QueryContext(ctx, "REPLACE INTO "+e.table+" (stub) VALUES ('a'); SELECT LAST_INSERT_ID()")
			if err != nil {
				return err
			}
			var lid int64
			for rows.Next() || rows.NextResultSet() && rows.Next() {
				if err := rows.Scan(&lid); err != nil {
					return err
				}
			}
			rows.Close()
			if lid <= id.prev {
				return fmt.Errorf("multi-statement ticket %d, previous %d", lid, id.prev)
			}
			id.prev = lid
		}
		conn.Close()
		// The pool hands the connection out again: go-sql-driver checks it
		// (and resets its session state) before reuse.
		var n int
		if err := db.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&n); err != nil || n <= 0 {
			return fmt.Errorf("%s: @@max_allowed_packet %d, %v", opts, n, err)
		}
		db.Close()
	}
	bad, _ := sql.Open("mysql", fmt.Sprintf("%s:wrong@tcp(%s:%s)/", e.user, e.host, e.port))
	defer bad.Close()
	var me *mysql.MySQLError
	if err := bad.PingContext(ctx); !errors.As(err, &me) || me.Number != 1045 {
		return fmt.Errorf("wrong password: %v", err)
	}
	return nil
}

func goMySQL(e env) error {
	addr := e.host + ":" + e.port
	c, err := client.Connect(addr, e.user, e.password, "")
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Execute("CREATE DATABASE IF NOT EXISTS " + e.db); err != nil {
		return err
	}
	if err := c.UseDB(e.db); err != nil {
		return err
	}
	if _, err := c.Execute(e.ddl()); err != nil {
		return err
	}
	var id ids
	lastInsertID := func() (int64, error) {
		r, err := c.Execute("SELECT LAST_INSERT_ID()")
		if err != nil {
			return 0, err
		}
		return r.GetInt(0, 0)
	}
	for range 2 {
		r, err := c.Execute("REPLACE INTO " + e.table + " (stub) VALUES ('a')")
		if err != nil {
			return err
		}
		lid, err := lastInsertID()
		if err != nil {
			return err
		}
		if err := id.check("Execute", int64(r.InsertId), lid); err != nil {
			return err
		}
	}
	// Arguments make Execute a server-side prepared statement.
	r, err := c.Execute("REPLACE INTO "+e.table+" (stub) VALUES (?)", "a")
	if err != nil {
		return err
	}
	lid, err := lastInsertID()
	if err != nil {
		return err
	}
	if err := id.check("prepared", int64(r.InsertId), lid); err != nil {
		return err
	}
	st, err := c.Prepare("SELECT id FROM " + e.table + " WHERE stub = ?")
	if err != nil {
		return err
	}
	sr, err := st.Execute("a")
	if err != nil {
		return err
	}
	if v, _ := sr.GetInt(0, 0); v != id.prev {
		return fmt.Errorf("prepared SELECT: %d, want %d", v, id.prev)
	}
	st.Close()
	if err := c.Ping(); err != nil {
		return err
	}
	// TLS with the server's certificate.
	pem, err := os.ReadFile(e.ca)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tc, err := client.Connect(addr, e.user, e.password, e.db, func(c *client.Conn) error {
		c.SetTLSConfig(&tls.Config{RootCAs: pool, ServerName: e.host})
		return nil
	})
	if err != nil {
		return fmt.Errorf("TLS: %w", err)
	}
	tc.Close()
	if _, err := client.Connect(addr, e.user, "wrong", ""); !isAccessDenied(err) {
		return fmt.Errorf("wrong password: %v", err)
	}
	return nil
}

func isAccessDenied(err error) bool {
	var me *gomysql.MyError
	return errors.As(err, &me) && me.Code == gomysql.ER_ACCESS_DENIED_ERROR
}
