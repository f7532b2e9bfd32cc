"""The webhook outbox: every delivery kept durably until its endpoint answered 2xx (at least once).

A delivery (`Delivery`) keeps its ``webhook-id`` from the moment it is queued, so every retry carries
the same id and a receiver drops duplicates. Senders take deliveries with `claim`: the due ones are
leased (their due time pushed `lease` seconds on, under a fresh claim token) in one atomic step, so two
gateways (or two workers) never send the same attempt at once; a sender that dies mid-send leaves its
deliveries due again when the lease runs out. `failed` reschedules and `bury` moves a delivery to the
dead letters only while the caller's claim still holds (compare-and-set on the token); `replay` makes a
dead letter due again, its attempts counted from nothing.

The outbox also remembers which host app vouched for each seat's player (`remember`, `vouched`): the
player id (``app:<user>``) does not say which key signed its assertion; and each seat's Web Push
subscription (`subscribe`, `subscriptions`, `forget`: `webpush`), by match and seat; and each vouched
player's notification feed (`feed_add`, `feed`): what they were told, the newest `FEED_KEPT` for
`FEED_DAYS` days, read after a cursor.

Two backends, picked from the live store's URL (`open_outbox`): `SqliteOutbox`, tables of its own in a
file beside the live store's SQLite file (``live.sqlite3`` -> ``live.notify.sqlite3``), and
`RedisOutbox`, keys of its own (``domino:notify:*``) on the same Redis. Either raises `StoreUnavailable`
when it cannot be reached.
"""
from __future__ import annotations

import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import orjson

from api_gateway.store import StoreUnavailable
from api_gateway.store.wal import write_ahead

#: Seconds a seat's vouching app is remembered (the longest a match may live idle).
SEAT_TTL = 90 * 24 * 3600
#: A player's notification feed keeps their newest items, this many at most, this many days at most.
FEED_KEPT = 500
FEED_DAYS = 14
#: Seconds after its chain's blocking delivery's next attempt a held delivery is looked at again.
HELD_AFTER = 0.001
#: Seconds a delivered message's id is kept, so that the same message queued again is dropped.
DONE_KEPT = 24 * 3600


