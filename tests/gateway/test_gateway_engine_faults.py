"""The engine's faults of issue 29, for real: engines and gateways as processes, loopback only, bounded.

- 50 clients looping expert `suggest` and `hints` (each up to ~0.3 s of engine CPU, more at the start
  of a 4-player Kingdomino game; `bench.faults.Flood`), through two gateways over one
  engine: every call is answered, 200 or 429 engine-busy, none 5xx, none stranded; ordinary calls
  and a match with expert bot seats go on meanwhile (their latency is a benchmark figure:
  `domino bench faults`, docs/reliability.md);
- the bot-seat replay bomb (a 72-move transparent replay of a 4-player Kingdomino dynasty with three
  expert bot seats, four at once): each is 504 at the gateway's deadline, and the engine is idle
  within a second of it (it was busy 22 s per bomb);
- one of two engines frozen (SIGSTOP) under steady load through two gateways: no request fails and the
  throughput stays above half (it fell from 100 to 5.6 req/s); the engine is back in rotation once it
  runs again;
- a match whose answer (or request) is over a gRPC message limit: 413 too-large every time, never
  the 503 "try again" it was.
"""
from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from domino.v1.channel import JSON_ENGINE
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.faults import Flood, bot_bodies, tree_cpu
from engine_service import calls
from engine_service.rules import Match

from . import replay_bomb
from .conftest import Gateway, start_engine
from .test_gateway_faults import Engine, Load, engines  # noqa: F401 - `engines` is a fixture

pytestmark = [pytest.mark.service, pytest.mark.serial]

Json = dict[str, Any]


def test_fifty_expert_flooders_get_answers_none_a_server_error(start_gateway: Callable[..., Gateway]) -> None:
    """Two gateways over one engine, 25 flooders on each: the engine's bound holds whoever asks."""
    engine = start_engine()
    try:
        gateways = [start_gateway(engine.address, "--workers", "2") for _ in range(2)]
        bots = [{"seat": s, "level": "expert"} for s in (1, 2, 3)]
        ordinary: list[int] = []
        floods = [Flood(g.url.removeprefix("http://"), bot_bodies(), clients=25) for g in gateways]
        with floods[0], floods[1]:
            time.sleep(1.0)
            started = time.monotonic()
            while time.monotonic() - started < 3.0:
                for g in gateways:
                    ordinary.append(g.post("/v1/matches", {"variant": "kozel", "players": 4}).status)
                time.sleep(0.05)
            # A person's match with three expert bot seats: served before the flooders' calls.
            seated = gateways[1].post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 9, "bots": bots})
        statuses = [st for flood in floods for st in flood.statuses]
        assert [f for flood in floods for f in flood.failures] == [] and not any(f.stranded() for f in floods)
        assert set(statuses) == {200, 429}, set(statuses)  # the bots answered some, refused others
        assert all(b["type"] == "/v1/problems/engine-busy" and int(b["retry-after"]) >= 1
                   for flood in floods for b in flood.busy)
        assert len(ordinary) > 20 and set(ordinary) == {201}
        assert seated.status == 201, seated.json
        assert seated.json["state"]["round"]["to_move"] == 0  # the bots played their turns
        # Nothing left holding a bot worker: an expert call finds one free at once.
        path, body = bot_bodies()[3]
        assert gateways[0].post(path, body).status == 200
    finally:
        engine.stop()


