"""mysqlclient (MySQLdb, on MariaDB Connector/C): multi-statements (on by
default), lastrowid and insert_id(), ping, change_user, TLS."""
import MySQLdb

from compat_common import DB, DDL, HOST, PASSWORD, PORT, TABLE, USER, Ids, fail

print("version: mysqlclient", ".".join(map(str, MySQLdb.version_info[:3])), "libmariadb", MySQLdb.get_client_info())
# mysqlclient turns on multi-statements only for a client library version
# >= 4.1, and Debian's libmariadb reports 3.x: ask for them.
from MySQLdb.constants import CLIENT

conn = MySQLdb.connect(host=HOST, port=PORT, user=USER, passwd=PASSWORD,
                       client_flag=CLIENT.MULTI_STATEMENTS | CLIENT.MULTI_RESULTS)
cur = conn.cursor()
cur.execute(f"CREATE DATABASE IF NOT EXISTS {DB}")
conn.select_db(DB)
cur.execute(DDL)
ids = Ids()
for _ in range(3):
    cur.execute(f"REPLACE INTO {TABLE} (stub) VALUES (%s)", ("a",))
    rowid = cur.lastrowid
    cur.execute("SELECT LAST_INSERT_ID()")
    ids.check("execute", rowid, cur.fetchone()[0])
# Flickr's ticket in one query: two results.
cur.execute(f"REPLACE INTO {TABLE} (stub) VALUES ('a'); SELECT LAST_INSERT_ID()")
first = conn.insert_id()
if not cur.nextset():
    fail("multi-statement: no second result")
ids.check("multi-statement", first, cur.fetchone()[0])
while cur.nextset():
    pass
conn.ping()
if hasattr(conn, "change_user"):
    conn.change_user(USER, PASSWORD, DB)
    cur = conn.cursor()
    cur.execute("SELECT LAST_INSERT_ID(), DATABASE()")
    if cur.fetchone() != (0, DB):
        fail("session after change_user")
conn.close()
tls = MySQLdb.connect(host=HOST, port=PORT, user=USER, passwd=PASSWORD, db=DB,
                      ssl={"ca": __import__("os").environ["TICKETD_TLS_CA"]})
c = tls.cursor()
c.execute("SHOW SESSION STATUS LIKE 'Ssl_version'")
c.execute(f"REPLACE INTO {TABLE} (stub) VALUES ('a')")
rowid = c.lastrowid
c.execute("SELECT LAST_INSERT_ID()")
ids.check("TLS", rowid, c.fetchone()[0])
tls.close()
try:
    MySQLdb.connect(host=HOST, port=PORT, user=USER, passwd="wrong")
    fail("wrong password accepted")
except MySQLdb.OperationalError as e:
    if e.args[0] != 1045:
        fail(f"wrong password: {e}")
print("ok")
