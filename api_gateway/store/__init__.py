"""The live store: what is being played, shared by every worker and replica (docs/design.md, "Hosting").

The version record of every live sealed match says which token is the latest
(docs/security.md). A sealed token names its match and its version (`Sealed.match_id`,
`Sealed.seq`). Without a record of the latest version, a seat could keep an old token and
play on from it: fork the match, replay draws to read the boneyard, then go on with its
real token leaving no trace. The store keeps ``match id -> latest seq`` and the gateway
accepts a token only when it is the latest:

- a call that only reads (view, legal actions) `check`s the version;
- a call that changes the match `advance`s it from the token's version to the next with
  compare-and-set, after the engine answered (the engine is pure, so an answer whose
  advance fails is simply dropped): of two calls racing with the same token, exactly one
  wins and the other is refused as stale.

With each advance the store keeps, in the same atomic step, a receipt of the call that made
it (`Receipt`): a 503 leaves the outcome of an advance unknown (Redis paused, SQLite
locked: the compare-and-set may still run), the client retries the same request with the
same token, and is given the winner's answer instead of a stale-token refusal
(docs/rest.md). It also appends the match's public lines (spectators), a hosted match's
event (every viewer's line of the version: the seat streams), and wakes the workers whose
streams watch that match (`Wakeups`), and no others.

A record lives as long as the match is used: each call pushes its expiry `ttl` seconds
ahead, and a token of a match idle longer is refused as expired. When the store cannot be
reached the call is refused with `StoreUnavailable` (503): never accepted unchecked.

The concerns are small protocols (`protocols`), one module per backend: `sqlite`
(``sqlite:///path``, the embedded default for one host) and `redis` (``redis://host:6379/0``,
a cluster).
"""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from api_gateway.store.protocols import (
    ARCHIVED_TTL,
    DEADLINES,
    DEFAULT_TTL,
    END,
    FINISHED_TTL,
    RESYNC,
    TABLE_AFTER_END,
    ArchiveHandoff,
    Deadlines,
    Deal,
    Hosted,
    HostedMatch,
    HostedMatches,
    Leases,
    LiveStore,
    MatchExpired,
    Receipt,
    StaleToken,
    StoreUnavailable,
    TableRecords,
    TableRow,
    Tickets,
    Versions,
    Wakeups,
)

__all__ = ["ARCHIVED_TTL", "DEADLINES", "DEFAULT_TTL", "END", "FINISHED_TTL", "RESYNC", "TABLE_AFTER_END", "ArchiveHandoff", "Deadlines", "Deal", "Hosted", "HostedMatch",
           "HostedMatches", "Leases", "LiveStore", "MatchExpired", "Receipt", "StaleToken", "StoreUnavailable", "TableRecords",
           "TableRow", "Tickets", "Versions", "Wakeups", "check_store", "default_url", "open_store"]


def default_url() -> str:
    """The embedded store next to the other temporary files: one per host, shared by every worker."""
    return f"sqlite:///{Path(os.environ.get('TMPDIR', '/tmp')) / 'domino-gateway-versions.sqlite3'}"


def check_store(url: str) -> None:
    """Refuse a store URL the gateway could not use, before any worker starts: a bad scheme or
    path, a SQLite file that cannot be created. (A Redis store is only parsed: it may come up
    after the gateway; until it answers, sealed calls are 503.)"""
    store = open_store(url)
    store.close()


def open_store(url: str, ttl: int = DEFAULT_TTL, table_idle: int | None = None) -> LiveStore:
    """The store an URL names: ``sqlite:///absolute/path`` or ``redis://[:password@]host:port/db``; an online
    table's match without a turn clock may stay idle `table_idle` seconds (None: `ttl`)."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        from api_gateway.store.sqlite import SqliteStore

        path = url[len("sqlite://"):]
        if not path.startswith("/"):
            raise ValueError(f"token store {url!r}: use sqlite:///absolute/path")
        return SqliteStore(path, ttl, table_idle=table_idle)
    if scheme in ("redis", "rediss", "unix"):
        from api_gateway.store.redis import RedisStore

        return RedisStore(url, ttl, table_idle=table_idle)
    raise ValueError(f"token store {url!r}: expected sqlite:///path or redis://host:port/db")
