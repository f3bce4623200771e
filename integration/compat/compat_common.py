"""Shared by the Python clients: the server from the environment and the
checks every client makes."""
import os
import sys

HOST = os.environ["TICKETD_HOST"]
PORT = int(os.environ["TICKETD_PORT"])
USER = os.environ["TICKETD_USER"]
PASSWORD = os.environ["TICKETD_PASSWORD"]
DB = os.environ["TICKETD_DB"]
TABLE = os.environ["TICKETD_TABLE"]
DDL = (f"CREATE TABLE IF NOT EXISTS {TABLE} (id bigint(20) unsigned NOT NULL auto_increment, "
       "stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM")


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


class Ids:
    """Checks that a driver's insert id equals LAST_INSERT_ID() and that
    ids strictly increase."""

    def __init__(self):
        self.prev = 0

    def check(self, what, driver_id, last_insert_id):
        if int(driver_id) != int(last_insert_id):
            fail(f"{what}: driver insert id {driver_id}, LAST_INSERT_ID() {last_insert_id}")
        if int(driver_id) <= self.prev:
            fail(f"{what}: id {driver_id} not above {self.prev}")
        self.prev = int(driver_id)
