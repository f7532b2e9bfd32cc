"""The live store on one host: a SQLite file in WAL mode that every worker of the host opens.

Each worker process opens one connection; the file is the shared record. Writes are short
transactions (`BEGIN IMMEDIATE`, ~0.2 ms), each taken under the writers' lock (`WriteLock`), for which a
worker waits in steps of microseconds and serves its other requests meanwhile: SQLite's own wait sleeps
1 ms and more with the whole worker stopped.
A worker is woken by the advances of the matches its streams watch, and by no others, with no
polling: it binds an abstract Unix datagram socket (`SqliteWakeups`), notes it in ``watchers_s1``
beside each match it watches, and the advance of that match (whichever worker makes it) reads
the match's watchers in its own transaction and sends each a datagram holding the match id.
"""
from __future__ import annotations

import contextlib
import math
import os
import secrets
import socket
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from api_gateway.os_threads import os_sleep, start_os_thread
from api_gateway.store.protocols import (
    ARCHIVED_TTL,
    DEADLINES,
    DEFAULT_TTL,
    END,
    FINISHED_TTL,
    RESYNC,
    TABLE_AFTER_END,
    Deal,
    Hosted,
    HostedMatch,
    MatchExpired,
    Receipt,
    StaleToken,
    StoreUnavailable,
    TableRow,
    split_lines,
)
from api_gateway.store.wal import write_ahead
from api_gateway.store.write_lock import WriteLock

__all__ = ["WRITE_LOCK", "SqliteStore", "SqliteWakeups"]

#: The writers' lock (`WriteLock`) beside the store's file: its path is the file's with this added.
WRITE_LOCK = "-writer"


def _checkpoints(store: weakref.ref[SqliteStore], path: str, pid: int) -> None:
    """A SQLite store's checkpointer, on an OS thread of its own in each process that writes: every
    `SqliteStore.CHECKPOINT_EVERY` seconds it copies the WAL's new pages into the file (a PASSIVE
    checkpoint: it waits for no reader or writer), on a connection of its own. Once the WAL holds more
    than `WAL_PAGES` pages, a TRUNCATE checkpoint waits (up to `TRUNCATE_WAIT`) for the readers of old
    pages to finish and starts the WAL again from nothing: under continuous stream reads a PASSIVE
    checkpoint never finds the moment to restart it, and the WAL grew to a gigabyte in minutes (issue 43).
    A TRUNCATE holds the file's write lock while it waits, so every writer waits with it: its wait is a
    tenth of a second, not the writers' whole budget (`busy_ms`), and a TRUNCATE that finds no moment is
    tried again at the next look. It takes the writers' own lock first (`WriteLock`), so they wait for it
    there, their workers serving meanwhile; it waits for none of them (taken, it is tried at the next
    look). Readers that begin once the WAL is all copied read the file alone, so only those begun before
    hold it up, and they end within milliseconds.

    SQLite's automatic checkpoint runs in the commit that fills the WAL to 1,000 pages, inside a
    request, with the fsyncs of synchronous=NORMAL: under gevent that stops the whole worker, and in a
    store of ~34,000 live matches (whose commits touch pages all over the file) it made the sealed
    apply's p99 at half load 7.2-13.8 ms, against 5.2-5.7 ms without it. Here the fsync waits on this
    thread, which holds no GIL meanwhile. The thread ends once the store is closed or gone, or in a
    forked child (which starts its own with its connection).

    A WAL that nobody wrote since the last look (its size and time of change the same) is not checkpointed
    again: an idle worker's checkpoints (their locks on the file, every half second) were a fifth of its
    CPU (docs/performance.md)."""
    try:
        conn = sqlite3.connect(path, timeout=SqliteStore.TRUNCATE_WAIT, isolation_level=None,
                               check_same_thread=False)
        writers = WriteLock(path + WRITE_LOCK)
    except (sqlite3.Error, OSError):
        return
    wal, seen = path + "-wal", None
    try:
        while True:
            os_sleep(SqliteStore.CHECKPOINT_EVERY)
            alive = store()
            if alive is None or alive._connection is None or alive._pid != pid:
                return
            del alive
            written = _written(wal)
            if written is not None and written == seen:
                continue
            seen = written  # before the checkpoint: a write during it is seen at the next look
            try:
                _busy, frames, _done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                if frames > SqliteStore.WAL_PAGES and writers.take():  # the writers wait on their own lock
                    try:
                        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
                    finally:
                        writers.release()
            except sqlite3.Error:
                pass  # tried again next time; the WAL only grows meanwhile
    finally:
        conn.close()
        writers.close()


def _written(wal: str) -> tuple[int, int] | None:
    """When the WAL file last changed and its size (None: not there)."""
    try:
        found = os.stat(wal)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


