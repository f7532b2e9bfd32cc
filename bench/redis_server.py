"""Debian's `redis-server` on a free loopback port, without persistence: the one way the tests
and the benchmarks start a Redis of their own (the cluster store, `api_gateway.store.RedisStore`)."""
from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path


class RedisMissing(RuntimeError):
    """redis-server is not on this machine."""


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class RedisServer:
    """A `redis-server` of the caller's own on loopback, started at once; `stop` kills it (an outage,
    for the tests that need one) and `start` brings it back on the same port, empty."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RedisMissing("redis-server is not installed: apt-get install redis-server "
                               "(scripts/ci-system-deps.sh installs it)")
        self.binary = binary
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it (again) and wait until it accepts connections (10 s at most)."""
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        """Kill it (SIGKILL: an outage, nothing flushed) and wait for it to be gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None
