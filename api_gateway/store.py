"""The version record of every live sealed match: which token is the latest (docs/security.md).

A sealed token names its match and its version (`Sealed.match_id`, `Sealed.seq`).
Without a record of the latest version, a seat could keep an old token and play
on from it: fork the match, replay draws to read the boneyard, then go on with
its real token leaving no trace. The store keeps ``match id -> latest seq`` and
the gateway accepts a token only when it is the latest:

- a call that only reads (view, legal actions) `check`s the version;
- a call that changes the match `advance`s it from the token's version to the
  next with compare-and-set, after the engine answered (the engine is pure, so
  an answer whose advance fails is simply dropped): of two calls racing with the
  same token, exactly one wins and the other is refused as stale.

Two stores behind this one interface:

- `SqliteStore`, the embedded default: a SQLite file in WAL mode that every
  gunicorn worker of one host opens (``sqlite:///path``); no server needed.
- `RedisStore`, for a cluster (``redis://host:6379/0``): one Redis that every
  gateway replica shares; compare-and-set is a Lua script, so it is atomic.

Next to each version record the store keeps the match's public lines for its
spectators (`GET /v1/matches/{id}/spectate`, docs/records.md): what the engine
says a spectator may see of each call that changed the match (`JsonAnswer.public`,
NDJSON, carried unread), appended in the same write as the advance, and an ``end``
mark once the match is over. They expire with the version record.

With each advance the store also keeps a receipt of the call that made it, in the
same atomic step: the version it advanced from, a digest of the request and the
answer the gateway sent (`Receipt`). Only the latest advance's receipt is kept. A
503 leaves the outcome of an advance unknown (Redis paused, SQLite locked: the
compare-and-set may still run): the client retries the same request with the same
token, and `answered` (or `advance` itself, when the retry races the late write)
gives it the winner's answer instead of a stale-token refusal (docs/rest.md).

A record lives as long as the match is used: each call pushes its expiry `ttl`
seconds ahead, and a token of a match idle longer is refused as expired. When
the store cannot be reached the call is refused with `StoreUnavailable` (503):
never accepted unchecked.
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

__all__ = ["DEFAULT_TTL", "END", "Deal", "Hosted", "HostedMatch", "MatchExpired", "Receipt", "TableRow", "RedisStore", "SqliteStore", "StaleToken", "StoreUnavailable",
           "VersionStore", "check_store", "default_url", "open_store"]

try:  # an OS thread and its sleep even under gevent's monkey patching (the gateway's workers)
    from gevent.monkey import get_original

    _start_os_thread: Callable[..., Any] = get_original("_thread", "start_new_thread")
    _os_sleep: Callable[[float], None] = get_original("time", "sleep")
except ImportError:  # pragma: no cover - gevent is a dependency of the gateway
    import _thread

    _start_os_thread, _os_sleep = _thread.start_new_thread, time.sleep

#: Seconds a match may stay idle before its record (and so its tokens) expire: a day.
DEFAULT_TTL = 24 * 3600


class StaleToken(Exception):
    """The token is not the match's latest: an old one kept, or the loser of a race."""

    def __init__(self, latest: int, given: int) -> None:
        super().__init__(f"token: version {given} of this match, but version {latest} is the latest "
                         "(use the token of the latest answer; an old token cannot be played again)")
        self.latest = latest
        self.given = given


class MatchExpired(Exception):
    """The store holds no record of the match: idle for longer than the store keeps records."""


class StoreUnavailable(Exception):
    """The version store cannot be reached or refused the operation; the call is refused, not let through."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """What a call that advanced a match leaves behind: a digest of its request and the answer sent for it.

    A retry of the same request (same token, seat key and arguments: same digest) after an
    unknown outcome is answered `answer` again; any other request with that token stays stale."""

    digest: bytes
    answer: bytes


@dataclass(frozen=True, slots=True)
class Hosted:
    """What the store keeps of a match an online table hosts (docs/tables.md), written with each version:
    its latest token (credentials alone reach the match) and one line per viewer for that version
    (`lines[i]`: seat i's update, the last one the public's, for the host and spectators)."""

    token: str
    lines: list[bytes]
    #: The table's turn clocks after this version (`clocks.Clocks.dump`, JSON; empty: no clock), and
    #: when the running one runs out (unix seconds; None: none runs): kept in the same write, so the
    #: clocks any gateway finds due (`due`) are always this version's. In the write that ends the match
    #: (`over`) no clock runs and `deadline` is when a gateway should archive it if the one that made the
    #: last move has not confirmed it archived by then (`unarchived`, `archived`).
    clocks: bytes = b""
    deadline: float | None = None


@dataclass(frozen=True, slots=True)
class HostedMatch:
    """A hosted match as the store has it: its table, latest token and version, whether it is over."""

    table_id: str
    token: str
    seq: int
    over: bool
    viewers: int
    clocks: bytes = b""


@dataclass(frozen=True, slots=True)
class Deal:
    """A new hosted match, created in the same atomic write as its table's record (`put_table`)."""

    match_id: bytes
    public: bytes
    hosted: Hosted


@dataclass(frozen=True, slots=True)
class TableRow:
    """An online table's record (JSON, the service's own: `api_gateway.tables`) and what the lobby sorts by."""

    table_id: str
    version: int
    record: bytes
    public: bool = False
    variant: str = ""
    free: int = 0
    created: float = 0.0