class SqliteStore:
    """A SQLite file in WAL mode: each worker process opens one connection; the file is the shared record.

    Writes are short transactions (`_write`: the writers' lock, then `BEGIN IMMEDIATE`);
    `busy_ms` bounds how long one waits for that lock, and SQLite's `busy_timeout` for
    SQLite's own, before the call is refused as `StoreUnavailable`. Expired records are swept
    now and then by whichever worker writes. One connection per process, used
    under a lock: the gateway's connections are greenlets (`api_gateway.worker`),
    and a connection per greenlet (threading.local under gevent) would open a
    file handle for every client connection.
    """

    SWEEP_EVERY = 1000
    #: Seconds after which a worker's next write sweeps, short of `SWEEP_EVERY` writes (`_sweep`).
    SWEEP_SECONDS = 10.0
    #: Seconds between two checkpoints of the WAL into the file (`_checkpoints`).
    CHECKPOINT_EVERY = 0.5
    #: Pages in the WAL past which the checkpointer truncates it (about 16 MB of 4 KiB pages).
    WAL_PAGES = 4000
    #: Seconds a TRUNCATE checkpoint waits for the write lock and for readers (writers wait meanwhile).
    TRUNCATE_WAIT = 0.1

    def __init__(self, path: str, ttl: int = DEFAULT_TTL, clock: Callable[[], float] = time.time,
                 busy_ms: int = 2000, table_idle: int | None = None) -> None:
        self.path = path
        self.ttl = ttl
        self.table_idle = ttl if table_idle is None else table_idle
        self._clock = clock
        self._busy_ms = busy_ms
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._writers: WriteLock | None = None
        self._pid = 0
        self._writes = 0
        self._swept = clock()
        #: Seconds between two pushes of a record's expiry by the calls that read it (`check`).
        self.touch = min(60.0, ttl / 10)
        self._wakeups: SqliteWakeups | None = None
        self._trips: Any = None
        self._courier: _Courier | None = None
        with self._lock:
            self._conn()  # creates the file and the table now: a bad path fails at start, naming it

    def _conn(self) -> sqlite3.Connection:
        """This process's connection (a forked child opens its own); the caller holds the lock."""
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        try:
            conn = sqlite3.connect(self.path, timeout=self._busy_ms / 1000, isolation_level=None,
                                   check_same_thread=False)
            write_ahead(conn, self._busy_ms)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_ms)}")
            conn.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run on `_checkpoints`' thread
            # The tables' names carry their schema (s1): gateways of two releases that share one file
            # during an upgrade, or a file left by an older release, keep their records apart instead
            # of failing each other's statements (an old file's other tables expire unread).
            conn.execute("CREATE TABLE IF NOT EXISTS versions_s1 "
                         "(match_id BLOB PRIMARY KEY, seq INTEGER NOT NULL, expires REAL NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE TABLE IF NOT EXISTS public_s1 "
                         "(match_id BLOB NOT NULL, n INTEGER NOT NULL, line BLOB NOT NULL, "
                         "PRIMARY KEY (match_id, n)) WITHOUT ROWID")
            # receipts_s2: each match's latest answer (~1.2 KB), rewritten in place by every advance. The rows of
            # receipts_s1 (WITHOUT ROWID) outgrew a page's local payload (~1 KB of 4 KB): each REPLACE freed one
            # overflow page and took another, ~3 pages a move to the WAL and ~13% of a sealed apply's gateway CPU
            # (docs/performance.md); a rowid table keeps a row whole on its leaf. receipts_s1 stays apart, unread.
            conn.execute("CREATE TABLE IF NOT EXISTS receipts_s2 "
                         "(match_id BLOB PRIMARY KEY, seq INTEGER NOT NULL, digest BLOB NOT NULL, "
                         "answer BLOB NOT NULL)")
            # hosted_s2: the tables' first cut kept no clocks; its table (s1) stays apart, unread.
            conn.execute("CREATE TABLE IF NOT EXISTS hosted_s2 (match_id BLOB PRIMARY KEY, table_id TEXT NOT NULL, "
                         "token TEXT NOT NULL, over INTEGER NOT NULL, viewers INTEGER NOT NULL, "
                         "clocks BLOB NOT NULL, deadline REAL) WITHOUT ROWID")
            conn.execute("CREATE INDEX IF NOT EXISTS hosted_s2_deadline ON hosted_s2 (deadline) "
                         "WHERE deadline IS NOT NULL")
            # events_s1: a hosted match's event log, one row per version holding every viewer's line of it
            # (newline-joined: each line is one line of JSON), in place of a row per viewer (lines_s1).
            conn.execute("CREATE TABLE IF NOT EXISTS events_s1 (match_id BLOB NOT NULL, seq INTEGER NOT NULL, "
                         "lines BLOB NOT NULL, PRIMARY KEY (match_id, seq)) WITHOUT ROWID")
            # watchers_s1: which worker's wake-up socket (`SqliteWakeups`) watches which match.
            conn.execute("CREATE TABLE IF NOT EXISTS watchers_s1 (match_id BLOB NOT NULL, worker TEXT NOT NULL, "
                         "PRIMARY KEY (match_id, worker)) WITHOUT ROWID")
            # tables_s2: tables_s1 and what the lobby, quick play and the filler are indexed by.
            conn.execute("CREATE TABLE IF NOT EXISTS tables_s2 (table_id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
                         "record BLOB NOT NULL, public INTEGER NOT NULL, variant TEXT NOT NULL, free INTEGER NOT NULL, "
                         "created REAL NOT NULL, expires REAL NOT NULL, players INTEGER NOT NULL, clock TEXT NOT NULL, "
                         "seek INTEGER NOT NULL, fill_at REAL) WITHOUT ROWID")
            conn.execute("CREATE INDEX IF NOT EXISTS tables_s2_lobby ON tables_s2 (created, table_id) "
                         "WHERE public = 1 AND free > 0")
            conn.execute("CREATE INDEX IF NOT EXISTS tables_s2_lobby_variant ON tables_s2 (variant, created, table_id) "
                         "WHERE public = 1 AND free > 0")
            conn.execute("CREATE INDEX IF NOT EXISTS tables_s2_seek ON tables_s2 (variant, players, clock, created) "
                         "WHERE seek = 1 AND free > 0")
            conn.execute("CREATE INDEX IF NOT EXISTS tables_s2_fill ON tables_s2 (fill_at) WHERE fill_at IS NOT NULL")
            # the sweep's deletes of expired tables read a range, not every table kept (correspondence: 14 days)
            conn.execute("CREATE INDEX IF NOT EXISTS tables_s2_expires ON tables_s2 (expires)")
            # inbox_s1: which players' inboxes list which tables (`TableRow.seated`), rewritten with the table's
            # record by `put_table` and swept with it.
            conn.execute("CREATE TABLE IF NOT EXISTS inbox_s1 (player TEXT NOT NULL, table_id TEXT NOT NULL, "
                         "written REAL NOT NULL, PRIMARY KEY (player, table_id)) WITHOUT ROWID")
            conn.execute("CREATE INDEX IF NOT EXISTS inbox_s1_table ON inbox_s1 (table_id)")
            conn.execute("CREATE TABLE IF NOT EXISTS leases_s1 (name TEXT PRIMARY KEY, holder BLOB NOT NULL, "
                         "expires REAL NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE TABLE IF NOT EXISTS presence_s1 (match_id BLOB NOT NULL, seat INTEGER NOT NULL, "
                         "until REAL NOT NULL, PRIMARY KEY (match_id, seat)) WITHOUT ROWID")
            # A worker's beat (until when it is alive) and its marks (a seat stream open in it): `beat`, `mark`.
            conn.execute("CREATE TABLE IF NOT EXISTS presence_workers_s1 (worker TEXT PRIMARY KEY, until REAL NOT NULL) "
                         "WITHOUT ROWID")
            conn.execute("CREATE TABLE IF NOT EXISTS presence_marks_s1 (match_id BLOB NOT NULL, seat INTEGER NOT NULL, "
                         "worker TEXT NOT NULL, PRIMARY KEY (match_id, seat, worker)) WITHOUT ROWID")
            conn.execute("CREATE INDEX IF NOT EXISTS presence_marks_s1_worker ON presence_marks_s1 (worker)")
            # The presence stamp: one row, moved by every change of presence (`Presence`); and the stamp of each
            # match's latest change (`changed_since`).
            conn.execute("CREATE TABLE IF NOT EXISTS presence_stamp_s1 (one INTEGER PRIMARY KEY CHECK (one = 0), "
                         "stamp INTEGER NOT NULL)")
            conn.execute("INSERT OR IGNORE INTO presence_stamp_s1 VALUES (0, 0)")
            conn.execute("CREATE TABLE IF NOT EXISTS presence_changed_s1 (match_id BLOB PRIMARY KEY, "
                         "stamp INTEGER NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE INDEX IF NOT EXISTS presence_changed_s1_stamp ON presence_changed_s1 (stamp)")
            conn.execute("CREATE TABLE IF NOT EXISTS counters_s1 (key TEXT PRIMARY KEY, count INTEGER NOT NULL, "
                         "ends REAL NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE TABLE IF NOT EXISTS tickets_s1 (ticket BLOB PRIMARY KEY, payload BLOB NOT NULL, "
                         "expires REAL NOT NULL) WITHOUT ROWID")
            # records_s1: a sealed match's log lines that left its state, one row per round ended (issue 27).
            conn.execute("CREATE TABLE IF NOT EXISTS records_s1 (match_id BLOB NOT NULL, seq INTEGER NOT NULL, "
                         "lines BLOB NOT NULL, PRIMARY KEY (match_id, seq)) WITHOUT ROWID")
            writers = WriteLock(self.path + WRITE_LOCK)
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailable(f"token store {self.path}: {exc}") from None
        self._connection, self._writers, self._pid = conn, writers, os.getpid()
        start_os_thread(_checkpoints, (weakref.ref(self), self.path, self._pid))
        return conn

    def _run(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        trips = self._trips
        if trips is None:  # the metric is made on first use: a process that never calls makes no metrics (the
            from api_gateway.metrics import (
                STORE_TRIPS,  # gunicorn master, whose imports precede its multiprocess mode)
            )

            trips = self._trips = STORE_TRIPS.labels("sqlite")
        trips.inc()
        with self._lock:
            try:
                return work(self._conn())
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"token store {self.path}: {exc}") from None

    def _write(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        """`work` in a write transaction, taken under the writers' lock (`WriteLock`: waited for within the
        budget, the worker's other greenlets running meanwhile), so that SQLite's own lock is free."""
        def transaction(c: sqlite3.Connection) -> Any:
            writers = self._writers
            assert writers is not None  # made with the connection
            if not writers.wait(self._busy_ms / 1000):
                raise StoreUnavailable(f"token store {self.path}: another process held the write lock "
                                       f"for {self._busy_ms} ms")
            try:
                with c:
                    c.execute("BEGIN IMMEDIATE")
                    return work(c)
            finally:
                writers.release()
        return self._run(transaction)

    def create(self, match_id: bytes, public: bytes = b"") -> None:
        expires = self._clock() + self.ttl

        def work(c: sqlite3.Connection) -> None:
            c.execute("INSERT INTO versions_s1 VALUES (?, 0, ?)", (match_id, expires))
            self._append(c, match_id, split_lines(public))
        self._write(work)
        self._sweep()

    @staticmethod
    def _append(c: sqlite3.Connection, match_id: bytes, lines: list[bytes]) -> None:
        if not lines:
            return
        row = c.execute("SELECT COALESCE(MAX(n) + 1, 0) FROM public_s1 WHERE match_id = ?", (match_id,)).fetchone()
        c.executemany("INSERT INTO public_s1 VALUES (?, ?, ?)",
                      [(match_id, row[0] + i, line) for i, line in enumerate(lines)])

    @staticmethod
    def _ended(c: sqlite3.Connection, match_id: bytes) -> bool:
        """Whether the match has ended: its public lines end with the end mark (every ending advance writes it)."""
        last = c.execute("SELECT line FROM public_s1 WHERE match_id = ? ORDER BY n DESC LIMIT 1",
                         (match_id,)).fetchone()
        return last is not None and bytes(last[0]) == END

    def public(self, match_id: bytes, start: int) -> tuple[list[bytes], bool]:
        def work(c: sqlite3.Connection) -> tuple[list[bytes], bool]:
            self._latest(c, match_id)
            rows = c.execute("SELECT line FROM public_s1 WHERE match_id = ? AND n >= ? ORDER BY n",
                             (match_id, start)).fetchall()
            lines = [bytes(r[0]) for r in rows]
            over = bool(lines) and lines[-1] == END
            if not over and start > 0:
                over = self._ended(c, match_id)
            return lines, over
        result: tuple[list[bytes], bool] = self._run(work)
        return result

    def _latest(self, c: sqlite3.Connection, match_id: bytes) -> int:
        row = c.execute("SELECT seq, expires FROM versions_s1 WHERE match_id = ?", (match_id,)).fetchone()
        if row is None or row[1] < self._clock():
            raise MatchExpired()
        seq: int = row[0]
        return seq

    def check(self, match_id: bytes, seq: int) -> bytes | None:
        """Every sealed call's first trip: one read when the token is the latest (the version, its expiry,
        and whether a table hosts the match), and a write only when the expiry is due a push.

        A record is kept alive by its calls, but its expiry moves only once `touch` seconds have passed
        since it last moved (a minute, or a tenth of a short TTL): a write transaction per call cost the
        sealed apply ~85 us of gateway CPU in `bench service` (the file's write lock taken, a WAL
        frame written), a read ~half that, and every change pushes the expiry in its own write anyway."""
        now = self._clock()

        def work(c: sqlite3.Connection) -> tuple[bytes | None, bool]:
            row = c.execute("SELECT seq, expires, (SELECT clocks FROM hosted_s2 WHERE match_id = ?) "
                            "FROM versions_s1 WHERE match_id = ?", (match_id, match_id)).fetchone()
            if row is None or row[1] < now:
                raise MatchExpired()
            if row[0] != seq:
                raise StaleToken(row[0], seq)
            # due a push, unless the match has ended: its ending set its lifetime (`kept`, `archived`), which a
            # look at the final view must not undo
            due = row[1] < now + self.ttl - self.touch and not self._ended(c, match_id)
            return None if row[2] is None else bytes(row[2]), due
        found: tuple[bytes | None, bool] = self._run(work)
        if found[1]:  # this version's only: an advance meanwhile pushed the expiry itself (or ended the match)
            self._write(lambda c: c.execute("UPDATE versions_s1 SET expires = ? WHERE match_id = ? AND seq = ?",
                                            (now + self.ttl, match_id, seq)))
        return found[0]

    def advance(self, match_id: bytes, seq: int, public: bytes = b"", over: bool = False,
                receipt: Receipt | None = None, hosted: Hosted | None = None, record: bytes = b"") -> bytes | None:
        lines = split_lines(public) + ([END] if over else [])
        now = self._clock()
        keep = self.kept(over, hosted.deadline if hosted is not None else None, now, hosted is not None)

        def work(c: sqlite3.Connection) -> bytes | None:
            done = c.execute("UPDATE versions_s1 SET seq = ?, expires = ? "
                             "WHERE match_id = ? AND seq = ? AND expires >= ?",
                             (seq + 1, now + keep, match_id, seq, now))
            if done.rowcount != 1:
                if receipt is not None:
                    stored = self._answered(c, match_id, seq, receipt.digest)
                    if stored is not None:
                        return stored
                raise StaleToken(self._latest(c, match_id), seq)
            self._append(c, match_id, lines)
            if receipt is not None:
                row = (seq, receipt.digest, receipt.answer, match_id)
                if c.execute("UPDATE receipts_s2 SET seq = ?, digest = ?, answer = ? WHERE match_id = ?",
                             row).rowcount == 0:
                    c.execute("INSERT INTO receipts_s2 (seq, digest, answer, match_id) VALUES (?, ?, ?, ?)", row)
            if hosted is not None:
                self._host(c, match_id, seq + 1, hosted, over)
                # the change that ends the match ends its table's life `TABLE_AFTER_END` later (a new deal
                # gives it back)
                c.execute("UPDATE tables_s2 SET expires = CASE WHEN ? THEN ? ELSE MAX(expires, ?) END "
                          "WHERE table_id = (SELECT table_id FROM hosted_s2 WHERE match_id = ?)",
                          (over, now + min(keep, TABLE_AFTER_END), now + keep, match_id))
            if record:
                c.execute("INSERT OR REPLACE INTO records_s1 VALUES (?, ?, ?)", (match_id, seq, record))
            watchers.extend(self._watchers(c, match_id))
            if hosted is not None and hosted.deadline is not None:
                keepers.extend(self._watchers(c, DEADLINES))
            return None
        watchers: list[str] = []
        keepers: list[str] = []
        stored: bytes | None = self._write(work)
        if watchers:
            self._wake(match_id, watchers)
        if keepers:
            self._wake(DEADLINES, keepers)
        self._sweep()
        return stored

    @staticmethod
    def _watchers(c: sqlite3.Connection, match_id: bytes) -> list[str]:
        return [r[0] for r in c.execute("SELECT worker FROM watchers_s1 WHERE match_id = ?", (match_id,))]

    def record_lines(self, match_id: bytes) -> list[str]:
        def work(c: sqlite3.Connection) -> list[str]:
            self._latest(c, match_id)
            rows = c.execute("SELECT lines FROM records_s1 WHERE match_id = ? ORDER BY seq", (match_id,)).fetchall()
            return [line for r in rows for line in bytes(r[0]).decode().split("\n")]
        found: list[str] = self._run(work)
        return found

    def _answered(self, c: sqlite3.Connection, match_id: bytes, seq: int, digest: bytes) -> bytes | None:
        row = c.execute("SELECT r.digest, r.answer FROM receipts_s2 r JOIN versions_s1 v USING (match_id) "
                        "WHERE r.match_id = ? AND r.seq = ? AND v.seq = ? AND v.expires >= ?",
                        (match_id, seq, seq + 1, self._clock())).fetchone()
        if row is None or bytes(row[0]) != digest:
            return None
        return bytes(row[1])

    def answered(self, match_id: bytes, seq: int, digest: bytes) -> bytes | None:
        stored: bytes | None = self._run(lambda c: self._answered(c, match_id, seq, digest))
        return stored

    @staticmethod
    def _host(c: sqlite3.Connection, match_id: bytes, seq: int, hosted: Hosted, over: bool,
              table_id: str | None = None) -> None:
        if table_id is not None:
            c.execute("INSERT INTO hosted_s2 VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (match_id, table_id, hosted.token, int(over), len(hosted.lines), hosted.clocks,
                       hosted.deadline))
        else:
            c.execute("UPDATE hosted_s2 SET token = ?, over = ?, clocks = ?, deadline = ? WHERE match_id = ?",
                      (hosted.token, int(over), hosted.clocks, hosted.deadline, match_id))
        c.execute("INSERT OR REPLACE INTO events_s1 VALUES (?, ?, ?)", (match_id, seq, b"\n".join(hosted.lines)))

    def hosted(self, match_id: bytes) -> HostedMatch:
        def work(c: sqlite3.Connection) -> HostedMatch:
            seq = self._latest(c, match_id)
            row = c.execute("SELECT table_id, token, over, viewers, clocks FROM hosted_s2 WHERE match_id = ?",
                            (match_id,)).fetchone()
            if row is None:
                raise MatchExpired()
            return HostedMatch(row[0], row[1], seq, bool(row[2]), row[3], bytes(row[4]))
        found: HostedMatch = self._run(work)
        return found

    def due(self, now: float, limit: int) -> list[bytes]:
        return self._by_deadline(False, now, limit)

    def _by_deadline(self, over: bool, now: float, limit: int) -> list[bytes]:
        """Hosted matches (over or not) whose deadline is <= `now`, earliest first: `due`, `unarchived`."""
        rows = self._run(lambda c: c.execute(
            "SELECT match_id FROM hosted_s2 WHERE deadline IS NOT NULL AND deadline <= ? AND over = ? "
            "ORDER BY deadline LIMIT ?", (now, int(over), limit)).fetchall())
        return [bytes(r[0]) for r in rows]

    def _next_deadline(self, over: bool) -> float | None:
        row = self._run(lambda c: c.execute("SELECT MIN(deadline) FROM hosted_s2 WHERE deadline IS NOT NULL AND over = ?",
                                            (int(over),)).fetchone())
        return None if row is None or row[0] is None else float(row[0])

    def next_due(self) -> float | None:
        return self._next_deadline(False)

    def next_unarchived(self) -> float | None:
        return self._next_deadline(True)

    def forget_due(self, match_id: bytes) -> None:
        self._write(lambda c: c.execute("DELETE FROM hosted_s2 WHERE match_id = ?", (match_id,)))

    def unarchived(self, now: float, limit: int) -> list[bytes]:
        return self._by_deadline(True, now, limit)

    def archived(self, match_id: bytes) -> None:
        def work(c: sqlite3.Connection) -> None:
            if c.execute("UPDATE hosted_s2 SET deadline = NULL WHERE match_id = ? AND over = 1",
                         (match_id,)).rowcount == 1:
                c.execute("UPDATE versions_s1 SET expires = MIN(expires, ?) WHERE match_id = ?",
                          (self._clock() + ARCHIVED_TTL, match_id))
        self._write(work)

    def lines(self, match_id: bytes, viewer: int, start: int) -> tuple[list[bytes], bool]:
        def work(c: sqlite3.Connection) -> tuple[list[bytes], bool]:
            self._latest(c, match_id)
            row = c.execute("SELECT over FROM hosted_s2 WHERE match_id = ?", (match_id,)).fetchone()
            if row is None:
                raise MatchExpired()
            rows = c.execute("SELECT lines FROM events_s1 WHERE match_id = ? AND seq >= ? ORDER BY seq",
                             (match_id, start)).fetchall()
            return [bytes(r[0]).split(b"\n")[viewer] for r in rows], bool(row[0])
        found: tuple[list[bytes], bool] = self._run(work)
        return found

    _TABLE_COLUMNS = "table_id, version, record, public, variant, free, created, players, clock, seek, fill_at"

    @staticmethod
    def _table_row(r: Any) -> TableRow:
        return TableRow(r[0], r[1], bytes(r[2]), bool(r[3]), r[4], r[5], r[6], r[7], r[8], bool(r[9]), r[10])

    def table(self, table_id: str) -> TableRow | None:
        row = self._run(lambda c: c.execute(
            f"SELECT {self._TABLE_COLUMNS} FROM tables_s2 WHERE table_id = ? AND expires >= ?",
            (table_id, self._clock())).fetchone())
        return None if row is None else self._table_row(row)

    def seated(self, match_id: bytes) -> tuple[HostedMatch, TableRow]:
        def work(c: sqlite3.Connection) -> tuple[HostedMatch, TableRow]:
            now = self._clock()
            row = c.execute("SELECT h.table_id, h.token, h.over, h.viewers, h.clocks, v.seq, v.expires "
                            "FROM hosted_s2 h JOIN versions_s1 v USING (match_id) WHERE match_id = ?",
                            (match_id,)).fetchone()
            if row is None or row[6] < now:
                raise MatchExpired()
            table = c.execute(f"SELECT {self._TABLE_COLUMNS} FROM tables_s2 WHERE table_id = ? AND expires >= ?",
                              (row[0], now)).fetchone()
            if table is None:
                raise MatchExpired()
            return HostedMatch(row[0], row[1], row[5], bool(row[2]), row[3], bytes(row[4])), self._table_row(table)
        found: tuple[HostedMatch, TableRow] = self._run(work)
        return found

    def put_table(self, row: TableRow, deal: Deal | None = None) -> bool:
        now = self._clock()

        def work(c: sqlite3.Connection) -> bool:
            found = c.execute("SELECT version, expires FROM tables_s2 WHERE table_id = ? AND expires >= ?",
                              (row.table_id, now)).fetchone()
            if (found[0] if found is not None else 0) != row.version - 1:
                return False
            keep = self.kept(False, deal.hosted.deadline if deal is not None else None, now, True)
            expires = max(now + keep, found[1] if found is not None else 0.0)  # never sooner than its match's
            c.execute("INSERT OR REPLACE INTO tables_s2 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (row.table_id, row.version, row.record, int(row.public), row.variant, row.free,
                       row.created, expires, row.players, row.clock, int(row.seek), row.fill_at))
            self._seat_players(c, row, found is not None, now)
            if deal is not None:
                c.execute("INSERT INTO versions_s1 VALUES (?, 0, ?)", (deal.match_id, now + keep))
                self._append(c, deal.match_id, split_lines(deal.public))
                self._host(c, deal.match_id, 0, deal.hosted, False, row.table_id)
            if row.fill_at is not None or (deal is not None and deal.hosted.deadline is not None):
                keepers.extend(self._watchers(c, DEADLINES))
            return True
        keepers: list[str] = []
        done: bool = self._write(work)
        if keepers:
            self._wake(DEADLINES, keepers)
        self._sweep()
        return done

    @staticmethod
    def _seat_players(c: sqlite3.Connection, row: TableRow, known: bool, now: float) -> None:
        """The inbox index of a table being written: its rows are the players of this write (`row.seated`);
        the statements run only for a table that has or had any."""
        if known:
            c.execute("DELETE FROM inbox_s1 WHERE table_id = ?", (row.table_id,))
        if row.seated:
            c.executemany("INSERT OR REPLACE INTO inbox_s1 VALUES (?, ?, ?)",
                          [(player, row.table_id, now) for player in row.seated])

    def inbox(self, player: str, limit: int) -> list[TableRow]:
        """The player's rows of the inbox index (its key's leading column), each with its live table."""
        columns = ", ".join(f"t.{c.strip()}" for c in self._TABLE_COLUMNS.split(","))
        rows = self._run(lambda c: c.execute(
            f"SELECT {columns} FROM inbox_s1 i JOIN tables_s2 t ON t.table_id = i.table_id "
            "WHERE i.player = ? AND t.expires >= ? ORDER BY i.written DESC, i.table_id DESC LIMIT ?",
            (player, self._clock(), limit)).fetchall())
        return [self._table_row(r) for r in rows]

    def lobby(self, variant: str | None, limit: int, before: tuple[float, str] | None) -> list[TableRow]:
        """One range of an index (`tables_s2_lobby`, or `tables_s2_lobby_variant` for one variant), newest
        first: the page costs its rows, not the tables the store holds."""
        query = f"SELECT {self._TABLE_COLUMNS} FROM tables_s2 WHERE public = 1 AND free > 0 AND expires >= ?"
        args: list[Any] = [self._clock()]
        if variant is not None:
            query += " AND variant = ?"
            args.append(variant)
        if before is not None:
            query += " AND (created < ? OR (created = ? AND table_id < ?))"
            args += [before[0], before[0], before[1]]
        query += " ORDER BY created DESC, table_id DESC LIMIT ?"
        args.append(limit)
        rows = self._run(lambda c: c.execute(query, args).fetchall())
        return [self._table_row(r) for r in rows]

    def seekable(self, variant: str, players: int, clock: str, limit: int) -> list[TableRow]:
        rows = self._run(lambda c: c.execute(
            f"SELECT {self._TABLE_COLUMNS} FROM tables_s2 WHERE seek = 1 AND free > 0 AND variant = ? AND players = ? "
            "AND clock = ? AND expires >= ? ORDER BY created LIMIT ?",
            (variant, players, clock, self._clock(), limit)).fetchall())
        return [self._table_row(r) for r in rows]

    def fillable(self, now: float, limit: int) -> list[TableRow]:
        rows = self._run(lambda c: c.execute(
            f"SELECT {self._TABLE_COLUMNS} FROM tables_s2 WHERE fill_at IS NOT NULL AND fill_at <= ? AND expires >= ? "
            "ORDER BY fill_at LIMIT ?", (now, self._clock(), limit)).fetchall())
        return [self._table_row(r) for r in rows]

    def next_fill(self) -> float | None:
        row = self._run(lambda c: c.execute("SELECT MIN(fill_at) FROM tables_s2 WHERE fill_at IS NOT NULL AND expires >= ?",
                                            (self._clock(),)).fetchone())
        return None if row is None or row[0] is None else float(row[0])

    # ------------------------------------------------------------ wake-ups (`Wakeups`)

    def wakeups(self) -> SqliteWakeups:
        """This process's wake-ups: one datagram socket per worker, made on first use (after the fork)."""
        if self._wakeups is None or self._wakeups.pid != os.getpid():
            self._wakeups = SqliteWakeups(self)
        return self._wakeups

    def _wake(self, match_id: bytes, watchers: list[str]) -> None:
        """Send the match id to each worker watching it (after the advance's commit), by this process's
        courier (`_Courier`: never waits, never drops a wake-up while its worker lives); forget the
        sockets of workers that are gone (refused: nobody bound to the address any more)."""
        if self._courier is None or self._courier.pid != os.getpid():
            self._courier = _Courier(self._forget_workers)
        self._courier.send(match_id, watchers)

    def _forget_workers(self, gone: list[str]) -> None:
        try:
            self._write(lambda c: c.executemany("DELETE FROM watchers_s1 WHERE worker = ?", [(w,) for w in gone]))
        except StoreUnavailable:
            pass  # swept with their matches

    def put_ticket(self, ticket: bytes, payload: bytes, ttl: int) -> None:
        self._write(lambda c: c.execute("INSERT OR REPLACE INTO tickets_s1 VALUES (?, ?, ?)",
                                        (ticket, payload, self._clock() + ttl)))
        self._sweep()

    def take_ticket(self, ticket: bytes) -> bytes | None:
        row = self._write(lambda c: c.execute("DELETE FROM tickets_s1 WHERE ticket = ? RETURNING payload, expires",
                                              (ticket,)).fetchone())
        if row is None or row[1] < self._clock():
            return None
        return bytes(row[0])

    def lease(self, name: str, holder: bytes, seconds: float) -> bool:
        now = self._clock()
        taken: bool = self._write(lambda c: c.execute(
            "INSERT INTO leases_s1 VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, "
            "expires = excluded.expires WHERE leases_s1.expires < ?", (name, holder, now + seconds, now)).rowcount == 1)
        return taken

    def release(self, name: str, holder: bytes) -> None:
        self._write(lambda c: c.execute("DELETE FROM leases_s1 WHERE name = ? AND holder = ?", (name, holder)))

    # ------------------------------------------------------------ presence (`Presence`)

    _STAMP = "UPDATE presence_stamp_s1 SET stamp = stamp + 1 RETURNING stamp"
    _CHANGED = ("INSERT INTO presence_changed_s1 VALUES (?, ?) ON CONFLICT (match_id) DO UPDATE SET "
                "stamp = excluded.stamp")

    def _changed(self, c: sqlite3.Connection, match_ids: set[bytes]) -> None:
        """A change of these matches' presence: the stamp moves, and is each one's latest."""
        stamp = c.execute(self._STAMP).fetchall()[0][0]
        c.executemany(self._CHANGED, [(m, stamp) for m in match_ids])

    _KEEP = ("INSERT INTO presence_s1 VALUES (?, ?, ?) ON CONFLICT (match_id, seat) DO UPDATE SET "
             "until = max(until, excluded.until)")

    def beat(self, worker: str, until: float) -> tuple[int, bool]:
        now = self._clock()

        def work(c: sqlite3.Connection) -> tuple[int, bool]:
            known = c.execute("UPDATE presence_workers_s1 SET until = ? WHERE worker = ?",
                              (until, worker)).rowcount == 1
            if not known:
                c.execute("INSERT INTO presence_workers_s1 VALUES (?, ?)", (worker, until))
            lapsed = c.execute("SELECT worker, until FROM presence_workers_s1 WHERE until <= ?", (now,)).fetchall()
            if lapsed:
                self._changed(c, {bytes(r[0]) for r in c.execute(
                    "SELECT DISTINCT match_id FROM presence_marks_s1 WHERE worker IN "
                    f"({','.join('?' * len(lapsed))})", [w for w, _ in lapsed])})
            for gone, last in lapsed:  # its marks count as here until its last beat's time, and no longer
                c.execute("INSERT INTO presence_s1 SELECT match_id, seat, ? FROM presence_marks_s1 WHERE worker = ? "
                          "ON CONFLICT (match_id, seat) DO UPDATE SET until = max(until, excluded.until)", (last, gone))
                c.execute("DELETE FROM presence_marks_s1 WHERE worker = ?", (gone,))
                c.execute("DELETE FROM presence_workers_s1 WHERE worker = ?", (gone,))
            stamp: int = c.execute("SELECT stamp FROM presence_stamp_s1").fetchone()[0]
            return stamp, known
        found: tuple[int, bool] = self._write(work)
        return found

    def mark(self, worker: str, opened: list[tuple[bytes, int]], closed: list[tuple[bytes, int, float]]) -> None:
        def work(c: sqlite3.Connection) -> None:
            c.executemany("INSERT OR IGNORE INTO presence_marks_s1 VALUES (?, ?, ?)",
                          [(match_id, seat, worker) for match_id, seat in opened])
            c.executemany("DELETE FROM presence_marks_s1 WHERE match_id = ? AND seat = ? AND worker = ?",
                          [(match_id, seat, worker) for match_id, seat, _ in closed])
            c.executemany(self._KEEP, closed)
            self._changed(c, {m for m, _ in opened} | {m for m, _, _ in closed})
        self._write(work)

    def seen(self, marks: dict[bytes, dict[int, float]]) -> None:
        rows = [(match_id, seat, t) for match_id, until in marks.items() for seat, t in until.items()]

        def work(c: sqlite3.Connection) -> None:
            c.executemany(self._KEEP, rows)
            self._changed(c, set(marks))
        self._write(work)

    def changed_since(self, stamp: int) -> tuple[int, list[bytes] | None]:
        def work(c: sqlite3.Connection) -> tuple[int, list[bytes]]:
            now: int = c.execute("SELECT stamp FROM presence_stamp_s1").fetchone()[0]
            return now, [bytes(r[0]) for r in c.execute("SELECT match_id FROM presence_changed_s1 WHERE stamp > ?",
                                                        (stamp,))]
        found: tuple[int, list[bytes]] = self._run(work)
        return found

    def presence(self, match_id: bytes) -> dict[int, float]:
        return self.presences([match_id]).get(match_id, {})

    #: Match ids per statement of `presences` (SQLite's bound parameters: 32,766 at most since 3.32).
    _IDS_PER_READ = 500

    def presences(self, match_ids: list[bytes]) -> dict[bytes, dict[int, float]]:
        """The kept times and the marks of the matches, each mark at its worker's beat (`math.inf` while the
        worker beats): one statement per 500 matches, under one hold of the connection."""
        now = self._clock()

        def work(c: sqlite3.Connection) -> list[tuple[bytes, int, float, int]]:
            rows: list[tuple[bytes, int, float, int]] = []
            for i in range(0, len(match_ids), self._IDS_PER_READ):
                ids = match_ids[i:i + self._IDS_PER_READ]
                marks = ",".join("?" * len(ids))
                rows += c.execute(
                    f"SELECT match_id, seat, until, 0 FROM presence_s1 WHERE match_id IN ({marks}) UNION ALL "
                    "SELECT m.match_id, m.seat, w.until, 1 FROM presence_marks_s1 m JOIN presence_workers_s1 w "
                    f"USING (worker) WHERE m.match_id IN ({marks})", ids + ids).fetchall()
            return rows
        found: dict[bytes, dict[int, float]] = {}
        for match_id, seat, until, marked in self._run(work) if match_ids else []:
            seats = found.setdefault(bytes(match_id), {})
            seats[int(seat)] = max(seats.get(int(seat), 0.0), _live(float(until), now) if marked else float(until))
        return found

    def hit(self, key: str, window: float, weight: int = 1) -> tuple[int, float]:
        now = self._clock()
        count, ends = self._write(lambda c: c.execute(
            "INSERT INTO counters_s1 VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
            "count = CASE WHEN counters_s1.ends <= ? THEN excluded.count ELSE counters_s1.count + excluded.count END, "
            "ends = CASE WHEN counters_s1.ends <= ? THEN excluded.ends ELSE counters_s1.ends END "
            "RETURNING count, ends", (key, weight, now + window, now, now)).fetchone())
        self._sweep()
        return int(count), max(0.0, float(ends) - now)

    def kept(self, over: bool, deadline: float | None = None, now: float = 0.0, table: bool = False) -> int:
        if over:
            return min(self.ttl, FINISHED_TTL)
        idle = self.table_idle if table else self.ttl
        return idle if deadline is None else max(idle, int(deadline - now) + self.ttl)

    def ping(self) -> None:
        self._run(lambda c: c.execute("SELECT 1").fetchone())

    def _sweep(self) -> None:
        """Every `SWEEP_EVERY` writes of this worker, or at its first write `SWEEP_SECONDS` after its last
        sweep, forget the matches whose version expired, with every row kept for them, in one transaction.

        The time bounds how long an expired match stays: by writes alone, a worker at a modest pace (a
        store soak at 36 moves/s on two workers) swept once a minute or less, and the finished matches the
        store held swung by a minute's worth, 207 to 297, with when the count was taken.

        The rows of a match are found by its id, the leading column of each table's key, so a sweep
        costs what it forgets, not what the store holds: it used to delete the rows whose match had no
        version row (`NOT IN`), a scan of every spectator line of every live match, ~70 ms with 3,000
        live matches, the whole worker (a C call under gevent) and the file's write lock held the
        while: the sealed apply's p99 at half load. Only `versions_s1` is scanned (a row per match),
        and at most `SWEEP_EVERY` matches go at once. A match's rows are written only while its
        version row exists (`create`, `advance`), and go with it here, so none is left behind."""
        self._writes += 1
        if self._writes % self.SWEEP_EVERY == 0 or self._clock() >= self._swept + self.SWEEP_SECONDS:
            def sweep(c: sqlite3.Connection) -> None:
                now = self._swept = self._clock()
                gone = c.execute("SELECT match_id FROM versions_s1 WHERE expires < ? LIMIT ?",
                                 (now, self.SWEEP_EVERY)).fetchall()
                for table in _PER_MATCH:
                    c.executemany(f"DELETE FROM {table} WHERE match_id = ?", gone)
                c.executemany("DELETE FROM versions_s1 WHERE match_id = ?", gone)
                c.execute("DELETE FROM inbox_s1 WHERE table_id IN (SELECT table_id FROM tables_s2 WHERE expires < ?)",
                          (now,))
                c.execute("DELETE FROM tables_s2 WHERE expires < ?", (now,))
                c.execute("DELETE FROM tickets_s1 WHERE expires < ?", (now,))
                c.execute("DELETE FROM counters_s1 WHERE ends < ?", (now,))
            self._write(sweep)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
                if self._writers is not None:
                    self._writers.close()
            self._connection = self._writers = None


