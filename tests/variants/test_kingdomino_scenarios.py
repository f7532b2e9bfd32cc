"""The Kingdomino scenario files (FORMAT.md "Kingdomino scenarios") on the rules library.

They live in tests/scenarios_kingdomino/; tests/engine/test_grpc_conformance.py and
tests/gateway/test_gateway_conformance.py run them through gRPC and REST. A surface
that does not serve Kingdomino fails such a scenario with one clear line, which a
test here checks.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from clients.conformance.library_surface import LibrarySurface
from clients.conformance.runner import run_paths, run_scenario

ROOT = Path(__file__).resolve().parents[1] / "scenarios_kingdomino"
FILES = sorted(ROOT.glob("*.json"))


def test_there_is_a_scenario_for_every_rule_of_kd() -> None:
    names = {p.stem for p in FILES}
    for rule in ("full-game-2p", "tie-shared", "first-placement-touches-castle", "adjacency-same-terrain-or-castle",
                 "overlap", "bounds-5x5", "mighty-duel-7x7", "discard-only-when-nothing-fits",
                 "four-players-lot-then-tile-order", "three-players-rows-of-three",
                 "alike-squares-listed-twice", "full-game-2p-middle-kingdom", "full-game-2p-harmony"):
        assert rule in names, rule


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_kingdomino_scenario_passes_on_the_library(path: Path) -> None:
    outcome = run_scenario(path, LibrarySurface())
    assert outcome.failures == [], "\n".join(outcome.failures)


class _NoKingdomino:
    """A surface without Kingdomino (a third-party surface, or an older one)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def close(self) -> None:
        pass


@pytest.mark.parametrize("name,label", [("grpc", "gRPC"), ("rest", "REST")])
def test_a_surface_without_kingdomino_fails_the_scenario_with_one_clear_line(name: str, label: str) -> None:
    path = ROOT / "overlap.json"
    outcome = run_scenario(path, _NoKingdomino(name))  # type: ignore[arg-type]
    assert outcome.failures == [f"{path}: kingdomino is not served over {label} yet"]


def test_the_runner_counts_kingdomino_files_and_reports_a_wrong_expectation(tmp_path: Path) -> None:
    good = json.loads((ROOT / "overlap.json").read_text(encoding="utf-8"))
    bad = dict(good, steps=good["steps"] + [{"expect": {"largest_region": [9, 9]}}])
    (tmp_path / "good.json").write_text(json.dumps(good), encoding="utf-8")
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    lines: list[str] = []

    class Out:
        def write(self, text: str) -> None:
            lines.append(text)

    passed, failed = run_paths([str(tmp_path)], LibrarySurface(), out=Out(), quiet=True)
    assert (passed, failed) == (1, 1)
    text = "".join(lines)
    assert "bad.json: step" in text and "largest_region" in text and "1 passed, 1 failed" in text


def test_steps_kingdomino_does_not_have_are_bad_scenarios(tmp_path: Path) -> None:
    path = tmp_path / "settle.json"
    path.write_text(json.dumps({"variant": "kingdomino", "players": 2, "steps": [
        {"settle": {"ending": "out", "hands": [[], []]}}]}), encoding="utf-8")
    outcome = run_scenario(path, LibrarySurface())
    assert len(outcome.failures) == 1 and "not a Kingdomino step" in outcome.failures[0]
