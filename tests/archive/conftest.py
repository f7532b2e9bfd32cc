"""Real databases for the archive's tests: a SQLite file, and Debian's PostgreSQL started here.

`postgres` is one PostgreSQL server for the whole session; each test gets a
database of its own on it (CREATE DATABASE takes milliseconds). `database_url`
runs a test on both: a fresh SQLite file and a fresh PostgreSQL database,
migrated. Tests that stop the database start a server of their own
(`own_postgres`).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from api_gateway.archive import database
from archive.helpers import PostgresServer, sqlite_url


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = PostgresServer.create()
    yield server
    server.destroy()


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of the test's own (to stop and start)."""
    server = PostgresServer.create()
    yield server
    server.destroy()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def database_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A fresh, migrated archive database of each kind."""
    url = sqlite_url(tmp_path) if backend == "sqlite" else request.getfixturevalue("postgres").new_database()
    engine = database.create(url)
    database.upgrade(engine)
    engine.dispose()
    return url