@dataclass(frozen=True, slots=True)
class Delivery:
    """One webhook message to one host app: its id, the app (key id), the signed body, failed attempts
    so far, when it is due (unix seconds), when it was queued, the last error, and its claim token."""

    id: str
    app: str
    body: bytes
    attempts: int = 0
    due: float = 0.0
    created: float = 0.0
    error: str = ""
    claim: str = ""
    #: What order is kept within (one app's deliveries of one table; one seat's pushes): a delivery is not
    #: sent while an earlier one of its chain was tried and is not settled (`Outbox.claim`). "": none.
    chain: str = ""

    def summary(self) -> dict[str, Any]:
        """What the operator's dead-letter list shows."""
        return {"id": self.id, "app": self.app, "attempts": self.attempts, "created": self.created,
                "error": self.error, "body": self.body.decode("utf-8", "replace")}


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One notification in a player's feed: the message it came from (told twice: kept once), when, and what
    a client lists (``type``, ``table_id``, ``match_id``, ``seat``, ``data``)."""

    player: str
    message: str
    created: float
    item: dict[str, Any]


class FeedCursorError(ValueError):
    """A feed cursor that is none this outbox gave."""


class Outbox(Protocol):
    def put(self, deliveries: list[Delivery]) -> None:
        """Queue deliveries (one already queued under its id is kept as it is)."""

    def claim(self, now: float, lease: float, limit: int) -> list[Delivery]:
        """Up to `limit` due deliveries, oldest first, leased to the caller until ``now + lease``. A delivery
        behind an earlier one of its chain that is not settled and was tried (failed, or leased to another
        sender), is held, or is due, is not taken: it is held until just after that one's next attempt, or
        until that one is settled (`delivered`, `bury`), whichever is first. Send them in the order given
        (`Sender.send_due`): a chain's later deliveries in one claim come after its earlier ones."""

    def hold(self, delivery: Delivery, due: float) -> None:
        """Put a claimed delivery back, due at `due`, no attempt counted (an earlier one of its chain failed),
        if the caller's claim still holds."""

    def delivered(self, delivery: Delivery) -> None:
        """Its endpoint answered 2xx: forget it."""

    def failed(self, delivery: Delivery, due: float, error: str) -> None:
        """Try again at `due` (one failed attempt more), if the caller's claim still holds."""

    def bury(self, delivery: Delivery, error: str) -> None:
        """Into the dead letters, if the caller's claim still holds."""

    def dead(self, limit: int) -> list[Delivery]:
        """The dead letters, oldest first."""

    def replay(self, delivery_id: str, now: float) -> bool:
        """A dead letter due again now, its attempts from nothing (False: no such dead letter)."""

    def next_due(self) -> float | None:
        """When the earliest pending delivery is due (None: nothing pending)."""

    def remember(self, table_id: str, seat: int, player: str, app: str, now: float) -> None:
        """The host app `app` vouched for `player` at the table's `seat`."""

    def vouched(self, table_id: str, now: float) -> dict[int, tuple[str, str]]:
        """The table's seats whose player a host app vouched for: seat -> (player, app)."""

    def subscribe(self, match_id: str, seat: int, subscription: bytes, now: float) -> None:
        """The seat's browser push subscription for the match (one per seat: a new one replaces it)."""

    def subscriptions(self, match_id: str, now: float) -> dict[int, bytes]:
        """The match's seats with a push subscription: seat -> subscription (JSON)."""

    def forget(self, match_id: str, seat: int, subscription: bytes | None = None) -> bool:
        """The seat's subscription forgotten (only if it is still `subscription`, when given): False if none was."""

    def feed_add(self, items: list[FeedItem], now: float, kept: int = FEED_KEPT) -> None:
        """Items into their players' feeds (one already there from the same message is kept as it is); each
        feed trimmed to its newest `kept` and `FEED_DAYS` days."""

    def feed(self, player: str, after: str | None, limit: int, now: float) -> list[tuple[str, dict[str, Any]]]:
        """The player's items after the cursor `after` (None: from the oldest kept), oldest first, at most
        `limit`: (cursor, item) each (`FeedCursorError` for a cursor this outbox never gave)."""

    def close(self) -> None: ...


def open_outbox(store_url: str) -> Outbox:
    """The outbox beside the live store `store_url` names (SQLite: a file beside it; Redis: the same server)."""
    scheme = urlsplit(store_url).scheme
    if scheme == "sqlite":
        path = Path(store_url[len("sqlite://"):])
        return SqliteOutbox(str(path.with_name(f"{path.stem}.notify{path.suffix or '.sqlite3'}")))
    if scheme in ("redis", "rediss", "unix"):
        return RedisOutbox(store_url)
    raise ValueError(f"webhook outbox: no outbox beside the store {store_url!r}")


def _token() -> str:
    return secrets.token_hex(8)


# ---------------------------------------------------------------- SQLite


