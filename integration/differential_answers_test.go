package integration

// answersScript is the differential script of issue 32's classes, each
// statement run on MariaDB 10.11 InnoDB (MyISAM for the ticket table) and
// on ticketd: what a new user's ordinary statements found answering
// differently. Every line marked "before" answered differently before
// the change named next to it.
var answersScript = []step{
	{sql: "CREATE DATABASE an"},
	{sql: "USE an"},
	// Class 3: VALUES (), (), () gives every column its default, on a
	// ticket table too (1136 before); a list of another width than the
	// first is 1136 at its row (the row engine took an empty list among
	// full ones as all defaults, and inserted, before), after the table
	// and the column list are checked.
	{sql: "CREATE TABLE T64 (id bigint(20) unsigned NOT NULL auto_increment, stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM"},
	{sql: "INSERT INTO T64 VALUES ()"},     // before
	{sql: "INSERT INTO T64 VALUES (), ()"}, // before: 1136, now 1062 as MariaDB
	{sql: "REPLACE INTO T64 VALUES (), ()"},
	{sql: "REPLACE INTO T64 () VALUES ()"},
	{sql: "SELECT LAST_INSERT_ID()"},
	{sql: "SELECT * FROM T64"},
	{sql: "CREATE TABLE T2 (id bigint NOT NULL auto_increment PRIMARY KEY) ENGINE=MyISAM"},
	{sql: "INSERT INTO T2 VALUES (), (), ()"}, // before
	{sql: "SELECT * FROM T2"},
	{sql: "CREATE TABLE e (id int NOT NULL AUTO_INCREMENT PRIMARY KEY, a int DEFAULT 1, s varchar(3) DEFAULT 'x')"},
	{sql: "INSERT INTO e VALUES (), (), ()"},
	{sql: "INSERT INTO e () VALUES (), ()"},
	{sql: "INSERT INTO e (a) VALUES (2), ()"},     // before
	{sql: "INSERT INTO e VALUES (9, 9, 'n'), ()"}, // before
	{sql: "INSERT INTO e VALUES (), (9, 9, 'n')"}, // before
	{sql: "INSERT INTO e (id, a) VALUES (10, 10), (11)"},
	{sql: "INSERT INTO e (id, a) VALUES (10), (11, 1)"},
	{sql: "INSERT INTO e (id, nosuch) VALUES (10, 10), (11)"},
	{sql: "INSERT INTO nosuch VALUES (10, 10), ()"},
	{sql: "INSERT INTO e (a) VALUES ()"},
	{sql: "REPLACE INTO e VALUES (), ()"},
	{sql: "INSERT INTO e VALUES (), () ON DUPLICATE KEY UPDATE a = 5"},
	{sql: "SELECT * FROM e"},
	// Class 5: column types MariaDB takes with a note (YEAR(2), YEAR(3):
	// 1818 before) or whose width or precision it refuses (INT(300) is
	// 1439, DATETIME(7) 1426: both created before); fractional seconds,
	// which ticketd does not keep, are refused (created, and the fraction
	// dropped, before).
	{sql: "CREATE TABLE y2 (a YEAR(2))", refused: true},
	{sql: "CREATE TABLE y3 (a YEAR(3))", refused: true},
	{sql: "CREATE TABLE w300 (a int(300))"},
	{sql: "CREATE TABLE w255 (a int(255))"},
	{sql: "CREATE TABLE f7 (a datetime(7))"},
	{sql: "CREATE TABLE f7t (a timestamp(7) NULL)"},
	{sql: "CREATE TABLE f3 (a datetime(3))", refused: true},
	{sql: "CREATE TABLE f0 (a datetime(0), b timestamp(0) NULL)"},
	{sql: "SHOW CREATE TABLE f0", createTable: true},
	// Class 1: in strict mode an UPDATE fails on the first warning met
	// evaluating its WHERE or SET (1292), changing nothing; with no row
	// read (an empty table, a key lookup that finds nothing) there is
	// none. A note ('5 ') stays a note; DELETE and SELECT warn and go on,
	// as does UPDATE outside strict mode. Every UPDATE with a warning here
	// changed rows before (command version 11).
	{sql: "CREATE TABLE sw (id int PRIMARY KEY, v int, s varchar(5), d date, at datetime, k int, KEY k (k))"},
	{sql: "UPDATE sw SET v = 1 WHERE v = '5x'"},
	{sql: "INSERT INTO sw VALUES (1, 5, 'a', '2024-01-01', '2024-01-01 10:00:00', 5), (2, 6, 'b', '2024-01-02', NULL, 6)"},
	{sql: "UPDATE sw SET v = 1 WHERE id = 7 AND v = '5x'"},
	{sql: "UPDATE sw SET v = 1 WHERE v = '5x'"},         // before
	{sql: "UPDATE sw SET v = 1 WHERE v = '5x' LIMIT 1"}, // before
	{sql: "UPDATE sw SET v = (s = 5) WHERE id = 1"},     // before
	{sql: "UPDATE sw SET v = 2 WHERE d = '2024-01-01x'"},
	{sql: "UPDATE sw SET v = 2 WHERE d > '2024-13-01'"},
	{sql: "UPDATE sw SET v = 2 WHERE at = 'abc'"},
	{sql: "UPDATE sw SET v = 3 WHERE s = 'a' OR v = '5x'"}, // before
	{sql: "UPDATE sw SET v = 3 WHERE s = 5"},
	{sql: "UPDATE sw SET v = 3 WHERE id IN (1, '2x')"}, // before
	{sql: "UPDATE sw SET v = 3 WHERE v BETWEEN 1 AND '9x'"},
	{sql: "UPDATE sw SET v = 3 WHERE id = '1x'"},
	{sql: "UPDATE sw SET v = 3 WHERE k = '5x'"},
	{sql: "UPDATE sw SET v = 3 WHERE id = 1 AND s = 5"}, // before
	{sql: "SELECT * FROM sw"},
	{sql: "UPDATE sw SET v = 2 WHERE v = ' 5'"},
	{sql: "UPDATE sw SET v = 5 WHERE v = '2 '"},
	{sql: "SHOW WARNINGS", cols: warnCols},
	{sql: "DELETE FROM sw WHERE v = '99x'"},
	{sql: "DELETE FROM sw WHERE s = 99"},
	{sql: "SHOW WARNINGS", cols: warnCols},
	{sql: "SELECT id FROM sw WHERE v = '5x'"},
	{sql: "SHOW WARNINGS", cols: warnCols},
	{sql: "SET sql_mode = ''"},
	{sql: "UPDATE sw SET v = 0 WHERE v = '5x'"},
	{sql: "SHOW WARNINGS", cols: warnCols},
	{sql: "UPDATE sw SET v = (s = 5) WHERE id = 2"},
	{sql: "SHOW WARNINGS", cols: warnCols},
	{sql: "SET sql_mode = DEFAULT"},
	{sql: "SELECT * FROM sw"},
	// Class 4: InnoDB reserves a statement's ids when its first row needs
	// one, as many as it has rows, and keeps them when the statement
	// fails; a first row that does not convert reserves none; an explicit
	// id written before the failure moves the counter past it; after an
	// id generated with auto_increment_increment = 5 the counter stands 5
	// above it (command version 11; each SELECT LAST_INSERT_ID() after a
	// failed statement answered a lower id before).
	{sql: "CREATE TABLE ai (id int NOT NULL AUTO_INCREMENT PRIMARY KEY, n int NOT NULL, u int, UNIQUE KEY u (u))"},
	{sql: "INSERT INTO ai (n) VALUES (1), (NULL), (3)"},
	{sql: "INSERT INTO ai (n) VALUES (4)"}, // before
	{sql: "INSERT INTO ai (n) VALUES (NULL)"},
	{sql: "INSERT INTO ai (n) VALUES (5)"},
	{sql: "INSERT INTO ai (n, u) VALUES (6, 1), (7, 1)"},
	{sql: "INSERT INTO ai (n) VALUES (8)"},
	{sql: "INSERT INTO ai (n, u) VALUES (9, 1)"},
	{sql: "REPLACE INTO ai (n, u) VALUES (11, 1), (NULL, 2)"},
	{sql: "INSERT INTO ai (n) VALUES (12)"},
	{sql: "INSERT INTO ai (n, u) VALUES (13, 1) ON DUPLICATE KEY UPDATE n = NULL"},
	{sql: "INSERT INTO ai (n) VALUES (14)"},
	{sql: "INSERT INTO ai (n, u) VALUES (15, 5), (16, 1) ON DUPLICATE KEY UPDATE u = 6"},
	{sql: "INSERT INTO ai (n) VALUES (17)"},
	{sql: "INSERT INTO ai (n) VALUES ('x')"},
	{sql: "INSERT INTO ai (n) VALUES (18)"},
	{sql: "INSERT INTO ai (n) VALUES (1), (2), (3), (4), (NULL)"},
	{sql: "INSERT INTO ai (n) VALUES (19)"},
	{sql: "INSERT INTO ai (id, n) VALUES (100, 1), (101, NULL)"},
	{sql: "INSERT INTO ai (n) VALUES (20)"},
	{sql: "INSERT INTO ai (id, n) VALUES (200, 1), (200, 2)"},
	{sql: "INSERT INTO ai (n) VALUES (21)"},
	{sql: "SET auto_increment_increment = 5"},
	{sql: "INSERT INTO ai (n) VALUES (1), (2), (NULL)"},
	{sql: "SET auto_increment_increment = 1"},
	{sql: "INSERT INTO ai (n) VALUES (22)"},
	{sql: "INSERT INTO ai (n, u) VALUES (5, 1), (NULL, 9) ON DUPLICATE KEY UPDATE n = 7"},
	{sql: "INSERT INTO ai (n) VALUES (23)"},
	{sql: "INSERT IGNORE INTO ai (n, u) VALUES (5, 1), (6, 2), (7, 2)"},
	{sql: "INSERT INTO ai (n) VALUES (24)"},
	{sql: "INSERT INTO ai (n) VALUES (1), (2), ('x')"},
	{sql: "INSERT INTO ai (n) VALUES (25)"},
	{sql: "SET auto_increment_increment = 5"},
	{sql: "INSERT INTO ai (n) VALUES (26)"},
	{sql: "SET auto_increment_increment = 1"},
	{sql: "INSERT INTO ai (n) VALUES (27)"},
	{sql: "SELECT LAST_INSERT_ID()"},
	{sql: "SELECT id, n, u FROM ai ORDER BY id"},
	{sql: "SHOW CREATE TABLE ai", createTable: true},
	{sql: "DROP DATABASE an", tablesAside: true},
}