class VersionStore(Protocol):
    """``match id -> latest version``, shared by every worker and replica that serves the same keys."""

    ttl: int

    def create(self, match_id: bytes, public: bytes = b"") -> None:
        """A new match at version 0, its first public lines `public` (NDJSON)."""

    def check(self, match_id: bytes, seq: int) -> bool:
        """Raise `StaleToken` unless `seq` is the latest (`MatchExpired` if unknown); keeps the record alive.
        True when a table hosts the match (its advances must carry `Hosted` lines)."""

    def advance(self, match_id: bytes, seq: int, public: bytes = b"", over: bool = False,
                receipt: Receipt | None = None, hosted: Hosted | None = None, record: bytes = b"") -> bytes | None:
        """Compare-and-set `seq` -> `seq + 1`; `StaleToken` if `seq` is not the latest (`MatchExpired` if unknown).
        With it, append `public` (NDJSON lines) to the match's public lines, and the end mark when `over`,
        and keep `receipt` as the match's latest. None when advanced; when the same request (the
        receipt's digest) already advanced from `seq`, the answer stored then, and nothing is changed.
        A hosted match's advance keeps `hosted`'s token and appends its lines, in the same write; so is
        `record` appended (the log lines that left the state with a round that ended: `record_lines`)."""

    def record_lines(self, match_id: bytes) -> list[str]:
        """The log lines that left a sealed match's state, in order (ExportRecord's `prior`, docs/records.md);
        `MatchExpired` if the store holds no record of it."""

    def answered(self, match_id: bytes, seq: int, digest: bytes) -> bytes | None:
        """The answer stored when the request `digest` advanced the match from `seq`, if that was its
        latest advance; else None."""

    def public(self, match_id: bytes, start: int) -> tuple[list[bytes], bool]:
        """The match's public lines from the `start`-th (0-based), and whether the match is over;
        `MatchExpired` if the store holds no record of it."""

    def hosted(self, match_id: bytes) -> HostedMatch:
        """A hosted match's latest token and version; `MatchExpired` if the store holds none."""

    def due(self, now: float, limit: int) -> list[bytes]:
        """Hosted matches whose running clock ran out by `now` (deadline first), at most `limit`."""

    def forget_due(self, match_id: bytes) -> None:
        """Take an expired match (its record gone) out of `due`."""

    def unarchived(self, now: float, limit: int) -> list[bytes]:
        """Hosted matches that are over and not confirmed archived by their deadline (`Hosted.deadline`
        of the write that ended them) <= `now`, oldest first, at most `limit`."""

    def archived(self, match_id: bytes) -> None:
        """The match's end is in the archive (or its outbox), or never will be: out of `unarchived`."""

    def lines(self, match_id: bytes, viewer: int, start: int) -> tuple[list[bytes], bool]:
        """A hosted match's lines for `viewer` from version `start` on (line i: version i), and
        whether it is over; `MatchExpired` if the store holds none."""

    def table(self, table_id: str) -> TableRow | None:
        """A table's record, None when there is none (never made, or expired)."""

    def put_table(self, row: TableRow, deal: Deal | None = None) -> bool:
        """Write a table's record if its stored version is still `row.version - 1` (0: a new table),
        with `deal`'s new hosted match in the same atomic write; False when another write came first."""

    def lobby(self, variant: str | None, limit: int, before: tuple[float, str] | None) -> list[TableRow]:
        """Public tables with a seat free, newest first, strictly after the cursor `before`."""

    def watch_changes(self, changed: Callable[[str], None]) -> None:
        """Call `changed(match id hex)` when another gateway changes a match, if the store can tell."""

    def put_ticket(self, ticket: bytes, payload: bytes, ttl: int) -> None:
        """Keep a stream ticket (its hash) for `ttl` seconds."""

    def take_ticket(self, ticket: bytes) -> bytes | None:
        """Spend a ticket: its payload once, None when unknown, spent or expired."""

    def ping(self) -> None:
        """Raise `StoreUnavailable` unless the store answers."""

    def close(self) -> None:
        ...


def default_url() -> str:
    """The embedded store next to the other temporary files: one per host, shared by every worker."""
    return f"sqlite:///{Path(os.environ.get('TMPDIR', '/tmp')) / 'domino-gateway-versions.sqlite3'}"


def check_store(url: str) -> None:
    """Refuse a store URL the gateway could not use, before any worker starts: a bad scheme or
    path, a SQLite file that cannot be created. (A Redis store is only parsed: it may come up
    after the gateway; until it answers, sealed calls are 503.)"""
    store = open_store(url)
    store.close()


