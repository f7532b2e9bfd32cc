"""The conformance scenarios through the gRPC engine give the same verdicts as through the library."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clients.conformance.grpc_surface import GrpcSurface
from clients.conformance.library_surface import LibrarySurface
from clients.conformance.runner import find_scenarios, run_scenario
from clients.conformance.surface import SurfaceError

pytestmark = pytest.mark.service

REPO = Path(__file__).resolve().parents[2]
PUBLIC = REPO / "tests" / "scenarios" / "public"  # the project's copy of the public scenarios
SCENARIO_DIRS = [REPO / "tests" / "scenarios"]


def test_public_scenarios_pass_through_grpc(engine: Any) -> None:
    surface = GrpcSurface(engine.address)
    try:
        outcomes = [run_scenario(p, surface) for p in find_scenarios([str(PUBLIC)])]
    finally:
        surface.close()
    assert outcomes
    assert [o.failures for o in outcomes if not o.passed] == []


def test_every_scenario_has_the_same_verdict_on_grpc_and_library(engine: Any) -> None:
    paths = find_scenarios([str(d) for d in SCENARIO_DIRS])
    assert len(paths) > 100
    grpc_surface, library = GrpcSurface(engine.address), LibrarySurface()
    try:
        for path in paths:
            assert run_scenario(path, grpc_surface).failures == run_scenario(path, library).failures, path
    finally:
        grpc_surface.close()


def test_a_dead_engine_is_a_surface_error() -> None:
    surface = GrpcSurface("127.0.0.1:1", timeout=1)
    with pytest.raises(SurfaceError, match="gRPC engine"):
        surface.new_match("kozel", 4, {}, None, None)
    surface.close()


def test_every_kingdomino_scenario_passes_through_grpc(engine: Any) -> None:
    paths = find_scenarios([str(REPO / "tests" / "scenarios_kingdomino")])
    assert len(paths) >= 15
    surface = GrpcSurface(engine.address)
    try:
        failures = [run_scenario(p, surface).failures for p in paths]
    finally:
        surface.close()
    assert [f for f in failures if f] == []


def test_a_failing_kingdomino_expectation_fails_through_grpc_as_through_the_library(engine: Any,
                                                                                     tmp_path: Path) -> None:
    import json

    scenario = json.loads((REPO / "tests" / "scenarios_kingdomino" / "overlap.json").read_text(encoding="utf-8"))
    scenario["steps"].append({"expect": {"largest_region": [9, 9]}})
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    surface = GrpcSurface(engine.address)
    try:
        assert run_scenario(path, surface).failures == run_scenario(path, LibrarySurface()).failures != []
    finally:
        surface.close()
