"""Fixtures that run the engine as a real process on free ports (no gRPC mocks).

`engine` is one server shared by the whole session (started with ``--port 0``,
its addresses read from the one line it prints); tests that must stop or
reconfigure a server start their own with `start_engine`.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import grpc
import pytest
from domino.v1 import engine_pb2_grpc

from clients.engine_client import EngineClient

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 20.0


@dataclass
class EngineProcess:
    """A running `python -m engine_service` and what it printed."""

    proc: subprocess.Popen[str]
    address: str
    metrics_address: str | None
    log_file: IO[str]

    def logs(self) -> list[dict[str, Any]]:
        """Every JSON log line written to stderr so far."""
        self.log_file.flush()
        lines = Path(self.log_file.name).read_text().splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def metrics(self) -> str:
        assert self.metrics_address is not None
        with urllib.request.urlopen(f"http://{self.metrics_address}/metrics", timeout=5) as reply:
            return str(reply.read().decode())

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.proc.send_signal(signum)

    def stop(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()
        return self.proc.returncode


def start_engine(*args: str, env: dict[str, str] | None = None,
                 command: list[str] | None = None) -> EngineProcess:
    """Start an engine on free ports (unless `args` say otherwise) and wait for its address line."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ENGINE_")}
    full_env.update(env or {})
    # -P: the repository (cwd) must not come before PYTHONPATH, so the compiled pass runs the compiled engine
    argv = (command or [sys.executable, "-P", "-m", "engine_service"]) + [
        "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0", "--grace", "2", *args]
    # closed by EngineProcess.stop (or below when the start fails)
    log_file = tempfile.NamedTemporaryFile("w+", prefix="engine-", suffix=".log")  # noqa: SIM115
    proc = subprocess.Popen(argv, cwd=REPO, env=full_env, stdout=subprocess.PIPE, stderr=log_file,
                            text=True)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
    line = proc.stdout.readline() if ready else ""
    if not line:
        proc.kill()
        proc.wait()
        log_file.seek(0)
        logs = log_file.read()[-2000:]
        log_file.close()
        raise RuntimeError(f"engine did not start: {logs}")
    bound = json.loads(line)
    return EngineProcess(proc, bound["grpc"], bound["metrics"], log_file)


def wait_until(predicate: Callable[[], object], timeout: float = 5.0, every: float = 0.02) -> bool:
    """Poll `predicate` until it is true or `timeout` passes; returns its last truth."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return bool(predicate())


@pytest.fixture(name="wait_until")
def wait_until_fixture() -> Callable[..., bool]:
    return wait_until


@pytest.fixture
def engine_factory() -> Iterator[Callable[..., EngineProcess]]:
    """`start_engine` for tests that need a server of their own; stops them all afterwards."""
    started: list[EngineProcess] = []

    def factory(*args: str, **kwargs: Any) -> EngineProcess:
        server = start_engine(*args, **kwargs)
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def engine() -> Iterator[EngineProcess]:
    server = start_engine()
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="session")
def channel(engine: EngineProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(engine.address) as ch:
        yield ch


@pytest.fixture(scope="session")
def stub(channel: grpc.Channel) -> engine_pb2_grpc.EngineStub:
    return engine_pb2_grpc.EngineStub(channel)


@pytest.fixture(scope="session")
def json_stub(channel: grpc.Channel) -> engine_pb2_grpc.JsonEngineStub:
    """The JSON face (`domino.v1.JsonEngine`) of the shared engine."""
    return engine_pb2_grpc.JsonEngineStub(channel)


@pytest.fixture(scope="session")
def client(engine: EngineProcess) -> Iterator[EngineClient]:
    with EngineClient(engine.address, timeout=10) as c:
        yield c
