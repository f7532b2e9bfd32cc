"""The conformance scenarios end to end through the gateway and the engine (transparent mode).

`domino conformance --rest URL` runs the public scenarios; every scenario of the
repository gets the same verdict through REST as through the library.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clients.conformance.library_surface import LibrarySurface
from clients.conformance.rest_surface import RestSurface
from clients.conformance.runner import find_scenarios, run_scenario
from clients.conformance.surface import SurfaceError
from engine_service.rules import IllegalActionError, MalformedError, MisdealError

from .conftest import REPO, Gateway, free_port

pytestmark = pytest.mark.service

PUBLIC = REPO / "tests" / "scenarios" / "public"  # the project's copy of the public scenarios
OURS = REPO / "tests" / "scenarios"


def test_the_cli_runs_the_public_scenarios_through_rest(gateway: Gateway) -> None:
    result = subprocess.run([sys.executable, "-m", "clients.cli", "conformance", "--rest", gateway.url, str(PUBLIC)],
                            check=False, cwd=REPO, capture_output=True, text=True, timeout=120)
    lines = result.stdout.strip().splitlines()
    count = len(find_scenarios([str(PUBLIC)]))
    assert count >= 8
    assert lines[-1] == f"{count} passed, 0 failed", result.stdout
    assert result.returncode == 0


def test_every_scenario_gets_the_same_verdict_through_rest_as_through_the_library(gateway: Gateway) -> None:
    paths = find_scenarios([str(OURS)])
    assert len(paths) > 50
    rest, library = RestSurface(gateway.url), LibrarySurface()
    differ, passed = [], 0
    for path in paths:
        through_rest, directly = run_scenario(path, rest), run_scenario(path, library)
        passed += through_rest.passed
        if through_rest.passed != directly.passed:
            differ.append((str(path.relative_to(OURS)), through_rest.failures, directly.failures))
    assert differ == []
    assert passed > 50


def test_refusals_come_back_as_the_rules_exceptions(gateway: Gateway) -> None:
    rest = RestSurface(gateway.url + "/")
    state = rest.new_match("kozel", 4, {}, None, {"hands": [
        ["0-4", "1-4", "1-5", "2-3", "2-4", "3-4", "4-4"], ["0-1", "0-2", "0-6", "2-6", "3-5", "4-5", "4-6"],
        ["0-0", "0-3", "1-6", "2-2", "5-5", "5-6", "6-6"], ["0-5", "1-1", "1-2", "1-3", "2-5", "3-3", "3-6"]]})
    seat, actions = rest.legal(state)
    assert (seat, actions) == (3, ["1-1"])
    with pytest.raises(IllegalActionError):
        rest.apply(state, "3-3")
    with pytest.raises(MalformedError):
        rest.apply(state, "nonsense")
    with pytest.raises(MalformedError):
        rest.settle(state, "sideways", [])  # refused by the schema (422)
    with pytest.raises(MisdealError):
        rest.new_match("kozel", 4, {}, None, {"hands": [
            ["0-0", "1-1", "2-2", "3-3", "4-4", "0-1", "0-2"], ["5-5", "0-3", "0-4", "0-5", "0-6", "1-2", "1-3"],
            ["6-6", "1-4", "1-5", "1-6", "2-3", "2-4", "2-5"], ["2-6", "3-4", "3-5", "3-6", "4-5", "4-6", "5-6"]]})


def test_no_gateway_is_a_surface_error(tmp_path: Path) -> None:
    rest = RestSurface(f"http://127.0.0.1:{free_port()}", timeout=2)
    with pytest.raises(SurfaceError, match="REST gateway"):
        rest.legal({"variant": "kozel", "players": 4})


KINGDOMINO = REPO / "tests" / "scenarios_kingdomino"


def test_the_cli_runs_every_kingdomino_scenario_through_rest(gateway: Gateway) -> None:
    result = subprocess.run([sys.executable, "-m", "clients.cli", "conformance", "--rest", gateway.url,
                             str(KINGDOMINO)], check=False, cwd=REPO, capture_output=True, text=True, timeout=120)
    count = len(find_scenarios([str(KINGDOMINO)]))
    assert count >= 15
    assert result.stdout.strip().splitlines()[-1] == f"{count} passed, 0 failed", result.stdout
    assert result.returncode == 0


def test_kingdomino_scenarios_get_the_same_verdicts_through_rest_as_through_the_library(
        gateway: Gateway, tmp_path: Path) -> None:
    good = json.loads((KINGDOMINO / "overlap.json").read_text(encoding="utf-8"))
    (tmp_path / "wrong.json").write_text(json.dumps(dict(good, steps=good["steps"] + [
        {"expect": {"winners": [0, 1]}}])), encoding="utf-8")
    rest, library = RestSurface(gateway.url), LibrarySurface()
    for path in [*find_scenarios([str(KINGDOMINO)]), tmp_path / "wrong.json"]:
        assert run_scenario(path, rest).failures == run_scenario(path, library).failures, path
    assert run_scenario(tmp_path / "wrong.json", rest).failures
