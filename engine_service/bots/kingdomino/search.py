"""The expert level of Kingdomino: determinized Monte Carlo over sampled piles.

At a placement the candidates are the `TOP_PLACEMENTS` legal placements that
leave the best score now (what greedy would rank first, and its runners-up);
at a pick, every free tile. Each rollout samples a pile from the unseen tiles
(`KDKnowledge.world`: the real order is never read, the view does not have
it), makes a candidate and plays the game out with `policy.rollout_action` for
everyone; the same piles serve every candidate. A candidate's value is its mean
`value` over the rollouts: winning first, then the score margin.
"""
from __future__ import annotations

import random

from ...rules.kingdomino import Kingdomino
from ...rules.kingdomino_notation import Action
from ..budget import Budget, Clock
from .knowledge import KDKnowledge
from .policy import rollout_action, score_after

#: Placements the expert weighs (the best by immediate score; the rest are not tried).
TOP_PLACEMENTS = 5
#: Per point of final score margin over the best other player, on top of win 1 / share 1/k / loss 0.
MARGIN_WEIGHT = 0.02


def value(game: Kingdomino, player: int) -> float:
    """A finished game's worth to `player` (the rules' score and tie-breaks, regions counted once)."""
    scores = game.scores()
    keys = []
    for p, kingdom in enumerate(game.kingdoms):
        regions = kingdom.regions()
        keys.append((scores[p], max((sq for _t, sq, _c in regions), default=0), kingdom.crowns()))
    best = max(keys)
    winners = [p for p, key in enumerate(keys) if key == best]
    base = 1.0 / len(winners) if player in winners else 0.0
    best_other = max(v for p, v in enumerate(scores) if p != player)
    return base + MARGIN_WEIGHT * (scores[player] - best_other)


def rollout(game: Kingdomino, first: Action, rng: random.Random) -> Kingdomino:
    """Make `first`, then play the rollout policy to the end (on `game`, which changes)."""
    game.apply_parsed(first)
    while not game.game_over:
        game.apply_parsed(rollout_action(game, rng))
    return game


def candidates(know: KDKnowledge) -> list[int]:
    """Indexes into `know.legal` of the actions worth weighing."""
    legal = know.legal
    if legal[0][0] != "place" or len(legal) <= TOP_PLACEMENTS:
        return list(range(len(legal)))
    kingdom = know.kingdoms[know.player]
    scored = sorted(range(len(legal)), key=lambda i: (-score_after(kingdom, legal[i]), i))
    return scored[:TOP_PLACEMENTS]


def evaluate(know: KDKnowledge, rng: random.Random, budget: Budget) -> tuple[list[int], list[float]]:
    """The candidates weighed (indexes into `know.legal`) and their mean values."""
    chosen = candidates(know)
    totals = [0.0] * len(chosen)
    if len(chosen) == 1:
        return chosen, totals
    worlds = max(1, -(-budget.iterations // len(chosen)))
    clock = Clock(budget)
    done = 0
    for _ in range(worlds):
        world = know.world(rng)
        for j, i in enumerate(chosen):
            totals[j] += value(rollout(world.copy(), know.legal[i], rng), know.player)
        done += 1
        if clock.expired():
            break
    return chosen, [t / done for t in totals]


def expert_action(know: KDKnowledge, rng: random.Random, budget: Budget) -> int:
    """The index in `know.legal` of the expert's action."""
    chosen, values = evaluate(know, rng, budget)
    best = max(range(len(chosen)), key=lambda j: (values[j], -j))
    return chosen[best]
