"""The TypeScript client (clients/typescript, issue 39 part 2) in Node against a real engine and gateway.

Its tests (clients/typescript/test, node's own runner) play a whole sealed Kozel match against bots (and
docs/sdk.md's example, as written), a block table between two clients that each follow their own seat's
event stream to the end; they resume a seat's stream by Last-Event-ID, across the server's closing it and
across a connection cut by a relay of the test's own; and they check that the committed `src/schema.d.ts`
is what openapi-typescript makes of the document this gateway serves. The gateway closes every stream
after a second (GATEWAY_SPECTATE_MAX=1): the resume test waits for that close. The packages come from
the package's lock file (`npm ci`, also run by `make install`); tsc compiles the sources and tests, then
`node --test` runs them with the gateway's URL in DOMINO_GATEWAY_URL.
"""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REPO, EngineProc, Gateway, gateway_env, launch_gateway

pytestmark = pytest.mark.service

PACKAGE = REPO / "clients" / "typescript"


@pytest.fixture(scope="module")
def ts_gateway(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("ts-client"), GATEWAY_SPECTATE_MAX="1",
                                        GATEWAY_SPECTATE_KEEPALIVE="1"))
    yield gw
    assert gw.stop() == 0


def _run(*command: str, env: dict[str, str] | None = None, timeout: float = 180) -> str:
    done = subprocess.run(command, cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert done.returncode == 0, f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def compiled() -> Path:
    """The package built: its packages installed from the lock file when missing, then tsc."""
    if not (PACKAGE / "node_modules" / ".bin" / "tsc").exists():
        _run("bash", str(REPO / "scripts" / "ts-client-tools.sh"), timeout=300)
    _run("npm", "run", "--silent", "build")
    return PACKAGE / "dist" / "test"


def test_the_typescript_client_plays_against_a_real_gateway(ts_gateway: Gateway, compiled: Path) -> None:
    tests = sorted(str(path.relative_to(PACKAGE)) for path in compiled.glob("*.test.js"))
    assert len(tests) >= 3, tests
    out = _run("node", "--test", *tests, env={**os.environ, "DOMINO_GATEWAY_URL": ts_gateway.url})
    counts = dict(re.findall(r"^# (tests|pass|fail|skipped|cancelled|todo) (\d+)$", out, re.MULTILINE))
    assert counts == {"tests": counts["pass"], "pass": counts["pass"], "fail": "0", "skipped": "0",
                      "cancelled": "0", "todo": "0"}, out[-4000:]
    assert int(counts["pass"]) >= 10, out[-4000:]
