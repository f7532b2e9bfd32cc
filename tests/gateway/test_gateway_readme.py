"""The README's quick start works as pasted, against real services: a whole sealed round."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from .conftest import REPO, Gateway

pytestmark = pytest.mark.service

README_URL = "http://127.0.0.1:8080"


def quick_start() -> str:
    text = (REPO / "README.md").read_text()
    found = re.search(r"<!-- quickstart -->\n```python\n(.*?)```", text, re.S)
    assert found is not None, "README.md has no quick start block"
    return found.group(1)


def test_the_readme_quick_start_plays_a_whole_sealed_round(gateway: Gateway) -> None:
    code = quick_start()
    assert code.count(README_URL) == 1 and len(code.splitlines()) <= 20
    done = subprocess.run([sys.executable, "-c", code.replace(README_URL, gateway.url)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert re.fullmatch(r"(out|fish) round points \[\d+(, \d+){3}\] score \[\d+(, \d+){3}\]", line), line


def test_the_readme_starts_with_the_two_commands() -> None:
    lines = (REPO / "README.md").read_text().splitlines()
    block = lines[lines.index("```sh") + 1:lines.index("```")]
    assert [line.split()[:2] for line in block] == [["make", "run"], ["make", "test"]]
