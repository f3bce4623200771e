package mysqlimport

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Open parses a go-sql-driver/mysql DSN and opens it with bounded dial
// and I/O timeouts (unless the DSN sets its own), so that a dead server
// fails the import in seconds instead of hanging it. addr is the DSN's
// user@address without the password, for the plan and the logs.
func Open(dsn string) (db *sql.DB, addr string, err error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("DSN: %w", err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 30 * time.Second
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	addr = cfg.User + "@" + cfg.Addr
	if cfg.Net == "unix" {
		addr = cfg.User + "@unix(" + cfg.Addr + ")"
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("DSN: %w", err)
	}
	return sql.OpenDB(conn), addr, nil
}

// schemaFilter keeps information_schema queries off the system schemas.
var schemaFilter = func() string {
	q := make([]string, len(systemSchemas))
	for i, s := range systemSchemas {
		q[i] = QuoteString(s)
	}
	return "TABLE_SCHEMA NOT IN (" + strings.Join(q, ", ") + ")"
}()

// InspectSource reads a source's settings, finds its ticket tables and
// reads their counters. It only reads.
func InspectSource(ctx context.Context, db *sql.DB, label, addr string) (*Source, error) {
	// One connection: the session setting below must hold for the reads.
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s %s: connect: %w", label, addr, err)
	}
	defer c.Close()
	s := &Source{Label: label, Addr: addr, Counters: map[Key]Counter{}}
	var inc, off, ro sql.NullString
	if err := c.QueryRowContext(ctx, "SELECT @@version, @@global.auto_increment_increment, @@global.auto_increment_offset, @@global.read_only").
		Scan(&s.Version, &inc, &off, &ro); err != nil {
		return nil, fmt.Errorf("%s %s: read settings: %w", label, addr, err)
	}
	s.Increment, _ = strconv.ParseUint(inc.String, 10, 64)
	s.Offset, _ = strconv.ParseUint(off.String, 10, 64)
	s.ReadOnly = ro.String == "1" || strings.EqualFold(ro.String, "ON")
	mariadb := strings.Contains(strings.ToLower(s.Version), "mariadb")
	if !mariadb {
		// MySQL 8 caches information_schema.TABLES.AUTO_INCREMENT for a
		// day by default; a stale value would undercount the ids issued.
		// Older servers lack the variable and need nothing.
		_, _ = c.ExecContext(ctx, "SET SESSION information_schema_stats_expiry = 0")
	}

	tables, err := readTables(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%s %s: information_schema.TABLES: %w", label, addr, err)
	}
	cols, err := readColumns(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%s %s: information_schema.COLUMNS: %w", label, addr, err)
	}
	idx, err := readIndexes(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%s %s: information_schema.STATISTICS: %w", label, addr, err)
	}
	s.Tables, s.Rejects = Classify(tables, cols, idx, mariadb)
	autoInc := map[Key]uint64{}
	for _, t := range tables {
		autoInc[Key{t.Schema, t.Name}] = t.AutoInc
	}
	for _, d := range s.Tables {
		var max sql.NullString
		q := "SELECT MAX(" + QuoteIdent(d.ID.Name) + ") FROM " + d.Key.Quoted()
		if err := c.QueryRowContext(ctx, q).Scan(&max); err != nil {
			return nil, fmt.Errorf("%s %s: %s: %w", label, addr, q, err)
		}
		// Negative ids (signed columns) are below any start.
		m, _ := strconv.ParseUint(max.String, 10, 64)
		s.Counters[d.Key] = Counter{AutoInc: autoInc[d.Key], MaxID: m}
	}
	return s, nil
}

