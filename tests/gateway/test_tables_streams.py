"""Online tables across gateways and under stream limits (issue 24): two gateways on one real Redis (a
move applied through A arrives on a seat's stream from B; racing joins through both, exactly one
wins), and the seat streams' protections, which are the spectator stream's: a closed client frees
its slot at once, streams per seat are capped (429 too-many-streams), and a stop with open streams
ends each with ``event: closed`` (shutdown) within seconds."""
from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .conftest import EngineProc, Gateway, Reply, gateway_env, gateways_on_one_redis, launch_gateway
from .test_tables import call, ok, open_table, play_step, problem, seat_stream

pytestmark = pytest.mark.service


@pytest.fixture(scope="module")
def redis_pair(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Gateway]]:
    with gateways_on_one_redis(engine_proc, tmp_path_factory.mktemp("tables-redis"), workers=1) as gws:
        yield gws


def test_a_move_through_gateway_a_reaches_a_seat_streaming_from_gateway_b(redis_pair: list[Gateway]) -> None:
    a, b = redis_pair
    table = open_table(a)
    assert ok(call(b, "GET", f"/v1/tables/{table.table_id}", credential=table.host_key))["match_id"] == table.match_id
    watched = seat_stream(b, table.match_id, table.credentials[1])
    view = watched.next()
    assert view is not None and view.kind == "view"
    applied: list[int] = []
    while len(applied) < 6:
        answer = play_step(a, table)
        if answer is not None:
            applied.append(answer["seq"])
    got = watched.until(lambda e: e.id == applied[-1], 20)
    ids = [e.id for e in got if e.kind == "update"]
    assert ids == list(range(view.id + 1, applied[-1] + 1))  # type: ignore[operator]
    # and the other way round: a ticket made on B starts a stream on A
    ticket = ok(call(b, "POST", f"/v1/matches/{table.match_id}/events/ticket", credential=table.credentials[0]))
    other = seat_stream(a, table.match_id, query=f"?ticket={ticket['ticket']}")
    assert other.status == 200 and other.next().data["seat"] == 0  # type: ignore[union-attr]
    for s in (watched, other):
        s.close()


