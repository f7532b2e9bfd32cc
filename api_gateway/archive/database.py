"""The archive's database: one SQLAlchemy engine for SQLite or PostgreSQL, its migrations, its faults.

``GATEWAY_DATABASE`` names it:

- ``sqlite:///absolute/path`` (the default, ``$TMPDIR/domino-archive.sqlite3``):
  embedded, no server; every worker of one host opens the file (WAL mode). A
  write transaction starts with ``BEGIN IMMEDIATE``, so it holds the file's write
  lock from its first statement: two workers archiving at once queue (for at most
  the busy timeout) instead of failing when the second tries to write.
- ``postgresql://user:password@host:5432/db`` (``postgres://`` too; the driver
  is psycopg 3): for a cluster, every gateway replica sharing one database.
  Rows are locked with ``SELECT ... FOR UPDATE`` in one order (players sorted),
  so concurrent matches of the same players queue rather than lose an update;
  a deadlock or serialization failure is retried.

Migrations are Alembic's (`migrations/`). The gateway upgrades an embedded SQLite
file itself when it starts (`prepare`); a PostgreSQL database is upgraded by the
operator (``python -m api_gateway.archive upgrade``, the k8s Job), and until it
is at the revision this code expects the archive answers 503 naming both.

Every way the database can fail to answer (refused or dropped connection,
timeout, locked file, a schema behind the code) is `ArchiveUnavailable`: the
caller answers 503, and a finished match waits in the outbox.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, exc
from sqlalchemy.engine import URL, make_url

from api_gateway.store.wal import write_ahead

T = TypeVar("T")
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: Transient PostgreSQL failures a transaction is simply run again for: deadlock, serialization failure.
RETRY_CODES = frozenset({"40P01", "40001"})
ATTEMPTS = 3
#: The execution option that makes a SQLite transaction take the write lock at BEGIN.
FOR_WRITE = "domino_for_write"


class ArchiveUnavailable(Exception):
    """The archive database did not answer, or its schema is not the one this code expects."""


def default_url() -> str:
    return f"sqlite:///{Path(os.environ.get('TMPDIR', '/tmp')) / 'domino-archive.sqlite3'}"


def parse_url(text: str) -> URL:
    """A database URL the archive accepts (ValueError naming what is wrong)."""
    try:
        url = make_url(text)
    except exc.ArgumentError:
        raise ValueError(f"{text!r}: not a database URL (sqlite:///path or postgresql://...)") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or not url.database.startswith("/"):
            raise ValueError("use sqlite:///absolute/path")
        return url
    if backend in ("postgresql", "postgres"):
        return url.set(drivername="postgresql+psycopg")
    raise ValueError(f"{url.drivername}: expected sqlite:///path or postgresql://user:password@host/db")


def redacted(url: URL) -> str:
    """The URL as logs and errors may show it (no password)."""
    return url.render_as_string(hide_password=True)


def create(text: str, timeout: float = 5.0) -> Engine:
    """An engine for the URL; `timeout` bounds connecting, each statement and waiting for a lock."""
    url = parse_url(text)
    if url.get_backend_name() == "sqlite":
        Path(url.database or "").parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": timeout}, pool_pre_ping=False)
        _sqlite_events(engine, int(timeout * 1000))
        return engine
    millis = int(timeout * 1000)
    return create_engine(url, pool_pre_ping=True, pool_size=4, max_overflow=4, pool_timeout=timeout,
                         connect_args={"connect_timeout": max(1, int(timeout)),
                                       "options": f"-c statement_timeout={millis} -c lock_timeout={millis}"})


def _sqlite_events(engine: Engine, busy_ms: int) -> None:
    """pysqlite's own transaction handling off, ours on: BEGIN (IMMEDIATE for writes), WAL, foreign keys."""

    @event.listens_for(engine, "connect")
    def connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        write_ahead(dbapi_connection, busy_ms)
        cursor = dbapi_connection.cursor()
        for pragma in ("synchronous=NORMAL", "foreign_keys=ON", f"busy_timeout={busy_ms}"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(FOR_WRITE) else "BEGIN")


def unavailable(error: exc.SQLAlchemyError, url: URL) -> ArchiveUnavailable:
    reason = str(getattr(error, "orig", None) or error).strip().splitlines()[0][:300]
    return ArchiveUnavailable(f"archive database {redacted(url)}: {reason}")


#: What the database not answering looks like, from either driver.
DOWN = (exc.OperationalError, exc.InterfaceError, exc.TimeoutError, exc.DisconnectionError)


def _transient(error: exc.DBAPIError) -> bool:
    return getattr(getattr(error, "orig", None), "sqlstate", None) in RETRY_CODES


def transaction(engine: Engine, work: Callable[[Connection], T]) -> T:
    """`work` in one write transaction, committed or rolled back whole; run again on a deadlock."""
    for attempt in range(ATTEMPTS):
        try:
            with engine.execution_options(**{FOR_WRITE: True}).begin() as conn:
                return work(conn)
        except exc.DBAPIError as error:
            if isinstance(error, DOWN) and _transient(error) and attempt + 1 < ATTEMPTS:
                continue
            if isinstance(error, DOWN):
                raise unavailable(error, engine.url) from None
            raise
        except (exc.TimeoutError, exc.DisconnectionError) as error:
            raise unavailable(error, engine.url) from None
    raise AssertionError("unreachable")


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """A read-only transaction; the database down is `ArchiveUnavailable`."""
    try:
        with engine.connect() as conn:
            yield conn
    except DOWN as error:
        raise unavailable(error, engine.url) from None


# ---------------------------------------------------------------- migrations


# Alembic is imported where a migration is looked at, not with this module: a gateway worker boots
# without it (about 2 s of imports on a loaded 2-core machine), and reads its revision once, lazily.
if TYPE_CHECKING:
    from alembic.config import Config


def _config(conn: Connection | None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = conn
    return cfg


def head() -> str:
    """The revision this code expects."""
    from alembic.script import ScriptDirectory

    found = ScriptDirectory.from_config(_config(None)).get_current_head()
    assert found is not None
    return found


def current(engine: Engine) -> str | None:
    """The database's revision (None: never migrated)."""
    from alembic.runtime.migration import MigrationContext

    with reading(engine) as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    return heads[0] if heads else None


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate to `revision`, in one transaction (both databases have transactional DDL)."""
    from alembic import command

    transaction(engine, lambda conn: command.upgrade(_config(conn), revision))


def downgrade(engine: Engine, revision: str) -> None:
    from alembic import command

    transaction(engine, lambda conn: command.downgrade(_config(conn), revision))


def prepare(url: str, timeout: float) -> None:
    """What the gateway checks once before its workers start: a URL it can use (ValueError), and an
    embedded SQLite archive upgraded to this code's schema. A PostgreSQL database is only parsed: it
    may come up later, and the operator migrates it."""
    if parse_url(url).get_backend_name() == "sqlite":
        engine = create(url, timeout)
        try:
            upgrade(engine)
        finally:
            engine.dispose()


def check_schema(engine: Engine) -> None:
    """ArchiveUnavailable unless the database is at `head()`."""
    found, expected = current(engine), head()
    if found != expected:
        raise ArchiveUnavailable(f"archive database {redacted(engine.url)} is at revision {found or 'none'}, "
                                 f"this gateway needs {expected}: run `python -m api_gateway.archive upgrade`")
