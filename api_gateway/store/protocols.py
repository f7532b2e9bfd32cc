"""What the live store keeps, as small protocols each backend implements (docs/design.md, "Hosting").

The live store holds what is being played: the version of every live sealed match (so that an
old token cannot be played again), the online tables and their lobby, the event log of each
hosted match, the turn clocks' deadlines, the matches waiting to be handed to the archive, and
the streams' tickets. Each concern is one protocol below; `LiveStore` is all of them, which is
what `open_store` returns. Two backends implement every one:

- `api_gateway.store.sqlite.SqliteStore`, the embedded default: one SQLite file in WAL mode that
  every worker of one host opens; no server needed.
- `api_gateway.store.redis.RedisStore`, for a cluster: one Redis that every gateway shares.

A new backend implements the protocols one by one; `tests/gateway/test_gateway_store.py` runs
the same tests against each.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["ARCHIVED_TTL", "DEADLINES", "DEFAULT_TTL", "END", "FINISHED_TTL", "RESYNC", "TABLE_AFTER_END", "ArchiveHandoff", "Deadlines", "Deal", "Hosted", "HostedMatch",
           "HostedMatches", "Counters", "Leases", "LiveStore", "Presence", "MatchExpired", "Receipt", "StaleToken", "StoreUnavailable", "TableRecords",
           "TableRow", "Tickets", "Versions", "Wakeups", "split_lines"]

#: Seconds a match may stay idle before its record (and so its tokens) expire: a day.
DEFAULT_TTL = 24 * 3600

#: The line that marks the end of a match's public lines (its last).
END = b'{"type":"end"}'

#: The id the keepers watch (`Wakeups.watch`): every write of a deadline (a turn clock's, a quick-play table's
#: fill time, an ended match's hand-off) wakes its watchers, so a keeper sleeps until the earliest one.
DEADLINES = bytes(16)

#: What `Wakeups.wait` answers when it may have missed wake-ups (its connection to the store was
#: lost and made again): every watched match is to be read again.
RESYNC = "*"


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
    """The live store cannot be reached or refused the operation; the call is refused, not let through."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """What a call that advanced a match leaves behind: a digest of its request and the answer sent for it.

    A retry of the same request (same token, seat key and arguments: same digest) after an
    unknown outcome is answered `answer` again; any other request with that token stays stale."""

    digest: bytes
    answer: bytes


@dataclass(frozen=True, slots=True)
class Hosted:
    """What the store keeps of a hosted match's version, in the same write as the version itself: its
    latest token (credentials alone reach the match) and the version's event, one line per viewer
    (`lines[i]`: seat i's update, the last one the public's, for the host and spectators)."""

    token: str
    lines: list[bytes]
    #: The table's turn clocks after this version (`clocks.Clocks.dump`, JSON; empty: no clock), and
    #: when the running one runs out (unix seconds; None: none runs): kept in the same write, so the
    #: clocks any gateway finds due (`Deadlines.due`) are always this version's. In the write that ends
    #: the match (`over`) no clock runs and `deadline` is when a gateway should hand it to the archive if
    #: the one that made the last move has not confirmed it (`ArchiveHandoff`).
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
    """An online table's record (JSON, the hosting's own: `api_gateway.hosting.records`) and what the
    store indexes it by: the lobby (public, a seat free, variant, newest first), quick play (the seek
    key: variant, players and clock), the bots-after filler (`fill_at`) and its players' inboxes (`seated`)."""

    table_id: str
    version: int
    record: bytes
    public: bool = False
    variant: str = ""
    free: int = 0
    created: float = 0.0
    players: int = 0
    #: The clock setting as canonical JSON ("" for none): part of the quick-play key.
    clock: str = ""
    #: A quick-play table (opened by a seek) still waiting for people.
    seek: bool = False
    #: When its wait for people is over and the filler makes its free seats bots (None: never).
    fill_at: float | None = None
    #: The players whose inbox lists the table (`TableRecords.inbox`): the vouched player ids of its seats
    #: taken. Written with the record, in the same atomic write; a row read back carries it empty.
    seated: tuple[str, ...] = ()


