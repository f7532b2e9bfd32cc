"""What every test shares: signal dispositions children can rely on, and no skip taken for a pass.

- A shell that ignores SIGINT or SIGTERM (nohup, some CI runners, `trap '' INT`) passes
  that to pytest and, through exec, to every process a test starts: a server told to stop
  with SIGINT would then run on after the test. The dispositions are restored here, before
  any test starts a process; the tests' stop paths also end with SIGKILL after a timeout.
- `make test` must run every test (issue 16): a skipped test is reported as a failure that
  names the reason (usually a missing system tool: `scripts/ci-system-deps.sh` installs
  them). DOMINO_ALLOW_SKIPS=1 turns skips back into skips, for a partial run by hand.
"""
from __future__ import annotations

import os
import signal
from collections.abc import Generator
from typing import Any

import pytest

for _signum, _handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)):
    if signal.getsignal(_signum) == signal.SIG_IGN:
        signal.signal(_signum, _handler)

ALLOW_SKIPS = os.environ.get("DOMINO_ALLOW_SKIPS", "").strip().lower() in ("1", "true", "yes")


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
