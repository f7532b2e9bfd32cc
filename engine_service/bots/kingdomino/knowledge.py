"""What one player knows of a Kingdomino game, read from its view alone (RULES.md KD).

The view shows everything but the undrawn pile: its size, not its order nor,
with fewer than 4 players, which tiles are in it. `read_view` rebuilds the rows,
the kings and every kingdom (replaying the logs the view shows), and lists the
tiles the player has not seen: the pile is some `pile_size` of them, in an
order the bot samples and never reads.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ...rules.kingdomino import Kingdomino
from ...rules.kingdomino_board import Kingdom, geometry
from ...rules.kingdomino_notation import KingdominoMove
from ...rules.kingdomino_setup import KDConfig, config
from ...rules.kingdomino_tiles import TILE_COUNT
from .sim import Board, SimGame


class ViewError(ValueError):
    """The view is not a player's view of a Kingdomino game (in which it is to move, for a decision)."""


@dataclass(slots=True)
class KDKnowledge:
    """A player's knowledge of the game: everything but the pile's order and contents."""

    cfg: KDConfig
    player: int
    kings: list[int]
    current_tiles: list[int]
    current_kings: list[int]
    next_tiles: list[int]
    next_kings: list[int]
    picker: int
    kingdoms: list[Kingdom]
    pile_size: int
    unseen: list[int]
    legal: list[KingdominoMove]
    legal_text: list[str]

    def world(self, rng: random.Random) -> Kingdomino:
        """A game in the viewed position with a pile sampled from the unseen tiles."""
        pile = rng.sample(self.unseen, self.pile_size)
        game = Kingdomino(self.cfg, None, self.kings.copy(), pile)
        game.current_tiles = self.current_tiles.copy()
        game.current_kings = self.current_kings.copy()
        game.next_tiles = self.next_tiles.copy()
        game.next_kings = self.next_kings.copy()
        game.picker = self.picker
        game.kingdoms = [k.copy() for k in self.kingdoms]
        return game

    def sim(self) -> SimGame:
        """The viewed position as a rollout game, with an empty pile (`SimGame.copy` gives each
        rollout a sampled one)."""
        return SimGame(self.cfg, self.kings.copy(), [Board.of(k) for k in self.kingdoms], [],
                       self.current_tiles.copy(), self.current_kings.copy(), self.next_tiles.copy(),
                       self.next_kings.copy(), self.picker)


def read_view(view: dict[str, Any], to_move: bool = True) -> KDKnowledge:
    """Read a player's view (`Kingdomino.view(player)`); ViewError when it cannot be decided from.

    With `to_move` (what a decision needs) the player must be the one to move; the
    coach reads a view whatever the turn (then `legal` is empty), as the matching
    games' coach does.
    """
    try:
        cfg = config(view["players"], view.get("options") or {})
        player = view["player"]
        if to_move and (view.get("game_over") or view["to_move"] != player or not view["legal"]):
            raise ViewError(f"player {player} is not to move in this view")
        geo = geometry(cfg.size)
        kingdoms = []
        seen = set()
        for log in view["kingdoms"]:
            k = Kingdom(geo)
            for text in log:
                verb, tile, x, y, d = KingdominoMove.parse(text)
                seen.add(tile)
                if verb == "place":
                    k.place(tile, x, y, d)
                else:
                    k.discard(tile)
            kingdoms.append(k)
        current = view["current"]
        nxt = view["next"]
        for item in current + nxt:
            seen.add(item["tile"])
        picker = view["picker"]
        legal_text = list(view["legal"])
        know = KDKnowledge(
            cfg=cfg, player=player, kings=list(view["kings"]),
            current_tiles=[i["tile"] for i in current], current_kings=[i["king"] for i in current],
            next_tiles=[i["tile"] for i in nxt], next_kings=[-1 if i["king"] is None else i["king"] for i in nxt],
            picker=-1 if picker is None else picker, kingdoms=kingdoms, pile_size=int(view["pile_size"]),
            unseen=[t for t in range(1, TILE_COUNT + 1) if t not in seen],
            legal=[KingdominoMove.parse(a) for a in legal_text], legal_text=legal_text,
        )
    except (KeyError, TypeError) as exc:
        raise ViewError(f"not a player's view of a Kingdomino game: {exc}") from None
    if len(know.unseen) < know.pile_size:
        raise ViewError("the view's pile is larger than the tiles it does not show")
    return know