#: Seconds a finished match stays in the live store after the change that ended it, until the archive has
#: it (a table's match; `ArchiveHandoff.archived` shortens it to `ARCHIVED_TTL`): not a whole `ttl`, so that
#: the store holds the matches being played, not every match ever played (issue 43).
FINISHED_TTL = 3600

#: Seconds a table stays after its match ended (for "play again": a new deal gives it its lifetime back).
TABLE_AFTER_END = 600

#: Seconds a finished table's match stays once the archive has it: its last views for the streams that read
#: the end and a retried last move's receipt; then its rows (every version's lines: ~60 KB a match) go. A
#: 30-minute soak at saturation held 25,000 finished matches (1.5 GB) with an hour (`bench store-soak`).
ARCHIVED_TTL = 120


class Versions(Protocol):
    """``match id -> latest version`` of every live sealed match, with what each advance leaves behind:
    its receipt (a retry's answer), the match's public lines for spectators, the log lines that left
    the state (a record's `prior`). A record expires `ttl` seconds after its match's last use, or
    `FINISHED_TTL` after the change that finished it, and never before a running turn clock's deadline
    (`kept`). A hosted match's advance keeps its table's record as long (`seated` needs both)."""

    ttl: int
    #: Seconds an online table (its record and its match: `table`) may stay idle without a running clock.
    table_idle: int

    def kept(self, over: bool, deadline: float | None = None, now: float = 0.0, table: bool = False) -> int:
        """Seconds an advance keeps its match: `ttl` (`table_idle` for a table's), or less once the match is
        over; and while a turn clock runs (its `deadline`, unix seconds, at `now`), at least `ttl` past it:
        nothing expires while a clock still runs, however long it allows (a correspondence clock: days)."""

    def create(self, match_id: bytes, public: bytes = b"") -> None:
        """A new match at version 0, its first public lines `public` (NDJSON)."""

    def check(self, match_id: bytes, seq: int) -> bytes | None:
        """Raise `StaleToken` unless `seq` is the latest (`MatchExpired` if unknown); keeps the record alive.
        When a table hosts the match (its advances must carry `Hosted`), its turn clocks at this version
        (b"": none); None when not hosted."""

    def advance(self, match_id: bytes, seq: int, public: bytes = b"", over: bool = False,
                receipt: Receipt | None = None, hosted: Hosted | None = None, record: bytes = b"") -> bytes | None:
        """Compare-and-set `seq` -> `seq + 1`; `StaleToken` if `seq` is not the latest (`MatchExpired` if unknown).
        In the same atomic write: append `public` (NDJSON lines) to the match's public lines (and the end
        mark when `over`), keep `receipt` as the match's latest, append a hosted match's event (`hosted`)
        and the `record` lines; then wake the streams that watch the match (`Wakeups`). None when
        advanced; when the same request (the receipt's digest) already advanced from `seq`, the answer
        stored then, and nothing is changed."""

    def answered(self, match_id: bytes, seq: int, digest: bytes) -> bytes | None:
        """The answer stored when the request `digest` advanced the match from `seq`, if that was its
        latest advance; else None."""

    def public(self, match_id: bytes, start: int) -> tuple[list[bytes], bool]:
        """The match's public lines from the `start`-th (0-based), and whether the match is over;
        `MatchExpired` if the store holds no record of it."""

    def record_lines(self, match_id: bytes) -> list[str]:
        """The log lines that left a sealed match's state, in order (ExportRecord's `prior`, docs/records.md);
        `MatchExpired` if the store holds no record of it."""

    def ping(self) -> None:
        """Raise `StoreUnavailable` unless the store answers."""

    def close(self) -> None:
        ...


