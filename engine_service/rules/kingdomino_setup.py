"""Kingdomino's preset, options and deals (RULES.md KD, "Options").

Kept apart from the game so the registry can list the preset without importing
the game. A game is configured by a `KDConfig` built from the player count and
the validated options: kingdom size, kings, tiles in play.

Deals (RULES.md KD, C "Deal"): an explicit deal is the draw pile in order plus
the kings in first-pick order; a seeded deal shuffles the 48 tiles with the
project's SplitMix64 shuffle (`deal.shuffled`), keeps the first 24 / 36 / 48
(so the removed tiles are random, from the seed) and draws the kings' order by
lot from an independent sub-seed. A dynasty (option `dynasty`, issue 14) deals
each of its three games so: the first from the seed, the next from sub-seeds
(`game_seed`), or from three explicit deals (`dynasty_deals`).

>>> config(2, {}).kings, config(3, {}).tiles, config(2, {"mighty_duel": True}).size
(4, 36, 7)
>>> seeded_deal(config(4, {}), 1) == seeded_deal(config(4, {}), 1)
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from .deal import derive_seed, shuffled
from .errors import MalformedError
from .kingdomino_tiles import TILE_COUNT
from .options import OptionSpec, OptionValue, resolve

NAME: Final = "kingdomino"
FAMILY: Final = "KD"
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 4
#: Games in a dynasty (option `dynasty`, the publisher's variant; issue 14).
DYNASTY_GAMES: Final = 3
DESCRIPTION: Final = ("Kingdomino (\"Лоскутное королевство\"): draft terrain dominoes and build a 5x5 "
               "kingdom around your castle; regions score squares x crowns (RULES.md KD, seed 001)")

SPECS: Final[dict[str, OptionSpec]] = {
    "mighty_duel": OptionSpec(
        "mighty_duel", "bool", "2 players with all 48 tiles build 7x7 kingdoms"),
    "middle_kingdom": OptionSpec(
        "middle_kingdom", "bool", "+10 at the end when the castle is at the centre of the kingdom"),
    "harmony": OptionSpec(
        "harmony", "bool", "+5 at the end when the kingdom is complete (no tile discarded)"),
    "dynasty": OptionSpec(
        "dynasty", "bool", "a series of 3 games by the same players in one match; the winner by the summed "
        "scores (ties: summed largest regions, then summed crowns, else shared); issue 14"),
}
DEFAULTS: Final[dict[str, OptionValue]] = {
    "mighty_duel": False, "middle_kingdom": False, "harmony": False, "dynasty": False,
}


def describe() -> dict[str, Any]:
    """The preset as `variants()` lists every preset."""
    return {
        "name": NAME,
        "family": FAMILY,
        "description": DESCRIPTION,
        "min_players": MIN_PLAYERS,
        "max_players": MAX_PLAYERS,
        "timeout_rule": True,  # KD: a player who times out forfeits
        "options": [spec.describe(DEFAULTS[name]) for name, spec in SPECS.items()],
    }


@dataclass(frozen=True, slots=True)
class KDConfig:
    """What the options and the player count decide (RULES.md KD)."""

    players: int
    size: int                # kingdom side: 5, or 7 with mighty_duel
    kings: int               # kings in play = tiles per row: 4 with 2 or 4 players, 3 with 3
    tiles: int               # tiles in play: 24 / 36 / 48 (48 with mighty_duel)
    middle_kingdom: bool
    harmony: bool
    dynasty: bool            # a match of DYNASTY_GAMES games, scores summed (issue 14)
    overrides: tuple[tuple[str, OptionValue], ...]   # options that differ from the defaults

    @property
    def kings_each(self) -> int:
        return self.kings // self.players

    @property
    def options(self) -> dict[str, OptionValue]:
        return dict(self.overrides)


def check_players(players: object) -> int:
    if not isinstance(players, int) or isinstance(players, bool):
        raise MalformedError(f"players must be an integer, not {players!r}")
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise MalformedError(f"players: {NAME} is played by {MIN_PLAYERS}-{MAX_PLAYERS} players, not {players}")
    return players


def config(players: object, options: object) -> KDConfig:
    """Validate the player count and options (unknown ones refused by name)."""
    n = check_players(players)
    resolved, effective = resolve(SPECS, DEFAULTS, options)
    duel = bool(resolved["mighty_duel"])
    if duel and n != 2:
        raise MalformedError(f"options.mighty_duel: the mighty duel is for 2 players, not {n}")
    kings = 3 if n == 3 else 4
    tiles = TILE_COUNT if duel else {2: 24, 3: 36, 4: 48}[n]
    return KDConfig(n, 7 if duel else 5, kings, tiles, bool(resolved["middle_kingdom"]),
                    bool(resolved["harmony"]), bool(resolved["dynasty"]), tuple(sorted(effective.items())))


def check_seed(seed: object, what: str = "seed") -> int | None:
    if seed is None:
        return None
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 1 << 64:
        raise MalformedError(f"{what} must be an integer in 0..2^64-1, not {seed!r}")
    return seed


def seeded_deal(cfg: KDConfig, seed: int) -> tuple[list[int], list[int]]:
    """(draw pile, king owners in first-pick order) from a seed.

    The shuffled 48 are cut to the tiles in play: with 2 or 3 players the rest
    are removed at random (RULES.md KD; the seed 001 reviewer's "tiles 1 to 12"
    for 3 players is not what RULES.md decides). King k belongs to player
    ``k % players`` before the lot; the lot is a shuffle of the kings.
    """
    pile = [t + 1 for t in shuffled(TILE_COUNT, derive_seed(seed, 1))][:cfg.tiles]
    owners = [k % cfg.players for k in range(cfg.kings)]
    lot = shuffled(cfg.kings, derive_seed(seed, 2))
    return pile, [owners[k] for k in lot]


def game_seed(seed: int, game: int) -> int:
    """The seed of game `game` (0-based) of a dynasty: the first game is the match seed itself
    (so it is the very game a single-game match of that seed plays), later games a sub-seed."""
    return seed if game == 0 else derive_seed(seed, 3, game)


def dynasty_deals(cfg: KDConfig, deal: object) -> list[tuple[list[int], list[int]]]:
    """Validate a dynasty's explicit deals, ``{"games": [deal, deal, deal]}``: one per game, in order."""
    if not isinstance(deal, dict) or set(deal) != {"games"}:
        raise MalformedError(
            f"deal: a dynasty is dealt as {{\"games\": [...]}}, one {{tiles, kings}} deal per game "
            f"({DYNASTY_GAMES} games)")
    games = deal["games"]
    if not isinstance(games, list) or len(games) != DYNASTY_GAMES:
        raise MalformedError(f"deal.games must list {DYNASTY_GAMES} deals, one per game of the dynasty")
    return [explicit_deal(cfg, d, f"deal.games[{g}]") for g, d in enumerate(games)]


