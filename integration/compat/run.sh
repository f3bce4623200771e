#!/usr/bin/env bash
# make compat: real MySQL clients against a fresh ticketd.
#
#   integration/compat/run.sh path/to/ticketd
#
# Starts one ticketd (free ports, temporary data directory, a users file,
# a self-signed TLS certificate), runs one small script per client and
# prints one line per client: PASS, FAIL (with the script's output) or
# SKIP (an optional client whose runtime or driver is not installed, with
# what to install: node-mysql2 before npm ci). Exits non-zero
# if any client failed. Installs nothing: .ci/run installs the Debian
# packages and the npm modules (npm ci --prefix integration/compat/node).
#
# Every script gets the server in TICKETD_HOST, TICKETD_PORT, TICKETD_USER,
# TICKETD_PASSWORD, TICKETD_DB and a table name of its own in
# TICKETD_TABLE, and checks: its driver's last insert id equals
# SELECT LAST_INSERT_ID(), ids strictly increase, prepared statements
# where the driver has them, and the connect-time calls of its pools
# (ping, reset, change user).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$(realpath "${1:?usage: run.sh path/to/ticketd}")"
per_client_timeout="${COMPAT_TIMEOUT:-60}"

work="$(mktemp -d)"
pid=""
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# A self-signed certificate for the TLS checks.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
	-days 1 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1 || {
	echo "compat: openssl failed" >&2
	exit 1
}
# root keeps the fresh-install default (no password); the clients log in
# as a user with a password, so that every driver's auth is exercised.
printf '# make compat accounts\nroot:\ncompat:c0mpat pw:1\n' >"$work/users"
chmod 600 "$work/users"

export TICKETD_HOST=127.0.0.1 TICKETD_USER=compat TICKETD_PASSWORD='c0mpat pw:1' TICKETD_DB=compat
export TICKETD_TLS_CA="$work/cert.pem"
for attempt in 1 2 3; do
	TICKETD_PORT="$(free_port)"
	http="$(free_port)"
	raft="$(free_port)"
	"$bin" --data-dir "$work/data" --mysql-addr "127.0.0.1:$TICKETD_PORT" --http-addr "127.0.0.1:$http" \
		--raft-addr "127.0.0.1:$raft" --users-file "$work/users" \
		--tls-cert "$work/cert.pem" --tls-key "$work/key.pem" >"$work/ticketd.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		if curl -fsS "http://127.0.0.1:$http/readyz" >/dev/null 2>&1; then
			break 2
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=""
	rm -rf "$work/data"
done
if [ -z "$pid" ]; then
	echo "compat: ticketd did not start" >&2
	cat "$work/ticketd.log" >&2
	exit 1
fi
export TICKETD_PORT

# Debian's Python modules are for Debian's Python, whatever python3 is
# first on PATH.
py=/usr/bin/python3

# name | required (1) or optional (0) | runtime that must exist | command
clients=(
	"mariadb-cli|1|mariadb|bash $here/mariadb.sh"
	"php-mysqli|1|php|php $here/mysqli.php"
	"php-pdo_mysql|1|php|php $here/pdo.php"
	"python-pymysql|1|$py|$py $here/pymysql_client.py"
	"python-mysqlclient|1|$py|$py $here/mysqlclient_client.py"
	"go-sql-driver/mysql|1|go|$here/goclients.bin go-sql-driver"
	"go-mysql-org/go-mysql client|1|go|$here/goclients.bin go-mysql"
	"python-sqlalchemy+pymysql|0|$py|$py $here/sqlalchemy_client.py"
	"perl-DBD::MariaDB|0|perl|perl $here/dbd.pl MariaDB"
	"perl-DBD::mysql|0|perl|perl $here/dbd.pl mysql"
	"node-mysql2|0|node|node $here/node/mysql2.js"
	"ruby-mysql2|0|ruby|ruby $here/mysql2.rb"
	"java-mariadb-connector-j|0|java|java -cp /usr/share/java/mariadb-java-client.jar $here/Compat.java"
	"java-connector-j typed params|0|java|bash $here/typedparams.sh"
	"java-connector-j snowflake leases|0|java|java -cp /usr/share/java/mariadb-java-client.jar $here/Snowflake.java"
)

# The Go clients are one program, built once.
if command -v go >/dev/null 2>&1; then
	(cd "$here/../.." && go build -o "$here/goclients.bin" ./integration/compat/goclients) || echo "compat: building the Go clients failed" >&2
fi

failed=0
passed=0
skipped=0
n=0
for c in "${clients[@]}"; do
	IFS='|' read -r name required runtime cmd <<<"$c"
	n=$((n + 1))
	export TICKETD_TABLE="t$n"
	if ! command -v "$runtime" >/dev/null 2>&1; then
		if [ "$required" = 1 ]; then
			printf 'FAIL  %-30s %s is not installed\n' "$name" "$runtime"
			failed=$((failed + 1))
		else
			printf 'SKIP  %-30s %s is not installed\n' "$name" "$runtime"
			skipped=$((skipped + 1))
		fi
		continue
	fi
	start=$(date +%s%N)
	out="$(timeout "$per_client_timeout" $cmd 2>&1)"
	rc=$?
	tenths=$((($(date +%s%N) - start) / 100000000))
	secs="$((tenths / 10)).$((tenths % 10))"
	version="$(printf '%s\n' "$out" | sed -n 's/^version: //p' | head -1)"
	if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^ok$'; then
		printf 'PASS  %-30s %-40s %ss\n' "$name" "$version" "$secs"
		passed=$((passed + 1))
	elif [ "$required" = 0 ] && printf '%s\n' "$out" | grep -q '^skip: '; then
		printf 'SKIP  %-30s %s\n' "$name" "$(printf '%s\n' "$out" | sed -n 's/^skip: //p' | head -1)"
		skipped=$((skipped + 1))
	else
		printf 'FAIL  %-30s %-40s exit %s\n' "$name" "$version" "$rc"
		printf '%s\n' "$out" | tail -20 | sed 's/^/      | /'
		failed=$((failed + 1))
	fi
done
rm -f "$here/goclients.bin"
if ! kill -0 "$pid" 2>/dev/null; then
	echo "compat: ticketd died during the run" >&2
	tail -20 "$work/ticketd.log" >&2
	failed=$((failed + 1))
fi
if grep -q 'c0mpat pw' "$work/ticketd.log"; then
	echo "compat: a password appears in ticketd's log" >&2
	failed=$((failed + 1))
fi
echo "compat: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
