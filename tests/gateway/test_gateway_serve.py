"""`domino serve gateway` and `domino serve all` as a user runs them: real processes, real signals."""
from __future__ import annotations

import contextlib
import os
import queue
import re
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from clients.serve_all import engine_target

from .conftest import REPO, Gateway, free_port

pytestmark = pytest.mark.service


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("ENGINE_", "GATEWAY_", "PROMETHEUS_")) and k != "STATE_TOKEN_KEYS"}


@pytest.mark.parametrize(("args", "env", "message"), [
    (["--port", "99999"], {}, "GATEWAY_PORT"),
    (["--port", "0", "--engine-timeout", "0"], {}, "GATEWAY_ENGINE_TIMEOUT"),
    (["--port", "0"], {"STATE_TOKEN_KEYS": "k1:dG9vIHNob3J0"}, "16, 24 or 32"),
])
def test_unusable_settings_stop_with_status_2(args: list[str], env: dict[str, str], message: str,
                                              tmp_path: Path) -> None:
    # Its own store, archive and a free port: the defaults are shared with whatever else runs (a gateway on
    # the default port made the settings' check say so first: a CI run met it).
    own = {"GATEWAY_TOKEN_STORE": f"sqlite:///{tmp_path}/versions.sqlite3",
           "GATEWAY_DATABASE": f"sqlite:///{tmp_path}/archive.sqlite3", "GATEWAY_METRICS_PORT": "0"}
    result = subprocess.run([sys.executable, "-m", "clients.cli", "serve", "gateway", *args], cwd=REPO,
                            env={**_env(), **own, **env}, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2 and message in result.stderr
    assert "dG9vIHNob3J0" not in result.stderr  # a key is never echoed


def test_the_flask_development_server_serves_the_same_api(engine_proc: object) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "api_gateway", "--dev", "--port", "0", "--metrics-port", "0",
                             "--engine", engine_proc.address],  # type: ignore[attr-defined]
                            cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready
        import json

        bound = json.loads(proc.stdout.readline())
        gw = Gateway(proc, "http://" + bound["http"], open(os.devnull, "w+"),  # noqa: SIM115 - closed by stop()
                     metrics_url=f"http://{bound['metrics']}/metrics")
        assert gw.get("/readyz").json["engine"] == "SERVING"
        assert gw.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 1}).status == 201
        assert 'route="/v1/matches"' in gw.metrics() and gw.get("/metrics").status == 404
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:  # never left running, whatever happened to SIGINT
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def test_engine_targets() -> None:
    assert engine_target(["127.0.0.1:1"]) == "127.0.0.1:1"
    assert engine_target(["127.0.0.1:1", "127.0.0.1:2"]) == "ipv4:127.0.0.1:1,127.0.0.1:2"


class Lines:
    """A child's stdout (or stderr) lines, read by a thread (select() misses lines already in Python's buffer)."""

    def __init__(self, proc: subprocess.Popen[str], stderr: bool = False) -> None:
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        stream = proc.stderr if stderr else proc.stdout
        assert stream is not None

        def pump() -> None:
            for line in stream:
                self.queue.put(line.rstrip("\n"))
            self.queue.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def rest(self, timeout: float = 30) -> list[str]:
        """The lines still to come, to the stream's end (the child has exited)."""
        rest: list[str] = []
        deadline = time.monotonic() + timeout
        while (line := self.queue.get(timeout=max(0.01, deadline - time.monotonic()))) is not None:
            rest.append(line)
        return rest

    def until(self, pattern: str, timeout: float = 60) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if re.search(pattern, line):
                return self.seen
        raise AssertionError(f"no line matching {pattern!r}: {self.seen}")


def _children(pid: int) -> set[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return {int(p) for p in path.read_text().split()} if path.exists() else set()


def _handled(engine_line: str, method: str) -> float:
    """How many `method` calls the engine of a `serve all` line ("engine ... metrics URL") has answered."""
    metrics_url = re.search(r"metrics (http://\S+)", engine_line)
    assert metrics_url is not None
    with urllib.request.urlopen(metrics_url.group(1), timeout=5) as reply:
        text = reply.read().decode()
    return sum(float(m.group(1)) for m in re.finditer(
        rf'grpc_server_handled_total\{{[^}}]*grpc_method="{method}"[^}}]*\}} (\S+)', text))


def test_serve_all_runs_two_engines_behind_one_gateway_and_stops_on_ctrl_c() -> None:
    port = free_port()
    children: set[int] = set()
    proc = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "serve", "all", "--engines", "2", "--engine-port", "0",
         "--engine-metrics-port", "0", "--gateway-metrics-port", "0", "--port", str(port), "--workers", "1"],
        cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = Lines(proc).until(r"Point a browser at")
        assert f"Point a browser at http://127.0.0.1:{port}/play to play, http://127.0.0.1:{port}/docs" in lines[-1]
        assert any(re.match(rf"gateway: http://127\.0\.0\.1:{port}, metrics http://127\.0\.0\.1:\d+/metrics", line)
                   for line in lines), lines
        engines = [line for line in lines if line.startswith("engine")]
        assert len(engines) == 2
        children = _children(proc.pid)
        assert len(children) == 3  # two engines and the gateway, each its own process
        gw = Gateway(proc, f"http://127.0.0.1:{port}", open(os.devnull, "w+"))  # noqa: SIM115
        assert gw.get("/docs").status == 200
        created = gw.post("/v1/matches", {"variant": "kozel", "players": 4, "mode": "sealed"})
        assert created.status == 201  # sealed mode works out of the box (a key made for the run)
        state = gw.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 3}).json["state"]
        # Round-robin uses the replicas whose connection is ready: on a loaded machine the second
        # engine can come up after the first calls, so call until both answered (or 30 s went by).
        deadline = time.monotonic() + 30
        while True:
            for _ in range(20):
                assert gw.post("/v1/matches/legal", {"state": state}).status == 200
            handled = [_handled(line, "LegalActions") for line in engines]
            if all(n > 0 for n in handled) or time.monotonic() > deadline:
                break
        assert all(n > 0 for n in handled), handled  # round-robin reached both replicas
        proc.send_signal(signal.SIGINT)
        assert proc.wait(40) == 0
        assert not [child for child in children if Path(f"/proc/{child}").exists()]  # all stopped, reaped
    finally:
        if proc.poll() is None:  # a failed check: let serve all stop its children itself first
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(40)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                for child in children:  # each runs in its own session: a killed parent leaves them behind
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(child, signal.SIGKILL)


