#!/usr/bin/env bash
# mariadb CLI (and mysqladmin): multi-statements, both auth plugins, TLS,
# COM_STATISTICS and COM_PING.
set -euo pipefail
echo "version: $(mariadb --version | sed 's/,.*//')"
export MYSQL_PWD="$TICKETD_PASSWORD" # keeps the password off the command line
m() { mariadb -h"$TICKETD_HOST" -P"$TICKETD_PORT" -u"$TICKETD_USER" --batch --skip-column-names "$@"; }
t="$TICKETD_DB.$TICKETD_TABLE"
m -e "CREATE DATABASE IF NOT EXISTS $TICKETD_DB"
m -e "CREATE TABLE IF NOT EXISTS $t (id bigint(20) unsigned NOT NULL auto_increment, stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM"
# The CLI's connect-time query, then Flickr's multi-statement ticket.
[ "$(m -e 'select @@version_comment limit 1')" = ticketd ]
prev=0
for plugin in caching_sha2_password mysql_native_password; do
	for _ in 1 2 3; do
		id="$(m --default-auth=$plugin "$TICKETD_DB" -e "REPLACE INTO $TICKETD_TABLE (stub) VALUES ('a'); SELECT LAST_INSERT_ID();")"
		[ "$id" -gt "$prev" ] || { echo "id $id not above $prev"; exit 1; }
		prev=$id
	done
done
# Within one session: LAST_INSERT_ID() and the row agree.
ids="$(m "$TICKETD_DB" -e "REPLACE INTO $TICKETD_TABLE (stub) VALUES ('a'); SELECT LAST_INSERT_ID(); SELECT id FROM $TICKETD_TABLE WHERE stub = 'a'" | tr '\n' ' ')"
set -- $ids
[ "$1" = "$2" ] && [ "$1" -gt "$prev" ] || { echo "LAST_INSERT_ID() $1, row $2, previous $prev"; exit 1; }
# Wrong password: 1045.
err="$(mktemp)"
if MYSQL_PWD=wrong m -e 'select 1' 2>"$err"; then echo "wrong password accepted"; exit 1; fi
grep -q "ERROR 1045" "$err" || { cat "$err"; exit 1; }
rm -f "$err"
# TLS, verifying the server's certificate.
cipher="$(m --ssl --ssl-ca="$TICKETD_TLS_CA" --ssl-verify-server-cert -e 'select @@have_ssl')"
[ "$cipher" = YES ]
# mysqladmin: COM_PING and COM_STATISTICS.
a() { mariadb-admin -h"$TICKETD_HOST" -P"$TICKETD_PORT" -u"$TICKETD_USER" "$@"; }
a ping | grep -q 'is alive'
a status | grep -q '^Uptime: '
echo ok
