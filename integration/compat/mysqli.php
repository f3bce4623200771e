<?php
// PHP mysqli (mysqlnd): text queries, multi_query, server-side prepared
// statements, ping, change_user (COM_CHANGE_USER).
require __DIR__ . '/common.php';
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
echo "version: PHP " . PHP_VERSION . " mysqli " . mysqli_get_client_info() . "\n";
$m = new mysqli($host, $user, $pass, '', $port);
$m->query("CREATE DATABASE IF NOT EXISTS $db");
$m->select_db($db);
$m->query($ddl);
$prev = 0;
for ($i = 0; $i < 3; $i++) {
    $m->query("REPLACE INTO $table (stub) VALUES ('a')");
    $id = $m->insert_id;
    $r = $m->query("SELECT LAST_INSERT_ID()")->fetch_row()[0];
    check_id("query", $id, $r, $prev);
}
// multi_query: Flickr's ticket in one round trip (COM_SET_OPTION first).
$m->multi_query("REPLACE INTO $table (stub) VALUES ('a'); SELECT LAST_INSERT_ID()");
$firstId = $m->insert_id;
if (!$m->more_results() || !$m->next_result()) fail("multi_query: no second result");
$res = $m->store_result();
$r = $res->fetch_row()[0];
check_id("multi_query", $firstId, $r, $prev);
while ($m->more_results()) $m->next_result();
// Server-side prepared statement.
$st = $m->prepare("REPLACE INTO $table (stub) VALUES (?)");
$stub = 'b';
$st->bind_param('s', $stub);
for ($i = 0; $i < 2; $i++) {
    $st->execute();
    $r = $m->query("SELECT LAST_INSERT_ID()")->fetch_row()[0];
    check_id("prepared", $st->insert_id, $r, $prev);
}
$st->close();
$sel = $m->prepare("SELECT id FROM $table WHERE stub = ?");
$sel->bind_param('s', $stub);
$sel->execute();
$sel->bind_result($rowId);
$sel->fetch();
if ((int) $rowId !== $prev) fail("prepared SELECT: row holds $rowId, want $prev");
$sel->close();
if (!$m->ping()) fail("ping");
// change_user re-authenticates and resets the session.
if (!$m->change_user($user, $pass, $db)) fail("change_user");
$r = $m->query("SELECT LAST_INSERT_ID()")->fetch_row()[0];
if ((string) $r !== '0') fail("LAST_INSERT_ID() after change_user: $r");
try {
    $m->change_user($user, 'wrong', $db);
    fail("change_user with a wrong password succeeded");
} catch (mysqli_sql_exception $e) {
    if ($e->getCode() !== 1045) fail("change_user wrong password: " . $e->getCode() . " " . $e->getMessage());
}
// A wrong password at connect: 1045.
try {
    new mysqli($host, $user, 'wrong', $db, $port);
    fail("wrong password accepted");
} catch (mysqli_sql_exception $e) {
    if ($e->getCode() !== 1045) fail("wrong password: " . $e->getCode());
}
echo "ok\n";
