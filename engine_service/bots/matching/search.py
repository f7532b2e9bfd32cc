"""The expert level of the matching games: determinized (perfect-information Monte Carlo) search.

For each sampled world (`sampler.Sampler`: the hidden hands and boneyard
consistent with everything the seat has seen), every legal move is tried and
the round played out with `policy.rollout_move` for every seat; a move's value
is its mean `outcome.value` over the worlds (the chance of winning the round), and
its mean margin is kept beside it; the expert plays the move with the best
`outcome.rank` of the two. The same worlds serve every move
(common random numbers), so their differences are what decides. Playouts go
through the rules' typed path (`Round.legal_moves`, `Round.apply_move`) on
copies: no strings, no parsing.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from ...rules.family import RoundResult
from ...rules.ledger import Ledger
from ...rules.notation import Move
from ...rules.round import Round
from ..budget import Budget, Clock
from . import likelihood, outcome
from .knowledge import Knowledge
from .policy import rollout_move
from .sampler import Sampler, build_round

#: A playout stops after this many moves whatever happens (a safety net; rounds end far sooner).
MAX_PLAYOUT_MOVES = 400

#: A playout policy: a seat's move in a world (every hand known there) among its legal moves.
Policy = Callable[[Round, list[Move], random.Random], Move]


def playout(world: Round, first: Move, know: Knowledge, rng: random.Random,
            policy: Policy = rollout_move) -> tuple[float, int]:
    """Play `first` then the rollout policy to the round's end on `world` (changed); the value and
    the margin for the seat's side."""
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
        move = policy(world, world.legal_moves(), rng)
    gains = [a - b for a, b in zip(ledger.scores, start)]
    scores = outcome.side_scores(family, result, gains)
    side = family.side_of(know.seat)
    return outcome.value(scores, side), outcome.margin(scores, side)


class Evaluation:
    """Per legal move (in `know.legal` order): its mean value (the chance of winning the round, in
    [0, 1]) and its mean margin over the same worlds; `worlds` how many were played."""

    __slots__ = ("margins", "values", "worlds")

    def __init__(self, values: list[float], margins: list[float], worlds: int) -> None:
        self.values = values
        self.margins = margins
        self.worlds = worlds

    def best(self) -> int:
        """The move the expert plays: the best `outcome.rank`, the first on a tie."""
        ranks = [outcome.rank(v, m) for v, m in zip(self.values, self.margins)]
        return max(range(len(ranks)), key=lambda i: (ranks[i], -i))


def evaluate(know: Knowledge, rng: random.Random, budget: Budget, policy: Policy = rollout_move,
             infer: bool = True) -> Evaluation:
    """Every legal move played out on the same worlds, as many as the budget allows; with `infer`, the
    worlds the other seats' past plays make likely (`likelihood`), else the sampler's uniform ones."""
    moves = know.legal
    sampler = Sampler(know, rng)
    values = [0.0] * len(moves)
    margins = [0.0] * len(moves)
    worlds = max(1, -(-budget.iterations // len(moves)))
    clock = Clock(budget)
    done = 0
    for hands, boneyard in _worlds(know, sampler, worlds, infer):
        world = build_round(know, hands, boneyard)
        for i, m in enumerate(moves):
            v, margin = playout(world.copy(), m, know, rng, policy)
            values[i] += v
            margins[i] += margin
        done += 1
        if clock.expired():
            break
    return Evaluation([v / done for v in values], [m / done for m in margins], done)


def _worlds(know: Knowledge, sampler: Sampler, n: int, infer: bool) -> Iterator[tuple[list[int], list[int]]]:
    """`n` worlds (hands, boneyard): uniform (dealt one at a time, as played), or resampled from
    `likelihood.CANDIDATES` times as many uniform ones by the likelihood of the other seats' past
    plays in each."""
    past = likelihood.plays(know) if infer else []
    if not past:
        for _ in range(n):
            yield sampler.hands()
        return
    dealt = [sampler.deal() for _ in range(n * likelihood.CANDIDATES)]
    weights = [likelihood.weight(past, hands) for hands in dealt]
    for i in likelihood.select(weights, n, sampler.rng):
        yield sampler.complete(dealt[i].copy())


def expert_move(know: Knowledge, rng: random.Random, budget: Budget, policy: Policy = rollout_move,
                infer: bool = True) -> int:
    """The index in `know.legal` of the expert's move (`policy` in its playouts; `infer`: see `evaluate`)."""
    if len(know.legal) == 1:
        return 0
    return evaluate(know, rng, budget, policy, infer).best()