def open_store(url: str, ttl: int = DEFAULT_TTL) -> VersionStore:
    """The store an URL names: ``sqlite:///absolute/path`` or ``redis://[:password@]host:port/db``."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        path = url[len("sqlite://"):]
        if not path.startswith("/"):
            raise ValueError(f"token store {url!r}: use sqlite:///absolute/path")
        return SqliteStore(path, ttl)
    if scheme in ("redis", "rediss", "unix"):
        return RedisStore(url, ttl)
    raise ValueError(f"token store {url!r}: expected sqlite:///path or redis://host:port/db")


# ---------------------------------------------------------------- SQLite (one host)


def _checkpoints(store: weakref.ref[SqliteStore], path: str, busy_ms: int, pid: int) -> None:
    """A SQLite store's checkpointer, on an OS thread of its own in each process that writes: every
    `SqliteStore.CHECKPOINT_EVERY` seconds it copies the WAL's new pages into the file (a PASSIVE
    checkpoint: it waits for no reader or writer), on a connection of its own.

    SQLite's automatic checkpoint runs in the commit that fills the WAL to 1,000 pages, inside a
    request, with the fsyncs of synchronous=NORMAL: under gevent that stops the whole worker, and in a
    store of ~34,000 live matches (whose commits touch pages all over the file) it made the sealed
    apply's p99 at half load 7.2-13.8 ms, against 5.2-5.7 ms without it. Here the fsync waits on this
    thread, which holds no GIL meanwhile. The thread ends once the store is closed or gone, or in a
    forked child (which starts its own with its connection)."""
    try:
        conn = sqlite3.connect(path, timeout=busy_ms / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error:
        return
    try:
        while True:
            _os_sleep(SqliteStore.CHECKPOINT_EVERY)
            alive = store()
            if alive is None or alive._connection is None or alive._pid != pid:
                return
            del alive
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error:
                pass  # tried again next time; the WAL only grows meanwhile
    finally:
        conn.close()


class SqliteStore:
    """A SQLite file in WAL mode: each worker process opens one connection; the file is the shared record.

    Writes are short transactions (`BEGIN IMMEDIATE`), so workers queue on the
    file's write lock for microseconds; `busy_timeout` bounds how long one waits
    before the call is refused as `StoreUnavailable`. Expired records are swept
    now and then by whichever worker writes. One connection per process, used
    under a lock: the gateway's connections are greenlets (`api_gateway.worker`),
    and a connection per greenlet (threading.local under gevent) would open a
    file handle for every client connection.
    """

    SWEEP_EVERY = 1000
    #: Seconds between two checkpoints of the WAL into the file (`_checkpoints`).
    CHECKPOINT_EVERY = 0.5
    #: Seconds between two reads of the changes every worker of the host made (`watch_changes`).
    CHANGES_POLL = 0.05
    #: Seconds a change stays noted (a worker reads them within CHANGES_POLL; the sweep drops older ones).
    CHANGES_KEPT = 60.0

    def __init__(self, path: str, ttl: int = DEFAULT_TTL, clock: Callable[[], float] = time.time,
                 busy_ms: int = 2000) -> None:
        self.path = path
        self.ttl = ttl
        self._clock = clock
        self._busy_ms = busy_ms
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0
        self._writes = 0
        #: Seconds between two pushes of a record's expiry by the calls that read it (`check`).
        self.touch = min(60.0, ttl / 10)
        with self._lock:
            self._conn()  # creates the file and the table now: a bad path fails at start, naming it

    def _conn(self) -> sqlite3.Connection:
        """This process's connection (a forked child opens its own); the caller holds the lock."""
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        try:
            conn = sqlite3.connect(self.path, timeout=self._busy_ms / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
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
            conn.execute("CREATE TABLE IF NOT EXISTS receipts_s1 "
                         "(match_id BLOB PRIMARY KEY, seq INTEGER NOT NULL, digest BLOB NOT NULL, "
                         "answer BLOB NOT NULL) WITHOUT ROWID")
            # hosted_s2: the tables' first cut kept no clocks; its table (s1) stays apart, unread.
            conn.execute("CREATE TABLE IF NOT EXISTS hosted_s2 (match_id BLOB PRIMARY KEY, table_id TEXT NOT NULL, "
                         "token TEXT NOT NULL, over INTEGER NOT NULL, viewers INTEGER NOT NULL, "
                         "clocks BLOB NOT NULL, deadline REAL) WITHOUT ROWID")
            conn.execute("CREATE INDEX IF NOT EXISTS hosted_s2_deadline ON hosted_s2 (deadline) "
                         "WHERE deadline IS NOT NULL")
            conn.execute("CREATE TABLE IF NOT EXISTS lines_s1 (match_id BLOB NOT NULL, viewer INTEGER NOT NULL, "
                         "seq INTEGER NOT NULL, line BLOB NOT NULL, PRIMARY KEY (match_id, viewer, seq)) WITHOUT ROWID")
            conn.execute("CREATE TABLE IF NOT EXISTS tables_s1 (table_id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
                         "record BLOB NOT NULL, public INTEGER NOT NULL, variant TEXT NOT NULL, free INTEGER NOT NULL, "
                         "created REAL NOT NULL, expires REAL NOT NULL) WITHOUT ROWID")
            conn.execute("CREATE TABLE IF NOT EXISTS tickets_s1 (ticket BLOB PRIMARY KEY, payload BLOB NOT NULL, "
                         "expires REAL NOT NULL) WITHOUT ROWID")
            # records_s1: a sealed match's log lines that left its state, one row per round ended (issue 27).
            conn.execute("CREATE TABLE IF NOT EXISTS records_s1 (match_id BLOB NOT NULL, seq INTEGER NOT NULL, "
                         "lines BLOB NOT NULL, PRIMARY KEY (match_id, seq)) WITHOUT ROWID")
            conn.execute("CREATE TABLE IF NOT EXISTS changes_s1 (n INTEGER PRIMARY KEY AUTOINCREMENT, "
                         "match_id BLOB NOT NULL, at REAL NOT NULL)")
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"token store {self.path}: {exc}") from None
        self._connection, self._pid = conn, os.getpid()
        _start_os_thread(_checkpoints, (weakref.ref(self), self.path, self._busy_ms, self._pid))
        return conn

    def _run(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            try:
                return work(self._conn())
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"token store {self.path}: {exc}") from None

    def create(self, match_id: bytes, public: bytes = b"") -> None:
        expires = self._clock() + self.ttl

        def work(c: sqlite3.Connection) -> None:
            with c:
                c.execute("BEGIN IMMEDIATE")
                c.execute("INSERT INTO versions_s1 VALUES (?, 0, ?)", (match_id, expires))
                self._append(c, match_id, _split(public))
        self._run(work)
        self._sweep()

    @staticmethod
    def _append(c: sqlite3.Connection, match_id: bytes, lines: list[bytes]) -> None:
        if not lines:
            return
        row = c.execute("SELECT COALESCE(MAX(n) + 1, 0) FROM public_s1 WHERE match_id = ?", (match_id,)).fetchone()
        c.executemany("INSERT INTO public_s1 VALUES (?, ?, ?)",
                      [(match_id, row[0] + i, line) for i, line in enumerate(lines)])

    def public(self, match_id: bytes, start: int) -> tuple[list[bytes], bool]:
        def work(c: sqlite3.Connection) -> tuple[list[bytes], bool]:
            self._latest(c, match_id)
            rows = c.execute("SELECT line FROM public_s1 WHERE match_id = ? AND n >= ? ORDER BY n",
                             (match_id, start)).fetchall()
            lines = [bytes(r[0]) for r in rows]
            over = bool(lines) and lines[-1] == END
            if not over and start > 0:
                last = c.execute("SELECT line FROM public_s1 WHERE match_id = ? ORDER BY n DESC LIMIT 1",
                                 (match_id,)).fetchone()
                over = last is not None and bytes(last[0]) == END
            return lines, over
        result: tuple[list[bytes], bool] = self._run(work)
        return result

    def _latest(self, c: sqlite3.Connection, match_id: bytes) -> int:
        row = c.execute("SELECT seq, expires FROM versions_s1 WHERE match_id = ?", (match_id,)).fetchone()
        if row is None or row[1] < self._clock():
            raise MatchExpired()
        seq: int = row[0]
        return seq

    def check(self, match_id: bytes, seq: int) -> bool:
        """Every sealed call's first trip: one read when the token is the latest (the version, its expiry,
        and whether a table hosts the match), and a write only when the expiry is due a push.

        A record is kept alive by its calls, but its expiry moves only once `touch` seconds have passed
        since it last moved (a minute, or a tenth of a short TTL): a write transaction per call cost the
        sealed apply ~85 us of gateway CPU in `bench service` (the file's write lock taken, a WAL
        frame written), a read ~half that, and every change pushes the expiry in its own write anyway."""
        def work(c: sqlite3.Connection) -> bool:
            now = self._clock()
            row = c.execute("SELECT seq, expires, EXISTS (SELECT 1 FROM hosted_s2 WHERE match_id = ?) "
                            "FROM versions_s1 WHERE match_id = ?", (match_id, match_id)).fetchone()
            if row is None or row[1] < now:
                raise MatchExpired()
            if row[0] != seq:
                raise StaleToken(row[0], seq)
            if row[1] < now + self.ttl - self.touch:  # a newer version written meanwhile already pushed it
                c.execute("UPDATE versions_s1 SET expires = ? WHERE match_id = ? AND seq = ?",
                          (now + self.ttl, match_id, seq))
            return bool(row[2])
        hosted: bool = self._run(work)
        return hosted

    def advance(self, match_id: bytes, seq: int, public: bytes = b"", over: bool = False,
                receipt: Receipt | None = None, hosted: Hosted | None = None, record: bytes = b"") -> bytes | None:
        lines = _split(public) + ([END] if over else [])

        def work(c: sqlite3.Connection) -> bytes | None:
            with c:
                if lines or receipt is not None or hosted is not None or record:
                    c.execute("BEGIN IMMEDIATE")
                done = c.execute("UPDATE versions_s1 SET seq = ?, expires = ? "
                                 "WHERE match_id = ? AND seq = ? AND expires >= ?",
                                 (seq + 1, self._clock() + self.ttl, match_id, seq, self._clock()))
                if done.rowcount != 1:
                    if receipt is not None:
                        stored = self._answered(c, match_id, seq, receipt.digest)
                        if stored is not None:
                            return stored
                    raise StaleToken(self._latest(c, match_id), seq)
                self._append(c, match_id, lines)
                if receipt is not None:
                    c.execute("INSERT OR REPLACE INTO receipts_s1 VALUES (?, ?, ?, ?)",
                              (match_id, seq, receipt.digest, receipt.answer))
                if hosted is not None:
                    self._host(c, match_id, seq + 1, hosted, over)
                if record:
                    c.execute("INSERT OR REPLACE INTO records_s1 VALUES (?, ?, ?)", (match_id, seq, record))
                if hosted is not None:  # an online table's: the host's other workers wake its seats' streams
                    c.execute("INSERT INTO changes_s1 (match_id, at) VALUES (?, ?)", (match_id, self._clock()))
                return None
        stored: bytes | None = self._run(work)
        self._sweep()
        return stored

    def record_lines(self, match_id: bytes) -> list[str]:
        def work(c: sqlite3.Connection) -> list[str]:
            self._latest(c, match_id)
            rows = c.execute("SELECT lines FROM records_s1 WHERE match_id = ? ORDER BY seq", (match_id,)).fetchall()
            return [line for r in rows for line in bytes(r[0]).decode().split("\n")]
        found: list[str] = self._run(work)
        return found

    def _answered(self, c: sqlite3.Connection, match_id: bytes, seq: int, digest: bytes) -> bytes | None:
        row = c.execute("SELECT r.digest, r.answer FROM receipts_s1 r JOIN versions_s1 v USING (match_id) "
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
        c.executemany("INSERT OR REPLACE INTO lines_s1 VALUES (?, ?, ?, ?)",
                      [(match_id, viewer, seq, line) for viewer, line in enumerate(hosted.lines)])

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

    def forget_due(self, match_id: bytes) -> None:
        self._run(lambda c: c.execute("DELETE FROM hosted_s2 WHERE match_id = ?", (match_id,)))

    def unarchived(self, now: float, limit: int) -> list[bytes]:
        return self._by_deadline(True, now, limit)

    def archived(self, match_id: bytes) -> None:
        self._run(lambda c: c.execute("UPDATE hosted_s2 SET deadline = NULL WHERE match_id = ? AND over = 1",
                                      (match_id,)))

    def lines(self, match_id: bytes, viewer: int, start: int) -> tuple[list[bytes], bool]:
        def work(c: sqlite3.Connection) -> tuple[list[bytes], bool]:
            self._latest(c, match_id)
            row = c.execute("SELECT over FROM hosted_s2 WHERE match_id = ?", (match_id,)).fetchone()
            if row is None:
                raise MatchExpired()
            rows = c.execute("SELECT line FROM lines_s1 WHERE match_id = ? AND viewer = ? AND seq >= ? ORDER BY seq",
                             (match_id, viewer, start)).fetchall()
            return [bytes(r[0]) for r in rows], bool(row[0])
        found: tuple[list[bytes], bool] = self._run(work)
        return found

    def table(self, table_id: str) -> TableRow | None:
        row = self._run(lambda c: c.execute(
            "SELECT version, record, public, variant, free, created FROM tables_s1 WHERE table_id = ? AND expires >= ?",
            (table_id, self._clock())).fetchone())
        if row is None:
            return None
        return TableRow(table_id, row[0], bytes(row[1]), bool(row[2]), row[3], row[4], row[5])

    def put_table(self, row: TableRow, deal: Deal | None = None) -> bool:
        now = self._clock()

        def work(c: sqlite3.Connection) -> bool:
            with c:
                c.execute("BEGIN IMMEDIATE")
                found = c.execute("SELECT version FROM tables_s1 WHERE table_id = ? AND expires >= ?",
                                  (row.table_id, now)).fetchone()
                if (found[0] if found is not None else 0) != row.version - 1:
                    return False
                c.execute("INSERT OR REPLACE INTO tables_s1 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          (row.table_id, row.version, row.record, int(row.public), row.variant, row.free,
                           row.created, now + self.ttl))
                if deal is not None:
                    c.execute("INSERT INTO versions_s1 VALUES (?, 0, ?)", (deal.match_id, now + self.ttl))
                    self._append(c, deal.match_id, _split(deal.public))
                    self._host(c, deal.match_id, 0, deal.hosted, False, row.table_id)
                return True
        done: bool = self._run(work)
        self._sweep()
        return done

    def lobby(self, variant: str | None, limit: int, before: tuple[float, str] | None) -> list[TableRow]:
        query = ("SELECT table_id, version, record, public, variant, free, created FROM tables_s1 "
                 "WHERE public = 1 AND free > 0 AND expires >= ?")
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
        return [TableRow(r[0], r[1], bytes(r[2]), bool(r[3]), r[4], r[5], r[6]) for r in rows]

    def watch_changes(self, changed: Callable[[str], None]) -> None:
        """Call `changed(match id hex)` for every change of an online table's match, whichever worker of the
        host made it (a daemon thread, a greenlet under gevent): those advances note their match in
        ``changes_s1``, read every `CHANGES_POLL` seconds, one small query per worker however many streams
        it holds. A move made in another worker thus reaches this one's seat streams within that, not at
        their next poll (a plain sealed match's spectators keep the poll: its advances, the REST hot
        path, write nothing more). The changes made before the call are not news: the last one is read
        here, so every change made once this returns is heard (if the file cannot be read now, the thread
        reads it at its first poll)."""

        def last() -> int:
            found: int = self._run(lambda c: c.execute("SELECT COALESCE(MAX(n), 0) FROM changes_s1").fetchone()[0])
            return found

        try:
            first: int | None = last()
        except StoreUnavailable:
            first = None

        def listen() -> None:
            seen = first
            while True:
                time.sleep(self.CHANGES_POLL)
                try:
                    if seen is None:
                        seen = last()
                        continue
                    rows = self._run(partial(self._changes_after, seen))
                    for match_id in {bytes(r[1]) for r in rows}:
                        changed(match_id.hex())
                    if rows:
                        seen = rows[-1][0]
                except Exception:  # the file locked or gone a moment (or a bug in `changed`): the polls go on
                    time.sleep(1.0)

        threading.Thread(target=listen, name="store-changes", daemon=True).start()

    @staticmethod
    def _changes_after(n: int, c: sqlite3.Connection) -> list[Any]:
        rows: list[Any] = c.execute("SELECT n, match_id FROM changes_s1 WHERE n > ? ORDER BY n LIMIT 1000",
                                    (n,)).fetchall()
        return rows

    def put_ticket(self, ticket: bytes, payload: bytes, ttl: int) -> None:
        self._run(lambda c: c.execute("INSERT OR REPLACE INTO tickets_s1 VALUES (?, ?, ?)",
                                      (ticket, payload, self._clock() + ttl)))
        self._sweep()

    def take_ticket(self, ticket: bytes) -> bytes | None:
        row = self._run(lambda c: c.execute("DELETE FROM tickets_s1 WHERE ticket = ? RETURNING payload, expires",
                                            (ticket,)).fetchone())
        if row is None or row[1] < self._clock():
            return None
        return bytes(row[0])

    def ping(self) -> None:
        self._run(lambda c: c.execute("SELECT 1").fetchone())

    def _sweep(self) -> None:
        """Every `SWEEP_EVERY` writes of this worker, forget the matches whose version expired, with
        every row kept for them, in one transaction.

        The rows of a match are found by its id, the leading column of each table's key, so a sweep
        costs what it forgets, not what the store holds: it used to delete the rows whose match had no
        version row (`NOT IN`), a scan of every spectator line of every live match, ~70 ms with 3,000
        live matches, the whole worker (a C call under gevent) and the file's write lock held the
        while: the sealed apply's p99 at half load. Only `versions_s1` is scanned (a row per match),
        and at most `SWEEP_EVERY` matches go at once. A match's rows are written only while its
        version row exists (`create`, `advance`), and go with it here, so none is left behind."""
        self._writes += 1
        if self._writes % self.SWEEP_EVERY == 0:
            def sweep(c: sqlite3.Connection) -> None:
                now = self._clock()
                with c:
                    c.execute("BEGIN IMMEDIATE")
                    gone = c.execute("SELECT match_id FROM versions_s1 WHERE expires < ? LIMIT ?",
                                     (now, self.SWEEP_EVERY)).fetchall()
                    for table in _PER_MATCH:
                        c.executemany(f"DELETE FROM {table} WHERE match_id = ?", gone)
                    c.executemany("DELETE FROM versions_s1 WHERE match_id = ?", gone)
                    c.execute("DELETE FROM tables_s1 WHERE expires < ?", (now,))
                    c.execute("DELETE FROM tickets_s1 WHERE expires < ?", (now,))
                    c.execute("DELETE FROM changes_s1 WHERE at < ?", (now - self.CHANGES_KEPT,))
            self._run(sweep)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None