#: The tables whose rows belong to one match (keyed by its id first): swept with its version row.
_PER_MATCH = ("public_s1", "receipts_s2", "hosted_s2", "events_s1", "records_s1", "watchers_s1", "presence_s1",
              "presence_marks_s1", "presence_changed_s1")


def _live(until: float, now: float) -> float:
    """A mark's time: `math.inf` while its worker beats (here as long as the mark stays), else its last beat's."""
    return math.inf if until > now else until




class _Courier:
    """This process's wake-ups on their way to the workers that watch (`SqliteStore._wake`).

    A send never waits: the datagram goes at once when the watcher's queue has room (the kernel's queue of a
    Unix datagram socket is short: `net.unix.max_dgram_qlen`, 10 on some hosts), else it stays pending, one
    set of match ids per worker, and this process's courier thread sends it again every `RETRY` seconds
    until it goes. A worker's wake-up is dropped only with the worker (its address refused: nobody reads
    it any more). A worker behind by more than `MOST` matches is sent one `RESYNC` instead (it rereads
    every match it watches). Before this, a full queue made the advance wait 0.2 s and then drop the
    wake-up: the streams of that match in that worker stayed behind until its next change (`domino bench
    capacity` found it, two workers of one host at a brisk pace)."""

    RETRY = 0.01
    MOST = 1000

    def __init__(self, forget: Callable[[list[str]], None]) -> None:
        self.pid = os.getpid()
        self._forget = forget
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._raw = getattr(self._socket, "_sock", self._socket)  # the OS socket: MSG_DONTWAIT says "full" at once
        self._pending: dict[str, set[bytes]] = {}
        self._lock = threading.Lock()
        self._due = threading.Event()
        self._thread: threading.Thread | None = None

    def send(self, match_id: bytes, workers: list[str]) -> None:
        with self._lock:
            for worker in workers:
                self._pending.setdefault(worker, set()).add(match_id)
        if self._flush() and (self._thread is None or not self._thread.is_alive()):
            self._thread = threading.Thread(target=self._retry, name="wake-courier", daemon=True)
            self._thread.start()
        self._due.set()

    def _flush(self) -> bool:
        """Send what is pending, as far as the watchers' queues take it; whether anything is left."""
        gone: list[str] = []
        with self._lock:
            for worker, ids in list(self._pending.items()):
                if len(ids) > self.MOST:
                    ids.clear()
                    ids.add(_RESYNC)
                while ids:
                    match_id = next(iter(ids))
                    try:
                        self._raw.sendto(match_id, socket.MSG_DONTWAIT, "\0" + worker)
                    except (BlockingIOError, InterruptedError):
                        break  # its queue is full: later
                    except (ConnectionRefusedError, FileNotFoundError):
                        gone.append(worker)
                        ids.clear()
                    except OSError:
                        break
                    else:
                        ids.discard(match_id)
                if not ids:
                    del self._pending[worker]
            left = bool(self._pending)
        if gone:
            self._forget(gone)
        return left

    def _retry(self) -> None:
        while True:
            self._due.wait()
            self._due.clear()
            while self._flush():
                time.sleep(self.RETRY)