def test_the_gateway_logs_its_real_address_and_where_a_person_goes(engine_proc: object, tmp_path: Path) -> None:
    """gunicorn's "Listening at:" names the address (it was empty: each worker binds its own socket),
    and the ready line names the browser table beside the API docs (issue 28)."""
    own = {"GATEWAY_TOKEN_STORE": f"sqlite:///{tmp_path}/versions.sqlite3",  # nothing shared with other tests
           "GATEWAY_DATABASE": f"sqlite:///{tmp_path}/archive.sqlite3", "GATEWAY_METRICS_PORT": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "api_gateway", "--port", "0", "--workers", "1",
                             "--engine", engine_proc.address],  # type: ignore[attr-defined]
                            cwd=REPO, env={**_env(), **own}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        import json

        address = json.loads(Lines(proc).until(r"^\{")[-1])["http"]
        logged_from = Lines(proc, stderr=True)
        logged = logged_from.until(r"Play in a browser at")
        assert any(re.search(rf"\[INFO\] Listening at: http://{re.escape(address)} \(\d+\)$", line) for line in logged), logged
        assert logged[-1].endswith(f"Play in a browser at http://{address}/play; "
                                   f"the API and its docs are at http://{address}/docs")
        with urllib.request.urlopen(f"http://{address}/healthz", timeout=10) as reply:  # the worker has patched
            assert reply.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    # no warning at start or stop: gevent's MonkeyPatchWarning was one (ssl imported by the master's checks)
    warned = [line for line in logged + logged_from.rest() if "Warning" in line]
    assert not warned, warned


def test_a_second_gateway_on_a_busy_port_fails_naming_it(gateway: Gateway) -> None:
    """The workers bind with SO_REUSEPORT; a second gateway on the same port must not share it silently."""
    port = int(gateway.url.rsplit(":", 1)[1])
    done = subprocess.run([sys.executable, "-m", "api_gateway", "--port", str(port), "--engine", "127.0.0.1:1"],
                          cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert f"127.0.0.1:{port}" in done.stderr and "in use" in done.stderr
    assert gateway.get("/healthz").status == 200  # the first one is untouched


def test_serve_all_starts_a_dead_engine_again_and_keeps_serving() -> None:
    """`domino serve all --engines 2`: an engine SIGKILLed is started again on its ports; the gateway never
    stops answering (the other engine serves meanwhile), and Ctrl-C still stops everything."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "serve", "all", "--engines", "2", "--engine-port", "0",
         "--engine-metrics-port", "0", "--gateway-metrics-port", "0", "--port", str(port), "--workers", "1"],
        cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    children: set[int] = set()
    try:
        lines = Lines(proc).until(r"Point a browser at")
        engines = [line for line in lines if line.startswith("engine")]
        grpc_ports = [re.search(r"grpc 127\.0\.0\.1:(\d+)", line).group(1) for line in engines]  # type: ignore[union-attr]
        children = _children(proc.pid)
        gw = Gateway(proc, f"http://127.0.0.1:{port}", open(os.devnull, "w+"))  # noqa: SIM115
        victim = next(pid for pid in sorted(children) if b"engine_service" in Path(f"/proc/{pid}/cmdline").read_bytes())
        os.kill(victim, signal.SIGKILL)
        statuses = []
        deadline = time.monotonic() + 10
        restarted = False
        while time.monotonic() < deadline and not restarted:
            statuses.append(gw.post("/v1/matches", {"variant": "kozel", "players": 4}).status)
            now = _children(proc.pid)
            restarted = len(now) == 3 and victim not in now
            time.sleep(0.05)
        assert restarted, "the dead engine was not started again"
        assert set(statuses) == {201}, statuses
        for _ in range(20):  # both engines serve again
            assert gw.post("/v1/matches", {"variant": "kozel", "players": 4}).status == 201
        new = (_children(proc.pid) - children).pop()
        argv = Path(f"/proc/{new}/cmdline").read_bytes().split(b"\0")
        assert argv[argv.index(b"--port") + 1].decode() in grpc_ports  # on one of the two ports the gateway knows
        children = _children(proc.pid)
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        assert proc.wait(40) == 0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(40)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
