"""A SQLite file in write-ahead-log mode, however many processes open it at once.

Every worker of a host opens the live store, the webhook outbox and the archive as it boots. Switching a file
to WAL takes a lock that SQLite does not wait for with its busy handler: two connections switching one fresh
file at the same moment, one of them gets "database is locked" at once (seen on the outbox: a worker failed to
boot). So the switch is tried again until the busy timeout has passed.
"""

from __future__ import annotations

import sqlite3
import time

#: Seconds between two tries of the switch.
RETRY = 0.005


def write_ahead(conn: sqlite3.Connection, busy_ms: float) -> None:
    """Put `conn`'s file in WAL mode, waiting out (up to `busy_ms`) another connection doing the same."""
    deadline = time.monotonic() + busy_ms / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(RETRY)
