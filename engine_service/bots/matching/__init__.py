"""Bots for the matching games (RULES.md K, O, B, TF, A3, A5, BL), deciding from a seat's view.

`decide` is the entry point; the modules each do one job: `knowledge` reads the
view, `sampler` deals worlds consistent with it, `policy` holds the random and
greedy levels and the playout policy, `outcome` values a round, `search` is the
expert, `coach` answers hints.
"""
from __future__ import annotations

import random
from typing import Any

from ..budget import Budget
from .knowledge import Knowledge, read_view
from .policy import greedy_move, random_move
from .sampler import build_round
from .search import expert_move


def decide(view: dict[str, Any], level: str, budget: Budget, rng: random.Random) -> str:
    """The action string `level` plays from this seat's view (one of ``view["legal"]``)."""
    know = read_view(view)
    if level == "random":
        return know.legal_text[know.legal.index(random_move(know.legal, rng))]
    if level == "greedy":
        # Greedy reads only the table and its own hand: any world will do, the others' hands are unused.
        rnd = build_round(know, _placeholder_hands(know), [])
        return know.legal_text[know.legal.index(greedy_move(rnd, know.legal))]
    return know.legal_text[expert_move(know, rng, budget)]


def _placeholder_hands(know: Knowledge) -> list[int]:
    """This seat's hand and empty others: what greedy needs of a world (it reads only its own)."""
    hands = [0] * know.players
    hands[know.seat] = know.hand
    return hands


__all__ = ["decide"]
