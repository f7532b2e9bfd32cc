"""The coach (issue 15): what the expert knows from a seat's view, as an answer of its own.

- ``proven_missing``: per seat, the numbers its passes and draws prove it does
  not hold (this seat: empty; needs the view's ``history``);
- ``whereabouts``: per unseen tile, the chance it is in each seat's hand and in
  the boneyard among the deals consistent with what the seat has seen: exact when
  at most `EXACT_WORLDS` worlds are left (every one weighed), else the share of
  `MIN_WORLDS` worlds of the expert's own sampler (`sampler.Sampler`, unbiased);
- ``values``: when the seat is to move (else empty), per legal action the
  expert's estimate of the chance of winning the round after it (`outcome.value`,
  mean over its worlds, those the other seats' past plays make likely,
  `likelihood`; a shared first counts half): always in [0, 1].
"""
from __future__ import annotations

import random
from typing import Any

from ...rules.tiles import NAMES, bits
from ..budget import Budget
from .knowledge import read_view
from .sampler import Sampler
from .search import evaluate

#: Worlds sampled for the whereabouts when there are too many to weigh them all.
MIN_WORLDS = 200
#: At most this many worlds left: every one is weighed, and the whereabouts are exact.
EXACT_WORLDS = 4000


def hints(view: dict[str, Any], budget: Budget, rng: random.Random) -> dict[str, Any]:
    """The coach's answer for a seat's view (values only when that seat is to move)."""
    know = read_view(view, to_move=False)
    values = evaluate(know, rng, budget).values if know.legal else []
    sampler = Sampler(know, rng)
    unseen = list(bits(know.unseen))
    places = know.players + 1  # seats, then the boneyard
    counts = {t: [0] * places for t in unseen}
    exact = sampler.every_world(EXACT_WORLDS)
    if exact:  # (empty only for a history the rules did not play: then sample, and count it)
        total = 0
        for dealt, w in exact:
            taken = 0
            for s, hand in zip(sampler.others, dealt):
                taken |= hand
                for t in bits(hand):
                    counts[t][s] += w
            for t in bits(know.unseen & ~taken):
                counts[t][know.players] += w
            total += w
        worlds = len(exact)
    else:
        for _ in range(MIN_WORLDS):
            hands, boneyard = sampler.hands()
            for s in sampler.others:
                for t in bits(hands[s]):
                    counts[t][s] += 1
            for t in boneyard:
                counts[t][know.players] += 1
        total = worlds = MIN_WORLDS
    total = max(total, 1)
    return {
        "seat": know.seat,
        "worlds": worlds,
        "history_used": know.history_used,
        "proven_missing": [[v for v in range(7) if know.voids(s) >> v & 1] for s in range(know.players)],
        "whereabouts": {NAMES[t]: {"hands": [round(c / total, 4) for c in counts[t][:-1]],
                                   "boneyard": round(counts[t][-1] / total, 4)} for t in unseen},
        "values": {a: round(v, 4) for a, v in zip(know.legal_text, values)},
        "relaxed": sampler.relaxed,
    }
