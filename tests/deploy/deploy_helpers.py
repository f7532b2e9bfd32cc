"""Helpers shared by the deployment tests (tool lookup, ports, polling)."""
from __future__ import annotations

import os
import shutil
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
INSTALL_HINT = "run `bash scripts/ci-system-deps.sh` as root"


def tool(name: str, hint: str = INSTALL_HINT) -> str:
    """The path of a command-line tool (the venv's own first), or skip saying how to get it."""
    for candidate in (VENV_BIN / name, Path("/usr/sbin") / name):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed: {hint}")
    return found


def free_port() -> int:
    """A loopback port that was free a moment ago (for servers that cannot bind port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(predicate: Callable[[], object], timeout: float, every: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return bool(predicate())
