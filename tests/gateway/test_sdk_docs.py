"""docs/sdk.md's example plays a whole match against the computer, as written, against real services."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, Gateway

pytestmark = pytest.mark.service

DOCS_URL = "http://127.0.0.1:8080"


def example() -> str:
    found = re.search(r"<!-- sdk example -->\n```python\n(.*?)```", (REPO / "docs" / "sdk.md").read_text(), re.S)
    assert found is not None, "docs/sdk.md has no example block"
    return found.group(1)


def test_the_sdk_example_plays_a_whole_match_against_bots(gateway: Gateway, tmp_path: Path) -> None:
    code = example()
    assert code.count(DOCS_URL) == 1 and len([line for line in code.splitlines() if line.strip()]) <= 12
    done = subprocess.run([sys.executable, "-c", code.replace(DOCS_URL, gateway.url)], capture_output=True,
                          text=True, timeout=240, check=False, cwd=tmp_path)  # the installed SDK, not ./clients
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.fullmatch(r"written points \[\d+(, \d+){3}\] the goat: \[\d(, \d)*\]", done.stdout.strip()), done.stdout
