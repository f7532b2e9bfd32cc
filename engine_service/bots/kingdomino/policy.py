"""The simple levels of Kingdomino and the expert's playout policy, on parsed actions.

- `greedy` (docs/bots.md): placing, the placement that leaves the kingdom the
  highest score (RULES.md KD "Score"); picking, the free tile of the next row
  whose best placement in the kingdom as it stands now would gain the most
  (a tile that fits nowhere counts as a loss). Ties: the first in legal order.
- `rollout_action`: cheap, for the expert's playouts: place where both squares
  (else one) touch their own terrain, at random among such places; pick the
  free tile with the most crowns; a random legal choice now and then.
"""
from __future__ import annotations

import random

from ...rules.kingdomino import Kingdomino
from ...rules.kingdomino_board import Kingdom
from ...rules.kingdomino_notation import Action
from ...rules.kingdomino_tiles import FIRST_CROWNS, FIRST_TERRAIN, SECOND_CROWNS, SECOND_TERRAIN

#: In a playout, the chance of a uniformly random legal action instead of the policy's.
ROLLOUT_EPSILON = 0.1


def _dilate(m: int, width: int) -> int:
    """The squares orthogonally next to a square of `m` (as kingdomino_board does it)."""
    return (m << 1) | (m >> 1) | (m << width) | (m >> width)


def placements(kingdom: Kingdom, tile: int) -> list[Action]:
    """Every legal placement of `tile` as parsed actions, in the rules' legal order."""
    geo = kingdom.geo
    xs, ys = geo.xs, geo.ys
    out: list[Action] = []
    for d, mask in enumerate(kingdom.candidates(tile)):
        while mask:
            low = mask & -mask
            i = low.bit_length() - 1
            out.append(("place", tile, xs[i], ys[i], d))
            mask ^= low
    return out


def score_after(kingdom: Kingdom, action: Action) -> int:
    """The kingdom's region score once `action` (a placement) is made."""
    _verb, tile, x, y, d = action
    k = kingdom.copy()
    k.place(tile, x, y, d)
    return k.region_score()


def best_gain(kingdom: Kingdom, tile: int, now: int) -> int:
    """The most `tile` could add to the kingdom's score now (-1 when it fits nowhere)."""
    best = -1
    for a in placements(kingdom, tile):
        best = max(best, score_after(kingdom, a) - now)
    return best


def mover_kingdom(game: Kingdomino) -> Kingdom:
    mover = game.to_move
    assert mover is not None
    return game.kingdoms[mover]


def greedy_action(game: Kingdomino, legal: list[Action]) -> int:
    """The index in `legal` of the greedy level's choice."""
    if len(legal) == 1:
        return 0
    kingdom = mover_kingdom(game)
    now = kingdom.region_score()
    if legal[0][0] == "pick":
        gains = [best_gain(kingdom, a[1], now) for a in legal]
    else:
        gains = [score_after(kingdom, a) for a in legal]
    return max(range(len(legal)), key=lambda i: (gains[i], -i))


def legal_actions(game: Kingdomino) -> list[Action]:
    """The legal actions of the player to move, parsed (`Kingdomino.legal_actions`, typed)."""
    if game.picker >= 0:
        return [("pick", t, 0, 0, -1) for t, k in zip(game.next_tiles, game.next_kings) if k < 0]
    if not game.current_tiles:
        return []
    tile = game.current_tiles[0]
    found = placements(game.kingdoms[game.kings[game.current_kings[0]]], tile)
    return found if found else [("discard", tile, 0, 0, -1)]


def rollout_action(game: Kingdomino, rng: random.Random) -> Action:
    """A playout's action for the player to move (see the module docstring)."""
    if game.picker >= 0:
        free = [t for t, k in zip(game.next_tiles, game.next_kings) if k < 0]
        if len(free) == 1 or rng.random() < ROLLOUT_EPSILON:
            return ("pick", free[rng.randrange(len(free))], 0, 0, -1)
        best = max(free, key=lambda t: (FIRST_CROWNS[t] + SECOND_CROWNS[t], t))
        return ("pick", best, 0, 0, -1)
    tile = game.current_tiles[0]
    kingdom = game.kingdoms[game.kings[game.current_kings[0]]]
    masks = kingdom.candidates(tile)
    if not (masks[0] | masks[1] | masks[2] | masks[3]):
        return ("discard", tile, 0, 0, -1)
    geo = kingdom.geo
    width = geo.width
    near1 = _dilate(kingdom.terrain[FIRST_TERRAIN[tile]], width)
    near2 = _dilate(kingdom.terrain[SECOND_TERRAIN[tile]], width)
    both: list[tuple[int, int]] = []
    one: list[tuple[int, int]] = []
    if rng.random() >= ROLLOUT_EPSILON:
        for d, mask in enumerate(masks):
            if not mask:
                continue
            delta = geo.deltas[d]
            second = near2 >> delta if delta > 0 else near2 << -delta
            m2 = mask & near1 & second
            if m2:
                both.append((d, m2))
            m1 = mask & (near1 | second) & ~m2
            if m1:
                one.append((d, m1))
    pool = both or one or [(d, m) for d, m in enumerate(masks) if m]
    total = sum(m.bit_count() for _d, m in pool)
    k = rng.randrange(total)
    for d, m in pool:
        c = m.bit_count()
        if k < c:
            while k:
                m &= m - 1
                k -= 1
            i = (m & -m).bit_length() - 1
            return ("place", tile, geo.xs[i], geo.ys[i], d)
        k -= c
    raise AssertionError("unreachable")  # pragma: no cover
