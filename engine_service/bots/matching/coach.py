"""The coach (issue 15): what the expert knows from a seat's view, as an answer of its own.

- ``proven_missing``: per seat, the numbers its passes and draws prove it does
  not hold (this seat: empty; needs the view's ``history``);
- ``whereabouts``: per unseen tile, the chance it is in each seat's hand and in
  the boneyard, estimated from the expert's own worlds (`sampler.Sampler`);
- ``values``: when the seat is to move (else empty), the expert's value of each legal action
  (`outcome.value`, mean over the same worlds): about the chance of winning the
  round.
"""
from __future__ import annotations

import random
from typing import Any

from ...rules.tiles import NAMES, bits
from ..budget import Budget
from .knowledge import read_view
from .sampler import Sampler
from .search import evaluate

#: Worlds dealt for the whereabouts at least (the search's own worlds are counted too).
MIN_WORLDS = 200


def hints(view: dict[str, Any], budget: Budget, rng: random.Random) -> dict[str, Any]:
    """The coach's answer for a seat's view (values only when that seat is to move)."""
    know = read_view(view, to_move=False)
    values = evaluate(know, rng, budget)[0] if know.legal else []
    sampler = Sampler(know, rng)
    unseen = list(bits(know.unseen))
    places = know.players + 1  # seats, then the boneyard
    counts = {t: [0] * places for t in unseen}
    for _ in range(MIN_WORLDS):
        hands, boneyard = sampler.hands()
        for s, hand in enumerate(hands):
            if s == know.seat:
                continue
            for t in bits(hand):
                counts[t][s] += 1
        for t in boneyard:
            counts[t][know.players] += 1
    return {
        "seat": know.seat,
        "worlds": MIN_WORLDS,
        "history_used": know.history_used,
        "proven_missing": [[v for v in range(7) if know.voids(s) >> v & 1] for s in range(know.players)],
        "whereabouts": {NAMES[t]: {"hands": [round(c / MIN_WORLDS, 4) for c in counts[t][:-1]],
                                   "boneyard": round(counts[t][-1] / MIN_WORLDS, 4)} for t in unseen},
        "values": {a: round(v, 4) for a, v in zip(know.legal_text, values)},
        "relaxed": sampler.relaxed,
    }
