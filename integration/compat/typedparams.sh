#!/usr/bin/env bash
# MariaDB Connector/J with useServerPrepStmts=true, a binary parameter of
# each type (TypedParams.java): ticketd's output must be MariaDB 10.11's,
# typedparams.expected (written by TICKETD_TYPEDPARAMS_EXPECTED=1 go test
# ./integration -run TestConnectorJParams).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(java -cp /usr/share/java/mariadb-java-client.jar "$here/TypedParams.java" 2>&1)"
rc=$?
printf '%s\n' "$out" | grep '^version: '
if [ $rc -ne 0 ]; then
	printf '%s\n' "$out"
	exit 1
fi
if ! diff <(printf '%s\n' "$out" | grep -v '^version: ') "$here/typedparams.expected"; then
	echo "differs from MariaDB's output (< ticketd, > MariaDB)"
	exit 1
fi
echo ok
