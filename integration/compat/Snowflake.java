// Snowflake worker-id leases (README "Snowflake worker ids") from Java
// through MariaDB Connector/J, plain JDBC: the slot table, the claim (the
// instance's own slot, else the oldest lease end beyond the guard; the
// row id from getGeneratedKeys, which reads the OK packet's insert id set
// by id = LAST_INSERT_ID(id)), the time floor, ids in Twitter's layout
// above it, renewal guarded by the epoch, release, and a reclaim. It
// prints facts that do not depend on the clock, so that MariaDB's output
// and ticketd's can be compared line by line (TestConnectorJSnowflake),
// once with client-side and once with server-side prepared statements.
// Run with the source launcher: java -cp <jar> Snowflake.java
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashSet;
import java.util.Set;

public class Snowflake {
    static final String NO_LEASE = "1970-01-02 00:00:00";
    static final int LEASE = 10, GUARD = 2;
    static final long DRIFT_MS = 1000, EPOCH = 1288834974657L;
    static final String T = "sf_slots";
    static final String COLS = "prev_until = lease_until, prev_ms = last_ms, epoch = epoch + 1, ";

    static void fail(String msg) {
        System.err.println("FAIL: " + msg);
        System.exit(1);
    }

    static class Claim {
        long id, epoch, floor;
        int slot;
        boolean reclaimed;
    }