class SqliteOutbox:
    """The outbox in a SQLite file of its own (one host: every worker opens it)."""

    def __init__(self, path: str, busy_ms: int = 5000) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._busy_ms = busy_ms
        self._connection: sqlite3.Connection | None = None
        self._write(self._create)  # a bad path fails at start, naming it

    @staticmethod
    def _create(conn: sqlite3.Connection) -> None:
        """The schema, in one immediate transaction: every worker of a host opens the file at once, and two that
        both saw an older file without `chain` would otherwise both add it (one failing to boot)."""
        conn.execute("CREATE TABLE IF NOT EXISTS deliveries_s1 (id TEXT PRIMARY KEY, app TEXT NOT NULL, "
                     "body BLOB NOT NULL, attempts INTEGER NOT NULL, due REAL NOT NULL, created REAL NOT NULL, "
                     "error TEXT NOT NULL, claim TEXT NOT NULL, dead INTEGER NOT NULL, "
                     "chain TEXT NOT NULL DEFAULT '', held INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID")
        conn.execute("CREATE INDEX IF NOT EXISTS deliveries_s1_due ON deliveries_s1 (dead, due)")
        columns = {row[1] for row in conn.execute("PRAGMA table_info(deliveries_s1)")}
        for column in ("chain TEXT NOT NULL DEFAULT ''", "held INTEGER NOT NULL DEFAULT 0"):  # an older file
            if column.split()[0] not in columns:
                conn.execute(f"ALTER TABLE deliveries_s1 ADD COLUMN {column}")
        conn.execute("CREATE INDEX IF NOT EXISTS deliveries_s1_chain ON deliveries_s1 (chain, created)")
        conn.execute("CREATE TABLE IF NOT EXISTS seats_s1 (table_id TEXT NOT NULL, seat INTEGER NOT NULL, "
                     "player TEXT NOT NULL, app TEXT NOT NULL, expires REAL NOT NULL, "
                     "PRIMARY KEY (table_id, seat)) WITHOUT ROWID")
        conn.execute("CREATE TABLE IF NOT EXISTS push_s1 (match_id TEXT NOT NULL, seat INTEGER NOT NULL, "
                     "subscription BLOB NOT NULL, expires REAL NOT NULL, PRIMARY KEY (match_id, seat)) WITHOUT ROWID")
        conn.execute("CREATE TABLE IF NOT EXISTS feed_s1 (n INTEGER PRIMARY KEY AUTOINCREMENT, player TEXT NOT NULL, "
                     "message TEXT NOT NULL, created REAL NOT NULL, item BLOB NOT NULL, UNIQUE (player, message))")
        conn.execute("CREATE INDEX IF NOT EXISTS feed_s1_player ON feed_s1 (player, n)")

    @contextmanager
    def _session(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                if self._connection is None:
                    conn = sqlite3.connect(self.path, timeout=self._busy_ms / 1000, isolation_level=None,
                                           check_same_thread=False)
                    write_ahead(conn, self._busy_ms)
                    # as the live store: a commit survives the process killed (not a power cut), without an
                    # fsync per commit that would stop a gevent worker's every greenlet meanwhile
                    conn.execute("PRAGMA synchronous=NORMAL")
                    conn.execute(f"PRAGMA busy_timeout={self._busy_ms}")
                    self._connection = conn
                yield self._connection
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"webhook outbox {self.path}: {exc}") from exc

    def _write(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._session() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

    @staticmethod
    def _row(row: tuple[Any, ...]) -> Delivery:
        return Delivery(row[0], row[1], bytes(row[2]), row[3], row[4], row[5], row[6], row[7], row[8])

    _COLUMNS = "id, app, body, attempts, due, created, error, claim, chain"

    def put(self, deliveries: list[Delivery]) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM deliveries_s1 WHERE dead = 2 AND due < ?", (time.time() - DONE_KEPT,))
            conn.executemany(
                "INSERT OR IGNORE INTO deliveries_s1 (id, app, body, attempts, due, created, error, claim, dead, chain) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
                [(d.id, d.app, d.body, d.attempts, d.due, d.created, d.error, d.claim, d.chain) for d in deliveries])
        if deliveries:
            self._write(work)

    def claim(self, now: float, lease: float, limit: int) -> list[Delivery]:
        def work(conn: sqlite3.Connection) -> list[Delivery]:
            rows = conn.execute(f"SELECT {self._COLUMNS} FROM deliveries_s1 WHERE dead = 0 AND due <= ? "
                                "ORDER BY created LIMIT ?", (now, limit)).fetchall()
            taken: list[Delivery] = []
            held: list[tuple[float, str]] = []
            ids: set[str] = set()
            for found in map(self._row, rows):
                before = conn.execute(  # the chain's earlier deliveries tried, held or due, and not settled
                    "SELECT id, due FROM deliveries_s1 WHERE chain = ? AND dead = 0 AND created < ? "
                    "AND (claim <> '' OR held = 1 OR due <= ?) ORDER BY created",
                    (found.chain, found.created, now)).fetchall() if found.chain else []
                blocker = next((due for other, due in before if other not in ids), None)
                if blocker is None:
                    taken.append(replace(found, claim=_token()))
                    ids.add(found.id)
                else:  # not looked at again before that one's next attempt
                    held.append((max(blocker, now) + HELD_AFTER, found.id))
            conn.executemany("UPDATE deliveries_s1 SET due = ?, claim = ?, held = 0 WHERE id = ?",
                             [(now + lease, d.claim, d.id) for d in taken])  # in flight: no release moves it
            conn.executemany("UPDATE deliveries_s1 SET due = ?, held = 1 WHERE id = ?", held)
            return taken
        found: list[Delivery] = self._write(work)
        return found

    def delivered(self, delivery: Delivery) -> None:
        def work(conn: sqlite3.Connection) -> None:
            now = time.time()
            # kept a day as done (2): the same id queued again meanwhile is dropped, not sent twice
            conn.execute("UPDATE deliveries_s1 SET dead = 2, due = ?, body = x'' WHERE id = ? AND dead = 0",
                         (now, delivery.id))
            self._release(conn, delivery, now)
        self._write(work)

    @staticmethod
    def _release(conn: sqlite3.Connection, delivery: Delivery, now: float) -> None:
        """The deliveries held behind `delivery` (settled now) are due at once."""
        if delivery.chain:
            conn.execute("UPDATE deliveries_s1 SET due = ?, held = 0 WHERE chain = ? AND dead = 0 AND held = 1",
                         (now, delivery.chain))

    def failed(self, delivery: Delivery, due: float, error: str) -> None:
        def work(conn: sqlite3.Connection) -> None:
            failed = conn.execute(
                "UPDATE deliveries_s1 SET attempts = attempts + 1, due = ?, error = ? WHERE id = ? AND claim = ? "
                "AND dead = 0", (due, error[:500], delivery.id, delivery.claim)).rowcount
            if failed and delivery.chain:  # those held behind it (maybe until its lease's end): until just after
                conn.execute("UPDATE deliveries_s1 SET due = min(due, ?) WHERE chain = ? AND dead = 0 AND held = 1",
                             (due + HELD_AFTER, delivery.chain))
        self._write(work)

    def hold(self, delivery: Delivery, due: float) -> None:
        self._write(lambda conn: conn.execute(
            "UPDATE deliveries_s1 SET due = ?, held = 1 WHERE id = ? AND claim = ? AND dead = 0",
            (due, delivery.id, delivery.claim)))

    def bury(self, delivery: Delivery, error: str) -> None:
        def work(conn: sqlite3.Connection) -> None:
            now = time.time()
            buried = conn.execute(
                "UPDATE deliveries_s1 SET attempts = attempts + 1, dead = 1, due = ?, error = ? WHERE id = ? "
                "AND claim = ? AND dead = 0", (now, error[:500], delivery.id, delivery.claim)).rowcount
            if buried:
                self._release(conn, delivery, now)
        self._write(work)

    def dead(self, limit: int) -> list[Delivery]:
        with self._session() as conn:
            rows = conn.execute(f"SELECT {self._COLUMNS} FROM deliveries_s1 WHERE dead = 1 ORDER BY due LIMIT ?",
                                (limit,)).fetchall()
        return [self._row(r) for r in rows]

    def replay(self, delivery_id: str, now: float) -> bool:
        changed: int = self._write(lambda conn: conn.execute(
            "UPDATE deliveries_s1 SET dead = 0, attempts = 0, due = ?, claim = '' WHERE id = ? AND dead = 1",
            (now, delivery_id)).rowcount)
        return changed == 1

    def next_due(self) -> float | None:
        with self._session() as conn:
            row = conn.execute("SELECT MIN(due) FROM deliveries_s1 WHERE dead = 0").fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def remember(self, table_id: str, seat: int, player: str, app: str, now: float) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM seats_s1 WHERE expires < ?", (now,))
            conn.execute("INSERT OR REPLACE INTO seats_s1 VALUES (?, ?, ?, ?, ?)",
                         (table_id, seat, player, app, now + SEAT_TTL))
        self._write(work)

    def vouched(self, table_id: str, now: float) -> dict[int, tuple[str, str]]:
        with self._session() as conn:
            rows = conn.execute("SELECT seat, player, app FROM seats_s1 WHERE table_id = ? AND expires >= ?",
                                (table_id, now)).fetchall()
        return {int(seat): (player, app) for seat, player, app in rows}

    def subscribe(self, match_id: str, seat: int, subscription: bytes, now: float) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM push_s1 WHERE expires < ?", (now,))
            conn.execute("INSERT OR REPLACE INTO push_s1 VALUES (?, ?, ?, ?)",
                         (match_id, seat, subscription, now + SEAT_TTL))
        self._write(work)

    def subscriptions(self, match_id: str, now: float) -> dict[int, bytes]:
        with self._session() as conn:
            rows = conn.execute("SELECT seat, subscription FROM push_s1 WHERE match_id = ? AND expires >= ?",
                                (match_id, now)).fetchall()
        return {int(seat): bytes(data) for seat, data in rows}

    def forget(self, match_id: str, seat: int, subscription: bytes | None = None) -> bool:
        query = "DELETE FROM push_s1 WHERE match_id = ? AND seat = ?"
        args: tuple[Any, ...] = (match_id, seat)
        if subscription is not None:
            query, args = query + " AND subscription = ?", (*args, subscription)
        changed: int = self._write(lambda conn: conn.execute(query, args).rowcount)
        return changed > 0

    def feed_add(self, items: list[FeedItem], now: float, kept: int = FEED_KEPT) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT OR IGNORE INTO feed_s1 (player, message, created, item) VALUES (?, ?, ?, ?)",
                             [(i.player, i.message, i.created, orjson.dumps({**i.item, "created": i.created}))
                              for i in items])
            for player in {i.player for i in items}:
                conn.execute("DELETE FROM feed_s1 WHERE player = ? AND (created < ? OR n <= (SELECT n FROM feed_s1 "
                             "WHERE player = ? ORDER BY n DESC LIMIT 1 OFFSET ?))",
                             (player, now - FEED_DAYS * 86400, player, kept))
        if items:
            self._write(work)

    def feed(self, player: str, after: str | None, limit: int, now: float) -> list[tuple[str, dict[str, Any]]]:
        if after is not None and not (after.isdigit() and len(after) <= 18):
            raise FeedCursorError(f"{after[:40]!r} is no cursor of this feed")
        with self._session() as conn:
            rows = conn.execute("SELECT n, item FROM feed_s1 WHERE player = ? AND n > ? AND created >= ? ORDER BY n "
                                "LIMIT ?", (player, int(after or 0), now - FEED_DAYS * 86400, limit)).fetchall()
        return [(str(n), orjson.loads(item)) for n, item in rows]

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


