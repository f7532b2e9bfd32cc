"""Every conformance scenario of the repository through the rules library (FORMAT.md).

One test per scenario file, so a failure names the file. The scenarios live in
`tests/scenarios/` (our own, per family, plus `public/`: a copy of the shared
public ones, since `../shared` does not exist in a user's clone).

Scenarios that expose a suspected engine bug live apart in
`tests/rules/bug_scenarios/` (so that `domino conformance tests/scenarios`
stays green) and run here as strict expected failures: when the engine is
fixed they pass, the xfail turns into a failure, and the file moves into
`tests/scenarios/`.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from clients.conformance.library_surface import LibrarySurface
from clients.conformance.runner import find_scenarios, run_scenario

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"
BUG_SCENARIOS = HERE / "rules" / "bug_scenarios"
SHARED_PUBLIC = HERE.parent.parent / "shared" / "conformance" / "public"


def _ids(paths: list[Path], root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in paths]


SCENARIO_FILES = find_scenarios([str(SCENARIOS)])
BUG_FILES = find_scenarios([str(BUG_SCENARIOS)]) if BUG_SCENARIOS.is_dir() else []


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=_ids(SCENARIO_FILES, SCENARIOS))
def test_scenario_passes_through_the_library(path: Path) -> None:
    outcome = run_scenario(path, LibrarySurface())
    assert outcome.failures == [], "\n".join(outcome.failures)


def _bug_reason(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    return str(data.get("description") or data.get("name"))


if BUG_FILES:
    @pytest.mark.parametrize(
        "path",
        [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="BUG: " + _bug_reason(p)))
         for p in BUG_FILES],
        ids=_ids(BUG_FILES, BUG_SCENARIOS),
    )
    def test_bug_scenario_still_fails(path: Path) -> None:
        outcome = run_scenario(path, LibrarySurface())
        assert outcome.failures == [], "\n".join(outcome.failures)


def test_there_are_scenarios_for_kozel_and_the_public_copy() -> None:
    kozel = [p for p in SCENARIO_FILES if p.parent.name == "kozel"]
    public = [p for p in SCENARIO_FILES if p.parent.name == "public"]
    assert len(kozel) >= 20
    assert len(public) >= 8


@pytest.mark.skipif(not SHARED_PUBLIC.is_dir(), reason="no ../shared checkout next to the repository")
def test_public_copy_is_identical_to_the_shared_public_scenarios() -> None:
    shared = {p.name: p.read_bytes() for p in SHARED_PUBLIC.glob("*.json")}
    ours = {p.name: p.read_bytes() for p in (SCENARIOS / "public").glob("*.json")}
    assert ours == shared, "tests/scenarios/public/ is out of date: copy ../shared/conformance/public/*.json"


def test_a_broken_scenario_is_reported_not_passed(tmp_path: Path) -> None:
    """The runner itself can fail: a wrong expectation is a failure naming the step."""
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps({
        "name": "wrong on purpose", "variant": "kozel", "players": 4,
        "steps": [{"setup": {"remembered": [0, 0, 0, 0]}},
                  {"settle": {"ending": "out", "hands": [[], ["6-6", "5-5"], ["1-2"], ["0-1"]]}},
                  {"expect": {"written": [0, 0, 0, 0]}}],
    }), encoding="utf-8")
    outcome = run_scenario(path, LibrarySurface())
    assert len(outcome.failures) == 1
    assert "step 2" in outcome.failures[0] and "written" in outcome.failures[0]
