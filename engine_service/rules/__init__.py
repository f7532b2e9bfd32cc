"""The pure rules core: tiles, layouts, deals, rounds, ledgers and the variants' presets.

No I/O, nothing global, randomness only from a caller's seed. Everything the
services offer is here as plain Python::

    from engine_service.rules import Match
    match, events = Match.new("kozel", 4, seed=42)
    match.apply(match.legal_actions()[0])

Kingdomino (RULES.md KD) is not a matching game and has its own class of the
same shape::

    from engine_service.rules import Kingdomino
    game, events = Kingdomino.new(4, seed=42)
    game.apply(game.legal_actions()[0])

Both implement the `Game` protocol (`game.py`: who is to move, legal actions,
apply, timeout, an exit of the match (`end`: resign, gone, abort), a viewer's view,
events as a viewer sees them), and `game_class(variant)` (`games.py`) names the
class that plays a variant.
"""
from .errors import IllegalActionError, MalformedError, MisdealError, RulesError
from .game import Game
from .games import game_class, game_from_dict, new_game
from .kingdomino import Kingdomino
from .match import Match
from .registry import PRESETS, variants
from .tiles import parse_tile, tile_name
from .tournament import Tournament

__all__ = [
    "Game",
    "IllegalActionError",
    "Kingdomino",
    "MalformedError",
    "Match",
    "MisdealError",
    "PRESETS",
    "RulesError",
    "Tournament",
    "game_class",
    "game_from_dict",
    "new_game",
    "parse_tile",
    "tile_name",
    "variants",
]