# ---------------------------------------------------------------- Redis

PREFIX = "domino:notify:"
_DUE = PREFIX + "due"      # sorted set: pending delivery ids by due time
_DEAD = PREFIX + "dead"    # sorted set: dead letters by the time they died
_ITEM = PREFIX + "d:"      # hash per delivery: app, body, attempts, created, error, claim, chain
_CHAIN = PREFIX + "chain:"  # sorted set per chain: its pending delivery ids by the time each was queued
_SEATS = PREFIX + "seats:"  # hash per table: seat -> "app player"
_PUSH = PREFIX + "push:"    # hash per match: seat -> its push subscription (JSON)
_FEED = PREFIX + "feed:"    # stream per player: its notifications (field "item": JSON), ids the cursors
_TOLD = PREFIX + "told:"    # a feed's message already added (player and message id): kept as long as the feed

# ARGV: now, lease, limit, one fresh claim token per possible delivery, the item prefix, the chain prefix, the
# seconds a held delivery waits past its blocker's next attempt. Oldest first; a delivery behind an earlier one of
# its chain not settled (tried, held or due) is not taken (`Outbox.claim`).
_CLAIM = """
local now, limit = tonumber(ARGV[1]), tonumber(ARGV[3])
local item, chains, after = ARGV[4 + limit], ARGV[5 + limit], tonumber(ARGV[6 + limit])
local rows = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, limit)) do
  local f = redis.call('HMGET', item .. id, 'created', 'chain')
  table.insert(rows, {id, tonumber(f[1]) or 0, f[1] or '0', f[2] or ''})
end
table.sort(rows, function(a, b) return a[2] < b[2] end)
local taken, out, n = {}, {}, 0
for _, r in ipairs(rows) do
  local id, chain, blocker = r[1], r[4], nil
  if chain ~= '' then
    for _, other in ipairs(redis.call('ZRANGEBYSCORE', chains .. chain, '-inf', '(' .. r[3])) do
      if other ~= id and not taken[other] then
        local f = redis.call('HMGET', item .. other, 'claim', 'held')
        local due = tonumber(redis.call('ZSCORE', KEYS[1], other))
        if (f[1] and f[1] ~= '' and f[1] ~= 'delivered') or f[2] == '1' or (due and due <= now) then
          blocker = other
          break
        end
      end
    end
  end
  if blocker then
    local due = tonumber(redis.call('ZSCORE', KEYS[1], blocker)) or now
    redis.call('ZADD', KEYS[1], math.max(due, now) + after, id)
    redis.call('HSET', item .. id, 'held', '1')
  else
    n = n + 1
    taken[id] = true
    local key = item .. id
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
    redis.call('HSET', key, 'claim', ARGV[3 + n], 'held', '0')  -- in flight: no release moves it
    local f = redis.call('HMGET', key, 'app', 'body', 'attempts', 'created', 'error')
    table.insert(out, {id, f[1], f[2], f[3], f[4], f[5], ARGV[3 + n], redis.call('ZSCORE', KEYS[1], id), chain})
  end
end
return out
"""
# KEYS: the item, due; ARGV: claim token, new due, id.
_HOLD = """
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] or not redis.call('ZSCORE', KEYS[2], ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[2], tonumber(ARGV[2]), ARGV[3])
redis.call('HSET', KEYS[1], 'held', '1')
return 1
"""
#: Lua: the deliveries held behind one settled now (KEYS[2]: due; KEYS[4]: its chain; `now`, `item`) due at once.
_RELEASE = """
local function release(chain, due, at, item, clear)
  for _, other in ipairs(redis.call('ZRANGE', chain, 0, -1)) do
    if redis.call('HGET', item .. other, 'held') == '1' then
      if clear then redis.call('HSET', item .. other, 'held', '0') end
      local current = tonumber(redis.call('ZSCORE', due, other))
      if current == nil or current > at then redis.call('ZADD', due, at, other) end
    end
  end
end
"""
# KEYS: the item, due, dead, its chain; ARGV: id, now, the item prefix.
_DONE = _RELEASE + """
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
-- the item stays a little (a late put of the same id is dropped), then expires
redis.call('HSET', KEYS[1], 'claim', 'delivered')
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
release(KEYS[4], KEYS[2], tonumber(ARGV[2]), ARGV[3], true)
return 1
"""
# KEYS: the item, due, dead, its chain; ARGV: claim token, new due ("" = bury), error, id, now, the item prefix,
# the seconds a held delivery waits past it.
_SETTLE = _RELEASE + """
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] or not redis.call('ZSCORE', KEYS[2], ARGV[4]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'error', ARGV[3])
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[2], ARGV[4])
  redis.call('ZREM', KEYS[4], ARGV[4])
  redis.call('ZADD', KEYS[3], tonumber(ARGV[5]), ARGV[4])
  release(KEYS[4], KEYS[2], tonumber(ARGV[5]), ARGV[6], true)
else
  redis.call('ZADD', KEYS[2], tonumber(ARGV[2]), ARGV[4])
  -- those held behind it (maybe until its lease's end) wait only until just after its next attempt
  release(KEYS[4], KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[7]), ARGV[6], false)
end
return 1
"""
# KEYS: a match's subscriptions; ARGV: the seat, the subscription it must still be.
_FORGET = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
"""
# KEYS: the player's feed, its message's mark; ARGV: the item, the most kept, the oldest id kept, seconds kept.
_FEED_ADD = """
if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', tonumber(ARGV[4])) then return 0 end
redis.call('XADD', KEYS[1], 'MAXLEN', tonumber(ARGV[2]), '*', 'item', ARGV[1])
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[3])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return 1
"""
# KEYS: the item, due, dead; ARGV: id, now, the chain prefix.
_REPLAY = """
if redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'attempts', 0, 'claim', '')
redis.call('ZADD', KEYS[2], tonumber(ARGV[2]), ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'chain', 'created')
if f[1] and f[1] ~= '' then redis.call('ZADD', ARGV[3] .. f[1], tonumber(f[2]) or 0, ARGV[1]) end
return 1
"""


class RedisOutbox:
    """The outbox on the live store's Redis (a cluster: every gateway shares it)."""

    def __init__(self, url: str, timeout: float = 2.0) -> None:
        import redis

        self._errors: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError)
        self._redis = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self._claim = self._redis.register_script(_CLAIM)
        self._settle = self._redis.register_script(_SETTLE)
        self._replay = self._redis.register_script(_REPLAY)
        self._hold = self._redis.register_script(_HOLD)
        self._done = self._redis.register_script(_DONE)
        self._forget = self._redis.register_script(_FORGET)
        self._feed_add = self._redis.register_script(_FEED_ADD)

    def _run(self, work: Callable[[], Any]) -> Any:
        try:
            return work()
        except self._errors as exc:
            raise StoreUnavailable(f"webhook outbox: {exc}") from exc

    def put(self, deliveries: list[Delivery]) -> None:
        def work() -> None:
            pipe = self._redis.pipeline(transaction=True)
            for d in deliveries:
                # a delivery already queued under this id (pending, dead or done) is not queued again
                pipe.hsetnx(_ITEM + d.id, "app", d.app)
            fresh = pipe.execute()
            pipe = self._redis.pipeline(transaction=True)
            for d, new in zip(deliveries, fresh, strict=True):
                if new:
                    pipe.hset(_ITEM + d.id, mapping={"body": d.body, "attempts": d.attempts, "created": d.created,
                                                     "error": d.error, "claim": d.claim, "chain": d.chain})
                    pipe.zadd(_DUE, {d.id: d.due})
                    if d.chain:
                        pipe.zadd(_CHAIN + d.chain, {d.id: d.created})
            pipe.execute()
        if deliveries:
            self._run(work)

    def claim(self, now: float, lease: float, limit: int) -> list[Delivery]:
        rows = self._run(lambda: self._claim(keys=[_DUE], args=[now, lease, limit, *(_token() for _ in range(limit)),
                                                                _ITEM, _CHAIN, HELD_AFTER]))
        return [Delivery(_text(r[0]), _text(r[1]), bytes(r[2] or b""), int(r[3] or 0), float(r[7]),
                         float(r[4] or 0), _text(r[5]), _text(r[6]), _text(r[8])) for r in rows]

    def hold(self, delivery: Delivery, due: float) -> None:
        self._run(lambda: self._hold(keys=[_ITEM + delivery.id, _DUE], args=[delivery.claim, repr(due), delivery.id]))

    def delivered(self, delivery: Delivery) -> None:
        self._run(lambda: self._done(keys=[_ITEM + delivery.id, _DUE, _DEAD, _CHAIN + delivery.chain],
                                     args=[delivery.id, time.time(), _ITEM, DONE_KEPT]))

    def failed(self, delivery: Delivery, due: float, error: str) -> None:
        self._run(lambda: self._settle(keys=[_ITEM + delivery.id, _DUE, _DEAD, _CHAIN + delivery.chain],
                                       args=[delivery.claim, repr(due), error[:500], delivery.id, time.time(), _ITEM,
                                             HELD_AFTER]))

    def bury(self, delivery: Delivery, error: str) -> None:
        self._run(lambda: self._settle(keys=[_ITEM + delivery.id, _DUE, _DEAD, _CHAIN + delivery.chain],
                                       args=[delivery.claim, "", error[:500], delivery.id, time.time(), _ITEM,
                                             HELD_AFTER]))

    def dead(self, limit: int) -> list[Delivery]:
        def work() -> list[Delivery]:
            ids = [_text(i) for i in self._redis.zrange(_DEAD, 0, limit - 1)]
            pipe = self._redis.pipeline(transaction=False)
            for i in ids:
                pipe.hmget(_ITEM + i, "app", "body", "attempts", "created", "error")
            return [Delivery(i, _text(f[0]), bytes(f[1] or b""), int(f[2] or 0), 0.0, float(f[3] or 0), _text(f[4]))
                    for i, f in zip(ids, pipe.execute(), strict=True)]
        found: list[Delivery] = self._run(work)
        return found

    def replay(self, delivery_id: str, now: float) -> bool:
        return bool(self._run(lambda: self._replay(keys=[_ITEM + delivery_id, _DUE, _DEAD],
                                                   args=[delivery_id, now, _CHAIN])))

    def next_due(self) -> float | None:
        first = self._run(lambda: self._redis.zrange(_DUE, 0, 0, withscores=True))
        return float(first[0][1]) if first else None

    def remember(self, table_id: str, seat: int, player: str, app: str, now: float) -> None:
        def work() -> None:
            pipe = self._redis.pipeline(transaction=True)
            pipe.hset(_SEATS + table_id, str(seat), f"{app} {player}")
            pipe.expire(_SEATS + table_id, SEAT_TTL)
            pipe.execute()
        self._run(work)

    def vouched(self, table_id: str, now: float) -> dict[int, tuple[str, str]]:
        found = self._run(lambda: self._redis.hgetall(_SEATS + table_id))
        seats: dict[int, tuple[str, str]] = {}
        for seat, text in found.items():
            app, _, player = _text(text).partition(" ")
            seats[int(seat)] = (player, app)
        return seats

    def subscribe(self, match_id: str, seat: int, subscription: bytes, now: float) -> None:
        def work() -> None:
            pipe = self._redis.pipeline(transaction=True)
            pipe.hset(_PUSH + match_id, str(seat), subscription)
            pipe.expire(_PUSH + match_id, SEAT_TTL)
            pipe.execute()
        self._run(work)

    def subscriptions(self, match_id: str, now: float) -> dict[int, bytes]:
        found = self._run(lambda: self._redis.hgetall(_PUSH + match_id))
        return {int(seat): bytes(data) for seat, data in found.items()}

    def forget(self, match_id: str, seat: int, subscription: bytes | None = None) -> bool:
        if subscription is None:
            return bool(self._run(lambda: self._redis.hdel(_PUSH + match_id, str(seat))))
        return bool(self._run(lambda: self._forget(keys=[_PUSH + match_id], args=[str(seat), subscription])))

    def feed_add(self, items: list[FeedItem], now: float, kept: int = FEED_KEPT) -> None:
        oldest = f"{int((now - FEED_DAYS * 86400) * 1000)}-0"
        seconds = FEED_DAYS * 86400

        def work() -> None:
            for i in items:
                self._feed_add(keys=[_FEED + i.player, _TOLD + i.player + ":" + i.message],
                               args=[orjson.dumps({**i.item, "created": i.created}), kept, oldest, seconds])
        if items:
            self._run(work)

    def feed(self, player: str, after: str | None, limit: int, now: float) -> list[tuple[str, dict[str, Any]]]:
        if after is not None and not _STREAM_ID.fullmatch(after):
            raise FeedCursorError(f"{after[:40]!r} is no cursor of this feed")
        start = "-" if after is None else f"({after}"
        rows = self._run(lambda: self._redis.xrange(_FEED + player, start, "+", count=limit))
        oldest = now - FEED_DAYS * 86400
        found = [(_text(n), orjson.loads(fields[b"item"])) for n, fields in rows]
        return [(n, item) for n, item in found if float(item.get("created", 0)) >= oldest]

    def close(self) -> None:
        self._redis.close()


_STREAM_ID = re.compile(r"\d{1,15}-\d{1,10}")


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)
