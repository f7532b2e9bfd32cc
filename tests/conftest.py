"""What every test shares: signal dispositions children can rely on, and no skip taken for a pass.

- A shell that ignores SIGINT or SIGTERM (nohup, some CI runners, `trap '' INT`) passes
  that to pytest and, through exec, to every process a test starts: a server told to stop
  with SIGINT would then run on after the test. The dispositions are restored here, before
  any test starts a process; the tests' stop paths also end with SIGKILL after a timeout.
- `make test` must run every test (issue 16): a skipped test is reported as a failure that
  names the reason (usually a missing system tool: `scripts/ci-system-deps.sh` installs
  them). DOMINO_ALLOW_SKIPS=1 turns skips back into skips, for a partial run by hand.
- The longest files are collected first (`LONGEST_FIRST`): `make test`'s workers take whole
  files in collection order (xdist --dist loadfile), and the property tests, collected last,
  kept one worker busy for minutes after the other had finished.
- Every process a test starts gets a temporary directory of this test run (`TMPDIR`): a gateway's
  default sealed store is a file there, shared by the gateways of one host, and a file left by
  another checkout's run or a service on the machine must not answer (or fail) this run's calls.
- gRPC's fork handlers are off in the test processes (`GRPC_ENABLE_FORK_SUPPORT=false`, read when
  grpc starts): pexpect starts the terminal client by fork then exec, and with the handlers on, grpc
  restarts its epoll poller in the forked child, which dies on "epoll_wait error: Bad file descriptor"
  once pexpect closes the inherited descriptors before exec (grpc/grpc#43055; CI 32 lost a
  `domino play --join` that way with no output). Nothing a test starts forks with grpc loaded (the
  gateway imports it after gunicorn's fork, the engine's admission uses a forkserver).
- Bytecode is written (`PYTHONDONTWRITEBYTECODE` dropped here, so for every process a test starts):
  a machine that sets it (this one does) made each of the run's hundreds of gateway,
  engine and client processes compile every module it imports from source again, and each pytest
  process rewrite and compile every test module again: 3.5 s against 1.3 s for a gateway's imports,
  21 s against 7 s for a collection.
"""
from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Generator
from typing import Any

import pytest

os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# A runner that ignores these (nohup ignores SIGHUP) hands that on to every child: a terminal test's "window
# closed" (pexpect's close: SIGHUP) would then reach `domino play` as Ctrl-C, which leaves the seat.
for _signum, _handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL),
                          (signal.SIGHUP, signal.SIG_DFL)):
    if signal.getsignal(_signum) == signal.SIG_IGN:
        signal.signal(_signum, _handler)

# Each process of the run (the pytest-xdist controller, each worker, a second import of this file
# under another module name) makes its own directory, side by side under the machine's temporary
# root rather than each inside the one it inherited: chromium's singleton socket path must stay under
# 108 characters, and three nested levels went over it.
_root = os.environ["DOMINO_TESTS_ROOT"] = os.environ.get("DOMINO_TESTS_ROOT") or tempfile.gettempdir()
os.environ["TMPDIR"] = tempfile.mkdtemp(prefix="domino-tests-", dir=_root)
os.chmod(os.environ["TMPDIR"], 0o755)  # as /tmp, others may pass: the PostgreSQL server runs as `postgres`
atexit.register(shutil.rmtree, os.environ["TMPDIR"], ignore_errors=True)
tempfile.tempdir = None  # computed again from TMPDIR

ALLOW_SKIPS = os.environ.get("DOMINO_ALLOW_SKIPS", "").strip().lower() in ("1", "true", "yes")

#: The files that take longest, longest first (a `make test` at load 8-14 on 2 cores, issue 28:
#: 307, 214, 187, 134, 127, 115 s of the pure pass's 2,107 test-seconds). Scheduled first, the two
#: workers end within seconds of each other (simulated on that run's times: 1,054 s against 1,134 s
#: in collection order, where test_properties came 85th of 87 files).
LONGEST_FIRST = (
    "tests/deploy/test_deploy_images.py",
    "tests/variants/test_properties.py",
    "tests/gateway/test_gateway_schemathesis.py",
    "tests/bench/test_store_soak.py",
    "tests/gateway/test_gateway_soak.py",
    "tests/rules/test_kozel_properties.py",
    "tests/engine/test_engine_fuzz.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """Files go to the workers in collection order: pytest-xdist's loadfile otherwise sorts them by their
    number of tests first (`--loadscope-reorder`, its default), which sent the one-test files of
    `LONGEST_FIRST` (schemathesis, both soaks) to the end of the run, one worker finishing them alone."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`LONGEST_FIRST` first; every other test keeps its place (the sort is stable)."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and not ALLOW_SKIPS:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = (f"skipped, and make test runs every test: {reason}\n"
                           "(install the system tools with `sudo bash scripts/ci-system-deps.sh`; "
                           "DOMINO_ALLOW_SKIPS=1 allows skips in a partial run)")
