"""The expert's successive halving (bots/matching/search.py): the budget, and the best move kept."""
from __future__ import annotations

import random

import pytest

from engine_service.bots.budget import Budget
from engine_service.bots.matching import search
from engine_service.bots.matching.knowledge import Knowledge, read_view
from engine_service.bots.matching.policy import rollout_move
from engine_service.bots.matching.search import Policy
from engine_service.rules.notation import Move
from engine_service.rules.round import Round

from .conftest import matching_positions, seat_view


def _positions(least: int) -> list[Knowledge]:
    """Views with at least `least` legal moves, of Kozel and All Fives."""
    found = []
    for variant in ("kozel", "all-fives"):
        for match, log in matching_positions(variant, 60, seed=8):
            know = read_view(seat_view(match, log))
            if len(know.legal) >= least:
                found.append(know)
    return found


def test_halving_spends_the_budget_and_keeps_the_move_the_worlds_favour(monkeypatch: pytest.MonkeyPatch) -> None:
    """A playout that gives one move 0.6 and the others 0.4 (plus noise): halving returns that move, and
    never plays out more than the budget (each round's share, at least one world a round)."""
    for know in _positions(3)[:12]:
        favoured = len(know.legal) - 1  # the last, so a first-on-ties bug cannot pass
        calls = 0

        def fake(world: Round, first: Move, k: Knowledge, rng: random.Random,
                 policy: Policy = rollout_move, *, _f: int = favoured) -> tuple[float, int]:
            nonlocal calls
            calls += 1
            good = first == k.legal[_f]
            return (0.6 if good else 0.4) + rng.uniform(-0.05, 0.05), 0

        monkeypatch.setattr(search, "playout", fake)
        budget = Budget(200)
        assert search.halving(know, random.Random(2), budget) == favoured
        rounds = (len(know.legal) - 1).bit_length()
        assert 0 < calls <= budget.iterations + rounds * len(know.legal)
        calls = 0
        assert search.expert_move(know, random.Random(2), budget) == favoured


def test_halving_gives_the_finalists_more_worlds_than_the_flat_spread(monkeypatch: pytest.MonkeyPatch) -> None:
    """With 4 or more moves the two finalists are played out on more worlds than 200 playouts spread
    over every move give each (the point of halving)."""
    know = _positions(4)[0]
    played: dict[Move, int] = {}

    def fake(world: Round, first: Move, k: Knowledge, rng: random.Random,
             policy: Policy = rollout_move) -> tuple[float, int]:
        played[first] = played.get(first, 0) + 1
        return float(k.legal.index(first) == 0), 0

    monkeypatch.setattr(search, "playout", fake)
    assert search.halving(know, random.Random(1), Budget(200)) == 0
    assert played[know.legal[0]] > 200 // len(know.legal)
