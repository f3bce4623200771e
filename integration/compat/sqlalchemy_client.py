"""SQLAlchemy (PyMySQL dialect): the dialect's connect-time introspection,
pool_pre_ping, result.lastrowid, a pooled connection reused (rollback on
return)."""
try:
    import sqlalchemy
    from sqlalchemy import create_engine, text
except ImportError:
    print("skip: SQLAlchemy not installed")
    raise SystemExit(0)
from urllib.parse import quote

from compat_common import DB, DDL, HOST, PASSWORD, PORT, TABLE, USER, Ids, fail

print("version: SQLAlchemy", sqlalchemy.__version__)
url = f"mysql+pymysql://{USER}:{quote(PASSWORD, safe='')}@{HOST}:{PORT}/"
with create_engine(url).begin() as c:
    c.execute(text(f"CREATE DATABASE IF NOT EXISTS {DB}"))
engine = create_engine(url + DB, pool_pre_ping=True, pool_size=1, max_overflow=0)
ids = Ids()
with engine.begin() as c:
    c.execute(text(DDL))
for _ in range(3):
    with engine.begin() as c:
        r = c.execute(text(f"REPLACE INTO {TABLE} (stub) VALUES (:s)"), {"s": "a"})
        lid = c.execute(text("SELECT LAST_INSERT_ID()")).scalar()
        ids.check("engine", r.lastrowid, lid)
with engine.connect() as c:
    row = c.execute(text(f"SELECT id FROM {TABLE} WHERE stub = :s"), {"s": "a"}).one()
    if row.id != ids.prev:
        fail(f"row {row}")
    if engine.dialect.server_version_info is None:
        fail("no server version")
engine.dispose()
print("ok")
