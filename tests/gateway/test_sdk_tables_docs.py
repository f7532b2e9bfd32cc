"""docs/sdk.md's online-tables example, as written, against real services: two people's seats and two bots
play a Kozel round, moving as one seat's stream says.

Its gateway beats presence every 0.2 s (GATEWAY_PRESENCE_SECONDS 0.5), so the stream carries `presence`
events while the round is played, as a real one does on a slow round (one within 10 s of the stream's start
by default): the example has to pass over them (it once read every event's view, and failed so in CI)."""
from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REPO, EngineProc, Gateway, gateway_env, launch_gateway

pytestmark = pytest.mark.service

DOCS_URL = "http://127.0.0.1:8080"


def example() -> str:
    found = re.search(r"<!-- sdk tables example -->\n```python\n(.*?)```", (REPO / "docs" / "sdk.md").read_text(),
                      re.S)
    assert found is not None, "docs/sdk.md has no tables example block"
    return found.group(1)


@pytest.fixture(scope="module")
def presence_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address,
                        env=gateway_env(tmp_path_factory.mktemp("sdk-tables"), GATEWAY_PRESENCE_SECONDS="0.5"))
    yield gw
    gw.stop()


def test_the_tables_example_plays_a_round_between_two_seats(presence_gw: Gateway, tmp_path: Path) -> None:
    gateway = presence_gw
    code = example()
    assert code.count(DOCS_URL) == 1
    done = subprocess.run([sys.executable, "-c", code.replace(DOCS_URL, gateway.url)], capture_output=True,
                          text=True, timeout=240, check=False, cwd=tmp_path)  # the installed SDK, not ./clients
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line.strip() for line in done.stdout.strip().splitlines()]
    assert re.fullmatch(r"round points \[\d+(, \d+){3}\]", lines[-1]), done.stdout
    moves = [line.split() for line in lines if line.startswith("played ")]
    assert {m[1] for m in moves} >= {"0", "1"}, done.stdout            # both people moved
    assert "round_ended None" in lines, done.stdout
