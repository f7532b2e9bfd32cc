"""The live store of a cluster: one Redis that every gateway replica shares.

Compare-and-set of a match's version is a Lua script (`_ADVANCE`), so it is atomic with everything
the advance writes. A hosted match's event log is a list, one item per version (every viewer's line
of it, newline-joined; item i is version i), read from a version on with LRANGE. The wait for the next
event is pushed: every advance is published on its match's own channel (``domino:m:<match id hex>``),
and each gateway worker subscribes, on one connection, to the channels of the matches its streams
watch (`RedisWakeups`): Redis sends a move to the workers that watch its match and to no other.
A message sent while a worker's connection is down is lost; the worker then reads every match it
watches again (`RESYNC`), from the version its streams have: the log, not the message, is the truth.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import urlsplit

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

__all__ = ["RedisStore", "RedisWakeups"]

# KEYS: the record, the public lines, the receipt, a hosted match's hash, the clocks' deadlines (a sorted
# set), the hosted match's event log (a list); ARGV: expected seq, new seq, ttl, receipt digest (empty:
# none), receipt answer, the number of public lines, the hosted token (empty: not hosted), over ("1"/"0"),
# the clocks (JSON, empty: none), the running clock's deadline (empty: none), the public lines, then the
# hosted version's event (every viewer's line, newline-joined).
# {1}: advanced; {0, latest}: stale; {-1}: no record;
# {2, answer}: this very request (its digest) already advanced from the expected seq.
# The last ARGV is the record lines that left the state (empty: none), appended to domino:rl:<match>
# (the key made from KEYS[1]'s id, so that the arguments before it keep their places).
# The write that ends a hosted match puts it in domino:unarchived, scored by its deadline (RedisStore.UNARCHIVED).
# An advance is published on its match's channel (domino:m:<match id hex>): the workers watching it read it.
# One that writes a deadline is also published on the keepers' channel (DEADLINES: 32 zeros).
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
  local tid = redis.call('HGET', KEYS[4], 'table_id')
  if tid then
    if ARGV[8] == '1' then  -- its match ended: TABLE_AFTER_END more (a new deal gives its lifetime back)
      redis.call('EXPIRE', 'domino:tb2:' .. tid, math.min(tonumber(ARGV[3]), {table_after_end}))
    else redis.call('EXPIRE', 'domino:tb2:' .. tid, ARGV[3], 'GT') end
  end
  local match = string.sub(KEYS[4], 10)
  if ARGV[10] ~= '' and ARGV[8] ~= '1' then
    redis.call('ZADD', KEYS[5], ARGV[10], match)
  else
    redis.call('ZREM', KEYS[5], match)
    if ARGV[10] ~= '' then redis.call('ZADD', 'domino:unarchived', ARGV[10], match) end
  end
  redis.call('RPUSH', KEYS[6], ARGV[11 + npublic])
  redis.call('EXPIRE', KEYS[6], ARGV[3])
end
local record = ARGV[#ARGV]
if record ~= '' then
  local key = 'domino:rl:' .. string.sub(KEYS[1], 10)
  redis.call('RPUSH', key, record)
  redis.call('EXPIRE', key, ARGV[3])
end
redis.call('PUBLISH', 'domino:m:' .. string.sub(KEYS[1], 10), ARGV[2])
if ARGV[7] ~= '' and ARGV[10] ~= '' then redis.call('PUBLISH', 'domino:m:00000000000000000000000000000000', '') end
return {1, 0}
""".replace("{table_after_end}", str(TABLE_AFTER_END))


# KEYS: the match's version, public lines, receipt, hosted hash, record, event log. ARGV: ttl, the end mark.
# {latest version or nil, a hosted match's clocks or nil}. Each key's expiry is pushed to ttl, never shortened
# (GT: a match kept past a long turn clock's deadline stays kept), unless the match has ended (its public lines
# end with the end mark): its ending set its lifetime (`kept`, `archived`), which a look at the final view must
# not undo (it kept a finished match a whole ttl again).
_CHECK = """
local latest = redis.call('GET', KEYS[1])
if latest and redis.call('LINDEX', KEYS[2], -1) ~= ARGV[2] then
  for i = 1, #KEYS do
    redis.call('EXPIRE', KEYS[i], ARGV[1], 'GT')
  end
end
return {latest, redis.call('HGET', KEYS[4], 'clocks')}
"""


