"""Real processes for the gateway tests: an engine and a gunicorn gateway on free ports.

`engine_proc` and `gateway` are shared by the session (the gateway runs 2
gunicorn workers, sealed mode on with `TOKEN_KEYS`). Tests that need a gateway
of their own (another engine target, a tiny deadline, other keys) use
`start_gateway`; `fake_engine` runs an in-process gRPC server whose answers a
test scripts (slow, failing, counting calls). Nothing is mocked inside the
gateway: every request goes over HTTP to gunicorn and from there over gRPC.
"""
from __future__ import annotations

import base64
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

import grpc
import jwt
import pytest
from domino.v1 import engine_pb2_grpc
from flask import Flask

from api_gateway.tokens import KeyRing
from bench.local_http import LocalServer
from bench.redis_server import RedisServer

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0
#: The session gateway's keys: "new" seals, "old" still opens (a rotation in progress).
NEW_KEY = KeyRing.generate("new")
OLD_KEY = KeyRing.generate("old")
TOKEN_KEYS = f"{NEW_KEY},{OLD_KEY}"
#: The tests' host app's player-assertion key (kid "k1"): a gateway started with GATEWAY_PLAYER_KEYS=PLAYER_KEYS
#: takes the seats of `player_assertion`'s users as theirs (vouched: their matches rate).
PLAYER_SECRET = b"k" * 32
PLAYER_KEYS = f"k1:{base64.b64encode(PLAYER_SECRET).decode()}"


def player_assertion(user: str) -> str:
    """A player assertion for `user`, as the host app's server signs it (an hour long)."""
    now = int(time.time())
    return jwt.encode({"sub": user, "iat": now, "exp": now + 3600}, PLAYER_SECRET, algorithm="HS256",
                      headers={"kid": "k1"})


