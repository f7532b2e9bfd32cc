"""The simple levels of Kingdomino and the expert's playout policy, on parsed actions.

- `greedy` (docs/bots.md): placing, the placement that leaves the kingdom the
  highest score (RULES.md KD "Score"); picking, the free tile of the next row
  whose best placement in the kingdom as it stands now would gain the most
  (a tile that fits nowhere counts as a loss). Ties: the first in legal order.
- `rollout_action`: cheap, for the expert's playouts: place where the squares
  touch their own terrain (counting double a crowned square or a terrain that
  has crowns), ties at random; pick the free tile with the most crowns, then
  whose terrains the kingdom has; a random legal choice now and then.
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
        kingdom = game.kingdoms[game.kings[game.picker]]
        terrain = kingdom.terrain
        chosen = max(free, key=lambda t: (2 * (FIRST_CROWNS[t] + SECOND_CROWNS[t])
                                          + (terrain[FIRST_TERRAIN[t]] != 0) + (terrain[SECOND_TERRAIN[t]] != 0),
                                          rng.random()))
        return ("pick", chosen, 0, 0, -1)
    tile = game.current_tiles[0]
    kingdom = game.kingdoms[game.kings[game.current_kings[0]]]
    masks = kingdom.candidates(tile)
    if not (masks[0] | masks[1] | masks[2] | masks[3]):
        return ("discard", tile, 0, 0, -1)
    geo = kingdom.geo
    if rng.random() < ROLLOUT_EPSILON:
        pool = [(d, m) for d, m in enumerate(masks) if m]
        d, m = pool[rng.randrange(len(pool))]
        return _nth_square(tile, geo.xs, geo.ys, d, m, rng.randrange(m.bit_count()))
    width = geo.width
    crowned = kingdom.crowns_at_least[0]
    t1, t2 = FIRST_TERRAIN[tile], SECOND_TERRAIN[tile]
    near1 = _dilate(kingdom.terrain[t1], width)
    near2 = _dilate(kingdom.terrain[t2], width)
    # A square next to its own terrain is worth 1, 2 when that terrain has crowns or the square has.
    w1 = 1 + (FIRST_CROWNS[tile] > 0 or kingdom.terrain[t1] & crowned != 0)
    w2 = 1 + (SECOND_CROWNS[tile] > 0 or kingdom.terrain[t2] & crowned != 0)
    best_key = -1.0
    best: Action = ("discard", tile, 0, 0, -1)
    for d, mask in enumerate(masks):
        delta = geo.deltas[d]
        second = near2 >> delta if delta > 0 else near2 << -delta
        while mask:
            low = mask & -mask
            mask ^= low
            key = (w1 if near1 & low else 0) + (w2 if second & low else 0) + rng.random() * 0.5
            if key > best_key:
                i = low.bit_length() - 1
                best_key, best = key, ("place", tile, geo.xs[i], geo.ys[i], d)
    return best


def _nth_square(tile: int, xs: tuple[int, ...], ys: tuple[int, ...], d: int, mask: int, k: int) -> Action:
    """The placement of `tile` in direction `d` on the k-th square of `mask`."""
    while k:
        mask &= mask - 1
        k -= 1
    i = (mask & -mask).bit_length() - 1
    return ("place", tile, xs[i], ys[i], d)
