"""Finished matches waiting for the archive database: a durable queue in the live store.

When the database does not answer, `Archive.finish` puts the finished match here
instead (nothing is lost), and every gateway worker's drainer writes what waits
once the database is back, oldest first. The queue lives where the live matches
live (``GATEWAY_TOKEN_STORE``), so it survives a gateway restart and, with
Redis, any gateway of the cluster drains it:

- ``sqlite:///path``: a table ``archive_outbox`` in that file (one host);
- ``redis://...``: a sorted set ``domino:archive:outbox`` (key by time queued)
  and a hash ``domino:archive:payloads`` (key -> the finished match's JSON).

An entry is removed only after the database has committed it, and writing one
twice is harmless (the archive's unique match id answers *duplicate*): two
drainers racing for the same entry write it once.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from sqlalchemy import Column, Double, Engine, LargeBinary, MetaData, String, Table, func, select
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from api_gateway.archive import database

T = TypeVar("T")


class OutboxUnavailable(Exception):
    """The live store that holds the outbox did not answer."""


class Outbox(Protocol):
    def push(self, key: str, payload: bytes) -> None:
        """Queue `payload` under `key` (a key queued already keeps its first payload)."""

    def oldest(self, limit: int) -> list[tuple[str, bytes]]:
        """Up to `limit` entries, oldest first."""

    def remove(self, key: str) -> None:
        ...

    def depth(self) -> int:
        ...

    def close(self) -> None:
        ...


def open_outbox(url: str) -> Outbox:
    """The outbox in the live store the URL names (``GATEWAY_TOKEN_STORE``'s form)."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        return SqliteOutbox(url)
    if scheme in ("redis", "rediss", "unix"):
        return RedisOutbox(url)
    raise ValueError(f"outbox {url!r}: expected sqlite:///path or redis://host:port/db")


_metadata = MetaData()
_queue = Table("archive_outbox", _metadata,
               Column("key", String(80), primary_key=True),
               Column("queued", Double, nullable=False),
               Column("payload", LargeBinary, nullable=False))


class _StoreWork:
    """An outbox's work on its store: the store's failures (`_errors`) become OutboxUnavailable,
    naming where the outbox is (`_where`)."""

    _errors: tuple[type[BaseException], ...]
    _where: str

    def _run(self, work: Callable[[], T]) -> T:
        try:
            return work()
        except self._errors as error:
            raise OutboxUnavailable(f"{self._where}: {error}") from None


class SqliteOutbox(_StoreWork):
    """The outbox as a table of the embedded live store's file."""

    _errors = (database.ArchiveUnavailable,)
    _where = "archive outbox"

    def __init__(self, url: str, timeout: float = 2.0) -> None:
        self._engine: Engine = database.create(url, timeout)
        self._run(lambda: database.transaction(self._engine, _metadata.create_all))  # workers at once: one creates

    def push(self, key: str, payload: bytes) -> None:
        def work() -> None:
            def write(conn: Any) -> None:
                insert = sqlite_insert(_queue).values(key=key, queued=time.time(), payload=payload)
                conn.execute(insert.on_conflict_do_nothing(index_elements=[_queue.c.key]))
            database.transaction(self._engine, write)
        self._run(work)

    def oldest(self, limit: int) -> list[tuple[str, bytes]]:
        def work() -> list[tuple[str, bytes]]:
            with database.reading(self._engine) as conn:
                rows = conn.execute(select(_queue.c.key, _queue.c.payload)
                                    .order_by(_queue.c.queued, _queue.c.key).limit(limit)).all()
            return [(r.key, bytes(r.payload)) for r in rows]
        return self._run(work)

    def remove(self, key: str) -> None:
        self._run(lambda: database.transaction(
            self._engine, lambda conn: conn.execute(_queue.delete().where(_queue.c.key == key))))

    def depth(self) -> int:
        def work() -> int:
            with database.reading(self._engine) as conn:
                return int(conn.execute(select(func.count()).select_from(_queue)).scalar_one())
        return self._run(work)

    def close(self) -> None:
        self._engine.dispose()


class RedisOutbox(_StoreWork):
    """The outbox in the cluster's Redis: an order (sorted set) and the payloads (hash)."""

    ORDER = "domino:archive:outbox"
    PAYLOADS = "domino:archive:payloads"

    def __init__(self, url: str, timeout: float = 1.0) -> None:
        import redis

        self._errors = (redis.exceptions.RedisError, OSError)
        self._where = f"archive outbox on {urlsplit(url).hostname}"
        self._redis = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)

    def push(self, key: str, payload: bytes) -> None:
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=True)
            pipe.hsetnx(self.PAYLOADS, key, payload)
            pipe.zadd(self.ORDER, {key: time.time()}, nx=True)
            return pipe.execute()
        self._run(work)

    def oldest(self, limit: int) -> list[tuple[str, bytes]]:
        def work() -> list[tuple[str, bytes]]:
            keys = [k.decode() for k in self._redis.zrange(self.ORDER, 0, limit - 1)]
            payloads = self._redis.hmget(self.PAYLOADS, keys) if keys else []
            return [(k, bytes(p)) for k, p in zip(keys, payloads) if p is not None]
        return self._run(work)

    def remove(self, key: str) -> None:
        def work() -> Any:
            pipe = self._redis.pipeline(transaction=True)
            pipe.zrem(self.ORDER, key)
            pipe.hdel(self.PAYLOADS, key)
            return pipe.execute()
        self._run(work)

    def depth(self) -> int:
        found: int = self._run(lambda: self._redis.zcard(self.ORDER))
        return found

    def close(self) -> None:
        self._redis.close()