def test_racing_joins_through_two_gateways_on_redis(redis_pair: list[Gateway]) -> None:
    a, b = redis_pair
    for _ in range(3):
        opened = ok(call(a, "POST", "/v1/tables", {"variant": "kozel", "players": 2, "public": True}), 201)
        tid = opened["table_id"]
        ok(call(b, "POST", f"/v1/tables/{tid}/join", {"invite": opened["invites"][0]["code"]}))
        lobby = ok(call(b, "GET", "/v1/tables?variant=kozel&limit=100"))["tables"]
        assert tid in [t["table_id"] for t in lobby]  # a seat free: listed, by either gateway
        barrier = threading.Barrier(6)
        replies: list[Reply] = []

        def race(i: int, barrier: threading.Barrier = barrier, replies: list[Reply] = replies, tid: str = tid) -> None:
            barrier.wait()
            replies.append(call((a, b)[i % 2], "POST", f"/v1/tables/{tid}/join", {"seat": 1, "name": f"R{i}"}))

        threads = [threading.Thread(target=race, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(r.status for r in replies) == [200] + [409] * 5, [r.body[:200] for r in replies]
        table = ok(call(a, "GET", f"/v1/tables/{tid}"))
        assert table["matches"] == 1 and table["status"] == "playing"
    page = ok(call(b, "GET", "/v1/tables?variant=kozel&limit=100"))
    assert tid not in [t["table_id"] for t in page["tables"]]  # full: off the lobby


@pytest.fixture
def capped(engine_proc: EngineProc, tmp_path: Path) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, "--workers", "1",
                        env=gateway_env(tmp_path, GATEWAY_STREAMS_PER_SEAT="2", GATEWAY_SPECTATE_KEEPALIVE="1"))
    yield gw
    gw.stop()


def test_streams_per_seat_are_capped_and_a_closed_client_frees_its_slot(capped: Gateway) -> None:
    gw = capped
    table = open_table(gw)
    streams = [seat_stream(gw, table.match_id, table.credentials[0]) for _ in range(2)]
    assert [s.status for s in streams] == [200, 200]
    refused = seat_stream(gw, table.match_id, table.credentials[0])
    assert refused.status == 429 and b"too-many-streams" in refused.body
    # the other seat and the public stream are not counted against seat 0
    assert seat_stream(gw, table.match_id, table.credentials[1]).status == 200
    streams[0].close()
    deadline = time.monotonic() + 3
    while (again := seat_stream(gw, table.match_id, table.credentials[0])).status != 200:
        assert time.monotonic() < deadline, "a closed client kept its stream's slot"
        time.sleep(0.1)
    # a keepalive comment while idle
    time.sleep(1.5)
    assert again.keepalives >= 1 or streams[1].keepalives >= 1


def _stalled_stream(gw: Gateway, match_id: str, credential: str) -> socket.socket:
    """A seat stream whose client reads its headers and then stops reading, with a small receive
    window (set before connecting, so that it is the one announced)."""
    parts = urlsplit(gw.url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    sock.connect((parts.hostname or "127.0.0.1", parts.port or 80))
    sock.sendall(f"GET /v1/matches/{match_id}/events HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {credential}"
                 "\r\nAccept: text/event-stream\r\n\r\n".encode())
    assert sock.recv(1024).startswith(b"HTTP/1.1 200")
    return sock


def test_a_reader_that_stops_reading_is_dropped_and_frees_its_place(engine_proc: EngineProc, tmp_path: Path) -> None:
    """One stream per seat, seat 1's client stops reading: its unread lines fill the small buffers
    (the gateway's send buffer is bounded), the gateway's write waits three keepalive periods, then the
    stream is dropped and seat 1 can stream again from another device; seat 0's stream saw every move."""
    gw = launch_gateway(engine_proc.address, "--workers", "1",
                        env=gateway_env(tmp_path, GATEWAY_STREAMS_PER_SEAT="1", GATEWAY_SPECTATE_KEEPALIVE="1"))
    try:
        table = open_table(gw)
        stalled = _stalled_stream(gw, table.match_id, table.credentials[1])
        reading = seat_stream(gw, table.match_id, table.credentials[0])
        assert seat_stream(gw, table.match_id, table.credentials[1]).status == 429  # its one place is held
        last = 0
        for _ in range(400):  # far more than the buffers hold: each update carries the seat's whole view
            answer = play_step(gw, table)
            if answer is not None:
                last = answer["seq"]
            if ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[0]))["over"]:
                break
            if last >= 120:
                break
        deadline = time.monotonic() + 15
        while (again := seat_stream(gw, table.match_id, table.credentials[1])).status != 200:
            assert time.monotonic() < deadline, "a reader that stopped reading kept its stream's place"
            time.sleep(0.3)
        assert again.next() is not None  # the seat streams again: its view first
        got = reading.until(lambda e: e.id == last, 10)
        assert got and got[-1].id == last  # the reading seat missed nothing meanwhile
        stalled.close()
        again.close()
        reading.close()
    finally:
        gw.stop()


@pytest.mark.serial
def test_a_stop_with_open_seat_streams_ends_them_within_seconds(engine_proc: EngineProc, tmp_path: Path) -> None:
    gw = launch_gateway(engine_proc.address, "--workers", "1", env=gateway_env(tmp_path))
    try:
        table = open_table(gw)
        streams = [seat_stream(gw, table.match_id, table.credentials[i % 2]) for i in range(4)]
        streams += [seat_stream(gw, table.match_id, query=table.watch) for _ in range(4)]
        assert all(s.status == 200 for s in streams)
        for s in streams:
            assert s.next() is not None  # the view
        started = time.monotonic()
        gw.stop()
        assert time.monotonic() - started < 5
        for s in streams:
            got = s.until(lambda e: e.kind == "closed", 5)
            assert got and got[-1].kind == "closed" and got[-1].data == {"reason": "shutdown"}
    finally:
        if gw.proc.poll() is None:
            gw.stop()


