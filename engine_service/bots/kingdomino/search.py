"""The expert level of Kingdomino: determinized Monte Carlo over sampled piles.

At a placement the candidates are the `TOP_PLACEMENTS` legal placements that
leave the best score now (what greedy would rank first, and its runners-up);
at a pick, every free tile. Each rollout samples a pile from the unseen tiles
(the real order is never read, the view does not have it), makes a candidate
and plays the game out on a `sim.SimGame` with every player, the expert
included, playing greedy (`SimGame.play_greedy`: the exact greedy level, made
cheap); the same piles serve every candidate. A candidate's value is its mean
`value` over the rollouts (the chance of first place, a shared first counting
1/k: in [0, 1]); its mean `margin` is kept beside it, and the expert plays the
best value plus `MARGIN_WEIGHT` per point of mean margin: winning first, then by more.

The budget's iterations are full games' worth of rollouts: from a position
with fewer tiles left the search makes proportionally more (shorter)
rollouts, at most `MAX_SCALE` times as many, so a late decision costs about
what the first one does and is better informed.
"""
from __future__ import annotations

import random

from ...rules.kingdomino_notation import KingdominoMove
from ..budget import Budget, Clock
from .knowledge import KDKnowledge
from .policy import score_after
from .sim import SimGame

#: Placements the expert weighs (the best by immediate score; the rest are not tried).
TOP_PLACEMENTS = 5
#: Per point of final score margin over the best other player, on top of win 1 / share 1/k / loss 0.
MARGIN_WEIGHT = 0.02
#: At most this many times the budget's rollouts, however few tiles are left.
MAX_SCALE = 4.0


def value(game: SimGame, player: int) -> tuple[float, int]:
    """A finished game's worth to `player`: 1 for first place (the rules' score and tie-breaks), 1/k
    shared among k, 0 otherwise; and its score margin over the best other player."""
    scores = game.scores()
    keys = [(scores[p], b.largest(), b.crowns()) for p, b in enumerate(game.boards)]
    best = max(keys)
    winners = [p for p, key in enumerate(keys) if key == best]
    base = 1.0 / len(winners) if player in winners else 0.0
    best_other = max(v for p, v in enumerate(scores) if p != player)
    return base, scores[player] - best_other


def make(game: SimGame, action: KingdominoMove) -> None:
    """Make a parsed action (a legal one) on the rollout game."""
    verb, tile, x, y, d = action
    if verb == "pick":
        game.pick(tile)
    elif verb == "place":
        game.place(game.boards[0].geo.bit(x, y), d)
    else:
        game.place(-1, -1)


def candidates(know: KDKnowledge) -> list[int]:
    """Indexes into `know.legal` of the actions worth weighing."""
    legal = know.legal
    if legal[0][0] != "place" or len(legal) <= TOP_PLACEMENTS:
        return list(range(len(legal)))
    kingdom = know.kingdoms[know.player]
    scored = sorted(range(len(legal)), key=lambda i: (-score_after(kingdom, legal[i]), i))
    return scored[:TOP_PLACEMENTS]


def rollouts(know: KDKnowledge, iterations: int) -> int:
    """Rollouts for `iterations` full games' worth from this position (see the module docstring)."""
    left = know.pile_size + len(know.next_tiles) + len(know.current_tiles)
    scale = min(MAX_SCALE, know.cfg.tiles / max(1, left))
    return max(1, int(iterations * scale))


def evaluate(know: KDKnowledge, rng: random.Random,
             budget: Budget) -> tuple[list[int], list[float], list[float]]:
    """The candidates weighed (indexes into `know.legal`), their mean values and mean margins."""
    chosen = candidates(know)
    totals = [0.0] * len(chosen)
    margins = [0.0] * len(chosen)
    worlds = max(1, -(-rollouts(know, budget.iterations) // len(chosen)))
    clock = Clock(budget)
    base = know.sim()
    actions = [know.legal[i] for i in chosen]
    unseen, size, player = know.unseen, know.pile_size, know.player
    done = 0
    for _ in range(worlds):
        pile = rng.sample(unseen, size)
        for j, action in enumerate(actions):
            game = base.copy(pile.copy())
            make(game, action)
            game.play_greedy()
            v, margin = value(game, player)
            totals[j] += v
            margins[j] += margin
        done += 1
        if clock.expired():
            break
    return chosen, [t / done for t in totals], [m / done for m in margins]


def expert_action(know: KDKnowledge, rng: random.Random, budget: Budget) -> int:
    """The index in `know.legal` of the expert's action."""
    if len(candidates(know)) == 1:
        return candidates(know)[0]
    chosen, values, margins = evaluate(know, rng, budget)
    best = max(range(len(chosen)), key=lambda j: (values[j] + MARGIN_WEIGHT * margins[j], -j))
    return chosen[best]
