"""Schemathesis against the live gateway's own /openapi.json: no 5xx, no answer outside the document.

Every operation, with schemathesis's examples, coverage and fuzzing phases and its
stateful links, from a fixed seed, over at least 1,000 generated requests, against
the session's real gateway and engine, with all of schemathesis's checks: server
errors, status codes, content types, headers and bodies against the documented
responses, undocumented methods, and the two that hold the document to every rule
the server enforces on a request's shape (issue 16):

- `negative_data_rejection`: a request the document calls invalid is refused (4xx);
- `positive_data_acceptance`: a request the document calls valid is not refused for
  its shape. Its statuses are configured to what a well-shaped request may still get:
  2xx, 400 (the engine's refusal of what the document leaves to it: notation, a
  carried state's insides, a token that does not open), 403 (a seat key acting for
  another seat), 404 (an unknown variant), 409 (illegal in this state), 410 (a
  sealed match expired), 413 (over the gateway's body limit, which is not the document's), 401 (an
  online table's call without a credential of that table, which schemathesis cannot hold).
  Never 422 (the shape) or 415. A document-invalid request may be refused as too large too, or,
  for the GET operations with query arguments (the archive's), as a request line too long (414).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Gateway

pytestmark = pytest.mark.service

SEED = 20261201
CONFIG = """\
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "401", "403", "404", "409", "410", "413"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "409", "410", "413", "414", "415", "422"]
"""


@pytest.mark.timeout(900)  # ~20 operations, some of them bots thinking: a few minutes on 2 cores
def test_schemathesis_finds_no_server_error_and_no_undocumented_answer(gateway: Gateway, tmp_path: Path) -> None:
    # One worker: with two threads, hypothesis's ast.parse of a lambda's source hit CPython 3.11's
    # "AST constructor recursion depth mismatch" (a thread-safety bug of the interpreter).
    st = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert st is not None, "schemathesis is a test dependency: pip install -e '.[test]'"
    report = tmp_path / "report.json"
    (tmp_path / "schemathesis.toml").write_text(CONFIG)
    done = subprocess.run(
        [st, "--config-file", str(tmp_path / "schemathesis.toml"), "run", f"{gateway.url}/openapi.json",
         "--checks", "all",
         "--seed", str(SEED), "--max-examples", "15", "--workers", "1", "--no-color",
         "--generation-database", "none", "--report", "json", "--report-json-path", str(report),
         "--request-timeout", "20"],
        cwd=tmp_path, capture_output=True, text=True, timeout=1200, check=False)
    # what a failure shows: schemathesis's failures (each with its request and the schema it broke), then its summary
    failures = done.stdout.partition(" FAILURES ")[2].partition(" WARNINGS ")[0]
    summary = failures[:8000] + "\n...\n" + done.stdout[-2000:]
    assert done.returncode == 0, summary
    data = json.loads(report.read_text())
    assert data["complete"] and data["exit_code"] == 0, summary
    assert data["operations"]["tested"] == data["operations"]["total"] >= 14
    cases = data["test_cases"]
    assert cases["generated"] >= 1000, cases
    assert cases["with_failures"] == cases["errored"] == 0 and data["failures"] == [] and data["errors"] == []
