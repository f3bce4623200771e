<?php
// Shared by mysqli.php and pdo.php: the server from the environment and
// the checks every client makes.
$host = getenv('TICKETD_HOST');
$port = (int) getenv('TICKETD_PORT');
$user = getenv('TICKETD_USER');
$pass = getenv('TICKETD_PASSWORD');
$db = getenv('TICKETD_DB');
$table = getenv('TICKETD_TABLE');
$ddl = "CREATE TABLE IF NOT EXISTS $table (id bigint(20) unsigned NOT NULL auto_increment, " .
    "stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM";

function fail(string $msg): never
{
    fwrite(STDERR, "FAIL: $msg\n");
    exit(1);
}

// check that a driver's insert id matches LAST_INSERT_ID() and is above
// the previous id.
function check_id(string $what, $driverId, $lastInsertId, int &$prev): void
{
    if ((string) $driverId !== (string) $lastInsertId) {
        fail("$what: driver insert id $driverId, LAST_INSERT_ID() $lastInsertId");
    }
    if ((int) $driverId <= $prev) {
        fail("$what: id $driverId not above $prev");
    }
    $prev = (int) $driverId;
}