def explicit_deal(cfg: KDConfig, deal: object, what: str = "deal") -> tuple[list[int], list[int]]:
    """Validate ``{"tiles": [...], "kings": [...]}`` (FORMAT.md): (pile, king owners)."""
    if not isinstance(deal, dict):
        raise MalformedError(f"{what} must be an object with tiles and kings")
    unknown = set(deal) - {"tiles", "kings"}
    if unknown:
        raise MalformedError(f"{what}: unknown keys {sorted(str(k) for k in unknown)}")
    pile = tile_list(deal.get("tiles"), f"{what}.tiles")
    if len(pile) != cfg.tiles:
        raise MalformedError(
            f"{what}.tiles lists {len(pile)} tiles; {cfg.players} players play with {cfg.tiles}")
    return pile, king_owners(cfg, deal.get("kings"), f"{what}.kings")


def tile_list(value: object, what: str) -> list[int]:
    """A list of distinct tile numbers 1..48."""
    if not isinstance(value, list):
        raise MalformedError(f"{what} must be a list of tile numbers 1..{TILE_COUNT}")
    seen = 0
    tiles: list[int] = []
    for item in value:
        t = tile_number(item, what)
        if seen >> t & 1:
            raise MalformedError(f"{what}: tile {t} is listed twice")
        seen |= 1 << t
        tiles.append(t)
    return tiles


def tile_number(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= TILE_COUNT:
        raise MalformedError(f"{what}: {value!r} is not a tile number 1..{TILE_COUNT}")
    return value


def king_owners(cfg: KDConfig, value: object, what: str) -> list[int]:
    """The kings in first-pick order as their owners; each player owns `kings_each` of them."""
    if not isinstance(value, list) or len(value) != cfg.kings:
        raise MalformedError(
            f"{what} must list the {cfg.kings} kings' players in first-pick order"
            + (" (each player twice)" if cfg.players == 2 else ""))
    for item in value:
        if not isinstance(item, int) or isinstance(item, bool) or not 0 <= item < cfg.players:
            raise MalformedError(f"{what}: {item!r} is not a player 0..{cfg.players - 1}")
    for p in range(cfg.players):
        if value.count(p) != cfg.kings_each:
            raise MalformedError(f"{what}: player {p} must have {cfg.kings_each} king(s), not {value.count(p)}")
    return list(value)


__all__ = [
    "DEFAULTS",
    "DESCRIPTION",
    "DYNASTY_GAMES",
    "FAMILY",
    "NAME",
    "SPECS",
    "KDConfig",
    "check_seed",
    "config",
    "describe",
    "dynasty_deals",
    "explicit_deal",
    "game_seed",
    "king_owners",
    "seeded_deal",
    "tile_list",
    "tile_number",
]
