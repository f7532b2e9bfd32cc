"""Run conformance scenarios (docs/FORMAT.md) against a surface of the engine.

One line per failing check (file, step index, what differed), then the plain
line ``N passed, M failed`` counting scenario files. The exit status is 1 when
any scenario fails or cannot be read.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from engine_service.rules.errors import IllegalActionError, MalformedError, MisdealError, RulesError
from engine_service.rules.notation import LEAD, LEAD_MOVE, Move

from .surface import State, Surface, SurfaceError

SCENARIO_KEYS = {"name", "variant", "options", "players", "steps", "description"}
STEP_KINDS = ("setup", "deal", "act", "settle", "timeout", "expect")

#: FORMAT.md "Kingdomino scenarios": the steps and expect keys of variant kingdomino.
KINGDOMINO = "kingdomino"
KD_STEP_KINDS = ("deal", "act", "expect")
KD_EXPECT_KEYS = ("to_move", "legal", "legal_count", "scores", "largest_region", "crowns",
                  "game_over", "winners")
SURFACE_LABELS = {"grpc": "gRPC", "rest": "REST"}


class KingdominoSurface(Protocol):
    """What a surface offers as its `kingdomino` attribute when it serves Kingdomino."""

    def new_game(self, players: int, options: dict[str, Any], deal: dict[str, Any]) -> State: ...

    def legal(self, state: State) -> tuple[int | None, list[str]]: ...

    def apply(self, state: State, action: str) -> State: ...

    def summary(self, state: State) -> dict[str, Any]: ...


class ScenarioError(Exception):
    """The scenario file itself is unreadable or malformed."""


@dataclass
class Outcome:
    path: str
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def step_failed(self, i: int, message: str) -> None:
        """Note that step `i` of this scenario did not give what it expects."""
        self.failures.append(f"{self.path}: step {i}: {message}")


def find_scenarios(paths: Iterable[str]) -> list[Path]:
    """Scenario files named directly, or every *.json under the folders named."""
    found: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found.extend(sorted(p.rglob("*.json")))
        else:
            found.append(p)
    return found


def _canonical(action: str) -> str:
    """An action as the rules spell it, a lead by its tile's name (low first) whichever way it lies,
    so that an expectation written "6-3" matches the legal "3-6"; an unreadable one as given."""
    try:
        move = Move.parse(action)
    except MalformedError:
        return action
    if move.kind == LEAD:
        move = LEAD_MOVE[move.placements[0][0]]
    return move.text()


def _round_result(state: State) -> dict[str, Any] | None:
    """The finished round the expectations about endings refer to."""
    rnd = state.get("round")
    history = state.get("ledger", {}).get("history") or []
    if rnd is not None and not rnd.get("over"):
        return None
    return history[-1] if history else None


def _actual(key: str, state: State | None, surface: Surface, ctx: dict[str, Any]) -> Any:
    if key == "misdeal":
        return ctx.get("misdeal", False)
    if state is None:
        raise ScenarioError(f"expect {key!r} before the match exists")
    rnd = state.get("round")
    ledger = state.get("ledger", {})
    if key == "legal":
        return sorted(_canonical(a) for a in surface.legal(state)[1])
    if key in ("to_move", "ends", "count", "last_score"):
        if rnd is None:
            return None
        return rnd.get(key)
    if key == "hand_sizes":
        return None if rnd is None else [len(h) for h in rnd["hands"]]
    if key == "boneyard_size":
        return None if rnd is None else len(rnd["boneyard"])
    if key == "round_over":
        return True if rnd is None else bool(rnd.get("over"))
    if key in ("ending", "winner", "round_points", "places"):
        result = _round_result(state)
        if result is None:
            return None
        value = result.get(key)
        return value if value != [] else None
    if key in ("written", "remembered", "pot", "scores"):
        return ledger.get(key)
    if key in ("match_over", "losers", "rating"):
        return state.get(key)
    raise ScenarioError(f"unknown expect key {key!r}")


def _expected(key: str, value: Any) -> Any:
    if key == "legal":
        if not isinstance(value, list):
            raise ScenarioError("expect.legal must be a list of action strings")
        return sorted(_canonical(a) for a in value)
    return value


def run_scenario(path: Path, surface: Surface) -> Outcome:
    outcome = Outcome(str(path))
    try:
        scenario = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        outcome.failures.append(f"{path}: cannot read scenario: {exc}")
        return outcome
    try:
        _run(scenario, surface, outcome)
    except ScenarioError as exc:
        outcome.failures.append(f"{path}: bad scenario: {exc}")
    except SurfaceError as exc:
        outcome.failures.append(f"{path}: surface {surface.name} failed: {exc}")
    return outcome


def _run(scenario: Any, surface: Surface, outcome: Outcome) -> None:
    if not isinstance(scenario, dict):
        raise ScenarioError("a scenario is a JSON object")
    for key in ("variant", "players", "steps"):
        if key not in scenario:
            raise ScenarioError(f"missing {key!r}")
    variant, players = scenario["variant"], scenario["players"]
    options = scenario.get("options") or {}
    steps = scenario["steps"]
    if not isinstance(steps, list):
        raise ScenarioError("steps must be a list")
    if variant == KINGDOMINO:
        kingdomino: KingdominoSurface | None = getattr(surface, "kingdomino", None)
        if kingdomino is None:
            label = SURFACE_LABELS.get(surface.name, surface.name)
            outcome.failures.append(f"{outcome.path}: kingdomino is not served over {label} yet")
            return
        _run_kingdomino(players, options, steps, kingdomino, outcome)
        return
    state: State | None = None
    setup: dict[str, Any] | None = None
    ctx: dict[str, Any] = {}
    fail = outcome.step_failed

    def ensure_match(i: int) -> State:
        nonlocal state
        if state is None:
            state = surface.new_match(variant, players, options, setup, None)
        return state

    for i, step in enumerate(steps):
        kind = _step_kind(i, step, STEP_KINDS)
        try:
            if kind == "setup":
                if state is not None:
                    raise ScenarioError(f"step {i}: setup after the match started")
                setup = step["setup"]
            elif kind == "deal":
                ctx["misdeal"] = False
                try:
                    if state is None:
                        state = surface.new_match(variant, players, options, setup, step["deal"])
                    else:
                        state = surface.start_round(state, step["deal"])
                except MisdealError:
                    ctx["misdeal"] = True
            elif kind == "act":
                after = _act(surface.apply, surface.legal, ensure_match(i), step, step.get("seat"),
                             "seat", partial(fail, i))
                if after is None:
                    return
                state = after
            elif kind == "settle":
                current = ensure_match(i)
                body = step["settle"]
                state = surface.settle(current, body.get("ending"), body.get("hands"),
                                       body.get("last_placer"))
            elif kind == "timeout":
                current = ensure_match(i)
                state = surface.timeout(current, step["timeout"])
            else:
                expect = step["expect"]
                if not isinstance(expect, dict):
                    raise ScenarioError(f"step {i}: expect must be an object")
                for key, want in expect.items():
                    got = _actual(key, state, surface, ctx)
                    if got != _expected(key, want):
                        fail(i, f"expect {key}: wanted {json.dumps(want)}, got {json.dumps(got)}")
        except (MalformedError, IllegalActionError) as exc:
            fail(i, f"{kind} refused: {exc}")
            return


def _step_kind(i: int, step: Any, allowed: tuple[str, ...]) -> str:
    """The one kind of step (of all of STEP_KINDS) that step `i` names; ScenarioError, listing the
    kinds `allowed` in this scenario, when it is not an object naming exactly one."""
    if not isinstance(step, dict):
        raise ScenarioError(f"step {i} is not an object")
    kinds = [k for k in STEP_KINDS if k in step]
    if len(kinds) != 1:
        raise ScenarioError(f"step {i} must name exactly one of {', '.join(allowed)}")
    return kinds[0]


def _act(apply: Callable[[State, str], State], legal: Callable[[State], tuple[int | None, list[str]]],
         state: State, step: dict[str, Any], who: int | None, noun: str,
         fail: Callable[[str], None]) -> State | None:
    """One act step: whose turn it is, then the action applied (or refused, with `rejected`).

    Returns the state after it, or None when the step failed and the scenario stops there.
    """
    action = step["act"]
    if who is not None:
        to_move, _ = legal(state)
        if to_move != who:
            fail(f"act {action!r}: expected {noun} {who} to move, {noun} {to_move} is")
            return None
    if step.get("rejected"):
        try:
            apply(state, action)
        except RulesError:
            return state
        fail(f"act {action!r} should be refused but was applied")
        return None
    try:
        return apply(state, action)
    except RulesError as exc:
        fail(f"act {action!r} refused: {exc}")
        return None


def _run_kingdomino(players: Any, options: dict[str, Any], steps: list[Any],
                    surface: KingdominoSurface, outcome: Outcome) -> None:
    """A Kingdomino scenario (FORMAT.md "Kingdomino scenarios"): one deal, then acts and expects."""
    state: State | None = None
    fail = outcome.step_failed

    for i, step in enumerate(steps):
        kind = _step_kind(i, step, KD_STEP_KINDS)
        if kind not in KD_STEP_KINDS:
            raise ScenarioError(f"step {i}: {kind} is not a Kingdomino step ({', '.join(KD_STEP_KINDS)})")
        try:
            if kind == "deal":
                if state is not None:
                    raise ScenarioError(f"step {i}: a Kingdomino scenario deals once")
                state = surface.new_game(players, options, step["deal"])
            elif kind == "act":
                if state is None:
                    raise ScenarioError(f"step {i}: act before the deal")
                after = _act(surface.apply, surface.legal, state, step,
                             step.get("player", step.get("seat")), "player", partial(fail, i))
                if after is None:
                    return
                state = after
            else:
                expect = step["expect"]
                if not isinstance(expect, dict):
                    raise ScenarioError(f"step {i}: expect must be an object")
                if state is None:
                    raise ScenarioError(f"step {i}: expect before the deal")
                summary = surface.summary(state)
                for key, want in expect.items():
                    if key not in KD_EXPECT_KEYS:
                        raise ScenarioError(f"unknown Kingdomino expect key {key!r}")
                    got: Any
                    if key in ("legal", "legal_count"):
                        legal = surface.legal(state)[1]
                        got = len(legal) if key == "legal_count" else sorted(legal)
                        if key == "legal":
                            if not isinstance(want, list):
                                raise ScenarioError("expect.legal must be a list of action strings")
                            want = sorted(want)
                    else:
                        got = summary[key]
                    if got != want:
                        fail(i, f"expect {key}: wanted {json.dumps(want)}, got {json.dumps(got)}")
        except (MalformedError, IllegalActionError) as exc:
            fail(i, f"{kind} refused: {exc}")
            return


def make_surface(args: argparse.Namespace) -> Surface:
    if getattr(args, "grpc", None):
        from .grpc_surface import GrpcSurface

        return GrpcSurface(args.grpc)
    if getattr(args, "rest", None):
        from .rest_surface import RestSurface

        return RestSurface(args.rest)
    from .library_surface import LibrarySurface

    return LibrarySurface()


def run_paths(paths: Iterable[str], surface: Surface, out: Any = sys.stdout,
              quiet: bool = False) -> tuple[int, int]:
    """Run every scenario under `paths`; print failures and the total; return (passed, failed)."""
    files = find_scenarios(paths)
    passed = failed = 0
    for path in files:
        if not path.exists():
            print(f"{path}: no such file", file=out)
            failed += 1
            continue
        outcome = run_scenario(path, surface)
        if outcome.passed:
            passed += 1
            if not quiet:
                print(f"ok   {path}", file=out)
        else:
            failed += 1
            for line in outcome.failures:
                print(f"FAIL {line}", file=out)
    print(f"{passed} passed, {failed} failed", file=out)
    return passed, failed


def main(args: argparse.Namespace) -> int:
    surface = make_surface(args)
    try:
        passed, failed = run_paths(args.paths, surface, quiet=args.quiet)
    finally:
        surface.close()
    return 1 if failed or passed == 0 else 0
