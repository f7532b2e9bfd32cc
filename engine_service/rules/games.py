"""Which class plays a variant: the one registry from a variant's name to its game class (issue 26).

Every matching preset (`registry.PRESETS`) is played by `Match`; a game that is not
a matching game has its own class, listed in `GAMES` (Kingdomino). A name that is
no variant falls to `Match`, whose refusal names the known ones. Each class
implements the `Game` protocol (`game.py`) and starts the same way:
``cls.start(variant, players, options=..., seed=..., deal=..., setup=..., no_deal=..., bots=...)``,
and from a log's first step with ``cls.from_log_start(...)`` (`records`).

>>> game_class("kingdomino").__name__, game_class("kozel").__name__
('Kingdomino', 'Match')
>>> game, events = new_game("kingdomino", 2, seed=1)
>>> game.variant, game.turn
('kingdomino', 1)
"""
from __future__ import annotations

from typing import Final

from .events import Event
from .game import Game
from .kingdomino import Kingdomino
from .kingdomino_setup import NAME as KINGDOMINO
from .match import Match

#: Games played by their own class, not `Match`: variant name -> class.
GAMES: Final[dict[str, type[Kingdomino]]] = {KINGDOMINO: Kingdomino}

#: Every game class (for telling a game from its JSON state).
GAME_CLASSES: Final[tuple[type[Match], type[Kingdomino]]] = (Match, Kingdomino)


def game_class(variant: object) -> type[Match] | type[Kingdomino]:
    """The class that plays `variant` (`Match` for every matching preset, and for a name that is
    none: it refuses it, naming the known variants)."""
    own = GAMES.get(variant) if type(variant) is str else None
    return Match if own is None else own


def new_game(variant: object, players: object, *, options: object = None, seed: object = None,
             deal: object = None, setup: object = None, no_deal: bool = False,
             bots: object = None) -> tuple[Game, list[Event]]:
    """A new game of `variant` by its class (`start`): dealt from `deal`, else from `seed`."""
    return game_class(variant).start(variant, players, options=options, seed=seed, deal=deal, setup=setup,
                                     no_deal=no_deal, bots=bots)


def game_from_dict(data: object) -> Game:
    """Decode and validate a game's JSON state, by the class its ``variant`` names."""
    variant = data.get("variant") if type(data) is dict else None
    return game_class(variant).from_dict(data)


__all__ = ["GAMES", "GAME_CLASSES", "game_class", "game_from_dict", "new_game"]
