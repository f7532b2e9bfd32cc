"""docs/tables.md's whole game between two devices in curl works as pasted (against a real gateway, its
engine and SQLite): the script runs to the match's end and the second device's stream got every change."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from .conftest import REPO, Gateway

pytestmark = pytest.mark.service

DOC_URL = "http://127.0.0.1:8080"


def test_the_curl_game_between_two_devices_runs_as_pasted(tables_gw: Gateway, tmp_path: object) -> None:
    if shutil.which("jq") is None or shutil.which("curl") is None:
        pytest.fail("curl and jq are needed (apt-get install curl jq)")
    text = (REPO / "docs" / "tables.md").read_text()
    found = re.search(r"<!-- tables-curl -->\n```sh\n(.*?)```", text, re.S)
    assert found is not None, "docs/tables.md has no curl game"
    script = found.group(1)
    assert script.count(DOC_URL) == 1
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script.replace(DOC_URL, tables_gw.url)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=str(tmp_path))
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("seat 0: http") and "/play?table=" in lines[0]
    assert "event: end" in lines[-3:] or "event: end" in done.stdout.splitlines()[-3:]
    events = (tmp_path / "boris.events").read_text()  # type: ignore[operator]
    ids = [int(x) for x in re.findall(r"^id: (\d+)\nevent: update", events, re.M)]
    first = int(re.search(r"^id: (\d+)\nevent: view", events, re.M).group(1))  # type: ignore[union-attr]
    assert ids == list(range(first + 1, first + 1 + len(ids))) and len(ids) > 10
