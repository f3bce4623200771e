#!/usr/bin/perl
# Perl DBI with DBD::MariaDB or DBD::mysql (argument): do() and
# last_insert_id, server-side prepared statements, ping, a wrong password.
use strict;
use warnings;
use DBI;

my $driver = shift or die "usage: dbd.pl MariaDB|mysql\n";
my $p = lc $driver;
unless (eval "require DBD::$driver; 1") {
    print "skip: DBD::$driver is not installed\n";
    exit 0;
}
my ($host, $port, $user, $pass, $db, $table) = @ENV{qw(TICKETD_HOST TICKETD_PORT TICKETD_USER TICKETD_PASSWORD TICKETD_DB TICKETD_TABLE)};
print "version: DBI $DBI::VERSION DBD::$driver ", "DBD::$driver"->VERSION, "\n";
my $dsn = "DBI:$driver:host=$host;port=$port";
my $dbh = DBI->connect($dsn, $user, $pass, { RaiseError => 1, PrintError => 0, AutoCommit => 1 });
$dbh->do("CREATE DATABASE IF NOT EXISTS $db");
$dbh->do("USE $db");
$dbh->do("CREATE TABLE IF NOT EXISTS $table (id bigint(20) unsigned NOT NULL auto_increment, "
    . "stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM");
my $prev = 0;
sub check {
    my ($what, $id, $lid) = @_;
    die "FAIL: $what: driver insert id $id, LAST_INSERT_ID() $lid\n" unless $id == $lid;
    die "FAIL: $what: id $id not above $prev\n" unless $id > $prev;
    $prev = $id;
}
for (1 .. 2) {
    $dbh->do("REPLACE INTO $table (stub) VALUES ('a')");
    my $id = $dbh->last_insert_id(undef, undef, $table, 'id');
    my ($lid) = $dbh->selectrow_array("SELECT LAST_INSERT_ID()");
    check("do", $id, $lid);
}
# Server-side prepared statements.
my $sp = $dbh->prepare("REPLACE INTO $table (stub) VALUES (?)", { "${p}_server_prepare" => 1 });
for (1 .. 2) {
    $sp->execute('a');
    my $id = $sp->{"${p}_insertid"};
    my ($lid) = $dbh->selectrow_array("SELECT LAST_INSERT_ID()");
    check("server prepare", $id, $lid);
}
my $sel = $dbh->prepare("SELECT id FROM $table WHERE stub = ?", { "${p}_server_prepare" => 1 });
$sel->execute('a');
my ($row) = $sel->fetchrow_array;
die "FAIL: row $row, want $prev\n" unless $row == $prev;
$sel->finish;
die "FAIL: ping\n" unless $dbh->ping;
$dbh->disconnect;
my $bad = DBI->connect($dsn, $user, 'wrong', { RaiseError => 0, PrintError => 0 });
die "FAIL: wrong password accepted\n" if $bad;
die "FAIL: wrong password: $DBI::err $DBI::errstr\n" unless $DBI::err == 1045;
print "ok\n";
