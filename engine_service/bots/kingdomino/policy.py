"""The greedy level of Kingdomino, on parsed actions.

- `greedy` (docs/bots.md): placing, the placement that leaves the kingdom the
  highest score (RULES.md KD "Score"); picking, the free tile of the next row
  whose best placement in the kingdom as it stands now would gain the most
  (a tile that fits nowhere counts as a loss). Ties: the first in legal order.

This is the reference: the expert's rollouts play the same choices on a lean
copy of the game (`sim.SimGame.play_greedy`, tested to choose alike).
"""
from __future__ import annotations

from ...rules.kingdomino import Kingdomino
from ...rules.kingdomino_board import Kingdom
from ...rules.kingdomino_notation import KingdominoMove


def placements(kingdom: Kingdom, tile: int) -> list[KingdominoMove]:
    """Every legal placement of `tile` as parsed actions, in the rules' legal order."""
    geo = kingdom.geo
    xs, ys = geo.xs, geo.ys
    out: list[KingdominoMove] = []
    for d, mask in enumerate(kingdom.candidates(tile)):
        while mask:
            low = mask & -mask
            i = low.bit_length() - 1
            out.append(KingdominoMove("place", tile, xs[i], ys[i], d))
            mask ^= low
    return out


def score_after(kingdom: Kingdom, action: KingdominoMove) -> int:
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


def greedy_action(game: Kingdomino, legal: list[KingdominoMove]) -> int:
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


def legal_actions(game: Kingdomino) -> list[KingdominoMove]:
    """The legal actions of the player to move, parsed (`Kingdomino.legal_actions`, typed)."""
    if game.picker >= 0:
        return [KingdominoMove("pick", t, 0, 0, -1) for t, k in zip(game.next_tiles, game.next_kings) if k < 0]
    if not game.current_tiles:
        return []
    tile = game.current_tiles[0]
    found = placements(game.kingdoms[game.kings[game.current_kings[0]]], tile)
    return found if found else [KingdominoMove("discard", tile, 0, 0, -1)]
