"""SQLAlchemy's reflection (sqlalchemy.inspect(engine): get_table_names,
get_columns, get_pk_constraint, get_indexes, get_unique_constraints) of
the schemes' tables: Flickr's Tickets64, Leaf's leaf_alloc, Tinyid's
tiny_id_info, UidGenerator's WORKER_NODE and a sequence, which the
script creates in database $TICKETD_DB (dropped first).

It prints one line per table and question. integration's
TestSQLAlchemyReflection runs it with Debian's python3-sqlalchemy and
python3-pymysql against MariaDB 10.11 and against ticketd and requires
the same lines. Run: /usr/bin/python3 Reflect.py, the CREATE statements
on stdin, one a line (the test passes integration/schemes' DDL).
"""
import os
import sys

import sqlalchemy
import sqlalchemy.exc
from sqlalchemy import create_engine, inspect, text

host, port = os.environ["TICKETD_HOST"], os.environ["TICKETD_PORT"]
db = os.environ["TICKETD_DB"]
base = f"mysql+pymysql://{os.environ.get('TICKETD_USER', 'root')}:{os.environ.get('TICKETD_PASSWORD', '')}@{host}:{port}/"
with create_engine(base).begin() as c:
    c.execute(text(f"DROP DATABASE IF EXISTS {db}"))
    c.execute(text(f"CREATE DATABASE {db} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"))
engine = create_engine(base + db)
with engine.begin() as c:
    for stmt in sys.stdin.read().split("\n"):
        if stmt.strip():
            c.execute(text(stmt))

print("version: SQLAlchemy", sqlalchemy.__version__)
insp = inspect(engine)
tables = sorted(insp.get_table_names())
print("tables:", tables)


def col(c):
    keep = {k: c[k] for k in ("name", "nullable", "default", "autoincrement", "comment") if k in c}
    return f"{c['type']!r} {keep}"


for t in tables + ["s", "nope"]:
    try:
        cols = insp.get_columns(t)
    except sqlalchemy.exc.NoSuchTableError:
        print(t, "columns: no such table")
        continue
    for c in cols:
        print(t, "column:", col(c))
    print(t, "pk:", insp.get_pk_constraint(t))
    print(t, "indexes:", sorted(insp.get_indexes(t), key=lambda i: i["name"]))
    print(t, "unique:", sorted(insp.get_unique_constraints(t), key=lambda i: i["name"]))
    print(t, "has_table:", insp.has_table(t))
print("has_table nope:", insp.has_table("nope"))
engine.dispose()