# KEYS: the match's version, its hosted hash; ARGV: the tables' key prefix, then the table fields to read.
# {}: no such hosted match; else {version, table_id, token, over, viewers, clocks, <table fields>}.
#: `RedisStore.hit`: count a hit in the key's window, the window starting with the first hit (its expiry);
#: answers the count and the milliseconds left of the window.
_HIT = """
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  left = tonumber(ARGV[2])
end
return {n, left}
"""

#: `RedisStore.seen` (KEYS: the stamp, the matches' changes. ARGV: the kept times' lifetime, then for each match its
#: id in hex, the number of its seats, and seat, time pairs): each seat's time kept unless a later one is.
_SEEN = """
local stamp = redis.call('INCR', KEYS[1])
local i = 2
while i <= #ARGV do
  local key, n = 'domino:pr:' .. ARGV[i], tonumber(ARGV[i + 1])
  for j = i + 2, i + 2 * n, 2 do
    if tonumber(ARGV[j + 1]) > tonumber(redis.call('HGET', key, ARGV[j]) or '0') then
      redis.call('HSET', key, ARGV[j], ARGV[j + 1])
    end
  end
  redis.call('EXPIRE', key, ARGV[1])
  redis.call('ZADD', KEYS[2], stamp, ARGV[i])
  i = i + 2 + 2 * n
end
"""

#: `RedisStore.beat` (KEYS: the workers' beats, a hash; the presence stamp; the matches' changes, a sorted set by
#: stamp; the stamp below which changes were forgotten. ARGV: the worker, its time, now, the kept times' lifetime,
#: the most changes kept): the worker's beat, then each worker whose beats ran out settled (its marks kept as here
#: until its last beat, then gone). Answers {the stamp, 1 if the worker was known}.
_BEAT = """
local known = redis.call('HEXISTS', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local beats = redis.call('HGETALL', KEYS[1])
for i = 1, #beats, 2 do
  local worker, last = beats[i], beats[i + 1]
  if tonumber(last) <= tonumber(ARGV[3]) then
    local stamp = redis.call('INCR', KEYS[2])
    for _, m in ipairs(redis.call('SMEMBERS', 'domino:pmw:' .. worker)) do
      local sep = string.find(m, ':', 1, true)
      local match, seat = string.sub(m, 1, sep - 1), string.sub(m, sep + 1)
      redis.call('ZADD', KEYS[3], stamp, match)
      local key = 'domino:pr:' .. match
      if tonumber(last) > tonumber(redis.call('HGET', key, seat) or '0') then redis.call('HSET', key, seat, last) end
      redis.call('EXPIRE', key, ARGV[4])
      redis.call('SREM', 'domino:pm:' .. match, seat .. ':' .. worker)
    end
    redis.call('DEL', 'domino:pmw:' .. worker)
    redis.call('HDEL', KEYS[1], worker)
  end
end
local over = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[5])
if over > 0 then
  local last = redis.call('ZRANGE', KEYS[3], over - 1, over - 1, 'WITHSCORES')
  redis.call('SET', KEYS[4], last[2])
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, over - 1)
end
return {tonumber(redis.call('GET', KEYS[2]) or '0'), known}
"""

#: `RedisStore.mark` (KEYS: the worker's marks, a set of <match>:<seat>; the stamp; the matches' changes. ARGV: the
#: worker, the lifetime, the number of streams opened, then <match hex> <seat> of each, then <match hex> <seat> <until> of each closed).
#: A match's marks are a set (domino:pm:<match>) of <seat>:<worker>.
_MARK = """
local stamp = redis.call('INCR', KEYS[2])
local opened = tonumber(ARGV[3])
for i = 4, 3 + 2 * opened, 2 do
  redis.call('ZADD', KEYS[3], stamp, ARGV[i])
  local key = 'domino:pm:' .. ARGV[i]
  redis.call('SADD', key, ARGV[i + 1] .. ':' .. ARGV[1])
  redis.call('EXPIRE', key, ARGV[2])
  redis.call('SADD', KEYS[1], ARGV[i] .. ':' .. ARGV[i + 1])
end
for i = 4 + 2 * opened, #ARGV, 3 do
  local match, seat, untl = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  redis.call('ZADD', KEYS[3], stamp, match)
  redis.call('SREM', 'domino:pm:' .. match, seat .. ':' .. ARGV[1])
  redis.call('SREM', KEYS[1], match .. ':' .. seat)
  local key = 'domino:pr:' .. match
  if tonumber(untl) > tonumber(redis.call('HGET', key, seat) or '0') then redis.call('HSET', key, seat, untl) end
  redis.call('EXPIRE', key, ARGV[2])
end
"""

