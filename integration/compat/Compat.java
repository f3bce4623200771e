// MariaDB Connector/J: executeUpdate with getGeneratedKeys, client- and
// server-side prepared statements, isValid (the pool's ping), a wrong
// password. Run with the source launcher: java -cp <jar> Compat.java
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

public class Compat {
    static long prev = 0;

    static void check(String what, long id, long lid) {
        if (id != lid) fail(what + ": driver insert id " + id + ", LAST_INSERT_ID() " + lid);
        if (id <= prev) fail(what + ": id " + id + " not above " + prev);
        prev = id;
    }

    static void fail(String msg) {
        System.err.println("FAIL: " + msg);
        System.exit(1);
    }

    static long lastInsertId(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT LAST_INSERT_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    public static void main(String[] args) throws Exception {
        String host = System.getenv("TICKETD_HOST"), port = System.getenv("TICKETD_PORT");
        String user = System.getenv("TICKETD_USER"), pass = System.getenv("TICKETD_PASSWORD");
        String db = System.getenv("TICKETD_DB"), table = System.getenv("TICKETD_TABLE");
        String base = "jdbc:mariadb://" + host + ":" + port + "/";
        try (Connection c = DriverManager.getConnection(base, user, pass); Statement s = c.createStatement()) {
            System.out.println("version: MariaDB Connector/J " + c.getMetaData().getDriverVersion() + " java " + System.getProperty("java.version"));
            s.execute("CREATE DATABASE IF NOT EXISTS " + db);
        }
        for (String opts : new String[] {"", "?useServerPrepStmts=true"}) {
            try (Connection c = DriverManager.getConnection(base + db + opts, user, pass)) {
                try (Statement s = c.createStatement()) {
                    s.execute("CREATE TABLE IF NOT EXISTS " + table + " (id bigint(20) unsigned NOT NULL auto_increment, "
                        + "stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM");
                    s.executeUpdate("REPLACE INTO " + table + " (stub) VALUES ('a')", Statement.RETURN_GENERATED_KEYS);
                    try (ResultSet k = s.getGeneratedKeys()) {
                        k.next();
                        check(opts + " statement", k.getLong(1), lastInsertId(c));
                    }
                }
                try (PreparedStatement ps = c.prepareStatement("REPLACE INTO " + table + " (stub) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
                    for (int i = 0; i < 2; i++) {
                        ps.setString(1, "a");
                        ps.executeUpdate();
                        try (ResultSet k = ps.getGeneratedKeys()) {
                            k.next();
                            check(opts + " prepared", k.getLong(1), lastInsertId(c));
                        }
                    }
                }
                try (PreparedStatement ps = c.prepareStatement("SELECT id FROM " + table + " WHERE stub = ?")) {
                    ps.setString(1, "a");
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        if (rs.getLong(1) != prev) fail("row a " + rs.getLong(1));
                    }
                }
                if (!c.isValid(5)) fail("isValid");
            }
        }
        try {
            DriverManager.getConnection(base, user, "wrong").close();
            fail("wrong password accepted");
        } catch (SQLException e) {
            if (e.getErrorCode() != 1045) fail("wrong password: " + e.getErrorCode() + " " + e.getMessage());
        }
        System.out.println("ok");
    }
}
