"""Schemathesis against the live gateway's own /openapi.json: no 5xx, no answer outside the document.

Every operation, with schemathesis's examples, coverage and fuzzing phases and its
stateful links, from a fixed seed, over at least 1,000 generated requests, against
the session's real gateway and engine. The checks are schemathesis's "all"
(server errors, status codes, content types, headers and bodies against the
documented responses, undocumented methods) but the two that judge the request
side (`positive_data_acceptance`, `negative_data_rejection`): those hold the
document to every rule the server enforces on a request's shape, which is the
OpenAPI contract work of the "first contact" issue.
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
EXCLUDED = ("positive_data_acceptance", "negative_data_rejection")


def test_schemathesis_finds_no_server_error_and_no_undocumented_answer(gateway: Gateway, tmp_path: Path) -> None:
    st = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert st is not None, "schemathesis is a test dependency: pip install -e '.[test]'"
    report = tmp_path / "report.json"
    done = subprocess.run(
        [st, "run", f"{gateway.url}/openapi.json", "--checks", "all", "--exclude-checks", ",".join(EXCLUDED),
         "--seed", str(SEED), "--max-examples", "30", "--workers", "2", "--no-color",
         "--generation-database", "none", "--report", "json", "--report-json-path", str(report),
         "--request-timeout", "20"],
        cwd=tmp_path, capture_output=True, text=True, timeout=1200, check=False)
    summary = done.stdout[-6000:]
    assert done.returncode == 0, summary
    data = json.loads(report.read_text())
    assert data["complete"] and data["exit_code"] == 0, summary
    assert data["operations"]["tested"] == data["operations"]["total"] >= 14
    cases = data["test_cases"]
    assert cases["generated"] >= 1000, cases
    assert cases["with_failures"] == cases["errored"] == 0 and data["failures"] == [] and data["errors"] == []