#: The tables whose rows belong to one match (keyed by its id first): swept with its version row.
_PER_MATCH = ("public_s1", "receipts_s1", "hosted_s2", "lines_s1", "records_s1")

#: The line that marks the end of a match's public lines (its last).
END = b'{"type":"end"}'


def _split(public: bytes) -> list[bytes]:
    return [line for line in public.split(b"\n") if line]


# ---------------------------------------------------------------- Redis (a cluster)

# KEYS: the record, the public lines, the receipt, a hosted match's hash, the clocks' deadlines (a sorted
# set), then its viewers' lists; ARGV: expected seq, new seq, ttl, receipt digest (empty: none), receipt
# answer, the number of public lines, the hosted token (empty: not hosted), over ("1"/"0"), the clocks
# (JSON, empty: none), the running clock's deadline (empty: none), the public lines, then one line per viewer.
# {1}: advanced; {0, latest}: stale; {-1}: no record;
# {2, answer}: this very request (its digest) already advanced from the expected seq.
# The last ARGV is the record lines that left the state (empty: none), appended to domino:rl:<match>
# (the key made from KEYS[1]'s id, so that the arguments before it keep their places).
# The write that ends a hosted match puts it in domino:unarchived, scored by its deadline (RedisStore.UNARCHIVED).
# An advance is announced on the channel CHANGED (the match id in hex): every gateway's streams of the
# match read it at once instead of at their next poll (a lost message only delays them to the poll).
_ADVANCE = """
local latest = redis.call('GET', KEYS[1])
if not latest then return {-1, 0} end
if latest ~= ARGV[1] then
  if ARGV[4] ~= '' and tonumber(latest) == tonumber(ARGV[1]) + 1 then
    local r = redis.call('HMGET', KEYS[3], 'seq', 'digest', 'answer')
    if r[1] == ARGV[1] and r[2] == ARGV[4] then return {2, r[3]} end
  end
  return {0, tonumber(latest)}
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
local npublic = tonumber(ARGV[6])
if npublic > 0 then
  for i = 11, 10 + npublic do redis.call('RPUSH', KEYS[2], ARGV[i]) end
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
if ARGV[4] ~= '' then
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[3], 'seq', ARGV[1], 'digest', ARGV[4], 'answer', ARGV[5])
  redis.call('EXPIRE', KEYS[3], ARGV[3])
end
if ARGV[7] ~= '' then
  redis.call('HSET', KEYS[4], 'token', ARGV[7], 'over', ARGV[8], 'clocks', ARGV[9])
  redis.call('EXPIRE', KEYS[4], ARGV[3])
  local match = string.sub(KEYS[4], 10)
  if ARGV[10] ~= '' and ARGV[8] ~= '1' then
    redis.call('ZADD', KEYS[5], ARGV[10], match)
  else
    redis.call('ZREM', KEYS[5], match)
    if ARGV[10] ~= '' then redis.call('ZADD', 'domino:unarchived', ARGV[10], match) end
  end
  for v = 6, #KEYS do
    redis.call('RPUSH', KEYS[v], ARGV[10 + npublic + v - 5])
    redis.call('EXPIRE', KEYS[v], ARGV[3])
  end
end
local record = ARGV[#ARGV]
if record ~= '' then
  local key = 'domino:rl:' .. string.sub(KEYS[1], 10)
  redis.call('RPUSH', key, record)
  redis.call('EXPIRE', key, ARGV[3])
end
redis.call('PUBLISH', 'domino:changed', string.sub(KEYS[1], 10))
return {1, 0}
"""


