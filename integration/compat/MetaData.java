// MariaDB Connector/J's DatabaseMetaData on the schemes' tables: Flickr's
// Tickets64, Leaf's leaf_alloc, Tinyid's tiny_id_info, UidGenerator's
// WORKER_NODE and a sequence, created in database $TICKETD_DB_meta.
// getTables, getColumns, getIndexInfo, getPrimaryKeys and getImportedKeys
// read information_schema's TABLES, COLUMNS, STATISTICS, KEY_COLUMN_USAGE
// and REFERENTIAL_CONSTRAINTS with CASE, IF, LIKE, LOCATE, SUBSTRING,
// CAST, joins and ORDER BY an alias of an expression (issue 34: ticketd refused them with
// "doesn't yet support 'this expression'").
//
// It prints one line per column and per index column, every field of
// the driver's answer. integration's TestConnectorJMetaData runs it
// against MariaDB 10.11 and against ticketd and requires the same
// lines. Run with the source launcher: java -cp <jar> MetaData.java
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;

public class MetaData {
    static final String[] DDL = {
        "CREATE TABLE Tickets64 (id bigint(20) unsigned NOT NULL auto_increment, stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM",
        "CREATE TABLE leaf_alloc (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint(20) NOT NULL DEFAULT '1', step int(11) NOT NULL, description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag)) ENGINE=InnoDB",
        "CREATE TABLE tiny_id_info (id bigint(20) unsigned NOT NULL AUTO_INCREMENT, biz_type varchar(63) NOT NULL DEFAULT '', begin_id bigint(20) NOT NULL DEFAULT '0', max_id bigint(20) NOT NULL DEFAULT '0', step int(11) DEFAULT '0', delta int(11) NOT NULL DEFAULT '1', remainder int(11) NOT NULL DEFAULT '0', create_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00', update_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00', version bigint(20) NOT NULL DEFAULT '0', PRIMARY KEY (id), UNIQUE KEY uniq_biz_type (biz_type)) ENGINE=InnoDB AUTO_INCREMENT=1",
        "CREATE TABLE WORKER_NODE (ID BIGINT NOT NULL AUTO_INCREMENT COMMENT 'auto increment id', HOST_NAME VARCHAR(64) NOT NULL COMMENT 'host name', PORT VARCHAR(64) NOT NULL COMMENT 'port', TYPE INT NOT NULL COMMENT 'node type: ACTUAL or CONTAINER', LAUNCH_DATE DATE NOT NULL COMMENT 'launch date', MODIFIED TIMESTAMP NOT NULL COMMENT 'modified time', CREATED TIMESTAMP NOT NULL COMMENT 'created time', PRIMARY KEY(ID)) COMMENT='DB WorkerID Assigner for UID Generator',ENGINE = INNODB",
        "CREATE SEQUENCE s START WITH 1 INCREMENT BY 1 CACHE 1000",
    };

    public static void main(String[] args) throws Exception {
        String base = "jdbc:mariadb://" + System.getenv("TICKETD_HOST") + ":" + System.getenv("TICKETD_PORT") + "/";
        String user = System.getenv("TICKETD_USER"), pass = System.getenv("TICKETD_PASSWORD");
        String db = System.getenv("TICKETD_DB") + "_meta";
        try (Connection a = DriverManager.getConnection(base, user, pass); Statement s = a.createStatement()) {
            System.out.println("version: " + a.getMetaData().getDriverVersion());
            s.execute("DROP DATABASE IF EXISTS " + db);
            s.execute("CREATE DATABASE " + db + " CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci");
        }
        try (Connection c = DriverManager.getConnection(base + db, user, pass)) {
            try (Statement s = c.createStatement()) {
                for (String q : DDL) s.execute(q);
            }
            DatabaseMetaData md = c.getMetaData();
            try (ResultSet rs = md.getTables(null, null, "%", null)) {
                print("getTables", rs);
            }
            try (ResultSet rs = md.getTables(null, null, "%", new String[] {"TABLE"})) {
                print("getTables TABLE", rs);
            }
            for (String t : new String[] {"Tickets64", "leaf_alloc", "tiny_id_info", "WORKER_NODE", "s", "nope"}) {
                try (ResultSet rs = md.getColumns(null, null, t, null)) {
                    print("getColumns " + t, rs);
                }
                try (ResultSet rs = md.getIndexInfo(null, null, t, false, false)) {
                    print("getIndexInfo " + t, rs);
                }
                try (ResultSet rs = md.getIndexInfo(null, null, t, true, false)) {
                    print("getIndexInfo unique " + t, rs);
                }
                try (ResultSet rs = md.getPrimaryKeys(null, null, t)) {
                    print("getPrimaryKeys " + t, rs);
                }
                try (ResultSet rs = md.getImportedKeys(null, null, t)) {
                    print("getImportedKeys " + t, rs);
                }
            }
        }
    }

    static void print(String what, ResultSet rs) throws SQLException {
        ResultSetMetaData m = rs.getMetaData();
        int n = 0;
        while (rs.next()) {
            StringBuilder b = new StringBuilder(what).append(':');
            for (int i = 1; i <= m.getColumnCount(); i++) {
                b.append(' ').append(m.getColumnLabel(i)).append('=').append(rs.getString(i));
            }
            System.out.println(b);
            n++;
        }
        System.out.println(what + ": " + n + " rows");
    }
}