def test_the_replay_bomb_stops_at_its_deadline(start_gateway: Callable[..., Gateway]) -> None:
    engine = start_engine()
    try:
        deadline = 2.0
        gateway = start_gateway(engine.address, "--engine-timeout", str(deadline))
        body = replay_bomb.bomb()
        assert len(body["actions"]) == 72 and len(body["state"]["bots"]) == 3 and body["state"]["players"] == 4
        answers: list[tuple[int, float, Json]] = []

        def bomb() -> None:
            start = time.monotonic()
            r = gateway.post("/v1/matches/replay", body)
            answers.append((r.status, time.monotonic() - start, r.json))

        threads = [threading.Thread(target=bomb) for _ in range(4)]
        cpu_before = tree_cpu(engine.proc.pid)
        sent = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert tree_cpu(engine.proc.pid) - cpu_before > 0.2  # the bots did think (in the engine's workers)
        for status, seconds, problem in answers:
            assert status == 504 and problem["type"] == "/v1/problems/engine-timeout", problem
            assert seconds < deadline + 1.0
        assert len(answers) == 4
        # A second after the deadline, the engine and its bot workers use no CPU.
        time.sleep(max(0.0, sent + deadline + 1.0 - time.monotonic()))
        before = tree_cpu(engine.proc.pid)
        time.sleep(0.5)
        assert tree_cpu(engine.proc.pid) - before < 0.05
        started = time.monotonic()
        assert gateway.post("/v1/matches", {"variant": "kozel", "players": 4}).status == 201
        assert time.monotonic() - started < 1.0
    finally:
        engine.stop()


def _why_not_back(engine: Engine, gateways: list[Gateway]) -> str:
    """What a thawed engine that gets no call says: its own health asked directly (Check, and Watch as the
    gateways' channels ask it), its call counters, its threads' stacks and the end of its log; and each
    gateway's last changes of its connections to it (gRPC's subchannel trace) and the end of its log (so
    a failure in CI names its cause)."""
    lines = []
    asked = health_pb2.HealthCheckRequest(service=JSON_ENGINE)
    with grpc.insecure_channel(engine.address) as channel:  # Check, and Watch as the gateways' channels ask
        health = health_pb2_grpc.HealthStub(channel)
        for how, ask in (("check", lambda: health.Check(asked, timeout=3.0)),
                         ("watch's first answer", lambda: next(health.Watch(asked, timeout=3.0)))):
            try:
                lines.append(f"its health {how}: {health_pb2.HealthCheckResponse.ServingStatus.Name(ask().status)}")
            except grpc.RpcError as err:
                lines.append(f"its health {how}: {err.code()} {err.details()}")
    try:
        lines += [line for line in engine.metrics().splitlines()
                  if re.match(r"grpc_server_handled_total\{.*JsonEngine|domino_engine_in_flight", line)]
    except OSError as err:  # its metrics unread: the rest is still worth printing
        lines.append(f"its metrics: {err}")
    assert engine.proc is not None
    engine.proc.send_signal(signal.SIGUSR1)  # its threads' stacks, to its log (`engine_service.server`)
    time.sleep(1.0)
    engine.log.flush()
    engine.log.seek(0)
    lines.append("its log, its threads' stacks last: " + engine.log.read()[-12000:])
    for i, gateway in enumerate(gateways):  # its connections to this engine, the last 30 changes
        log = gateway.logs().splitlines()
        traced = [re.sub(r"args=\{[^}]*\}", "args=...", line) for line in log
                  if "subchannel.cc" in line and f"address=ipv4:{engine.address}" in line]
        others = [line for line in log if "subchannel.cc" not in line]
        lines.append(f"gateway {i}'s connections to it, last 30 of {len(traced)}:\n" + "\n".join(traced[-30:]))
        lines.append(f"gateway {i}'s log, the rest: " + "\n".join(others[-20:]))
    return "\n".join(lines)


