"""The variant scenario files (conformance/FORMAT.md) on the rules library, one test per file.

tests/scenarios/<variant>/ for O, B, TF, fives-and-threes, A3, A5, BL must pass;
tests/scenarios_pending/<variant>/ hold scenarios that expose suspected engine bugs
(each file's name says what is expected and why): they must still fail, so that a
fix is noticed and the file moved into tests/scenarios/.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from clients.conformance.library_surface import LibrarySurface
from clients.conformance.runner import run_scenario

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ("osel", "bykovo", "threes-fives", "fives-and-threes", "all-threes", "all-fives", "block")
FILES = sorted(p for v in VARIANTS for p in (ROOT / "scenarios" / v).glob("*.json"))
PENDING = sorted((ROOT / "scenarios_pending").rglob("*.json")) if (ROOT / "scenarios_pending").is_dir() else []


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.stem}"


def test_every_variant_has_scenarios() -> None:
    for v in VARIANTS:
        assert len(list((ROOT / "scenarios" / v).glob("*.json"))) >= 3, v


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_scenario_passes(path: Path) -> None:
    outcome = run_scenario(path, LibrarySurface())
    assert outcome.passed, "\n".join(outcome.failures)


if PENDING:
    @pytest.mark.parametrize("path", PENDING, ids=_id)
    def test_pending_scenario_still_fails(path: Path) -> None:
        """A pending scenario documents an engine bug; once it passes, move it to tests/scenarios/."""
        outcome = run_scenario(path, LibrarySurface())
        assert not outcome.passed, f"{path} passes now: move it to tests/scenarios/{path.parent.name}/"
        assert not any("bad scenario" in f or "cannot read" in f for f in outcome.failures), outcome.failures
