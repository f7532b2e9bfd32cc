"""The archive under faults, with real processes and real databases: two gateways finishing one match at
the same moment, matches of the same players finished at once, a process killed mid-update, the
database down (nothing lost: the outbox) and back."""
from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from api_gateway.archive import database, results, service
from api_gateway.archive.database import ArchiveUnavailable
from api_gateway.archive.outbox import RedisOutbox, SqliteOutbox
from api_gateway.archive.repository import Repository
from api_gateway.archive.schema import match_seats, matches, players, ratings
from api_gateway.archive.service import MATCH, Archive
from archive.helpers import PostgresServer, engine_record, families, free_port, played

WORKER = Path(__file__).with_name("archive_worker.py")
SEATS = ["app:ann", "app:ben", "app:cat", "app:dov"]


def outbox_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'live.sqlite3'}"


def workers(tmp_path: Path, url: str, jobs: list[dict[str, Any]]) -> list[subprocess.Popen[str]]:
    """Start one worker per job; they all call `finish` at the same moment, 1.5 s from now."""
    start_at = time.time() + 1.5
    procs = []
    for i, job in enumerate(jobs):
        record = tmp_path / f"record-{i}.json"
        record.write_text(json.dumps(job.pop("answer")))
        args = {"database": url, "outbox": outbox_url(tmp_path), "family": "K", "record": str(record),
                "start_at": start_at, **job}
        procs.append(subprocess.Popen([sys.executable, str(WORKER), json.dumps(args)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    return procs


def outcomes(procs: list[subprocess.Popen[str]]) -> list[str]:
    found = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err[-2000:]
        found.append(json.loads(out.strip().splitlines()[-1])["outcome"])
    return found


def repository(url: str) -> Repository:
    return Repository(database.create(url))


def test_two_processes_finishing_one_match_at_once_archive_it_once(database_url: str, tmp_path: Path) -> None:
    answer = engine_record(played("kozel", 4, seed=3))
    procs = workers(tmp_path, database_url, [
        {"mode": "hold", "match_id": "race", "seats": SEATS, "answer": answer},
        {"mode": "hold", "match_id": "race", "seats": SEATS, "answer": answer}])
    assert sorted(outcomes(procs)) == ["duplicate", "recorded"]
    repo = repository(database_url)
    assert repo.count(matches) == 1 and repo.count(match_seats) == 4
    for player in SEATS:
        (r,) = [x for x in repo.player(player)["ratings"] if x["family"] == "K"]
        assert (r["matches"], r["rated"]) == (1, 1)


def test_matches_of_the_same_players_finished_at_once_lose_no_update(database_url: str, tmp_path: Path) -> None:
    """Four processes, four different matches of the same four players, at the same moment: every
    rating update applies on top of the one before it (each seat's skill before is the previous
    match's skill after), none is lost."""
    jobs = [{"mode": "plain", "match_id": f"m{i}", "seats": SEATS[i:] + SEATS[:i],
             "answer": engine_record(played("kozel", 4, seed=40 + i))} for i in range(4)]
    assert outcomes(workers(tmp_path, database_url, jobs)) == ["recorded"] * 4
    repo = repository(database_url)
    with repo.engine.connect() as conn:
        rows = conn.execute(select(match_seats).order_by(match_seats.c.match_seq)).all()
    last: dict[str, tuple[float, float]] = {}
    for row in rows:
        if row.player_id in last:
            assert (row.mu_before, row.sigma_before) == last[row.player_id]
        else:
            assert (row.mu_before, row.sigma_before) == (25.0, pytest.approx(25 / 3))
        last[row.player_id] = (row.mu_after, row.sigma_after)
    for player in SEATS:
        (r,) = repo.player(player)["ratings"]
        assert (r["matches"], r["rated"]) == (4, 4)
        assert (r["skill"]["mu"], r["skill"]["sigma"]) == last[player]


def test_a_process_killed_mid_update_leaves_no_half_written_rating(database_url: str, tmp_path: Path) -> None:
    answer = engine_record(played("kozel", 4, seed=8))
    (proc,) = workers(tmp_path, database_url, [{"mode": "die", "match_id": "killed", "seats": SEATS,
                                                "answer": dict(answer)}])
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "mid"     # one rating written, not committed
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    repo = repository(database_url)
    for table in (matches, match_seats, ratings, players):
        assert repo.count(table) == 0, table.name
    # and the match is archived whole by the next try
    (again,) = workers(tmp_path, database_url, [{"mode": "plain", "match_id": "killed", "seats": SEATS,
                                                 "answer": answer}])
    assert outcomes([again]) == ["recorded"]
    assert repo.count(matches) == 1 and repo.count(ratings) == 4


# ------------------------------------------------------------------ the database down


@pytest.fixture
def pg_archive(own_postgres: PostgresServer, tmp_path: Path) -> Iterator[tuple[Archive, PostgresServer]]:
    url = own_postgres.new_database()
    engine = database.create(url, timeout=2)
    database.upgrade(engine)
    archive = Archive(Repository(engine), SqliteOutbox(outbox_url(tmp_path)), families, retry=0.2)
    archive.start()
    yield archive, own_postgres
    archive.close()


def wait_until(predicate: Any, timeout: float) -> float:
    """Seconds until `predicate()` held (AssertionError after `timeout`)."""
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < timeout, "not within the time"
        time.sleep(0.02)
    return time.monotonic() - start


def test_postgresql_down_queues_finished_matches_and_archives_them_when_it_is_back(
        pg_archive: tuple[Archive, PostgresServer]) -> None:
    archive, server = pg_archive
    answers = [engine_record(played("kozel", 4, seed=60 + i)) for i in range(6)]
    assert archive.finish("before", SEATS, answers[0]) == "recorded"
    server.stop()
    for i in range(1, 6):
        assert archive.finish(f"down{i}", SEATS, answers[i]) == "queued"
    assert archive.finish("down1", SEATS, answers[1]) == "queued"   # queued once, not twice
    assert archive.outbox.depth() == 5
    with pytest.raises(ArchiveUnavailable):
        archive.player(SEATS[0])
    server.start()
    waited = wait_until(lambda: archive.outbox.depth() == 0, 30)
    print(f"\noutbox of 5 matches archived {waited:.2f} s after PostgreSQL was back (drainer every 0.2 s)")
    doc = archive.player(SEATS[0])
    assert doc["matches"] == 6
    assert [m["match_id"] for m in doc["recent"]] == ["down5", "down4", "down3", "down2", "down1", "before"]
    assert archive.finish("down3", SEATS, answers[3]) == "duplicate"


def test_a_sqlite_archive_locked_past_its_timeout_queues_and_drains(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'archive.sqlite3'}"
    engine = database.create(url, timeout=0.2)
    database.upgrade(engine)
    archive = Archive(Repository(engine), SqliteOutbox(outbox_url(tmp_path)), families, retry=0.2)
    archive.start()
    try:
        holder = sqlite3.connect(str(tmp_path / "archive.sqlite3"), isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")            # another writer holds the file's lock
        answer = engine_record(played("block", 2, seed=9))
        assert archive.finish("locked", SEATS[:2], answer) == "queued"
        holder.execute("ROLLBACK")
        holder.close()
        wait_until(lambda: archive.outbox.depth() == 0, 30)
        assert archive.archived("locked")["match_id"] == "locked"
    finally:
        archive.close()


def test_an_empty_outbox_is_looked_at_seldom_and_what_a_gone_process_left_is_still_drained(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An idle drainer reads the outbox every `EMPTY_LOOK` seconds, not every `retry`; a match another process
    queued and never drained (it went) is archived at that look; one this process queues, at once."""
    monkeypatch.setattr(service, "EMPTY_LOOK", 0.6)
    url = f"sqlite:///{tmp_path / 'archive.sqlite3'}"
    engine = database.create(url, timeout=0.5)
    database.upgrade(engine)
    outbox = SqliteOutbox(outbox_url(tmp_path))
    looks: list[float] = []
    depth = outbox.depth
    monkeypatch.setattr(outbox, "depth", lambda: looks.append(time.monotonic()) or depth())
    archive = Archive(Repository(engine), outbox, families, retry=0.05)
    archive.start()
    try:
        time.sleep(1.5)
        assert 2 <= len(looks) <= 4, looks   # every 0.6 s, not every 0.05 s (30 looks)
        gone = SqliteOutbox(outbox_url(tmp_path))   # what a process that is gone left queued
        left = results.finished_match("left", SEATS[:2], engine_record(played("block", 2, seed=3)), families)
        gone.push(MATCH + "left", left.to_json())
        gone.close()
        wait_until(lambda: archive.outbox.depth() == 0, 5)
        assert archive.archived("left")["match_id"] == "left"
    finally:
        archive.close()


def test_the_database_and_the_outbox_both_down_is_an_error_not_a_silent_loss(
        pg_archive: tuple[Archive, PostgresServer]) -> None:
    archive, server = pg_archive
    server.stop()
    archive.outbox = RedisOutbox(f"redis://127.0.0.1:{free_port()}/0", timeout=0.2)   # nothing listens
    with pytest.raises(ArchiveUnavailable, match="outbox"):
        archive.finish("lost", SEATS, engine_record(played("kozel", 4, seed=1)))
