"""The expert level of the matching games: determinized (perfect-information Monte Carlo) search.

For each sampled world (`sampler.Sampler`: the hidden hands and boneyard
consistent with everything the seat has seen), every legal move is tried and
the round played out with `policy.rollout_move` for every seat; a move's value
is its mean `outcome.value` over the worlds. The same worlds serve every move
(common random numbers), so their differences are what decides. Playouts go
through the rules' typed path (`Round.legal_moves`, `Round.apply_move`) on
copies: no strings, no parsing.
"""
from __future__ import annotations

import random

from ...rules.family import RoundResult
from ...rules.ledger import Ledger
from ...rules.notation import Move
from ...rules.round import Round
from ..budget import Budget, Clock
from . import outcome
from .knowledge import Knowledge
from .policy import rollout_move
from .sampler import Sampler

#: A playout stops after this many moves whatever happens (a safety net; rounds end far sooner).
MAX_PLAYOUT_MOVES = 400


def playout(world: Round, first: Move, know: Knowledge, rng: random.Random) -> float:
    """Play `first` then the rollout policy to the round's end on `world` (changed); the value for the seat."""
    family = world.family
    ledger = Ledger([0] * family.sides, [0] * family.sides, 0, list(know.scores), [])
    start = list(know.scores)
    events: list[dict[str, object]] = []
    move = first
    result: RoundResult | None = None
    for _ in range(MAX_PLAYOUT_MOVES):
        mover = world.to_move
        ended = world.apply_move(move, events)
        events.clear()
        if world.last_score and family.counts:
            _taken, end = family.after_play(ledger, mover, world.last_score)
            if end is not None:
                break  # the match is won in play: the round stops here
        if ended:
            result = family.finish_round(ledger, world.ending or "blocked", world.hands, world.out,
                                         world.last_placer, world.layout)
            break
        move = rollout_move(world, world.legal_moves(), rng)
    gains = [a - b for a, b in zip(ledger.scores, start)]
    return outcome.value(outcome.side_scores(family, result, gains), family.side_of(know.seat))


def evaluate(know: Knowledge, rng: random.Random, budget: Budget) -> tuple[list[float], int, Sampler]:
    """Mean value of each legal move (in `know.legal` order), the worlds used, and the sampler."""
    moves = know.legal
    sampler = Sampler(know, rng)
    totals = [0.0] * len(moves)
    worlds = max(1, -(-budget.iterations // len(moves)))
    clock = Clock(budget)
    done = 0
    for _ in range(worlds):
        world = sampler.world()
        for i, m in enumerate(moves):
            totals[i] += playout(world.copy(), m, know, rng)
        done += 1
        if clock.expired():
            break
    return [t / done for t in totals], done, sampler


def expert_move(know: Knowledge, rng: random.Random, budget: Budget) -> int:
    """The index in `know.legal` of the expert's move."""
    if len(know.legal) == 1:
        return 0
    values, _done, _sampler = evaluate(know, rng, budget)
    return max(range(len(values)), key=lambda i: (values[i], -i))