#: The datagram that tells a worker it may have missed wake-ups: reread every match it watches.
_RESYNC = b"*"


class SqliteWakeups:
    """One worker's wake-ups on one host (`Wakeups`): an abstract Unix datagram socket (no file to clean
    up; the address is gone with the process), named in ``watchers_s1`` beside each match the worker
    watches, so that an advance of that match, in any worker, sends it the match id (`SqliteStore._wake`).
    Nothing is read from the file while nothing happens: `wait` sleeps in `recv`."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.pid = os.getpid()
        self.address = f"domino-wake-{self.pid}-{secrets.token_hex(8)}"
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        with contextlib.suppress(OSError):  # room for a burst of wake-ups while the worker is busy
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self._socket.bind("\0" + self.address)
        self._watched: dict[bytes, int] = {}
        self._stopping = False

    def watch(self, match_id: bytes) -> None:
        count = self._watched.get(match_id, 0)
        self._watched[match_id] = count + 1
        if count == 0:
            try:
                self._store._write(lambda c: c.execute("INSERT OR IGNORE INTO watchers_s1 VALUES (?, ?)",
                                                     (match_id, self.address)))
            except BaseException:
                self._watched.pop(match_id, None)
                raise

    def unwatch(self, match_id: bytes) -> None:
        count = self._watched.get(match_id, 0) - 1
        if count > 0:
            self._watched[match_id] = count
            return
        self._watched.pop(match_id, None)
        try:
            self._store._write(lambda c: c.execute("DELETE FROM watchers_s1 WHERE match_id = ? AND worker = ?",
                                                 (match_id, self.address)))
        except StoreUnavailable:
            pass  # an advance then finds a watcher that reads nothing more: harmless, swept with the match

    def wait(self) -> set[str]:
        woken: set[str] = set()
        while not woken and not self._stopping:
            data = self._socket.recv(64)
            while True:
                if data == _RESYNC:
                    woken.add(RESYNC)
                elif data:
                    woken.add(data.hex())
                try:  # the OS socket: gevent's would wait for the next datagram instead of saying none
                    data = getattr(self._socket, "_sock", self._socket).recv(64, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
        return woken

    def stop(self) -> None:
        self._stopping = True
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as poke:
                poke.sendto(b"", "\0" + self.address)
        except OSError:
            pass