def wait_for(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    """What `check` answers once it answers something true, asked every 0.2 s for at most `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout} s")


def _clean_env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ENGINE_", "GATEWAY_", "PROMETHEUS_")) and k != "STATE_TOKEN_KEYS"}
    env.update(extra or {})
    return env


def _first_json_line(proc: subprocess.Popen[str], log: IO[str], what: str) -> dict[str, Any]:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
    line = proc.stdout.readline() if ready else ""
    if not line.startswith("{"):
        proc.kill()
        proc.wait()
        log.seek(0)
        raise RuntimeError(f"{what} did not start: {line!r} {log.read()[-3000:]}")
    found: dict[str, Any] = json.loads(line)
    return found


def _stop(proc: subprocess.Popen[str], timeout: float = 20.0) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
    return proc.returncode


@dataclass
class EngineProc:
    proc: subprocess.Popen[str]
    address: str
    log: IO[str]

    def stop(self) -> int:
        code = _stop(self.proc)
        self.log.close()
        return code


def start_engine() -> EngineProc:
    log = tempfile.NamedTemporaryFile("w+", prefix="gw-engine-", suffix=".log")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine_service", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "off",
         "--grace", "1", "--no-log-calls"],
        cwd=REPO, env=_clean_env(None), stdout=subprocess.PIPE, stderr=log, text=True)
    return EngineProc(proc, _first_json_line(proc, log, "engine")["grpc"], log)


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


@dataclass
class Gateway:
    """A running `domino serve gateway` process."""

    proc: subprocess.Popen[str]
    url: str
    log: IO[str]
    metrics_dir: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    metrics_url: str | None = None  # its own port: http://host:port/metrics

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
             headers: dict[str, str] | None = None, timeout: float = 20.0) -> Reply:
        """One HTTP request; error statuses are answers too (never raised)."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        all_headers = {"Content-Type": "application/json"} if data is not None else {}
        all_headers.update(headers or {})
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=all_headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as r:
                return Reply(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read())
        except urllib.error.HTTPError as err:
            with err:
                return Reply(err.code, {k.lower(): v for k, v in err.headers.items()}, err.read())

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.call("GET", path, **kwargs)

    def metrics(self) -> str:
        """The Prometheus text of its metrics port."""
        assert self.metrics_url is not None, "this gateway serves no metrics"
        with urllib.request.urlopen(self.metrics_url, timeout=10) as reply:
            assert reply.status == 200 and reply.headers["Content-Type"].startswith("text/plain")
            text: str = reply.read().decode()
        return text

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Reply:
        return self.call("POST", path, body, **kwargs)

    def logs(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text()

    def stop(self) -> int:
        code = _stop(self.proc)
        self.log.close()
        return code


def launch_gateway(engine: str, *args: str, env: dict[str, str] | None = None) -> Gateway:
    """Start a gateway on a free port and wait until a worker answers /healthz."""
    log = tempfile.NamedTemporaryFile("w+", prefix="gateway-", suffix=".log")  # noqa: SIM115
    full_env = {"GATEWAY_METRICS_PORT": "0", **_clean_env(env)}  # a free port, not the default 9465
    proc = subprocess.Popen(
        [sys.executable, "-m", "api_gateway", "--host", "127.0.0.1", "--port", "0", "--engine", engine, *args],
        cwd=REPO, env=full_env, stdout=subprocess.PIPE, stderr=log, text=True)
    bound = _first_json_line(proc, log, "gateway")
    gateway = Gateway(proc, f"http://{bound['http']}", log, full_env.get("PROMETHEUS_MULTIPROC_DIR"),
                      metrics_url=f"http://{bound['metrics']}/metrics" if bound.get("metrics") else None)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            if gateway.get("/healthz", timeout=2).status == 200:
                return gateway
        except OSError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            gateway.stop()
            raise RuntimeError(f"gateway workers did not answer: {Path(log.name).read_text()[-3000:]}")
        time.sleep(0.05)


@pytest.fixture(scope="session")
def engine_proc() -> Iterator[EngineProc]:
    engine = start_engine()
    yield engine
    assert engine.stop() == 0


@pytest.fixture(scope="session")
def gateway_metrics_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gateway-metrics")


@pytest.fixture(scope="session")
def gateway(engine_proc: EngineProc, gateway_metrics_dir: Path) -> Iterator[Gateway]:
    """The shared gateway: 2 gunicorn workers, sealed mode with keys "new" (sealing) and "old"."""
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env={"STATE_TOKEN_KEYS": TOKEN_KEYS,
                             "PROMETHEUS_MULTIPROC_DIR": str(gateway_metrics_dir),
                             # a spectator stream of a live match ends after 1 s without news: schemathesis's
                             # stateful phase opens streams of the matches it creates
                             "GATEWAY_SPECTATE_IDLE": "1"})
    yield gw
    assert gw.stop() == 0


@pytest.fixture
def start_gateway() -> Iterator[Callable[..., Gateway]]:
    """A gateway of the test's own (stopped afterwards): `start_gateway(engine_target, *flags, env=...)`."""
    started: list[Gateway] = []

    def start(engine: str, *args: str, env: dict[str, str] | None = None) -> Gateway:
        gw = launch_gateway(engine, "--workers", "1", *args, env=env)
        started.append(gw)
        return gw

    yield start
    for gw in started:
        gw.stop()


RPCS = ("ListVariants", "NewMatch", "StartRound", "LegalActions", "Apply", "Replay", "Settle", "View", "Timeout",
        "CreateTournament", "RecordTournamentRound", "TournamentStandings", "Suggest", "Hints")


class ScriptedEngine(engine_pb2_grpc.JsonEngineServicer):
    """An in-process engine (the JSON face the gateway calls) whose answers a test sets in `handlers`;
    records the calls it gets."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.handlers: dict[str, Callable[[Any, grpc.ServicerContext], Any]] = {}

    def dispatch(self, name: str, request: Any, context: grpc.ServicerContext) -> Any:
        self.calls.append(name)
        handler = self.handlers.get(name)
        if handler is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{name} is not scripted")
        return handler(request, context)


def _rpc(name: str) -> Callable[[ScriptedEngine, Any, grpc.ServicerContext], Any]:
    return lambda self, request, context: self.dispatch(name, request, context)


for _name in RPCS:
    setattr(ScriptedEngine, _name, _rpc(_name))


@dataclass
class FakeEngine:
    servicer: ScriptedEngine
    server: grpc.Server
    address: str


@pytest.fixture
def fake_engine() -> Iterator[Callable[[], FakeEngine]]:
    """In-process gRPC engines on free ports with scripted answers (`.servicer.handlers[...] = fn`)."""
    servers: list[grpc.Server] = []

    def make() -> FakeEngine:
        servicer = ScriptedEngine()
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=[("grpc.so_reuseport", 0)])
        engine_pb2_grpc.add_JsonEngineServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        servers.append(server)
        return FakeEngine(servicer, server, f"127.0.0.1:{port}")

    yield make
    for server in servers:
        server.stop(0)


LocalServerT = TypeVar("LocalServerT", bound=LocalServer)


@pytest.fixture
def local_servers() -> Iterator[Callable[[LocalServerT], LocalServerT]]:
    """`start(server)`: a `LocalServer` (a scripted gateway, a receiver) serving for this test, stopped after it."""
    started: list[LocalServer] = []

    def start(server: LocalServerT) -> LocalServerT:
        started.append(server.start())
        return server

    yield start
    for server in started:
        server.stop()


def free_port() -> int:
    """A port nothing listens on (bound and released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# ---------------------------------------------------------------- online tables (tests/gateway/test_tables*.py)


@dataclass
class InProcess:
    """A gateway app answering in this process (Flask's test client), called as `Gateway.call` is."""

    app: Flask

    def call(self, method: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None,
             **_: Any) -> Reply:
        r = self.app.test_client().open(path, method=method, json=body, headers=headers or {})
        return Reply(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.get_data())

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.call("GET", path, **kwargs)


def gateway_env(tmp: Path, store: str | None = None, **extra: str) -> dict[str, str]:
    return {"STATE_TOKEN_KEYS": TOKEN_KEYS, "GATEWAY_TOKEN_STORE": store or f"sqlite:///{tmp / 'live.sqlite3'}",
            "GATEWAY_DATABASE": f"sqlite:///{tmp / 'archive.sqlite3'}", **extra}


@contextmanager
def gateways_on_one_redis(engine: EngineProc, tmp: Path, workers: int, **extra: str) -> Iterator[list[Gateway]]:
    """Two gateways ("a" and "b", `workers` gunicorn workers each) on one Redis of their own, each with
    its own archive file: what a cluster's gateways share is the live store (`extra`: more settings)."""
    server = RedisServer(tmp)
    gws: list[Gateway] = []
    try:
        for name in ("a", "b"):
            gws.append(launch_gateway(engine.address, "--workers", str(workers),
                                      env=gateway_env(tmp / name, server.url, **extra)))
        yield gws
    finally:
        for gw in gws:
            gw.stop()
        server.stop()


@pytest.fixture(scope="module")
def tables_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """Two gunicorn workers on one SQLite file: a stream and the call that changes its match are often
    served by different workers."""
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("tables"), GATEWAY_SPECTATE_KEEPALIVE="1"))
    yield gw
    gw.stop()


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A live store's URL: a SQLite file of the test's own, or a Redis started for it."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'live.sqlite3'}"
        return
    server = RedisServer(tmp_path)
    yield server.url
    server.stop()
