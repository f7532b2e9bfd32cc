"""Every conformance scenario of the repository through the rules library (docs/FORMAT.md).

One test per scenario file, so a failure names the file. The scenarios live in
`tests/scenarios/` (our own, per family, plus `public/`: the public scenarios
the project was given, kept here so that nothing depends on a folder outside
the repository). tests/engine and tests/gateway run the same files over gRPC
and REST.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from clients.conformance.library_surface import LibrarySurface
from clients.conformance.runner import find_scenarios, run_scenario

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"
FAMILIES = ("kozel", "osel", "bykovo", "threes-fives", "fives-and-threes", "all-threes", "all-fives", "block")


def _ids(paths: list[Path], root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in paths]


SCENARIO_FILES = find_scenarios([str(SCENARIOS)])


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=_ids(SCENARIO_FILES, SCENARIOS))
def test_scenario_passes_through_the_library(path: Path) -> None:
    outcome = run_scenario(path, LibrarySurface())
    assert outcome.failures == [], "\n".join(outcome.failures)


def test_every_family_has_scenarios_and_the_public_ones_are_here() -> None:
    for family in FAMILIES:
        assert len([p for p in SCENARIO_FILES if p.parent.name == family]) >= 3, family
    assert len([p for p in SCENARIO_FILES if p.parent.name == "kozel"]) >= 20
    assert len([p for p in SCENARIO_FILES if p.parent.name == "public"]) >= 8


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
