"""Faults, for real: engines killed or stopped under load behind a real gateway (loopback only, bounded).

- two engines behind one gateway under steady load, one SIGKILLed: no client request fails
  (the gateway's channel retries UNAVAILABLE on the other engine);
- an engine asked to stop (SIGTERM) turns NOT_SERVING first and finishes its calls, and the
  gateway sends it nothing new meanwhile (client-side health checking);
- the only engine down: 503 problem+json with Retry-After that names no address; back to 2xx
  within a second of the engine listening again, however long it was away.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO

import pytest

from .conftest import REPO, Gateway, _clean_env, free_port

pytestmark = [pytest.mark.service, pytest.mark.serial]


@dataclass
class Engine:
    port: int
    metrics_port: int
    proc: subprocess.Popen[str] | None = None
    log: IO[str] = field(default_factory=lambda: tempfile.NamedTemporaryFile("w+", suffix=".log"))  # noqa: SIM115

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, *flags: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "engine_service", "--host", "127.0.0.1", "--port", str(self.port),
             "--metrics-port", str(self.metrics_port), "--no-log-calls", *flags],
            cwd=REPO, env=_clean_env(None), stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("{"), line

    def metrics(self) -> str:
        """The Prometheus text of its metrics port."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as reply:
            text: str = reply.read().decode()
        return text

    def calls(self) -> int:
        """Calls of the JSON face this engine has served so far (its Prometheus counter)."""
        return sum(int(float(v)) for v in re.findall(
            r'grpc_server_handled_total\{[^}]*grpc_service="domino\.v1\.JsonEngine"[^}]*\} ([\d.e+]+)',
            self.metrics()))

    def stop(self, sig: int = signal.SIGTERM, wait: bool = True) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            if wait:
                self.proc.wait(30)


@pytest.fixture
def engines() -> Iterator[Callable[..., Engine]]:
    made: list[Engine] = []

    def make(*flags: str) -> Engine:
        engine = Engine(free_port(), free_port())
        engine.start(*flags)
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.stop(signal.SIGKILL)
        engine.log.close()  # before the run's temporary directory goes (else its __del__ warns at exit)


class Load:
    """Requests sent back to back by a few threads until stopped; every answer's status is kept."""

    def __init__(self, gateway: Gateway, threads: int = 4) -> None:
        self.gateway = gateway
        self.statuses: list[int] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def _run(self) -> None:
        while not self._stop.is_set():
            r = self.gateway.post("/v1/matches", {"variant": "kozel", "players": 4})
            self.statuses.append(r.status)
            if r.status != 201:
                self.failures.append(f"{r.status} {r.body[:200]!r}")

    def __enter__(self) -> Load:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(30)


def test_one_of_two_engines_killed_under_load_fails_no_request(
        engines: Callable[..., Engine], start_gateway: Callable[..., Gateway]) -> None:
    a, b = engines(), engines()
    gateway = start_gateway(f"ipv4:{a.address},{b.address}")
    with Load(gateway) as load:
        time.sleep(1.5)
        assert a.calls() > 0 and b.calls() > 0  # both were serving
        a.stop(signal.SIGKILL)
        time.sleep(2.5)
        before = b.calls()
        time.sleep(0.5)
        assert b.calls() > before  # the survivor carries on
    assert len(load.statuses) > 50
    assert load.failures == []


def test_a_stopping_engine_gets_no_new_calls_and_finishes_its_own(
        engines: Callable[..., Engine], start_gateway: Callable[..., Gateway]) -> None:
    # 2 s of NOT_SERVING while still serving, then up to 5 s for calls in flight.
    a, b = engines("--shutdown-delay", "2", "--grace", "5"), engines()
    gateway = start_gateway(f"ipv4:{a.address},{b.address}")
    with Load(gateway) as load:
        time.sleep(1.5)
        assert a.calls() > 0 and b.calls() > 0
        a.stop(signal.SIGTERM, wait=False)
        time.sleep(0.7)  # the health watch reaches the gateway
        stopping = a.calls()
        time.sleep(1.0)  # a still serves (the shutdown delay) but gets nothing new
        assert a.calls() == stopping
        assert a.proc is not None and a.proc.poll() is None
    assert a.proc.wait(30) == 0
    assert load.failures == [] and len(load.statuses) > 30


def test_the_engine_down_is_503_naming_no_address_and_back_within_a_second(
        engines: Callable[..., Engine], start_gateway: Callable[..., Gateway]) -> None:
    engine = engines()
    gateway = start_gateway(engine.address)
    assert gateway.post("/v1/matches", {"variant": "kozel", "players": 4}).status == 201
    engine.stop(signal.SIGKILL)
    time.sleep(3.0)  # down long enough for the channel's reconnect backoff to grow
    started = time.monotonic()
    down = gateway.post("/v1/matches", {"variant": "kozel", "players": 4})
    assert time.monotonic() - started < 1.0  # refused quickly, not held
    assert down.status == 503 and down.content_type == "application/problem+json"
    assert int(down.headers["retry-after"]) >= 1
    assert "127.0.0.1" not in down.body.decode() and str(engine.port) not in down.body.decode()
    assert json.loads(down.body)["type"] == "/v1/problems/engine-unavailable"
    engine.start()
    back = time.monotonic()
    while True:
        r = gateway.post("/v1/matches", {"variant": "kozel", "players": 4})
        if r.status == 201:
            break
        assert time.monotonic() - back < 1.0, f"still {r.status} {time.monotonic() - back:.2f} s after restart"
        time.sleep(0.05)
    assert time.monotonic() - back < 1.0
