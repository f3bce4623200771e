// MariaDB Connector/J with server-side prepared statements
// (useServerPrepStmts=true): a parameter of each JDBC type, sent in the
// binary protocol (setDate as DATE, setTimestamp as DATETIME, setTime as
// TIME, setBigDecimal as DECIMAL, setDouble/setFloat as DOUBLE/FLOAT,
// setLong/setInt/setShort/setByte/setBoolean as integers, setBytes as a
// BLOB, setNull, and setCharacterStream/setBinaryStream as long data),
// stored into and compared with a row table's columns, then every row
// read back as binary rows (column types included) and as text rows.
//
// It prints one line per statement: its outcome, rows and warning count.
// integration's TestConnectorJParams runs it against MariaDB 10.11 and
// against ticketd and requires the same lines; typedparams.expected is
// MariaDB's output, which make compat compares ticketd's with
// (typedparams.sh). Run with the source launcher:
// java -cp <jar> TypedParams.java
import java.io.ByteArrayInputStream;
import java.io.StringReader;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.sql.Time;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.TimeZone;

public class TypedParams {
    interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    static Connection c;
    static int n = 0;

    static String warnings(Statement s) throws SQLException {
        int w = 0;
        for (SQLWarning x = s.getWarnings(); x != null; x = x.getNextWarning()) w++;
        return " warnings=" + w;
    }