def test_a_frozen_engine_beside_a_healthy_one_keeps_over_half_the_throughput(
        engines: Callable[..., Engine], start_gateway: Callable[..., Gateway]) -> None:  # noqa: F811
    """Two gateways over two engines, frozen for 6 s (the issue's 10 s in `domino bench faults`), against the
    throughput before and after."""
    a, b = engines(), engines()
    # Their gRPC client traces its connections (read only when the thawed engine gets no call: `_why_not_back`).
    traced = {"GRPC_VERBOSITY": "DEBUG", "GRPC_TRACE": "subchannel"}
    gateways = [start_gateway(f"ipv4:{a.address},{b.address}", env=traced) for _ in range(2)]
    assert a.proc is not None

    def rate(loads: list[Load], seconds: float) -> float:
        first = sum(len(load.statuses) for load in loads)
        time.sleep(seconds)
        return (sum(len(load.statuses) for load in loads) - first) / seconds

    loads = [Load(g, threads=2) for g in gateways]
    with loads[0], loads[1]:
        time.sleep(1.0)
        assert a.calls() > 0 and b.calls() > 0  # both were serving
        before = rate(loads, 2.0)
        a.proc.send_signal(signal.SIGSTOP)
        try:
            frozen = rate(loads, 6.0)
        finally:
            a.proc.send_signal(signal.SIGCONT)
        time.sleep(1.0)  # its connections come back
        served = a.calls()
        after = rate(loads, 2.0)
        # In rotation again: a reconnect and its health watch can take longer than the window above
        # on a loaded machine (one CI run: none within 3 s), so it is waited for, within 10 s more.
        back = time.monotonic() + 10.0
        while a.calls() <= served and time.monotonic() < back:
            time.sleep(0.25)
        assert a.calls() > served, "the thawed engine got no call within 13 s\n" + _why_not_back(a, gateways)
    assert [f for load in loads for f in load.failures] == []
    calm = (before + after) / 2
    assert frozen > calm / 2, f"{frozen:.0f} req/s with one engine frozen, {before:.0f} before, {after:.0f} after"


def _round_played(seed: int) -> Match:
    """A 4-player Kozel match whose first round is over (its record: about 3 KB with the round's lines,
    which left the state: `Match.shed`)."""
    match, _ = calls.new_match("kozel", 4, seed=seed)
    while match.round is not None and not match.round.over:
        calls.apply(match, match.legal_actions()[0])
    return match


def test_a_long_match_s_record_is_answered(engines: Callable[..., Engine],  # noqa: F811
                                           start_gateway: Callable[..., Gateway]) -> None:
    """The issue's case: a Kozel match to 100,000 points, 107 rounds. Its record (about 310 KB) was over the
    engine's 256 KiB and answered 503 forever; answers may be 4 MiB now."""
    match, _ = calls.new_match("kozel", 4, options={"target": 100_000}, seed=1)
    while match.round_number < 107:
        if match.round is None or match.round.over:
            calls.start_round(match)
        else:
            calls.apply(match, match.legal_actions()[0])
    gateway = start_gateway(engines().address)
    # the state keeps its current round only: the earlier rounds' lines (the answers' record_lines, kept
    # by the match in process as `shed`) go with it, as a caller that kept them sends them
    r = gateway.post("/v1/matches/record", {"state": match.to_dict(), "prior": match.shed})
    assert r.status == 200, r.json
    assert len(r.body) > 256 * 1024 and r.json["record"]["players"] == 4


def test_a_match_over_the_message_limits_is_413_every_time_never_503(
        engines: Callable[..., Engine], start_gateway: Callable[..., Gateway]) -> None:  # noqa: F811
    engine = engines("--max-answer-bytes", "2500", "--max-message-bytes", "4096")
    gateway = start_gateway(engine.address)
    played = _round_played(5)
    state = played.to_dict()
    assert gateway.post("/v1/matches/view", {"state": state, "seat": 0}).status == 200  # small answers pass
    for _ in range(2):  # the same answer again: it is not a "try again"
        r = gateway.post("/v1/matches/record", {"state": state, "prior": played.shed})
        assert r.status == 413 and r.content_type == "application/problem+json", r.json
        problem = r.json
        assert problem["type"] == "/v1/problems/too-large" and problem["what"] == "answer"
        assert problem["limit"] == 2500 and problem["size"] > 2500 and "ExportRecord" in problem["detail"]
    r = gateway.post("/v1/matches/replay", {"state": state, "actions": ["draw"] * 600})  # 5 KB to the engine
    assert r.status == 413 and r.json["what"] == "request" and r.json["limit"] == 4096, r.json