#: `RedisStore.presences` (KEYS: the workers' beats. ARGV: now, then the matches' ids in hex): for each match, its
#: seats and times as a flat list, a mark at its worker's beat ('inf' while the worker beats; none for a worker
#: the store does not know).
_PRESENCES = """
local now = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV do
  local found = redis.call('HGETALL', 'domino:pr:' .. ARGV[i])
  for _, m in ipairs(redis.call('SMEMBERS', 'domino:pm:' .. ARGV[i])) do
    local sep = string.find(m, ':', 1, true)
    local last = redis.call('HGET', KEYS[1], string.sub(m, sep + 1))
    if last then
      found[#found + 1] = string.sub(m, 1, sep - 1)
      found[#found + 1] = tonumber(last) > now and 'inf' or last
    end
  end
  out[#out + 1] = found
end
return out
"""

_SEATED = """
local latest = redis.call('GET', KEYS[1])
if not latest then return {} end
local hosted = redis.call('HMGET', KEYS[2], 'table_id', 'token', 'over', 'viewers', 'clocks')
if not hosted[1] then return {} end
local fields = {}
for i = 2, #ARGV do fields[#fields + 1] = ARGV[i] end
local table = redis.call('HMGET', ARGV[1] .. hosted[1], unpack(fields))
local found = {latest, hosted[1], hosted[2], hosted[3], hosted[4], hosted[5] or ''}
for i = 1, #table do found[#found + 1] = table[i] end
return found
"""