func readTables(ctx context.Context, c *sql.Conn) ([]TableRow, error) {
	rows, err := c.QueryContext(ctx, "SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE, AUTO_INCREMENT FROM information_schema.TABLES WHERE "+
		schemaFilter+" AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TableRow
	for rows.Next() {
		var t TableRow
		var engine, ai sql.NullString
		if err := rows.Scan(&t.Schema, &t.Name, &engine, &ai); err != nil {
			return nil, err
		}
		t.Engine = engine.String
		t.AutoInc, _ = strconv.ParseUint(ai.String, 10, 64)
		out = append(out, t)
	}
	return out, rows.Err()
}

func readColumns(ctx context.Context, c *sql.Conn) ([]ColumnRow, error) {
	rows, err := c.QueryContext(ctx, "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, "+
		"COLUMN_DEFAULT, EXTRA, CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS WHERE "+schemaFilter+
		" ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ColumnRow
	for rows.Next() {
		var r ColumnRow
		var nullable string
		var def, charLen sql.NullString
		if err := rows.Scan(&r.Schema, &r.Name, &r.Column, &r.DataType, &r.ColumnType, &nullable, &def, &r.Extra, &charLen); err != nil {
			return nil, err
		}
		r.Nullable = nullable == "YES"
		if def.Valid {
			r.Default = &def.String
		}
		r.CharLen, _ = strconv.ParseInt(charLen.String, 10, 64)
		out = append(out, r)
	}
	return out, rows.Err()
}

func readIndexes(ctx context.Context, c *sql.Conn) ([]IndexRow, error) {
	rows, err := c.QueryContext(ctx, "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME "+
		"FROM information_schema.STATISTICS WHERE "+schemaFilter+" ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []IndexRow
	for rows.Next() {
		var r IndexRow
		var nonUnique int64
		var col sql.NullString // NULL for a functional key part (MySQL 8)
		if err := rows.Scan(&r.Schema, &r.Name, &r.Index, &nonUnique, &r.Seq, &col); err != nil {
			return nil, err
		}
		r.NonUnique, r.Column = nonUnique != 0, col.String
		out = append(out, r)
	}
	return out, rows.Err()
}

// InspectTarget reads ticketd's global settings and the tables it
// already has, with the id column type of those in want.
func InspectTarget(ctx context.Context, db *sql.DB, addr string, want []Key) (*Target, error) {
	t := &Target{Addr: addr, Tables: map[Key]TargetTable{}}
	var inc, off string
	if err := db.QueryRowContext(ctx, "SELECT @@version, @@global.auto_increment_increment, @@global.auto_increment_offset").
		Scan(&t.Version, &inc, &off); err != nil {
		return nil, fmt.Errorf("target %s: read settings: %w", addr, err)
	}
	t.Increment, _ = strconv.ParseUint(inc, 10, 64)
	t.Offset, _ = strconv.ParseUint(off, 10, 64)
	have, err := targetCounters(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("target %s: information_schema.TABLES: %w", addr, err)
	}
	for _, k := range want {
		ai, ok := have[k]
		if !ok {
			continue
		}
		tt := TargetTable{AutoInc: ai}
		if tt.IDType, err = targetIDType(ctx, db, k); err != nil {
			return nil, fmt.Errorf("target %s: %s: %w", addr, k, err)
		}
		tt.Max = typeMax(tt.IDType)
		t.Tables[k] = tt
	}
	return t, nil
}

// targetCounters maps every table ticketd has to its next id.
func targetCounters(ctx context.Context, db *sql.DB) (map[Key]uint64, error) {
	rows, err := db.QueryContext(ctx, "SELECT TABLE_SCHEMA, TABLE_NAME, AUTO_INCREMENT FROM information_schema.TABLES")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[Key]uint64{}
	for rows.Next() {
		var k Key
		var ai sql.NullString
		if err := rows.Scan(&k.Schema, &k.Name, &ai); err != nil {
			return nil, err
		}
		out[k], _ = strconv.ParseUint(ai.String, 10, 64)
	}
	return out, rows.Err()
}

// targetIDType is the type of the AUTO_INCREMENT column of a ticketd table.
func targetIDType(ctx context.Context, db *sql.DB, k Key) (string, error) {
	rows, err := db.QueryContext(ctx, "SHOW COLUMNS FROM "+k.Quoted())
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	typ := ""
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		// Field, Type, Null, Key, Default, Extra
		if len(vals) >= 6 && strings.Contains(vals[5].String, "auto_increment") {
			typ = vals[1].String
		}
	}
	return typ, rows.Err()
}

// typeMax is the largest value of a column type such as "int(10)
// unsigned"; 0 when it is not an integer type.
func typeMax(t string) uint64 {
	t = strings.ToLower(t)
	kind := t
	if i := strings.IndexAny(t, "( "); i >= 0 {
		kind = t[:i]
	}
	if _, ok := intBits[kind]; !ok {
		return 0
	}
	return IDColumn{Kind: kind, Unsigned: strings.Contains(t, "unsigned")}.Max()
}

// Apply runs the plan's DDL on ticketd, then reads every counter back
// and checks it is at least the planned start. It refuses a plan with
// errors before running anything.
func Apply(ctx context.Context, db *sql.DB, p *Plan, log *slog.Logger) error {
	if err := p.Err(); err != nil {
		return err
	}
	if p.Target == nil {
		return errors.New("apply: no target")
	}
	for _, tp := range p.Tables {
		for _, st := range tp.Statements() {
			if _, err := db.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("%s: %s: %w", tp.Def.Key, st, err)
			}
		}
		log.Info("imported table", "table", tp.Def.Key.String(), "start", tp.Start)
	}
	have, err := targetCounters(ctx, db)
	if err != nil {
		return fmt.Errorf("read back counters: %w", err)
	}
	for _, tp := range p.Tables {
		if got := have[tp.Def.Key]; got < tp.Start {
			return fmt.Errorf("%s: ticketd's next id is %d after the import, below the planned %d", tp.Def.Key, got, tp.Start)
		}
	}
	return nil
}
