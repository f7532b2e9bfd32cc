"""The per-call plumbing of an Apply outside the codec and the rules (engine_service.calls, .metrics):
its shortcuts change nothing a caller or an operator sees."""
from __future__ import annotations

from typing import Any

from prometheus_client import REGISTRY

from engine_service import admission, calls, metrics
from engine_service.bots import Deadline
from engine_service.rules import Match


class _NoWorkers:
    """Bot workers that must not be used: any promise or decision fails the test."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a person's turn used the bot workers ({name})")


def _actions(variant: str, kind: str) -> float:
    return REGISTRY.get_sample_value("domino_engine_actions_applied_total", {"variant": variant, "kind": kind}) or 0.0


def test_a_person_s_turn_plays_no_bots_and_promises_no_worker() -> None:
    match, _ = Match.new("kozel", 4, seed=7)
    token = admission._CALL.set(admission.Call(Deadline.after(5.0), _NoWorkers()))  # type: ignore[arg-type]
    try:
        assert calls.play_bots(match) == []
        events = calls.apply(match, match.legal_actions()[0])
    finally:
        admission._CALL.reset(token)
    assert events and all(e["type"] != "round_dealt" for e in events)


def test_bot_seats_still_play_their_turns() -> None:
    match, _ = calls.new_match("kozel", 4, seed=7, bots=[{"seat": s, "level": "random"} for s in (1, 2, 3)])
    assert match.to_move == 0  # the bots played up to the person
    events = calls.apply(match, match.legal_actions()[0])
    assert {e.get("seat") for e in events} >= {1, 2, 3} or match.to_move is None
    assert match.to_move in (0, None)


def test_actions_are_counted_by_variant_and_kind_on_every_call() -> None:
    keys = [("kozel", "play"), ("kozel", "draw"), ("kozel", "pass"), ("other", "play")]
    before = {key: _actions(*key) for key in keys}
    for _ in range(3):
        metrics.record_actions("kozel", ["1-1", "draw", "pass", "2-3@E"])
        metrics.record_actions("no such variant", ["1-1"])
    assert {key: _actions(*key) - before[key] for key in keys} == dict(zip(keys, [6.0, 3.0, 3.0, 3.0]))
