"""A 503 from a slow version store means "try again" (issue 29): the retried call gets the winner's answer.

Real stores: a SQLite file whose write lock another connection holds past the gateway's
busy timeout, and Debian's redis-server paused with SIGSTOP while applies run.
"""
from __future__ import annotations

import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.redis_server import RedisServer

from .conftest import TOKEN_KEYS, EngineProc, Gateway

pytestmark = pytest.mark.service


def _apply_until_answered(gw: Gateway, body: dict[str, Any], limit: float = 30.0) -> tuple[dict[str, Any], int]:
    """POST /apply, retried with the same token and action while the gateway answers 503."""
    deadline, retries = time.monotonic() + limit, 0
    while True:
        reply = gw.post("/v1/matches/apply", body, timeout=10)
        if reply.status != 503 or time.monotonic() > deadline:
            assert reply.status == 200, (reply.status, reply.body[:300])
            answer: dict[str, Any] = reply.json
            return answer, retries
        retries += 1
        time.sleep(0.1)


def test_a_locked_sqlite_store_answers_503_and_the_retry_gets_the_winners_answer(
        engine_proc: EngineProc, start_gateway: Callable[..., Gateway], tmp_path: Path) -> None:
    path = tmp_path / "versions.sqlite3"
    gw = start_gateway(engine_proc.address, env={"STATE_TOKEN_KEYS": TOKEN_KEYS,
                                                  "GATEWAY_TOKEN_STORE": f"sqlite:///{path}"})
    game = gw.post("/v1/matches", {"variant": "block", "players": 2, "mode": "sealed", "seed": 7}).json
    keys, token = game["seat_keys"], game["token"]
    seat = game["view"]["to_move"]
    legal = gw.post("/v1/matches/legal", {"token": token, "seat_key": keys[seat]}).json["actions"]
    body = {"token": token, "seat_key": keys[seat], "action": legal[0]}
    blocker = sqlite3.connect(str(path), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the write lock, held past the gateway's busy timeout (2 s)
    try:
        assert gw.post("/v1/matches/apply", body, timeout=10).status == 503
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    won = gw.post("/v1/matches/apply", body)
    assert won.status == 200, won.body[:300]
    again = gw.post("/v1/matches/apply", body)     # its answer lost: the same request is answered the same
    assert again.status == 200 and again.body == won.body
    if len(legal) > 1:                              # another action with the old token is still stale
        other = gw.post("/v1/matches/apply", {**body, "action": legal[1]})
        assert other.status == 409 and other.json["type"].endswith("stale-token")
    nxt = won.json
    seat = nxt["view"]["to_move"]
    legal = gw.post("/v1/matches/legal", {"token": nxt["token"], "seat_key": keys[seat]}).json["actions"]
    assert gw.post("/v1/matches/apply", {"token": nxt["token"], "seat_key": keys[seat],
                                         "action": legal[0]}).status == 200   # the match goes on


def _play_until(stop: threading.Event, gw: Gateway, stranded: list[str], retried: list[int]) -> None:
    """Sealed matches one after the other until `stop`."""
    while not stop.is_set() and not stranded:
        _play(gw, stranded, retried)


def _play(gw: Gateway, stranded: list[str], retried: list[int]) -> None:
    """One sealed 2-player block round to its end, each call retried on 503 with the same token."""
    game = gw.post("/v1/matches", {"variant": "block", "players": 2, "mode": "sealed", "seed": 11}, timeout=10)
    while game.status == 503:
        time.sleep(0.1)
        game = gw.post("/v1/matches", {"variant": "block", "players": 2, "mode": "sealed", "seed": 11}, timeout=10)
    answer = game.json
    keys, token = answer["seat_keys"], answer["token"]
    while not (answer["view"].get("match_over") or answer["view"].get("game_over")
               or answer["view"].get("round_over")):
        seat = answer["view"]["to_move"]
        legal = gw.post("/v1/matches/legal", {"token": token, "seat_key": keys[seat]}, timeout=10)
        if legal.status == 503:
            time.sleep(0.1)
            continue
        if legal.status != 200:
            stranded.append(f"legal {legal.status} {legal.body[:200]!r}")
            return
        try:
            answer, n = _apply_until_answered(gw, {"token": token, "seat_key": keys[seat],
                                                   "action": legal.json["actions"][0]})
        except AssertionError as exc:
            stranded.append(str(exc))
            return
        retried.append(n)
        token = answer["token"]


@pytest.mark.serial
def test_redis_paused_during_applies_strands_no_match(
        engine_proc: EngineProc, start_gateway: Callable[..., Gateway], tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    try:
        gws = [start_gateway(engine_proc.address, env={"STATE_TOKEN_KEYS": TOKEN_KEYS,
                                                        "GATEWAY_TOKEN_STORE": server.url}) for _ in range(2)]
        stranded: list[str] = []
        retried: list[int] = []
        stop = threading.Event()

        def pauser() -> None:
            assert server.proc is not None
            for i in range(PAUSES):
                if stop.is_set():
                    return
                time.sleep(0.3)
                server.proc.send_signal(signal.SIGSTOP)
                time.sleep(0.5 + (i % 6) * 0.5)     # 0.5 to 3 s: past the gateway's 1 s store timeout
                server.proc.send_signal(signal.SIGCONT)

        players = [threading.Thread(target=_play_until, args=(stop, gws[i % 2], stranded, retried))
                   for i in range(4)]
        pausing = threading.Thread(target=pauser)
        pausing.start()
        for p in players:
            p.start()
        pausing.join()
        stop.set()
        for p in players:
            p.join(60)
        print(f"{PAUSES} pauses, {len(retried)} applies, {sum(1 for n in retried if n)} answered after a 503")
        assert not stranded, stranded
        assert sum(retried) > 0      # the pauses did cut into applies
    finally:
        if server.proc is not None:
            server.proc.send_signal(signal.SIGCONT)
        server.stop()


#: SIGSTOP/SIGCONT pauses of redis-server in the test above: one of each length, 0.5 to 3 s.
PAUSES = 6
