"""The coach for Kingdomino: the chance each unseen tile is still to come, and the expert's values.

With fewer than 4 players only some of the unseen tiles are in the pile (the
rest were removed at the deal, unseen by anyone): each is in it with chance
``pile_size / unseen``, which is what the expert's samples assume. ``values``
gives, per action the expert weighs (the others are not tried), its estimate of
the chance of first place after it (a shared first counting 1/k): in [0, 1];
for a player who is not to move it is empty, as in the matching games' coach.
"""
from __future__ import annotations

import random
from typing import Any

from ..budget import Budget
from .knowledge import read_view
from .search import evaluate


def hints(view: dict[str, Any], budget: Budget, rng: random.Random) -> dict[str, Any]:
    """The coach's answer for a player's view (values only when that player is to move)."""
    know = read_view(view, to_move=False)
    chosen, values, _margins = evaluate(know, rng, budget) if know.legal else ([], [], [])
    chance = know.pile_size / len(know.unseen) if know.unseen else 0.0
    return {
        "player": know.player,
        "pile": {str(t): round(chance, 4) for t in know.unseen},
        "values": {know.legal_text[i]: round(v, 4) for i, v in zip(chosen, values)},
    }
