"""What the archive costs and how soon it catches up after an outage, on SQLite and PostgreSQL.

    .venv/bin/python bench/archive.py [--matches 200] [--outage 50] [--retry 2]

- **write**: `Archive.finish` of `--matches` finished 4-player Kozel matches
  (random moves; 4 of 20 players each, so ratings are read and locked as in
  play), one after another: the time of each call, p50 / p99, on an embedded
  SQLite file and on a PostgreSQL started here (Debian's, on loopback).
- **outage** (PostgreSQL): the server stopped, `--outage` matches finished
  (each queued in the outbox), the server started again; the time from the
  server accepting connections to the last queued match archived, with the
  drainer polling every `--retry` seconds (GATEWAY_ARCHIVE_RETRY, default 2 s).

Results to bench/results/archive.json.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from api_gateway.archive import database  # noqa: E402
from api_gateway.archive.outbox import SqliteOutbox  # noqa: E402
from api_gateway.archive.repository import Repository  # noqa: E402
from api_gateway.archive.service import Archive  # noqa: E402
from engine_service.rules.registry import variants  # noqa: E402
from tests.archive.helpers import PostgresServer, engine_record, played  # noqa: E402

RESULTS = REPO / "bench" / "results" / "archive.json"
FAMILIES = {v["name"]: v["family"] for v in variants()}


def open_archive(url: str, work: Path, retry: float) -> Archive:
    engine = database.create(url, timeout=2)
    database.upgrade(engine)
    archive = Archive(Repository(engine), SqliteOutbox(f"sqlite:///{work / 'live.sqlite3'}"), FAMILIES.__getitem__,
                      retry=retry)
    archive.start()
    return archive


def records(count: int, seed: int) -> list[tuple[list[str | None], bytes]]:
    rng = random.Random(seed)
    pool = [f"app:p{i}" for i in range(20)]
    out = []
    for i in range(count):
        seats: list[str | None] = list(rng.sample(pool, 4))
        out.append((seats, json.dumps(engine_record(played("kozel", 4, seed * 7919 + i))).encode()))
    return out


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def write(archive: Archive, matches: list[tuple[list[str | None], bytes]], prefix: str) -> dict[str, Any]:
    times = []
    for i, (seats, answer) in enumerate(matches):
        started = time.perf_counter()
        assert archive.finish(f"{prefix}{i}", seats, answer) == "recorded"
        times.append((time.perf_counter() - started) * 1000)
    return {"matches": len(times), "p50_ms": round(statistics.median(times), 2),
            "p99_ms": round(percentile(times, 0.99), 2), "mean_ms": round(statistics.fmean(times), 2)}


def outage(archive: Archive, server: PostgresServer, matches: list[tuple[list[str | None], bytes]]) -> dict[str, Any]:
    server.stop()
    started = time.perf_counter()
    for i, (seats, answer) in enumerate(matches):
        assert archive.finish(f"down{i}", seats, answer) == "queued"
    queue_ms = (time.perf_counter() - started) * 1000 / len(matches)
    server.start()   # returns once the server accepts connections
    back = time.perf_counter()
    while archive.outbox.depth():
        time.sleep(0.01)
    return {"queued": len(matches), "queue_mean_ms": round(queue_ms, 2),
            "archived_after_back_s": round(time.perf_counter() - back, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=200)
    ap.add_argument("--outage", type=int, default=50)
    ap.add_argument("--retry", type=float, default=2.0)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    played_matches = records(args.matches + args.outage, seed=5)
    report: dict[str, Any] = {"retry_s": args.retry}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sqlite = open_archive(f"sqlite:///{work / 'archive.sqlite3'}", work, args.retry)
        report["sqlite"] = write(sqlite, played_matches[:args.matches], "s")
        sqlite.close()
        server = PostgresServer.create()
        try:
            (work / "pg").mkdir()
            pg = open_archive(server.new_database(), work / "pg", args.retry)
            report["postgresql"] = write(pg, played_matches[:args.matches], "p")
            report["outage"] = outage(pg, server, played_matches[args.matches:])
            pg.close()
        finally:
            server.destroy()
    print(json.dumps(report, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