def test_an_expired_or_made_up_match_has_no_stream(capped: Gateway) -> None:
    reply = seat_stream(capped, "00" * 16)
    assert reply.status == 404
    problem(call(capped, "GET", f"/v1/matches/{'00' * 16}/seat", credential="x.0.y"), 404, "unknown-match")


def test_cors_allows_the_configured_origins_only(tmp_path: Path) -> None:
    """GATEWAY_CORS_ORIGINS: none by default (no CORS header at all); set, its origins get the headers, a
    preflight for an Authorization header passes, and any other origin gets none."""
    from api_gateway.app import create_app
    from api_gateway.config import from_env

    base = {"GATEWAY_ENGINE": "127.0.0.1:9", "GATEWAY_DATABASE": f"sqlite:///{tmp_path / 'a.sqlite3'}",
            "GATEWAY_TOKEN_STORE": f"sqlite:///{tmp_path / 'v.sqlite3'}"}
    plain = create_app(from_env(base)).test_client()
    assert "Access-Control-Allow-Origin" not in plain.get("/healthz", headers={"Origin": "https://app.example"}).headers
    client = create_app(from_env({**base, "GATEWAY_CORS_ORIGINS": "https://app.example, https://m.example"})) \
        .test_client()
    pre = client.options("/v1/tables", headers={"Origin": "https://app.example", "Access-Control-Request-Method":
                                                "POST", "Access-Control-Request-Headers": "authorization,content-type"})
    assert pre.headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert "authorization" in pre.headers["Access-Control-Allow-Headers"].lower()
    got = client.get("/v1/tables/00", headers={"Origin": "https://m.example"})
    assert got.status_code == 501 and got.headers["Access-Control-Allow-Origin"] == "https://m.example"
    other = client.get("/v1/tables/00", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


def test_seat_and_spectator_streams_count_together_per_address(engine_proc: EngineProc, tmp_path: Path) -> None:
    """One worker's cap per client address bounds its spectator (NDJSON) and table (SSE) streams together."""
    gw = launch_gateway(engine_proc.address, "--workers", "1",
                        env=gateway_env(tmp_path, GATEWAY_STREAMS_PER_ADDRESS="3"))
    try:
        table = open_table(gw, public=True)  # a public table's match: anyone may watch it by its id
        parts = urlsplit(gw.url)
        ndjson = []
        for _ in range(2):
            conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
            conn.request("GET", f"/v1/matches/{table.match_id}/spectate")
            assert conn.getresponse().status == 200
            ndjson.append(conn)
        first = seat_stream(gw, table.match_id, table.credentials[0])
        assert first.status == 200
        refused = seat_stream(gw, table.match_id, table.credentials[1])
        assert refused.status == 429 and b'"limit":"address"' in refused.body
        first.close()
        for conn in ndjson:
            conn.close()
    finally:
        gw.stop()



def test_a_resume_from_lines_the_workers_feed_dropped_reads_them_from_the_store(capped: Gateway) -> None:
    """One worker: a seat stream open throughout keeps the seat's feed, which drops the lines every stream
    has written; a stream resumed from an early id gets them from the store, the same as the first got."""
    gw = capped
    table = open_table(gw)
    companion = seat_stream(gw, table.match_id, table.credentials[0])
    view = companion.next()
    assert view is not None and view.kind == "view"
    applied = 0
    while applied < 8:
        applied += play_step(gw, table) is not None
    latest = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[0]))["seq"]
    seen = {e.id: e.data for e in companion.until(lambda e: e.id == latest, 10) if e.kind == "update"}
    time.sleep(0.6)  # two polls of the feed: its written lines dropped
    resumed = seat_stream(gw, table.match_id, table.credentials[0], last=view.id)
    again = {e.id: e.data for e in resumed.until(lambda e: e.id == latest, 10)}
    assert again == seen and list(again) == list(range(view.id + 1, latest + 1))  # type: ignore[operator]
    for s in (companion, resumed):
        s.close()