    // claim runs the protocol's claim for who; null when no slot is free.
    static Claim claim(Connection c, String who) throws SQLException {
        Claim cl = new Claim();
        long rowId = 0;
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + T + " SET " + COLS
                + "lease_until = UTC_TIMESTAMP() + INTERVAL " + LEASE + " SECOND, id = LAST_INSERT_ID(id) "
                + "WHERE service = ? AND holder = ? LIMIT 1", Statement.RETURN_GENERATED_KEYS)) {
            ps.setString(1, "java");
            ps.setString(2, who);
            if (ps.executeUpdate() == 1) {
                cl.reclaimed = true;
                rowId = key(ps);
            }
        }
        if (!cl.reclaimed) {
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + T + " SET " + COLS
                    + "holder = ?, lease_until = UTC_TIMESTAMP() + INTERVAL " + LEASE + " SECOND, id = LAST_INSERT_ID(id) "
                    + "WHERE service = ? AND lease_until < UTC_TIMESTAMP() - INTERVAL " + GUARD + " SECOND "
                    + "ORDER BY lease_until, slot LIMIT 1", Statement.RETURN_GENERATED_KEYS)) {
                ps.setString(1, who);
                ps.setString(2, "java");
                if (ps.executeUpdate() == 0) return null;
                rowId = key(ps);
            }
        }
        cl.id = rowId;
        try (PreparedStatement ps = c.prepareStatement("SELECT slot, holder, epoch, prev_until, prev_ms FROM " + T + " WHERE id = ?")) {
            ps.setLong(1, rowId);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) fail(who + ": claimed row " + rowId + " not found");
                cl.slot = rs.getInt(1);
                if (!who.equals(rs.getString(2))) fail(who + ": row " + rowId + " held by " + rs.getString(2));
                cl.epoch = rs.getLong(3);
                String prev = rs.getString(4);
                cl.floor = rs.getLong(5);
                if (!prev.startsWith(NO_LEASE)) {
                    long until = LocalDateTime.parse(prev.substring(0, 19), DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"))
                        .toInstant(ZoneOffset.UTC).toEpochMilli();
                    cl.floor = Math.max(cl.floor, until + DRIFT_MS);
                }
            }
        }
        return cl;
    }

    static long key(PreparedStatement ps) throws SQLException {
        try (ResultSet k = ps.getGeneratedKeys()) {
            if (!k.next()) fail("no generated key for a claim");
            return k.getLong(1);
        }
    }

    static int renewOrRelease(Connection c, boolean release, long lastMs, Claim cl, String who, long epoch) throws SQLException {
        String q = release
            ? "UPDATE " + T + " SET lease_until = '" + NO_LEASE + "', last_ms = ?, renewals = renewals + 1 WHERE id = ? AND holder = ? AND epoch = ?"
            : "UPDATE " + T + " SET lease_until = UTC_TIMESTAMP() + INTERVAL " + LEASE + " SECOND, last_ms = ?, renewals = renewals + 1 WHERE id = ? AND holder = ? AND epoch = ?";
        try (PreparedStatement ps = c.prepareStatement(q)) {
            ps.setLong(1, lastMs);
            ps.setLong(2, cl.id);
            ps.setString(3, who);
            ps.setLong(4, epoch);
            return ps.executeUpdate();
        }
    }

    // generate issues n ids of slot in Twitter's layout (10 worker bits,
    // 12 sequence bits), each above the floor, waiting for the clock to
    // pass it; it returns the highest timestamp used.
    static long generate(Claim cl, int n, Set<Long> seen) throws InterruptedException {
        long last = cl.floor, seq = 0;
        while (System.currentTimeMillis() <= cl.floor) Thread.sleep(1);
        for (int i = 0; i < n; i++) {
            long now = System.currentTimeMillis();
            if (now > last) {
                last = now;
                seq = 0;
            } else if (seq < 4095 && last > cl.floor) {
                seq++;
            } else {
                Thread.sleep(1);
                i--;
                continue;
            }
            long id = (last - EPOCH) << 22 | (long) cl.slot << 12 | seq;
            if (!seen.add(id)) fail("id " + id + " issued twice");
            if ((id >> 12 & 1023) != cl.slot || (id >> 22) + EPOCH <= cl.floor) fail("id " + id + " outside slot " + cl.slot + " or not above floor " + cl.floor);
        }
        return last;
    }

    static String show(String who, Claim cl) {
        return cl == null ? "claim " + who + ": no free slot"
            : "claim " + who + ": slot " + cl.slot + " epoch " + cl.epoch + (cl.reclaimed ? " (own slot)" : "");
    }

    public static void main(String[] args) throws Exception {
        String host = System.getenv("TICKETD_HOST"), port = System.getenv("TICKETD_PORT");
        String user = System.getenv("TICKETD_USER"), pass = System.getenv("TICKETD_PASSWORD");
        String db = System.getenv("TICKETD_DB");
        String base = "jdbc:mariadb://" + host + ":" + port + "/";
        try (Connection c = DriverManager.getConnection(base, user, pass); Statement s = c.createStatement()) {
            System.out.println("version: MariaDB Connector/J " + c.getMetaData().getDriverVersion() + " java " + System.getProperty("java.version"));
            s.execute("CREATE DATABASE IF NOT EXISTS " + db);
        }
        for (String opts : new String[] {"", "?useServerPrepStmts=true"}) {
            System.out.println("== " + (opts.isEmpty() ? "client-side" : "server-side") + " prepared statements");
            try (Connection c = DriverManager.getConnection(base + db + opts, user, pass)) {
                try (Statement s = c.createStatement()) {
                    s.execute("DROP TABLE IF EXISTS " + T);
                    s.execute("CREATE TABLE " + T + " (id BIGINT NOT NULL AUTO_INCREMENT, service VARCHAR(64) NOT NULL, "
                        + "slot INT NOT NULL, holder VARCHAR(128) NOT NULL DEFAULT '', epoch BIGINT NOT NULL DEFAULT 0, "
                        + "lease_until DATETIME NOT NULL DEFAULT '" + NO_LEASE + "', last_ms BIGINT NOT NULL DEFAULT 0, "
                        + "prev_until DATETIME NOT NULL DEFAULT '" + NO_LEASE + "', prev_ms BIGINT NOT NULL DEFAULT 0, "
                        + "renewals BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (id), UNIQUE KEY service_slot (service, slot), "
                        + "KEY service_holder (service, holder)) ENGINE=InnoDB");
                    System.out.println("slots: " + s.executeUpdate("INSERT IGNORE INTO " + T
                        + " (service, slot) VALUES ('java', 0), ('java', 1), ('java', 2), ('java', 3)"));
                }
                Claim[] cs = new Claim[5];
                for (int i = 0; i < 5; i++) {
                    cs[i] = claim(c, "j" + (i + 1));
                    System.out.println(show("j" + (i + 1), cs[i]));
                }
                Set<Long> seen = new HashSet<>();
                long last = generate(cs[0], 10000, seen);
                System.out.println("j1: 10000 ids, unique, in slot " + cs[0].slot + ", above floor " + cs[0].floor);
                System.out.println("renew j1: " + renewOrRelease(c, false, last, cs[0], "j1", cs[0].epoch) + " row");
                System.out.println("renew j1, stale epoch: " + renewOrRelease(c, false, last, cs[0], "j1", cs[0].epoch - 1) + " rows");
                System.out.println("renew j1 as j2: " + renewOrRelease(c, false, last, cs[0], "j2", cs[0].epoch) + " rows");
                System.out.println("release j1: " + renewOrRelease(c, true, last, cs[0], "j1", cs[0].epoch) + " row");
                Claim j5 = claim(c, "j5");
                System.out.println(show("j5", j5) + ", floor is j1's last timestamp: " + (j5 != null && j5.floor == last));
                generate(j5, 10000, seen);
                System.out.println("j5: 10000 more ids, all unique");
                Claim j2 = claim(c, "j2");
                System.out.println(show("j2", j2) + ", floor past its live lease: " + (j2 != null && j2.floor > System.currentTimeMillis()));
            }
        }
        System.out.println("ok");
    }
}
