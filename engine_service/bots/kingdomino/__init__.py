"""Bots for Kingdomino (RULES.md KD), deciding from a player's view.

`knowledge` reads the view and samples piles, `policy` holds the greedy level,
`sim` the lean game the expert's rollouts play (everyone greedy), `search` is the
expert, `coach` answers hints.
"""
from __future__ import annotations

import random
from typing import Any

from ...rules.kingdomino import Kingdomino
from ..budget import Budget
from .knowledge import read_view
from .policy import greedy_action
from .search import expert_action


def decide(view: dict[str, Any], level: str, budget: Budget, rng: random.Random) -> str:
    """The action string `level` plays from this player's view (one of ``view["legal"]``)."""
    know = read_view(view)
    if len(know.legal) == 1:
        return know.legal_text[0]
    if level == "random":
        return know.legal_text[rng.randrange(len(know.legal))]
    if level == "greedy":
        # Greedy reads the kingdoms and the rows only; the pile is never used.
        game: Kingdomino = know.world(random.Random(0))
        return know.legal_text[greedy_action(game, know.legal)]
    return know.legal_text[expert_action(know, rng, budget)]


__all__ = ["decide"]
