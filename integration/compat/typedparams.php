<?php
// PHP mysqli (mysqlnd) native prepared statements: doubles, integers,
// strings and NULL bound with bind_param, a blob sent with
// send_long_data in chunks (mysqlnd also sets its NULL bit when the
// bound variable is null: long data wins, as in MariaDB), re-executions
// without parameter types (mysqlnd's new-params-bound flag 0), and rows
// back as binary rows. Prints one line per outcome; integration's
// TestMysqliParams runs it against MariaDB 10.11 and ticketd and requires
// the same output.
mysqli_report(MYSQLI_REPORT_OFF);
$m = new mysqli(getenv("TICKETD_HOST"), getenv("TICKETD_USER"), getenv("TICKETD_PASSWORD"), "", (int)getenv("TICKETD_PORT"));
if ($m->connect_errno) { echo "connect: ", $m->connect_error, "\n"; exit(1); }
echo "version: PHP ", PHP_VERSION, " mysqli ", $m->client_info, "\n";
$db = getenv("TICKETD_DB") . "_typedphp";
$m->query("DROP DATABASE IF EXISTS $db");
$m->query("CREATE DATABASE $db");
$m->select_db($db);
$m->query("CREATE TABLE t (id int NOT NULL AUTO_INCREMENT, v int, big bigint unsigned, name varchar(3000), d date, at datetime, PRIMARY KEY (id)) ENGINE=InnoDB");
function out($what, $s) {
    echo $what, ": ", $s->errno ? "error " . $s->errno : "OK affected=" . $s->affected_rows . " id=" . $s->insert_id, "\n";
}
$s = $m->prepare("INSERT INTO t (v, big, name, d, at) VALUES (?, ?, ?, ?, ?)");
$v = 2.5; $big = "18446744073709551615"; $name = null; $d = "2024-01-02"; $at = "2024-01-02 03:04:05";
$s->bind_param("dsbss", $v, $big, $name, $d, $at);
$s->send_long_data(2, str_repeat("ab", 1000));
$s->send_long_data(2, "tail");
$s->execute(); out("long data", $s);
$v = 3.5; $big = 7; $d = "2024-01-03";
$s->send_long_data(2, "second");
$s->execute(); out("again", $s);
$v = -2.5; $big = null; $d = null; $at = null;
$s->execute(); out("nulls", $s);
$v = 1e10;
$s->execute(); out("out of range", $s);
$v = 1; $d = "2024-02-30";
$s->execute(); out("no date", $s);
$s->close();
$q = $m->prepare("SELECT id, v, big, name, d, at FROM t WHERE v >= ? ORDER BY id");
$x = -10.0;
$q->bind_param("d", $x);
$q->execute();
$q->bind_result($id, $vv, $bb, $nn, $dd, $aa);
while ($q->fetch()) {
    $n = $nn === null ? "NULL" : (strlen($nn) > 20 ? strlen($nn) . " bytes" : $nn);
    echo "row: $id | $vv | ", $bb === null ? "NULL" : $bb, " | $n | ", $dd ?? "NULL", " | ", $aa ?? "NULL", "\n";
}
$q = $m->prepare("SELECT id FROM t WHERE name = ? OR v = ? ORDER BY id");
$name = "second"; $v = -2;
$q->bind_param("si", $name, $v);
$q->execute();
$q->bind_result($id);
while ($q->fetch()) echo "match: $id\n";
echo "ok\n";