class HostedMatches(Protocol):
    """The event log of each match an online table hosts: one event per version (every viewer's line
    of it), appended by `Versions.advance`, read from a version on."""

    def hosted(self, match_id: bytes) -> HostedMatch:
        """A hosted match's latest token and version; `MatchExpired` if the store holds none."""

    def seated(self, match_id: bytes) -> tuple[HostedMatch, TableRow]:
        """A hosted match and its table's record, in one round trip: what every call by a seat's
        credential starts with. `MatchExpired` when either is gone."""

    def lines(self, match_id: bytes, viewer: int, start: int) -> tuple[list[bytes], bool]:
        """A hosted match's lines for `viewer` from version `start` on (line i: version i), and
        whether it is over; `MatchExpired` if the store holds none."""


class Wakeups(Protocol):
    """The wait for the next event, pushed: a worker watches the matches its streams follow, and an
    advance of one of them (by any worker of any gateway) wakes only the workers watching it. With
    nothing happening, no query runs."""

    def watch(self, match_id: bytes) -> None:
        """Be woken by this match's advances from now on (every advance after this returns)."""

    def unwatch(self, match_id: bytes) -> None:
        """No longer be woken by this match."""

    def wait(self) -> set[str]:
        """Block until one or more watched matches advanced: their ids (hex); `{RESYNC}` when wake-ups
        may have been missed (a lost connection): read every watched match."""

    def stop(self) -> None:
        """End `wait` (the worker stops)."""


class TableRecords(Protocol):
    """The online tables' records, each written by compare-and-set of its version, and their indexes:
    a lobby page and a seek cost the same with 20,000 public tables as with 20."""

    def table(self, table_id: str) -> TableRow | None:
        """A table's record, None when there is none (never made, or expired)."""

    def put_table(self, row: TableRow, deal: Deal | None = None) -> bool:
        """Write a table's record if its stored version is still `row.version - 1` (0: a new table),
        with `deal`'s new hosted match in the same atomic write; False when another write came first."""

    def lobby(self, variant: str | None, limit: int, before: tuple[float, str] | None) -> list[TableRow]:
        """Public tables with a seat free (of `variant`, or all), newest first, strictly after the cursor
        `before` (created, table id)."""

    def seekable(self, variant: str, players: int, clock: str, limit: int) -> list[TableRow]:
        """Quick-play tables waiting for people of this seek key, oldest first: every one a seek may join."""

    def fillable(self, now: float, limit: int) -> list[TableRow]:
        """Quick-play tables whose wait for people ended by `now` (`fill_at`), earliest first."""

    def inbox(self, player: str, limit: int) -> list[TableRow]:
        """The live tables whose last write named `player` in `TableRow.seated` (the player's inbox: the
        tables where they hold a seat), the latest written first, at most `limit`. A table leaves it with the
        write that no longer names the player (the seat given up), or when it expires."""

    def next_fill(self) -> float | None:
        """The earliest `fill_at` of a waiting quick-play table (None: none waits)."""


class Deadlines(Protocol):
    """The hosted matches whose running turn clock runs out, by deadline (`Hosted.deadline`)."""

    def due(self, now: float, limit: int) -> list[bytes]:
        """Hosted matches whose running clock ran out by `now` (deadline first), at most `limit`."""

    def forget_due(self, match_id: bytes) -> None:
        """Take an expired match (its record gone) out of `due`."""

    def next_due(self) -> float | None:
        """The earliest deadline of a running turn clock (None: no clock runs)."""


class ArchiveHandoff(Protocol):
    """Hosted matches that ended and whose hand-off to the archive is not confirmed yet."""

    def unarchived(self, now: float, limit: int) -> list[bytes]:
        """Hosted matches over and not confirmed archived by their deadline (`Hosted.deadline` of the
        write that ended them) <= `now`, oldest first, at most `limit`."""

    def archived(self, match_id: bytes) -> None:
        """The match's end is in the archive (or its outbox), or never will be: out of `unarchived`, and its
        rows kept `ARCHIVED_TTL` more at most."""

    def next_unarchived(self) -> float | None:
        """The earliest deadline of an ended match not confirmed archived (None: none)."""


class Tickets(Protocol):
    """Single-use stream tickets (a browser's EventSource sends no Authorization header)."""

    def put_ticket(self, ticket: bytes, payload: bytes, ttl: int) -> None:
        """Keep a stream ticket (its hash) for `ttl` seconds."""

    def take_ticket(self, ticket: bytes) -> bytes | None:
        """Spend a ticket: its payload once, None when unknown, spent or expired."""