class RedisStore:
    """One Redis shared by every gateway replica: ``domino:v:<match id hex> -> seq`` with an expiry."""

    PREFIX = "domino:v:"
    PUBLIC = "domino:p:"  # the match's public lines, a list
    RECEIPT = "domino:r:"  # the receipt of the latest advance, a hash: seq, digest, answer
    HOSTED = "domino:h:"  # a hosted match, a hash: table_id, token, over, viewers
    LINES = "domino:l:"  # a hosted match's lines of one viewer, a list (index: version): <match>:<viewer>
    TABLE = "domino:tb:"  # a table's record, a hash: version, record, public, variant, free, created
    LOBBY = "domino:lobby"  # public tables with a seat free, a sorted set by creation time
    TICKET = "domino:k:"  # a stream ticket (its hash), a string with an expiry
    DEADLINES = "domino:deadlines"  # hosted matches whose turn clock runs, a sorted set by deadline
    UNARCHIVED = "domino:unarchived"  # hosted matches over and not yet confirmed archived, by deadline (_ADVANCE)
    CHANGED = "domino:changed"  # pub/sub: the id (hex) of every match an advance changed
    RECORD = "domino:rl:"  # a sealed match's log lines that left its state, a list (one item per round)

    def __init__(self, url: str, ttl: int = DEFAULT_TTL, timeout: float = 1.0) -> None:
        import redis  # only a cluster needs it

        self.url = url
        self.ttl = ttl
        self._timeout = timeout
        self._errors: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError)
        self._redis = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                           health_check_interval=30)
        self._advance = self._redis.register_script(_ADVANCE)

    def _run(self, work: Callable[[], Any]) -> Any:
        try:
            return work()
        except self._errors as exc:
            raise StoreUnavailable(f"token store {urlsplit(self.url).hostname}: {exc}") from None

    def ping(self) -> None:
        self._run(self._redis.ping)

    def _key(self, match_id: bytes) -> str:
        return self.PREFIX + match_id.hex()

    def create(self, match_id: bytes, public: bytes = b"") -> None:
        lines = _split(public)

        def work() -> Any:
            pipe = self._redis.pipeline(transaction=True)
            pipe.set(self._key(match_id), 0, ex=self.ttl)
            if lines:
                pipe.rpush(self.PUBLIC + match_id.hex(), *lines)
                pipe.expire(self.PUBLIC + match_id.hex(), self.ttl)
            return pipe.execute()
        self._run(work)

    def public(self, match_id: bytes, start: int) -> tuple[list[bytes], bool]:
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=False)
            pipe.exists(self._key(match_id))
            pipe.lrange(self.PUBLIC + match_id.hex(), start, -1)
            pipe.lindex(self.PUBLIC + match_id.hex(), -1)
            return pipe.execute()
        exists, lines, last = self._run(work)
        if not exists:
            raise MatchExpired()
        return [bytes(x) for x in lines], last is not None and bytes(last) == END

    def check(self, match_id: bytes, seq: int) -> bool:
        key = self._key(match_id)

        def work() -> Any:
            pipe = self._redis.pipeline(transaction=False)
            pipe.get(key)
            pipe.expire(key, self.ttl)
            pipe.expire(self.PUBLIC + match_id.hex(), self.ttl)
            pipe.expire(self.RECEIPT + match_id.hex(), self.ttl)
            pipe.expire(self.HOSTED + match_id.hex(), self.ttl)
            pipe.expire(self.RECORD + match_id.hex(), self.ttl)
            found = pipe.execute()
            return found[0], found[4]
        latest, hosted = self._run(work)
        if latest is None:
            raise MatchExpired()
        if int(latest) != seq:
            raise StaleToken(int(latest), seq)
        return bool(hosted)

    def advance(self, match_id: bytes, seq: int, public: bytes = b"", over: bool = False,
                receipt: Receipt | None = None, hosted: Hosted | None = None, record: bytes = b"") -> bytes | None:
        lines = _split(public) + ([END] if over else [])
        hexid = match_id.hex()
        digest, answer = (receipt.digest, receipt.answer) if receipt is not None else (b"", b"")
        viewers = hosted.lines if hosted is not None else []
        done, latest = self._run(lambda: self._advance(
            keys=[self._key(match_id), self.PUBLIC + hexid, self.RECEIPT + hexid, self.HOSTED + hexid,
                  self.DEADLINES, *(f"{self.LINES}{hexid}:{v}" for v in range(len(viewers)))],
            args=[seq, seq + 1, self.ttl, digest, answer, len(lines), hosted.token if hosted is not None else "",
                  "1" if over else "0", hosted.clocks if hosted is not None else b"",
                  "" if hosted is None or hosted.deadline is None else repr(hosted.deadline), *lines, *viewers,
                  record]))
        if done == -1:
            raise MatchExpired()
        if done == 0:
            raise StaleToken(int(latest), seq)
        if done == 2:
            return bytes(latest)
        return None

    def record_lines(self, match_id: bytes) -> list[str]:
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=True)
            pipe.exists(self._key(match_id))
            pipe.lrange(self.RECORD + match_id.hex(), 0, -1)
            return pipe.execute()
        exists, items = self._run(work)
        if not exists:
            raise MatchExpired()
        return [line for item in items for line in bytes(item).decode().split("\n")]

    def answered(self, match_id: bytes, seq: int, digest: bytes) -> bytes | None:
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=True)
            pipe.get(self._key(match_id))
            pipe.hmget(self.RECEIPT + match_id.hex(), "seq", "digest", "answer")
            return pipe.execute()
        latest, (r_seq, r_digest, r_answer) = self._run(work)
        if latest is None or int(latest) != seq + 1 or r_seq is None or int(r_seq) != seq or r_digest != digest:
            return None
        return bytes(r_answer)

    def hosted(self, match_id: bytes) -> HostedMatch:
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=True)
            pipe.get(self._key(match_id))
            pipe.hmget(self.HOSTED + match_id.hex(), "table_id", "token", "over", "viewers", "clocks")
            return pipe.execute()
        latest, (table_id, token, over, viewers, clocks) = self._run(work)
        if latest is None or table_id is None:
            raise MatchExpired()
        return HostedMatch(table_id.decode(), token.decode(), int(latest), over == b"1", int(viewers),
                           bytes(clocks or b""))

    def due(self, now: float, limit: int) -> list[bytes]:
        return self._by_score(self.DEADLINES, now, limit)

    def _by_score(self, key: str, now: float, limit: int) -> list[bytes]:
        """The matches of the sorted set `key` scored <= `now`, lowest first: `due`, `unarchived`."""
        found = self._run(partial(self._redis.zrangebyscore, key, "-inf", repr(now), start=0, num=limit))
        return [bytes.fromhex(x.decode()) for x in found]

    def forget_due(self, match_id: bytes) -> None:
        self._run(partial(self._redis.zrem, self.DEADLINES, match_id.hex()))

    def unarchived(self, now: float, limit: int) -> list[bytes]:
        return self._by_score(self.UNARCHIVED, now, limit)

    def archived(self, match_id: bytes) -> None:
        self._run(partial(self._redis.zrem, self.UNARCHIVED, match_id.hex()))

    def lines(self, match_id: bytes, viewer: int, start: int) -> tuple[list[bytes], bool]:
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=True)
            pipe.hget(self.HOSTED + match_id.hex(), "over")
            pipe.lrange(f"{self.LINES}{match_id.hex()}:{viewer}", start, -1)
            return pipe.execute()
        over, lines = self._run(work)
        if over is None:
            raise MatchExpired()
        return [bytes(x) for x in lines], over == b"1"

    def table(self, table_id: str) -> TableRow | None:
        found = self._run(lambda: self._redis.hmget(self.TABLE + table_id, "version", "record", "public", "variant",
                                                     "free", "created"))
        if found[0] is None:
            return None
        return TableRow(table_id, int(found[0]), bytes(found[1]), found[2] == b"1", found[3].decode(), int(found[4]),
                        float(found[5]))

    def put_table(self, row: TableRow, deal: Deal | None = None) -> bool:
        import redis

        key = self.TABLE + row.table_id

        def work() -> bool:
            with self._redis.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(key)
                    version: Any = pipe.hget(key, "version")
                    if (int(version) if version is not None else 0) != row.version - 1:
                        return False
                    pipe.multi()
                    pipe.hset(key, mapping={"version": row.version, "record": row.record,
                                            "public": "1" if row.public else "0", "variant": row.variant,
                                            "free": row.free, "created": repr(row.created)})
                    pipe.expire(key, self.ttl)
                    if row.public and row.free > 0:
                        pipe.zadd(self.LOBBY, {row.table_id: row.created})
                    else:
                        pipe.zrem(self.LOBBY, row.table_id)
                    if deal is not None:
                        hexid = deal.match_id.hex()
                        pipe.set(self._key(deal.match_id), 0, ex=self.ttl)
                        lines = _split(deal.public)
                        if lines:
                            pipe.rpush(self.PUBLIC + hexid, *lines)
                            pipe.expire(self.PUBLIC + hexid, self.ttl)
                        pipe.hset(self.HOSTED + hexid, mapping={"table_id": row.table_id, "token": deal.hosted.token,
                                                                "over": "0", "viewers": len(deal.hosted.lines),
                                                                "clocks": deal.hosted.clocks})
                        pipe.expire(self.HOSTED + hexid, self.ttl)
                        if deal.hosted.deadline is not None:
                            pipe.zadd(self.DEADLINES, {hexid: deal.hosted.deadline})
                        for viewer, line in enumerate(deal.hosted.lines):
                            pipe.rpush(f"{self.LINES}{hexid}:{viewer}", line)
                            pipe.expire(f"{self.LINES}{hexid}:{viewer}", self.ttl)
                    pipe.execute()
                    return True
                except redis.WatchError:
                    return False
        done: bool = self._run(work)
        return done

    def lobby(self, variant: str | None, limit: int, before: tuple[float, str] | None) -> list[TableRow]:
        found: list[TableRow] = []
        high: Any = "+inf" if before is None else before[0]
        offset = 0
        while len(found) < limit:
            ids = self._run(partial(self._redis.zrevrangebyscore, self.LOBBY, high, "-inf", start=offset,
                                    num=limit * 2, withscores=True))
            if not ids:
                break
            offset += len(ids)
            for raw, score in ids:
                table_id = raw.decode()
                if before is not None and score == before[0] and table_id >= before[1]:
                    continue
                row = self.table(table_id)
                if row is None:
                    self._run(partial(self._redis.zrem, self.LOBBY, table_id))  # expired
                    continue
                if row.free > 0 and row.public and (variant is None or row.variant == variant):
                    found.append(row)
                    if len(found) == limit:
                        break
        # the same order as SQLite's: newest first, ties by id (descending)
        return sorted(found, key=lambda r: (r.created, r.table_id), reverse=True)

    def put_ticket(self, ticket: bytes, payload: bytes, ttl: int) -> None:
        self._run(lambda: self._redis.set(self.TICKET + ticket.hex(), payload, ex=ttl))

    def watch_changes(self, changed: Callable[[str], None]) -> None:
        """Call `changed(match id hex)` for every advance any gateway makes (a daemon thread, a greenlet
        under gevent, subscribed to CHANGED; it subscribes again after a lost connection). The first
        subscription is confirmed here, so every change published once this returns is heard (with Redis
        away now, the thread keeps trying)."""

        def subscribed() -> Any:
            pubsub = self._redis.pubsub()
            pubsub.subscribe(self.CHANGED)
            confirmed = pubsub.get_message(timeout=self._timeout)
            if confirmed is None or confirmed.get("type") != "subscribe":
                raise ConnectionError(f"no confirmation of the subscription to {self.CHANGED}: {confirmed!r}")
            return pubsub

        try:
            first: Any = subscribed()
        except Exception:
            first = None

        def listen() -> None:
            pubsub, pause = first, 0.5
            while True:
                try:
                    if pubsub is None:
                        pubsub = subscribed()
                    pause = 0.5
                    for message in pubsub.listen():
                        if message.get("type") == "message":
                            changed(bytes(message["data"]).decode())
                except Exception:  # Redis away (or a bug in `changed`): the streams' polls go on meanwhile
                    if pubsub is not None:
                        with contextlib.suppress(Exception):
                            pubsub.close()
                        pubsub = None
                    time.sleep(pause)
                    pause = min(pause * 2, 10.0)

        threading.Thread(target=listen, name="store-changes", daemon=True).start()

    def take_ticket(self, ticket: bytes) -> bytes | None:
        found = self._run(lambda: self._redis.getdel(self.TICKET + ticket.hex()))
        return None if found is None else bytes(found)

    def close(self) -> None:
        self._redis.close()
