"""PyMySQL: cursor.lastrowid and insert_id(), parameters, autocommit as
announced by the server, ping, select_db, a wrong password."""
import pymysql

from compat_common import DB, DDL, HOST, PASSWORD, PORT, TABLE, USER, Ids, fail

print("version: PyMySQL", pymysql.__version__)
conn = pymysql.connect(host=HOST, port=PORT, user=USER, password=PASSWORD)
# PyMySQL turns autocommit off at connect (its default); the server's
# status flags must follow.
if conn.get_autocommit():
    fail("autocommit still on after PyMySQL's SET AUTOCOMMIT = 0")
conn.autocommit(True)
if not conn.get_autocommit():
    fail("autocommit off after SET AUTOCOMMIT = 1")
cur = conn.cursor()
cur.execute(f"CREATE DATABASE IF NOT EXISTS {DB}")
conn.select_db(DB)
cur.execute(DDL)
ids = Ids()
for stub in ("a", "a", "b"):
    cur.execute(f"REPLACE INTO {TABLE} (stub) VALUES (%s)", (stub,))
    rowid, insert_id = cur.lastrowid, conn.insert_id()
    cur.execute("SELECT LAST_INSERT_ID()")
    (lid,) = cur.fetchone()
    ids.check("execute", rowid, lid)
    ids.prev -= 1
    ids.check("insert_id()", insert_id, lid)
cur.executemany(f"REPLACE INTO {TABLE} (stub) VALUES (%s)", [("c",), ("d",)])
cur.execute("SELECT id FROM %s WHERE stub = %%s" % TABLE, ("b",))
if cur.fetchone()[0] >= ids.prev + 3:
    fail("row b")
conn.ping(reconnect=False)
cur.execute("SELECT @@session.transaction_read_only, @@max_allowed_packet, VERSION(), DATABASE()")
ro, maxp, ver, db = cur.fetchone()
if int(ro) != 0 or int(maxp) <= 0 or db != DB:
    fail(f"connect-time variables: {ro} {maxp} {ver} {db}")
conn.close()
try:
    pymysql.connect(host=HOST, port=PORT, user=USER, password="wrong")
    fail("wrong password accepted")
except pymysql.err.OperationalError as e:
    if e.args[0] != 1045:
        fail(f"wrong password: {e}")
print("ok")