class Leases(Protocol):
    """Short exclusive leases, across every worker and gateway: what makes a step of several calls (a
    seek: find a waiting table, or open one) one at a time for everybody who shares its name."""

    def lease(self, name: str, holder: bytes, seconds: float) -> bool:
        """Take the lease `name` for `holder` for `seconds` if nobody holds it (or its holder's time ran out)."""

    def release(self, name: str, holder: bytes) -> None:
        """Give the lease back, if `holder` still holds it."""


class Counters(Protocol):
    """Fixed-window counters shared by every gateway of one store: what the limits count (requests of one
    kind per address, player or credential; `api_gateway.http.limits`)."""

    def hit(self, key: str, window: float, weight: int = 1) -> tuple[int, float]:
        """Count `weight` more against `key` in its current window of `window` seconds (a new window starts
        with the first hit after the last one ended): the count so far in the window, this hit included,
        and the seconds until the window ends."""


class Presence(Protocol):
    """Whether each seat of a hosted match is here: until when its person counts as here
    (`api_gateway.hosting.presence`). Idle costs a write per gateway worker per period, whatever the number of
    its streams:

    - each worker **beats** every few seconds (`beat`: alive until a time a little past its next beat);
    - an open seat stream is a **mark** of its worker (`mark`, written when the stream opens and taken away when
      it closes): a seat with a mark of a live worker counts as here (`math.inf`: as long as the mark stays);
      a worker's marks die with its beats, and count as here until its last beat's time;
    - a call, or a stream's close, counts as here until a time (`seen`, `mark`'s `closed`).

    The first worker to beat after another's beats ran out settles it: its marks become the seats' kept times
    (its last beat's), in the same write. Every change of presence (a mark, a close, a call, a settlement)
    moves the store's **stamp** (`beat` answers it) and notes the match as changed at that stamp
    (`changed_since`), so that a reader reads a match's presence only when it changed or a time it read has
    passed. What a match's presence is kept with the match, and goes with it."""

    def beat(self, worker: str, until: float) -> tuple[int, bool]:
        """`worker` is alive until `until` (its marks count as here till then); settles the workers whose beats
        ran out. One round trip: the presence stamp now, and whether the store knew the worker (False: a new
        worker, one settled after its beats ran out, or a store that lost its data: its marks are to be written
        again)."""

    def mark(self, worker: str, opened: list[tuple[bytes, int]], closed: list[tuple[bytes, int, float]]) -> None:
        """`worker`'s marks: (match, seat) of each stream `opened` (here while the worker beats), and each
        (match, seat, until) `closed` (its mark taken away, and the seat counts as here until `until`, a later
        time already kept staying). One round trip for them all."""

    def seen(self, marks: dict[bytes, dict[int, float]]) -> None:
        """For each match of `marks`, each of its seats counts as here until the time given (a later time
        already kept stays); one round trip for them all."""

    def changed_since(self, stamp: int) -> tuple[int, list[bytes] | None]:
        """The stamp now, and the matches whose presence changed after `stamp` (None: the store no longer knows
        that far back, read every match). One round trip."""

    def presence(self, match_id: bytes) -> dict[int, float]:
        """Until when each seat seen so far counts as here (a seat never seen is absent; `math.inf` for a seat a
        live worker's mark holds here)."""

    def presences(self, match_ids: list[bytes]) -> dict[bytes, dict[int, float]]:
        """`presence` of each of `match_ids`, in one round trip (a worker's streamed matches at once)."""


class LiveStore(Versions, HostedMatches, TableRecords, Deadlines, ArchiveHandoff, Tickets, Leases, Counters,
                Presence, Protocol):
    """Everything the live store keeps: what `open_store` returns."""

    def wakeups(self) -> Wakeups:
        """This worker's wake-ups (made once per process, after the fork)."""


def split_lines(public: bytes) -> list[bytes]:
    """NDJSON lines, without the empty ones."""
    return [line for line in public.split(b"\n") if line]