class RedisStore:
    """One Redis shared by every gateway replica: ``domino:v:<match id hex> -> seq`` with an expiry."""

    PREFIX = "domino:v:"
    PUBLIC = "domino:p:"  # the match's public lines, a list
    RECEIPT = "domino:r:"  # the receipt of the latest advance, a hash: seq, digest, answer
    HOSTED = "domino:h:"  # a hosted match, a hash: table_id, token, over, viewers
    EVENTS = "domino:e:"  # a hosted match's event log, a list (index: version) of every viewer's line
    TABLE = "domino:tb2:"  # a table's record, a hash: version, record, public, variant, free, created, ...
    LOBBY = "domino:lobby2"  # public tables with a seat free, a sorted set by creation time
    LOBBY_OF = "domino:lobby2:"  # the same, of one variant: <variant>
    SEEKABLE = "domino:seek:"  # quick-play tables waiting, by creation time: <variant>:<players>:<clock>
    FILL = "domino:fill"  # quick-play tables by the time their wait for people ends
    INBOX = "domino:inbox:"  # a player's inbox: <player> -> the tables where they hold a seat, by write time
    #: The most tables one player's inbox index keeps (the latest written): it has no expiry (a table's
    #: moves push the table's, not its players'), so a player who never reads it again leaves at most these.
    INBOX_MOST = 500
    TICKET = "domino:k:"  # a stream ticket (its hash), a string with an expiry
    PRESENCE = "domino:pr:"  # a hosted match's presence, a hash: seat -> until when it counts as here
    #: The presence's beats (a hash: worker -> until when it is alive), stamp (a counter moved by every change of
    #: presence) and each worker's marks (a set of <match hex>:<seat>); a match's marks: domino:pm:<match hex>.
    BEATS = "domino:pw"
    STAMP = "domino:pstamp"
    #: Each match's latest change of presence (a sorted set: match hex by stamp), at most `CHANGES_KEPT` of them
    #: (the latest); the stamp of the latest forgotten (a reader from before it reads every match).
    CHANGED = "domino:pchanged"
    FORGOTTEN = "domino:pchanged:forgotten"
    CHANGES_KEPT = 200_000
    MARKS_OF = "domino:pmw:"
    COUNTER = "domino:n:"  # a limit's counter in its window, a string with an expiry (the window's end)
    DEADLINES = "domino:deadlines"  # hosted matches whose turn clock runs, a sorted set by deadline
    UNARCHIVED = "domino:unarchived"  # hosted matches over and not yet confirmed archived, by deadline (_ADVANCE)
    CHANNEL = "domino:m:"  # pub/sub: a match's advances (its new version), for the workers watching it
    RECORD = "domino:rl:"  # a sealed match's log lines that left its state, a list (one item per round)

    def __init__(self, url: str, ttl: int = DEFAULT_TTL, timeout: float = 1.0, table_idle: int | None = None) -> None:
        import redis  # only a cluster needs it

        self.url = url
        self.ttl = ttl
        self.table_idle = ttl if table_idle is None else table_idle
        self._timeout = timeout
        self._errors: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError)
        self._redis = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                           health_check_interval=30)
        self._advance = self._redis.register_script(_ADVANCE)
        self._check = self._redis.register_script(_CHECK)
        self._seated = self._redis.register_script(_SEATED)
        self._release = self._redis.register_script(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0")
        self._hit = self._redis.register_script(_HIT)
        self._seen = self._redis.register_script(_SEEN)
        self._beat = self._redis.register_script(_BEAT)
        self._mark = self._redis.register_script(_MARK)
        self._presences = self._redis.register_script(_PRESENCES)
        self._wakeups: RedisWakeups | None = None
        self._trips: Any = None

    def _run(self, work: Callable[[], Any]) -> Any:
        trips = self._trips
        if trips is None:  # the metric is made on first use: a process that never calls makes no metrics (the
            from api_gateway.metrics import (
                STORE_TRIPS,  # gunicorn master, whose imports precede its multiprocess mode)
            )

            trips = self._trips = STORE_TRIPS.labels("redis")
        trips.inc()
        try:
            return work()
        except self._errors as exc:
            raise StoreUnavailable(f"token store {urlsplit(self.url).hostname}: {exc}") from None

    def kept(self, over: bool, deadline: float | None = None, now: float = 0.0, table: bool = False) -> int:
        if over:
            return min(self.ttl, FINISHED_TTL)
        idle = self.table_idle if table else self.ttl
        return idle if deadline is None else max(idle, int(deadline - now) + self.ttl)

    def ping(self) -> None:
        self._run(self._redis.ping)

    def _key(self, match_id: bytes) -> str:
        return self.PREFIX + match_id.hex()

    def create(self, match_id: bytes, public: bytes = b"") -> None:
        lines = split_lines(public)

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

    def check(self, match_id: bytes, seq: int) -> bytes | None:
        hexid = match_id.hex()
        latest, clocks = self._run(lambda: self._check(  # clocks: a hosted match's (b"" for none), None when not hosted
            keys=[self._key(match_id), self.PUBLIC + hexid, self.RECEIPT + hexid, self.HOSTED + hexid,
                  self.RECORD + hexid, self.EVENTS + hexid], args=[self.ttl, END]))
        if latest is None:
            raise MatchExpired()
        if int(latest) != seq:
            raise StaleToken(int(latest), seq)
        return None if clocks is None else bytes(clocks)

    def advance(self, match_id: bytes, seq: int, public: bytes = b"", over: bool = False,
                receipt: Receipt | None = None, hosted: Hosted | None = None, record: bytes = b"") -> bytes | None:
        lines = split_lines(public) + ([END] if over else [])
        hexid = match_id.hex()
        digest, answer = (receipt.digest, receipt.answer) if receipt is not None else (b"", b"")
        event = b"\n".join(hosted.lines) if hosted is not None else b""
        done, latest = self._run(lambda: self._advance(
            keys=[self._key(match_id), self.PUBLIC + hexid, self.RECEIPT + hexid, self.HOSTED + hexid,
                  self.DEADLINES, self.EVENTS + hexid],
            args=[seq, seq + 1, self.kept(over, hosted.deadline if hosted is not None else None, time.time(),
                                      hosted is not None), digest,
                  answer, len(lines), hosted.token if hosted is not None else "",
                  "1" if over else "0", hosted.clocks if hosted is not None else b"",
                  "" if hosted is None or hosted.deadline is None else repr(hosted.deadline), *lines, event,
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

    def _first_score(self, key: str) -> float | None:
        found = self._run(partial(self._redis.zrange, key, 0, 0, withscores=True))
        return float(found[0][1]) if found else None

    def next_due(self) -> float | None:
        return self._first_score(self.DEADLINES)

    def next_unarchived(self) -> float | None:
        return self._first_score(self.UNARCHIVED)

    def next_fill(self) -> float | None:
        return self._first_score(self.FILL)

    def forget_due(self, match_id: bytes) -> None:
        self._run(partial(self._redis.zrem, self.DEADLINES, match_id.hex()))

    def unarchived(self, now: float, limit: int) -> list[bytes]:
        return self._by_score(self.UNARCHIVED, now, limit)

    def archived(self, match_id: bytes) -> None:
        hexid = match_id.hex()

        def work() -> Any:
            pipe = self._redis.pipeline(transaction=False)
            pipe.zrem(self.UNARCHIVED, hexid)
            for key in (self._key(match_id), self.PUBLIC + hexid, self.RECEIPT + hexid, self.HOSTED + hexid,
                        self.RECORD + hexid, self.EVENTS + hexid, self.PRESENCE + hexid):
                pipe.expire(key, ARCHIVED_TTL, lt=True)  # shortened, never lengthened
            return pipe.execute()
        self._run(work)

    def lines(self, match_id: bytes, viewer: int, start: int) -> tuple[list[bytes], bool]:
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=True)
            pipe.hget(self.HOSTED + match_id.hex(), "over")
            pipe.lrange(self.EVENTS + match_id.hex(), start, -1)
            return pipe.execute()
        over, events = self._run(work)
        if over is None:
            raise MatchExpired()
        return [bytes(x).split(b"\n")[viewer] for x in events], over == b"1"

    _TABLE_FIELDS = ("version", "record", "public", "variant", "free", "created", "players", "clock", "seek",
                     "fill_at")

    @staticmethod
    def _table_row(table_id: str, found: list[Any]) -> TableRow | None:
        if found[0] is None:
            return None
        return TableRow(table_id, int(found[0]), bytes(found[1]), found[2] == b"1", found[3].decode(), int(found[4]),
                        float(found[5]), int(found[6]), found[7].decode(), found[8] == b"1",
                        float(found[9]) if found[9] else None)

    def table(self, table_id: str) -> TableRow | None:
        found = self._run(lambda: self._redis.hmget(self.TABLE + table_id, *self._TABLE_FIELDS))
        return self._table_row(table_id, found)

    def seated(self, match_id: bytes) -> tuple[HostedMatch, TableRow]:
        """One script: the match's version and hosted record, then its table's record (named by the first)."""
        found = self._run(lambda: self._seated(keys=[self._key(match_id), self.HOSTED + match_id.hex()],
                                               args=[self.TABLE, *self._TABLE_FIELDS]))
        if not found:
            raise MatchExpired()
        latest, (table_id, token, over, viewers, clocks), table = found[0], found[1:6], found[6:]
        row = self._table_row(table_id.decode(), table)
        if row is None:
            raise MatchExpired()
        return HostedMatch(table_id.decode(), token.decode(), int(latest), over == b"1", int(viewers),
                           bytes(clocks or b"")), row

    def _rows(self, ids: list[bytes], index: str) -> list[TableRow]:
        """The records of the tables an index named, in its order, in one round trip; the ids whose record
        expired are taken out of the index."""
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=False)
            for raw in ids:
                pipe.hmget(self.TABLE + raw.decode(), *self._TABLE_FIELDS)
            return pipe.execute()
        rows, gone = [], []
        for raw, found in zip(ids, self._run(work) if ids else []):
            row = self._table_row(raw.decode(), found)
            if row is None:
                gone.append(raw)
            else:
                rows.append(row)
        if gone:
            self._run(partial(self._redis.zrem, index, *gone))
        return rows

    def _seek_key(self, variant: str, players: int, clock: str) -> str:
        return f"{self.SEEKABLE}{variant}:{players}:{clock}"

    def put_table(self, row: TableRow, deal: Deal | None = None) -> bool:
        import redis

        key = self.TABLE + row.table_id

        def work() -> bool:
            with self._redis.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(key)
                    found: Any = pipe.hmget(key, "version", "seated")
                    version, seated = found
                    if (int(version) if version is not None else 0) != row.version - 1:
                        return False
                    left: Any = pipe.ttl(key)  # never sooner than its match's (a long clock's)
                    keep = max(self.kept(False, deal.hosted.deadline if deal is not None else None, time.time(), True),
                               int(left))
                    pipe.multi()
                    pipe.hset(key, mapping={"version": row.version, "record": row.record,
                                            "public": "1" if row.public else "0", "variant": row.variant,
                                            "free": row.free, "created": repr(row.created), "players": row.players,
                                            "clock": row.clock, "seek": "1" if row.seek else "0",
                                            "fill_at": "" if row.fill_at is None else repr(row.fill_at),
                                            "seated": "\n".join(row.seated)})
                    pipe.expire(key, keep)
                    self._seat_players(pipe, row, bytes(seated or b"").decode())
                    for index, member in ((self.LOBBY, row.public and row.free > 0),
                                          (self.LOBBY_OF + row.variant, row.public and row.free > 0),
                                          (self._seek_key(row.variant, row.players, row.clock), row.seek and row.free > 0)):
                        if member:
                            pipe.zadd(index, {row.table_id: row.created})
                        else:
                            pipe.zrem(index, row.table_id)
                    if row.fill_at is not None:
                        pipe.zadd(self.FILL, {row.table_id: row.fill_at})
                    else:
                        pipe.zrem(self.FILL, row.table_id)
                    if deal is not None:
                        hexid = deal.match_id.hex()
                        pipe.set(self._key(deal.match_id), 0, ex=keep)
                        lines = split_lines(deal.public)
                        if lines:
                            pipe.rpush(self.PUBLIC + hexid, *lines)
                            pipe.expire(self.PUBLIC + hexid, keep)
                        pipe.hset(self.HOSTED + hexid, mapping={"table_id": row.table_id, "token": deal.hosted.token,
                                                                "over": "0", "viewers": len(deal.hosted.lines),
                                                                "clocks": deal.hosted.clocks})
                        pipe.expire(self.HOSTED + hexid, keep)
                        if deal.hosted.deadline is not None:
                            pipe.zadd(self.DEADLINES, {hexid: deal.hosted.deadline})
                        pipe.rpush(self.EVENTS + hexid, b"\n".join(deal.hosted.lines))
                        pipe.expire(self.EVENTS + hexid, keep)
                    if row.fill_at is not None or (deal is not None and deal.hosted.deadline is not None):
                        pipe.publish(self.CHANNEL + DEADLINES.hex(), b"")
                    pipe.execute()
                    return True
                except redis.WatchError:
                    return False
        done: bool = self._run(work)
        return done

    def _seat_players(self, pipe: Any, row: TableRow, before: str) -> None:
        """The inbox index in a table's write (`pipe`, a transaction): out of the inbox of each player the last
        write named (`before`, newline-joined) and this one does not; into each of this one's, at the top."""
        for player in set(before.split("\n")) - set(row.seated) - {""}:
            pipe.zrem(self.INBOX + player, row.table_id)
        for player in row.seated:
            pipe.zadd(self.INBOX + player, {row.table_id: time.time()})
            pipe.zremrangebyrank(self.INBOX + player, 0, -self.INBOX_MOST - 1)

    def inbox(self, player: str, limit: int) -> list[TableRow]:
        """The latest written of the player's sorted set, with their records in one round trip; the ids of
        tables that expired are taken out of it (`_rows`)."""
        index = self.INBOX + player
        found: list[TableRow] = []
        while len(found) < limit:
            ids = list(self._run(partial(self._redis.zrevrange, index, len(found), limit - 1)))
            rows = self._rows(ids, index)
            found += rows
            if len(rows) == len(ids):  # none expired: nothing more to read in place of one
                break
        return found

    def lobby(self, variant: str | None, limit: int, before: tuple[float, str] | None) -> list[TableRow]:
        """A range of the lobby's sorted set (all variants, or one variant's), newest first; records read in
        one pipeline. Ties in creation time (the cursor's) are ordered by id, as SQLite orders them."""
        index = self.LOBBY if variant is None else self.LOBBY_OF + variant
        high: Any = "+inf" if before is None else before[0]
        found: list[TableRow] = []
        offset = 0
        while len(found) < limit:
            want = limit - len(found) + 1
            ids = self._run(partial(self._redis.zrevrangebyscore, index, high, "-inf", start=offset, num=want,
                                    withscores=True))
            if not ids:
                break
            offset += len(ids)
            fresh = [raw for raw, score in ids
                     if before is None or score != before[0] or raw.decode() < before[1]]
            found += [r for r in self._rows(fresh, index) if r.public and r.free > 0]
        found.sort(key=lambda r: (r.created, r.table_id), reverse=True)
        return found[:limit]

    def seekable(self, variant: str, players: int, clock: str, limit: int) -> list[TableRow]:
        index = self._seek_key(variant, players, clock)
        ids = self._run(partial(self._redis.zrange, index, 0, limit - 1))
        return [r for r in self._rows(list(ids), index) if r.seek and r.free > 0]

    def fillable(self, now: float, limit: int) -> list[TableRow]:
        ids = self._run(partial(self._redis.zrangebyscore, self.FILL, "-inf", repr(now), start=0, num=limit))
        return [r for r in self._rows(list(ids), self.FILL) if r.fill_at is not None]

    LEASE = "domino:lease:"  # a lease's holder, a string with an expiry

    def lease(self, name: str, holder: bytes, seconds: float) -> bool:
        taken = self._run(lambda: self._redis.set(self.LEASE + name, holder, nx=True, px=max(1, int(seconds * 1000))))
        return bool(taken)

    def release(self, name: str, holder: bytes) -> None:
        self._run(lambda: self._release(keys=[self.LEASE + name], args=[holder]))

    def beat(self, worker: str, until: float) -> tuple[int, bool]:
        stamp, known = self._run(lambda: self._beat(
            keys=[self.BEATS, self.STAMP, self.CHANGED, self.FORGOTTEN],
            args=[worker, repr(until), repr(time.time()), self.ttl, self.CHANGES_KEPT]))
        return int(stamp), bool(known)

    def mark(self, worker: str, opened: list[tuple[bytes, int]], closed: list[tuple[bytes, int, float]]) -> None:
        args: list[Any] = [worker, self.ttl, len(opened)]
        for match_id, seat in opened:
            args += [match_id.hex(), seat]
        for match_id, seat, until in closed:
            args += [match_id.hex(), seat, repr(until)]
        self._run(lambda: self._mark(keys=[self.MARKS_OF + worker, self.STAMP, self.CHANGED], args=args))

    def seen(self, marks: dict[bytes, dict[int, float]]) -> None:
        args: list[Any] = [self.ttl]
        for match_id, until in marks.items():
            args += [match_id.hex(), len(until)]
            for seat, t in until.items():
                args += [seat, repr(t)]
        self._run(lambda: self._seen(keys=[self.STAMP, self.CHANGED], args=args))

    def changed_since(self, stamp: int) -> tuple[int, list[bytes] | None]:
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=True)
            pipe.get(self.STAMP)
            pipe.get(self.FORGOTTEN)
            pipe.zrangebyscore(self.CHANGED, f"({stamp}", "+inf")
            return pipe.execute()
        now, forgotten, changed = self._run(work)
        if forgotten is not None and int(float(forgotten)) > stamp:
            return int(now or 0), None
        return int(now or 0), [bytes.fromhex(m.decode()) for m in changed]

    def presence(self, match_id: bytes) -> dict[int, float]:
        return self.presences([match_id]).get(match_id, {})

    def presences(self, match_ids: list[bytes]) -> dict[bytes, dict[int, float]]:
        if not match_ids:
            return {}
        found = self._run(lambda: self._presences(keys=[self.BEATS],
                                                  args=[repr(time.time()), *(m.hex() for m in match_ids)]))
        shown: dict[bytes, dict[int, float]] = {}
        for match_id, flat in zip(match_ids, found):
            seats: dict[int, float] = {}
            for seat, until in zip(flat[::2], flat[1::2]):
                seats[int(seat)] = max(seats.get(int(seat), 0.0), float(until))
            if seats:
                shown[match_id] = seats
        return shown

    def hit(self, key: str, window: float, weight: int = 1) -> tuple[int, float]:
        count, left = self._run(lambda: self._hit(keys=[self.COUNTER + key], args=[weight, max(1, int(window * 1000))]))
        return int(count), int(left) / 1000

    def put_ticket(self, ticket: bytes, payload: bytes, ttl: int) -> None:
        self._run(lambda: self._redis.set(self.TICKET + ticket.hex(), payload, ex=ttl))

    def wakeups(self) -> RedisWakeups:
        """This process's wake-ups: one subscriber connection per worker, made on first use (after the fork)."""
        if self._wakeups is None or self._wakeups.pid != os.getpid():
            self._wakeups = RedisWakeups(self)
        return self._wakeups

    def take_ticket(self, ticket: bytes) -> bytes | None:
        found = self._run(lambda: self._redis.getdel(self.TICKET + ticket.hex()))
        return None if found is None else bytes(found)

    def close(self) -> None:
        self._redis.close()


class RedisWakeups:
    """One worker's wake-ups on Redis (`Wakeups`): one pub/sub connection subscribed to the channels of
    the matches this worker's streams watch (``domino:m:<match id hex>``). `watch` returns once Redis has
    confirmed the subscription to the reader (`wait`, on the worker's one greenlet that reads; at most
    `timeout` seconds), so every advance published after it is heard. When the connection is lost,
    `wait` subscribes again to every watched channel and answers `RESYNC`: what was published meanwhile
    is read from the log."""

    def __init__(self, store: RedisStore) -> None:
        self._store = store
        self.pid = os.getpid()
        self._watched: dict[bytes, int] = {}
        self._pubsub: Any = None
        self._lock = threading.Lock()  # one `watch`/`unwatch` at a time on the subscriber connection
        self._any = threading.Event()   # something is watched: `wait` has a subscription to read
        self._stopping = False
        self._lost = False
        #: Subscriptions sent and not yet confirmed: set by `wait` when Redis confirms each.
        self._confirming: dict[str, threading.Event] = {}

    def _channel(self, match_id: bytes) -> str:
        return self._store.CHANNEL + match_id.hex()

    def _connected(self) -> Any:
        if self._pubsub is None:
            self._pubsub = self._store._redis.pubsub()
        return self._pubsub

    def watch(self, match_id: bytes) -> None:
        with self._lock:
            count = self._watched.get(match_id, 0)
            self._watched[match_id] = count + 1
            if count:
                return
            channel = self._channel(match_id)
            confirmed = self._confirming[channel] = threading.Event()
            try:
                self._store._run(partial(self._connected().subscribe, channel))
            except BaseException:
                self._watched.pop(match_id, None)
                self._confirming.pop(channel, None)
                raise
            self._any.set()
        # Redis takes a connection's commands in order, but not one connection's before another's: the log is
        # read after this returns (on another connection), so the subscription must be in place by then.
        confirmed.wait(self._store._timeout)
        self._confirming.pop(channel, None)

    def unwatch(self, match_id: bytes) -> None:
        with self._lock:
            count = self._watched.get(match_id, 0) - 1
            if count > 0:
                self._watched[match_id] = count
                return
            self._watched.pop(match_id, None)
            if self._pubsub is not None:
                with contextlib.suppress(StoreUnavailable):
                    self._store._run(partial(self._pubsub.unsubscribe, self._channel(match_id)))

    def wait(self) -> set[str]:
        pause = 0.5
        while not self._stopping:
            if not self._watched:
                self._any.clear()
                if not self._watched:  # (a watch between the two looks set it again)
                    self._any.wait()
                continue
            try:
                if self._lost:
                    with self._lock:
                        if self._pubsub is not None:
                            with contextlib.suppress(Exception):
                                self._pubsub.close()
                        self._pubsub = None
                        channels = [self._channel(m) for m in self._watched]
                        if channels:
                            self._connected().subscribe(*channels)
                    self._lost = False
                    return {RESYNC}
                pubsub = self._pubsub
                if pubsub is None:
                    self._lost = True
                    continue
                message = pubsub.get_message(timeout=None)
                pause = 0.5
                if message is None:
                    continue
                channel = message["channel"]
                channel = channel.decode() if isinstance(channel, bytes) else channel
                if message.get("type") == "subscribe":
                    confirmed = self._confirming.get(channel)
                    if confirmed is not None:
                        confirmed.set()
                elif message.get("type") == "message":
                    return {channel[len(self._store.CHANNEL):]}
            except Exception:  # Redis away: subscribe again once it is back, then read every watched match
                self._lost = True
                time.sleep(pause)
                pause = min(pause * 2, 10.0)
        return set()

    def stop(self) -> None:
        self._stopping = True
        self._any.set()
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                self._pubsub.close()