    static String rows(ResultSet rs, boolean types) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        StringBuilder b = new StringBuilder();
        if (types) {
            for (int i = 1; i <= md.getColumnCount(); i++) b.append(i > 1 ? " | " : " [").append(md.getColumnName(i)).append(' ').append(md.getColumnTypeName(i));
            b.append(']');
        }
        while (rs.next()) {
            b.append("\n    (");
            for (int i = 1; i <= md.getColumnCount(); i++) {
                if (i > 1) b.append(" | ");
                String v = rs.getString(i);
                if (v != null && v.length() > 40) v = v.length() + " chars: " + v.substring(0, 10) + "...";
                b.append(v == null ? "NULL" : v);
            }
            b.append(')');
        }
        return b.toString();
    }

    // run executes sql prepared with the binder's parameters.
    static void run(String sql, Binder binder) {
        n++;
        String out;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            binder.bind(ps);
            if (ps.execute()) {
                try (ResultSet rs = ps.getResultSet()) {
                    out = "rows" + rows(rs, true);
                }
            } else {
                out = "OK affected=" + ps.getUpdateCount();
            }
            out += warnings(ps);
        } catch (SQLException e) {
            out = "error " + e.getErrorCode();
        }
        System.out.println(n + " " + sql + " -> " + out);
    }

    // text executes sql as a plain statement (text rows).
    static void text(String sql) {
        n++;
        String out;
        try (Statement s = c.createStatement()) {
            if (s.execute(sql)) {
                try (ResultSet rs = s.getResultSet()) {
                    out = "rows" + rows(rs, false);
                }
            } else {
                out = "OK affected=" + s.getUpdateCount();
            }
            out += warnings(s);
        } catch (SQLException e) {
            out = "error " + e.getErrorCode();
        }
        System.out.println(n + " " + sql + " -> " + out);
    }

    public static void main(String[] args) throws Exception {
        TimeZone.setDefault(TimeZone.getTimeZone("UTC"));
        String host = System.getenv("TICKETD_HOST"), port = System.getenv("TICKETD_PORT");
        String user = System.getenv("TICKETD_USER"), pass = System.getenv("TICKETD_PASSWORD");
        String db = System.getenv("TICKETD_DB") + "_typed";
        String base = "jdbc:mariadb://" + host + ":" + port + "/";
        try (Connection a = DriverManager.getConnection(base, user, pass); Statement s = a.createStatement()) {
            System.out.println("version: MariaDB Connector/J " + a.getMetaData().getDriverVersion() + " java " + System.getProperty("java.version"));
            s.execute("DROP DATABASE IF EXISTS " + db);
            s.execute("CREATE DATABASE " + db);
        }
        c = DriverManager.getConnection(base + db + "?useServerPrepStmts=true", user, pass);
        Date day = Date.valueOf("2024-01-02");
        Timestamp at = Timestamp.valueOf("2024-01-02 03:04:05");
        Timestamp atMicros = Timestamp.valueOf("2024-01-02 03:04:05.123456");
        Time clock = Time.valueOf("12:34:56");
        String longText = "0123456789".repeat(150);

        // UidGenerator's WORKER_NODE (its published DDL and INSERT).
        text("CREATE TABLE WORKER_NODE (ID BIGINT NOT NULL AUTO_INCREMENT COMMENT 'auto increment id', HOST_NAME VARCHAR(64) NOT NULL COMMENT 'host name', "
            + "PORT VARCHAR(64) NOT NULL COMMENT 'port', TYPE INT NOT NULL COMMENT 'node type: ACTUAL or CONTAINER', LAUNCH_DATE DATE NOT NULL COMMENT 'launch date', "
            + "MODIFIED TIMESTAMP NOT NULL COMMENT 'modified time', CREATED TIMESTAMP NOT NULL COMMENT 'created time', PRIMARY KEY(ID)) "
            + "COMMENT='DB WorkerID Assigner for UID Generator',ENGINE = INNODB");
        String uid = "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) VALUES (?, ?, ?, ?, NOW(), NOW())";
        run(uid, ps -> { ps.setString(1, "host-a"); ps.setString(2, "1700000000000-1"); ps.setInt(3, 2); ps.setDate(4, day); });
        run(uid, ps -> { ps.setString(1, "host-b"); ps.setString(2, "8080"); ps.setInt(3, 1); ps.setTimestamp(4, at); });
        run("SELECT ID, HOST_NAME, LAUNCH_DATE FROM WORKER_NODE WHERE HOST_NAME = ? AND LAUNCH_DATE = ?", ps -> { ps.setString(1, "host-a"); ps.setDate(2, day); });

        text("CREATE TABLE jp (id int NOT NULL AUTO_INCREMENT, d date DEFAULT NULL, at datetime DEFAULT NULL, ts timestamp NULL DEFAULT NULL, "
            + "v int DEFAULT NULL, big bigint unsigned DEFAULT NULL, name varchar(2000) DEFAULT NULL, c char(5) DEFAULT NULL, "
            + "sm smallint DEFAULT NULL, ti tinyint unsigned DEFAULT NULL, PRIMARY KEY (id)) ENGINE=InnoDB");
        String ins = "INSERT INTO jp (id, d, at, ts, v, big, name, c, sm, ti) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        run(ins, ps -> { ps.setInt(1, 1); ps.setDate(2, day); ps.setTimestamp(3, at); ps.setTimestamp(4, at); ps.setInt(5, -7);
            ps.setBigDecimal(6, new BigDecimal("18446744073709551615")); ps.setString(7, "abc"); ps.setString(8, "x  "); ps.setShort(9, (short) -300); ps.setByte(10, (byte) 5); });
        // DATETIME into DATE, VARCHAR and INT; microseconds; a TIME.
        run(ins, ps -> { ps.setInt(1, 2); ps.setTimestamp(2, at); ps.setTimestamp(3, atMicros); ps.setNull(4, Types.TIMESTAMP); ps.setTimestamp(5, at);
            ps.setNull(6, Types.BIGINT); ps.setTimestamp(7, atMicros); ps.setNull(8, Types.CHAR); ps.setNull(9, Types.SMALLINT); ps.setNull(10, Types.TINYINT); });
        run(ins, ps -> { ps.setInt(1, 3); ps.setNull(2, Types.DATE); ps.setDate(3, day); ps.setNull(4, Types.TIMESTAMP); ps.setDate(5, day);
            ps.setTimestamp(6, at); ps.setTime(7, clock); ps.setNull(8, Types.CHAR); ps.setNull(9, Types.SMALLINT); ps.setBoolean(10, true); });
        // DOUBLE and FLOAT: rounded half to even into INT, MariaDB's text in VARCHAR.
        run(ins, ps -> { ps.setInt(1, 4); ps.setNull(2, Types.DATE); ps.setNull(3, Types.TIMESTAMP); ps.setNull(4, Types.TIMESTAMP); ps.setDouble(5, 2.5);
            ps.setDouble(6, 3.5); ps.setDouble(7, 0.1); ps.setFloat(8, 1.5f); ps.setFloat(9, 2.5f); ps.setDouble(10, 254.5); });
        run(ins, ps -> { ps.setInt(1, 5); ps.setNull(2, Types.DATE); ps.setNull(3, Types.TIMESTAMP); ps.setNull(4, Types.TIMESTAMP); ps.setDouble(5, -2.5);
            ps.setDouble(6, 1e15); ps.setDouble(7, 1.5e-7); ps.setFloat(8, 0.1f); ps.setNull(9, Types.SMALLINT); ps.setNull(10, Types.TINYINT); });
        // DECIMAL: exact, half away from zero into INT.
        run(ins, ps -> { ps.setInt(1, 6); ps.setNull(2, Types.DATE); ps.setNull(3, Types.TIMESTAMP); ps.setNull(4, Types.TIMESTAMP); ps.setBigDecimal(5, new BigDecimal("2.5"));
            ps.setBigDecimal(6, new BigDecimal("9223372036854775808")); ps.setBigDecimal(7, new BigDecimal("1.50")); ps.setBigDecimal(8, new BigDecimal("-0.5"));
            ps.setBigDecimal(9, new BigDecimal("-2.5")); ps.setNull(10, Types.TINYINT); });
        // Long data (a character stream and a byte stream), a blob. Each
        // in a statement of its own: through the INSERT above, which
        // Connector/J keeps prepared, MariaDB stored the previous
        // execute's values for them instead.
        run("INSERT INTO jp (id, v, big, name, c) VALUES (?, ?, ?, ?, ?)", ps -> { ps.setInt(1, 7); ps.setLong(2, 42);
            ps.setLong(3, Long.MAX_VALUE); ps.setCharacterStream(4, new StringReader(longText)); ps.setBinaryStream(5, new ByteArrayInputStream("bytes".getBytes())); });
        run("INSERT INTO jp (id, name) VALUES (?, ?)", ps -> { ps.setInt(1, 8); ps.setBytes(2, "blob bytes".getBytes()); });
        // Errors: out of range, no date, too long; nothing stored.
        run(ins, ps -> { ps.setInt(1, 9); ps.setNull(2, Types.DATE); ps.setNull(3, Types.TIMESTAMP); ps.setNull(4, Types.TIMESTAMP); ps.setLong(5, 3000000000L);
            ps.setNull(6, Types.BIGINT); ps.setNull(7, Types.VARCHAR); ps.setNull(8, Types.CHAR); ps.setNull(9, Types.SMALLINT); ps.setNull(10, Types.TINYINT); });
        run(ins, ps -> { ps.setInt(1, 9); ps.setString(2, "not a date"); ps.setNull(3, Types.TIMESTAMP); ps.setNull(4, Types.TIMESTAMP); ps.setNull(5, Types.INTEGER);
            ps.setNull(6, Types.BIGINT); ps.setNull(7, Types.VARCHAR); ps.setNull(8, Types.CHAR); ps.setNull(9, Types.SMALLINT); ps.setNull(10, Types.TINYINT); });
        run(ins, ps -> { ps.setInt(1, 9); ps.setNull(2, Types.DATE); ps.setTimestamp(3, Timestamp.valueOf("1960-01-01 00:00:00")); ps.setTimestamp(4, Timestamp.valueOf("1960-01-01 00:00:00"));
            ps.setNull(5, Types.INTEGER); ps.setNull(6, Types.BIGINT); ps.setNull(7, Types.VARCHAR); ps.setNull(8, Types.CHAR); ps.setNull(9, Types.SMALLINT); ps.setNull(10, Types.TINYINT); });
        run(ins, ps -> { ps.setInt(1, 9); ps.setNull(2, Types.DATE); ps.setNull(3, Types.TIMESTAMP); ps.setNull(4, Types.TIMESTAMP); ps.setNull(5, Types.INTEGER);
            ps.setNull(6, Types.BIGINT); ps.setNull(7, Types.VARCHAR); ps.setString(8, "toolong"); ps.setNull(9, Types.SMALLINT); ps.setInt(10, -1); });
        // Every row: binary rows with their column types, then text rows.
        run("SELECT * FROM jp WHERE id > ? ORDER BY id", ps -> ps.setInt(1, 0));
        text("SELECT * FROM jp ORDER BY id");
        // Comparisons with parameters of each type.
        List<Object[]> where = new ArrayList<>();
        where.add(new Object[] {"d = ?", day});
        where.add(new Object[] {"d = ?", Timestamp.valueOf("2024-01-02 00:00:00")});
        where.add(new Object[] {"at = ?", at});
        where.add(new Object[] {"at = ?", day});
        where.add(new Object[] {"at > ?", Timestamp.valueOf("2024-01-02 03:04:05.000001")});
        where.add(new Object[] {"ts = ?", at});
        where.add(new Object[] {"v = ?", 2.0});
        where.add(new Object[] {"v = ?", new BigDecimal("3")});
        where.add(new Object[] {"v > ?", 2.5f});
        where.add(new Object[] {"big = ?", new BigDecimal("18446744073709551615")});
        where.add(new Object[] {"big = ?", Long.MAX_VALUE});
        where.add(new Object[] {"name = ?", at});
        where.add(new Object[] {"name = ?", clock});
        where.add(new Object[] {"name = ?", "ABC"});
        where.add(new Object[] {"name = ?", new StringReader(longText)});
        where.add(new Object[] {"c = ?", "x"});
        where.add(new Object[] {"sm = ?", (short) -300});
        where.add(new Object[] {"ti = ?", true});
        where.add(new Object[] {"d IS NULL AND v = ?", 42L});
        for (Object[] w : where) {
            run("SELECT id FROM jp WHERE " + w[0] + " ORDER BY id", ps -> {
                if (w[1] instanceof StringReader) ps.setCharacterStream(1, (StringReader) w[1]);
                else ps.setObject(1, w[1]);
            });
        }
        // UPDATE and DELETE with parameters.
        run("UPDATE jp SET at = ?, d = ?, v = ? WHERE id = ?", ps -> { ps.setTimestamp(1, Timestamp.valueOf("2025-06-07 08:09:10")); ps.setTimestamp(2, Timestamp.valueOf("2025-06-07 08:09:10"));
            ps.setDouble(3, 6.5); ps.setInt(4, 4); });
        run("UPDATE jp SET v = v + ? WHERE id = ?", ps -> { ps.setBigDecimal(1, new BigDecimal("1.5")); ps.setInt(2, 6); });
        run("SELECT id, d, at, v FROM jp WHERE id IN (?, ?) ORDER BY id", ps -> { ps.setInt(1, 4); ps.setInt(2, 6); });
        run("DELETE FROM jp WHERE at < ?", ps -> ps.setTimestamp(1, at));
        run("SELECT COUNT(*) FROM jp WHERE id > ?", ps -> ps.setLong(1, 0));
        c.close();
        System.out.println("ok");
    }
}
