"""Idle costs nothing (issue 36): with seat and spectator streams open and nothing happening, no gateway
worker reads the live store; a move then reaches every stream at once. One host (2 workers on one SQLite
file) and two gateways on one Redis, each worker's store round trips counted by its metric
(`domino_gateway_store_round_trips_total`)."""
from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import EngineProc, Gateway, RedisServer, gateway_env, launch_gateway
from .test_tables import Stream, call, ok, open_table, seat_stream

pytestmark = pytest.mark.service

#: Seconds watched for store round trips while the streams idle (several keepalive periods).
IDLE = 3.0


def trips(gw: Gateway) -> float:
    found = re.findall(r"^domino_gateway_store_round_trips_total\{[^}]*\} (\S+)$", gw.metrics(), re.M)
    return sum(float(x) for x in found)


@pytest.fixture(params=["sqlite", "redis"])
def gateways(request: pytest.FixtureRequest, engine_proc: EngineProc, tmp_path: Path) -> Iterator[list[Gateway]]:
    """One host's gateway (both roles), or two gateways on one Redis (moves to the first, streams from the second)."""
    server = RedisServer(tmp_path) if request.param == "redis" else None
    made: list[Gateway] = []
    try:
        for name in ("a", "b") if server is not None else ("a",):
            (tmp_path / name).mkdir()
            (tmp_path / name / "metrics").mkdir()
            made.append(launch_gateway(engine_proc.address, "--workers", "2", env=gateway_env(
                tmp_path / name, server.url if server is not None else None, GATEWAY_SPECTATE_KEEPALIVE="1", GATEWAY_STREAMS_PER_SEAT="20",
                PROMETHEUS_MULTIPROC_DIR=str(tmp_path / name / "metrics"))))
        yield made
    finally:
        for gw in made:
            gw.stop()
        if server is not None:
            server.stop()


def test_open_streams_cost_the_store_nothing_until_a_move_wakes_them(gateways: list[Gateway]) -> None:
    mover, watcher = gateways[0], gateways[-1]
    table = open_table(mover, [{"kind": "open"}, {"kind": "open"}], variant="kozel", players=2)
    streams: list[Stream] = []
    for _ in range(6):  # several streams per seat: the workers share one feed per seat
        for credential in table.credentials:
            streams.append(seat_stream(watcher, table.match_id, credential))
    streams += [seat_stream(watcher, table.match_id, query=table.watch) for _ in range(3)]  # spectators: the public view
    for stream in streams:
        assert stream.status == 200
        first = stream.next()
        assert first is not None and first.kind == "view", first
    time.sleep(1.0)  # the feeds started and watching (their first reads done)

    before = [trips(gw) for gw in gateways]
    time.sleep(IDLE)
    assert [trips(gw) for gw in gateways] == before, "the store was read while nothing happened"
    assert all(stream.keepalives > 0 for stream in streams)  # the streams were alive meanwhile

    legal = None
    for credential in table.credentials:
        legal = ok(call(mover, "GET", f"/v1/matches/{table.match_id}/legal", credential=credential))
        if legal["actions"]:
            moved = ok(call(mover, "POST", f"/v1/matches/{table.match_id}/apply", {"action": legal["actions"][0]},
                            credential=credential))
            break
    else:
        raise AssertionError(f"nobody to move: {legal}")
    for stream in streams:
        update = stream.until(lambda e: e.kind == "update" and e.id == moved["seq"], timeout=10)
        assert update and update[-1].id == moved["seq"], update
        stream.close()
