package wire

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/ticketd/ticketd/ticket/model"
)

// Binary-protocol parameters of each type, sent by go-mysql's client as a
// raw protocol client sends them (mysql.TypedBytes: any type byte with
// its length-prefixed bytes), and the binary result rows read back.

func dateArg(y, m, d int) mysql.TypedBytes {
	b := binary.LittleEndian.AppendUint16(nil, uint16(y))
	return mysql.TypedBytes{Type: mysql.MYSQL_TYPE_DATE, Bytes: append(b, byte(m), byte(d))}
}

func datetimeArg(typ byte, y, mo, d, h, mi, s, us int) mysql.TypedBytes {
	b := binary.LittleEndian.AppendUint16(nil, uint16(y))
	b = append(b, byte(mo), byte(d), byte(h), byte(mi), byte(s))
	if us != 0 {
		b = binary.LittleEndian.AppendUint32(b, uint32(us))
	}
	return mysql.TypedBytes{Type: typ, Bytes: b}
}

func timeArg(neg bool, days, h, mi, s, us int) mysql.TypedBytes {
	b := []byte{0}
	if neg {
		b[0] = 1
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(days))
	b = append(b, byte(h), byte(mi), byte(s))
	if us != 0 {
		b = binary.LittleEndian.AppendUint32(b, uint32(us))
	}
	return mysql.TypedBytes{Type: mysql.MYSQL_TYPE_TIME, Bytes: b}
}

func decimalArg(s string) mysql.TypedBytes {
	return mysql.TypedBytes{Type: mysql.MYSQL_TYPE_NEWDECIMAL, Bytes: []byte(s)}
}

