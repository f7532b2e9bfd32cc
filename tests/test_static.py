"""Static checks are part of the suite: ruff's lint rules and mypy --strict (pyproject.toml)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)


def test_ruff_finds_nothing() -> None:
    result = _run("ruff", "check", "engine_service", "api_gateway", "clients", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_files_scheduled_first_exist() -> None:
    """tests/conftest.py collects the longest files first; a renamed one would silently go last again."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("conftest_read_here", ROOT / "tests" / "conftest.py")
    assert spec is not None and spec.loader is not None
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    assert [path for path in conftest.LONGEST_FIRST if not (ROOT / path).is_file()] == []