// dialGoMySQL connects go-mysql's client to a test server.
func dialGoMySQL(t *testing.T, addr, db string) *client.Conn {
	t.Helper()
	c, err := client.Connect(addr, "root", "", db, func(c *client.Conn) error {
		c.ReadTimeout, c.WriteTimeout = 10*time.Second, 10*time.Second
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rowText renders a result's rows as text, a row per line, | between
// values.
func rowText(r *mysql.Result) string {
	var lines []string
	for _, row := range r.Values {
		var vals []string
		for _, v := range row {
			switch v.Type {
			case mysql.FieldValueTypeNull:
				vals = append(vals, "NULL")
			case mysql.FieldValueTypeUnsigned:
				vals = append(vals, strconv.FormatUint(v.AsUint64(), 10))
			case mysql.FieldValueTypeSigned:
				vals = append(vals, strconv.FormatInt(v.AsInt64(), 10))
			case mysql.FieldValueTypeFloat:
				vals = append(vals, strconv.FormatFloat(v.AsFloat64(), 'g', -1, 64))
			default:
				vals = append(vals, string(v.AsString()))
			}
		}
		lines = append(lines, strings.Join(vals, "|"))
	}
	return strings.Join(lines, "\n")
}

// TestBinaryTemporalParams: DATE, DATETIME and TIMESTAMP parameters in
// their binary form are dates, not strings. Before, their bytes were
// taken as text: UidGenerator's INSERT through Connector/J with
// useServerPrepStmts=true failed with 1292 "Incorrect date value" for
// LAUNCH_DATE.
func TestBinaryTemporalParams(t *testing.T) {
	addr, _ := startServerWith(t, Config{})
	c := dialGoMySQL(t, addr, "")
	for _, q := range []string{
		"CREATE DATABASE p", "USE p",
		"CREATE TABLE WORKER_NODE (ID bigint NOT NULL AUTO_INCREMENT, HOST_NAME varchar(64) NOT NULL, PORT varchar(64) NOT NULL, TYPE int NOT NULL, LAUNCH_DATE date NOT NULL, MODIFIED timestamp NOT NULL, CREATED timestamp NOT NULL, PRIMARY KEY (ID)) ENGINE=InnoDB",
	} {
		if _, err := c.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ins := "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) VALUES (?, ?, ?, ?, ?, ?)"
	r, err := c.Execute(ins, "h1", "1", int32(2), dateArg(2024, 1, 2),
		datetimeArg(mysql.MYSQL_TYPE_TIMESTAMP, 2024, 1, 2, 3, 4, 5, 0), datetimeArg(mysql.MYSQL_TYPE_DATETIME, 2024, 1, 2, 3, 4, 5, 678000))
	if err != nil {
		t.Fatalf("UidGenerator's INSERT: %v", err)
	}
	if r.InsertId != 1 {
		t.Fatalf("insert id %d", r.InsertId)
	}
	stmt, err := c.Prepare("SELECT ID, LAUNCH_DATE, MODIFIED, CREATED FROM WORKER_NODE WHERE LAUNCH_DATE = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	r, err = stmt.Execute(dateArg(2024, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rowText(r), "1|2024-01-02|2024-01-02 03:04:05|2024-01-02 03:04:05"; got != want {
		t.Fatalf("binary rows %q, want %q", got, want)
	}
	for i, typ := range []byte{mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP} {
		if r.Fields[i].Type != typ {
			t.Errorf("column %s: type %d, want %d", r.Fields[i].Name, r.Fields[i].Type, typ)
		}
	}
	// A temporal parameter whose length is none of its type's is error
	// 1210 (MariaDB would read the bytes after it); the connection stays.
	if _, err := c.Execute(ins, "h2", "1", int32(2), dateArg(2024, 1, 2), mysql.TypedBytes{Type: mysql.MYSQL_TYPE_DATETIME, Bytes: []byte{1, 2, 3, 4, 5}}, nil); codeOf(err) != mysql.ER_WRONG_ARGUMENTS {
		t.Fatalf("5-byte DATETIME: %v, want 1210", err)
	}
	// A DATE of fewer than 4 bytes is the zero date in MariaDB.
	if _, err := c.Execute(ins, "h2", "1", int32(2), mysql.TypedBytes{Type: mysql.MYSQL_TYPE_DATE, Bytes: []byte{1, 2, 3}}, nil, nil); codeOf(err) != mysql.ER_NOT_SUPPORTED_YET {
		t.Fatalf("3-byte DATE: %v, want 1235", err)
	}
	// A month 13 (MariaDB stores a zero date, with a warning), a zero
	// month, a zero date with a time (MariaDB stores them): ticketd holds
	// no zero date and refuses them.
	for _, d := range []mysql.TypedBytes{dateArg(2024, 13, 1), dateArg(2024, 0, 10), datetimeArg(mysql.MYSQL_TYPE_DATETIME, 0, 0, 0, 12, 0, 0, 0)} {
		if _, err := c.Execute(ins, "h2", "1", int32(2), d, nil, nil); codeOf(err) != mysql.ER_NOT_SUPPORTED_YET {
			t.Fatalf("DATE %v: %v, want 1235", d.Bytes, err)
		}
	}
	// A statement ticketd refuses is refused when prepared (its parameter
	// count would be 0, and a client binding one would fail on that).
	if _, err := c.Prepare("SELECT REVERSE(CONCAT(HOST_NAME, ?)) FROM WORKER_NODE"); codeOf(err) != mysql.ER_NOT_SUPPORTED_YET {
		t.Fatalf("prepare of an unsupported statement: %v, want 1235", err)
	}
	if r, err := c.Execute("SELECT COUNT(*) FROM WORKER_NODE"); err != nil || rowText(r) != "1" {
		t.Fatalf("after a refused execute: %v", err)
	}
}

// TestLongDataParams: parameters sent as COM_STMT_SEND_LONG_DATA (as
// go-sql-driver does for a value over maxAllowedPacket/(params+1) bytes,
// in chunks) reach the statement whole, and the parameters after them
// keep their values. Before, go-mysql read the execute's values as if the
// long parameter had one in the packet: the INSERT failed or stored the
// wrong values.
func TestLongDataParams(t *testing.T) {
	base := startServer(t)
	db := open(t, base)
	mustExec(t, db, "CREATE DATABASE ld")
	mustExec(t, db, "CREATE TABLE ld.t (id int NOT NULL AUTO_INCREMENT, name varchar(2000) DEFAULT NULL, v int DEFAULT NULL, b bigint unsigned DEFAULT NULL, PRIMARY KEY (id)) ENGINE=InnoDB")
	ldb := open(t, base+"ld?maxAllowedPacket=1024")
	long := strings.Repeat("0123456789", 150) // 1500 bytes: long data, two chunks
	for i, args := range [][]any{
		{long, int64(42), uint64(1<<63 + 5)},
		{[]byte(long[:700]), nil, uint64(7)},
		{long[:10], int64(-1), nil}, // short: in the packet, after long executes
	} {
		if _, err := ldb.Exec("INSERT INTO t (name, v, b) VALUES (?, ?, ?)", args...); err != nil {
			t.Fatalf("insert %d: %v", i+1, err)
		}
	}
	rows, err := ldb.Query("SELECT id, name, v, b FROM t WHERE name LIKE ? ORDER BY id", "0123%")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id int
		var name string
		var v, b *string
		if err := rows.Scan(&id, &name, &v, &b); err != nil {
			t.Fatal(err)
		}
		str := func(p *string) string {
			if p == nil {
				return "NULL"
			}
			return *p
		}
		got = append(got, strconv.Itoa(id)+"|"+strconv.Itoa(len(name))+"|"+str(v)+"|"+str(b))
		if !strings.HasPrefix(long, name) {
			t.Errorf("row %d: name is not the value sent", id)
		}
	}
	if want := "1|1500|42|9223372036854775813 2|700|NULL|7 3|10|-1|NULL"; strings.Join(got, " ") != want {
		t.Fatalf("rows %q, want %q", strings.Join(got, " "), want)
	}
}

// TestTicketIDParamTypeNamed: a ticket table's id takes integers and
// integer text only; a binary parameter of another type is refused (1235,
// where MariaDB rounds a DOUBLE into the id and cuts a DATETIME with
// 1265), and the refusal names the type as MySQL names it. It read "a
// value of kind 10 value" for a DOUBLE: the value's kind number, which
// sql's names did not cover, and "a expression value" for a DATETIME.
func TestTicketIDParamTypeNamed(t *testing.T) {
	addr, _ := startServerWith(t, Config{})
	c := dialGoMySQL(t, addr, "")
	for _, q := range []string{"CREATE DATABASE p", "USE p", flickrDDL, "REPLACE INTO Tickets64 (stub) VALUES ('a')"} {
		if _, err := c.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, a := range []struct {
		arg  any
		name string
	}{
		{1.5, "DOUBLE"},
		{float32(2.5), "DOUBLE"}, // a FLOAT is widened to DOUBLE, as MariaDB does
		{dateArg(2024, 1, 2), "DATE"},
		{datetimeArg(mysql.MYSQL_TYPE_DATETIME, 2024, 1, 2, 3, 4, 5, 0), "DATETIME"},
		{datetimeArg(mysql.MYSQL_TYPE_TIMESTAMP, 2024, 1, 2, 3, 4, 5, 678000), "DATETIME"},
		{timeArg(false, 0, 12, 34, 56, 0), "TIME"},
		{timeArg(true, 1, 2, 3, 4, 0), "TIME"},
	} {
		_, err := c.Execute("UPDATE Tickets64 SET id = ? WHERE stub = 'a'", a.arg)
		want := "This version of ticketd doesn't yet support 'a " + a.name + " value for a ticket table's id'"
		var me *mysql.MyError
		if !errors.As(err, &me) || me.Code != mysql.ER_NOT_SUPPORTED_YET || me.Message != want {
			t.Errorf("SET id = ? with %v: %v, want 1235 %q", a.arg, err, want)
		}
	}
	// The literal 1e3 is a DOUBLE too.
	_, err := c.Execute("UPDATE Tickets64 SET id = 1e3 WHERE stub = 'a'")
	if want := "This version of ticketd doesn't yet support 'a DOUBLE value for a ticket table's id'"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("SET id = 1e3: %v, want %q", err, want)
	}
	r, err := c.Execute("SELECT id FROM Tickets64")
	if err != nil {
		t.Fatal(err)
	}
	if got := rowText(r); got != "1" {
		t.Errorf("id after the refused UPDATEs: %s, want 1", got)
	}
}

// TestTypeNameCoversEveryKind: every value kind of model has a name of
// its own in typeName, not its number (7 is sql's '?', never a model
// value).
func TestTypeNameCoversEveryKind(t *testing.T) {
	for _, k := range []model.ValueKind{model.ValNull, model.ValDefault, model.ValInt, model.ValUint,
		model.ValString, model.ValDecimal, model.ValNow, model.ValTemporal, model.ValDouble} {
		if n := typeName(model.Value{Kind: k, Str: "2024-01-02"}); strings.Contains(n, "of kind") || strings.Contains(n, "expression") {
			t.Errorf("kind %d is named %q", k, n)
		}
	}
}
