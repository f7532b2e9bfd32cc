"""A Kingdomino state's dict form (the JSON state): `encode` writes one, `decode` checks one,
trusting nothing (RULES.md KD).

A state may come from anyone (the REST transparent mode carries it), so every
field is checked and the first thing wrong is refused with a `MalformedError`
naming it: types and ranges, every tile in exactly one place and as many as
the player count plays with, each kingdom replayed tile by tile under the
placement rules (a discard only where the tile fitted nowhere), the kings each
on one tile or picking, and each player's number of tiles matching the rounds
played. A dynasty's finished games (issue 14) are replayed too, each complete,
and their results must be what their kingdoms score.

`decode` returns the checked parts (`KingdominoState`) and `Kingdomino.from_dict` builds
the game from them; `encode` reads a game's fields, declared by its base class
`KingdominoState` (read natively once compiled). So this module does not import the game (kingdomino.py imports it: the rules' imports
form a tree), as `match_form` does for a matching game.
"""
from __future__ import annotations

from typing import Any, Final

from .botseats import bots_to_list, check_bots
from .errors import MalformedError, one_of
from .exits import ABORT, HOWS
from .history import check_log
from .kingdomino_board import Kingdom, geometry
from .kingdomino_notation import KingdominoMove
from .kingdomino_score import GameResult, game_result
from .kingdomino_setup import (
    DYNASTY_GAMES,
    NAME,
    KDConfig,
    check_seed,
    config,
    explicit_deal,
    king_owners,
    tile_list,
    tile_number,
)

KEYS: Final = ("variant", "players", "options", "seed", "kings", "pile", "current", "next", "picker", "kingdoms")
#: Only with option dynasty: ``{"games": [result...], "deals": [deal...]}``.
DYNASTY_KEY: Final = "dynasty"
#: Only once a player's timeout ended the game: that player.
TIMED_OUT_KEY: Final = "timed_out"
#: Only once an exit of the game ended it (`exits`): ``resign`` or ``gone`` (with `TIMED_OUT_KEY`: the
#: player who forfeited) or ``abort`` (no winners).
EXIT_KEY: Final = "exit"
#: The action log (rules/history.py), checked last by `decode`; optional (older states lack it).
LOG_KEY: Final = "log"
#: Only when some player is a bot: ``[{seat, level}...]`` (`botseats`).
BOTS_KEY: Final = "bots"
RESULT_KEYS: Final = ("kingdoms", "scores", "largest_region", "crowns", "winners", "decided_by")


class KingdominoState:
    """A game's state, with no rules in it: what `Kingdomino` plays on (its base class) and what
    `decode` returns, each part checked and all consistent.

    The rows as `Kingdomino` keeps them: `current_kings` a king per tile,
    `next_kings` a king or -1 per tile; `picker` the king picking now, -1 for none.
    A plain class, not a dataclass, like the families' results (family.py says why).
    """

    __slots__ = ("bots", "cfg", "current_kings", "current_tiles", "deals", "games", "kingdoms", "kings", "log",
                 "next_kings", "next_tiles", "picker", "pile", "seed", "timed_out", "exit")

    def __init__(self, cfg: KDConfig, seed: int | None, kings: list[int], pile: list[int],
                 current_tiles: list[int], current_kings: list[int], next_tiles: list[int],
                 next_kings: list[int], picker: int, kingdoms: list[Kingdom], games: list[GameResult],
                 deals: list[tuple[list[int], list[int]]], timed_out: int = -1) -> None:
        self.cfg = cfg
        self.timed_out = timed_out
        self.seed = seed
        self.kings = kings
        self.pile = pile
        self.current_tiles = current_tiles
        self.current_kings = current_kings
        self.next_tiles = next_tiles
        self.next_kings = next_kings
        self.picker = picker
        self.kingdoms = kingdoms
        self.games = games
        self.deals = deals
        #: Players the computer plays, and at what level (`botseats`; the engine plays them).
        self.bots: dict[int, str] = {}
        #: What happened since the game began (`history`): empty when that is not known.
        self.log: list[str] = []
        #: The exit that ended the game (`exits`: resign, gone, abort), "" for none.
        self.exit = ""


def encode(game: KingdominoState) -> dict[str, Any]:
    """The whole state as JSON (the pile's order included: `Kingdomino.view` hides it from players).

    A dynasty adds ``dynasty``: ``{"games": [finished game's result...], "deals": [{tiles,
    kings} of each game not yet started: explicit deals only]}``; a result is
    ``{kingdoms, scores, largest_region, crowns, winners, decided_by}``."""
    state: dict[str, Any] = {
        "variant": NAME,
        "players": game.cfg.players,
        "options": game.cfg.options,
        "seed": game.seed,
        "kings": game.kings.copy(),
        "pile": game.pile.copy(),
        "current": [{"tile": t, "king": k} for t, k in zip(game.current_tiles, game.current_kings)],
        "next": [{"tile": t, "king": None if k < 0 else k}
                 for t, k in zip(game.next_tiles, game.next_kings)],
        "picker": None if game.picker < 0 else game.picker,
        "kingdoms": [k.log.copy() for k in game.kingdoms],
        "log": game.log.copy(),
    }
    if game.timed_out >= 0:
        state[TIMED_OUT_KEY] = game.timed_out
    if game.exit:
        state[EXIT_KEY] = game.exit
    if game.bots:
        state[BOTS_KEY] = bots_to_list(game.bots)
    if game.cfg.dynasty:
        state[DYNASTY_KEY] = {
            "games": [r.to_dict() for r in game.games],
            "deals": [{"tiles": pile.copy(), "kings": kings.copy()} for pile, kings in game.deals],
        }
    return state


def decode(data: object) -> KingdominoState:
    """Read and check a state, or raise MalformedError naming the first thing wrong."""
    if not isinstance(data, dict):
        raise MalformedError("state must be an object")
    unknown = sorted(str(k) for k in data if k not in KEYS and k not in (DYNASTY_KEY, TIMED_OUT_KEY, EXIT_KEY, LOG_KEY, BOTS_KEY))
    if unknown:
        raise MalformedError(f"state: unknown keys {unknown}")
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise MalformedError(f"state: missing keys {missing}")
    if data["variant"] != NAME:
        raise MalformedError(f"state.variant must be {NAME!r}, not {data['variant']!r}")
    options = data["options"]
    if not isinstance(options, dict):
        raise MalformedError("state.options must be an object")
    try:
        cfg = config(data["players"], options)
    except MalformedError as exc:  # its messages start with the field (players, options.x)
        raise MalformedError(f"state.{exc}") from None
    seed = check_seed(data["seed"], "state.seed")
    if cfg.dynasty and DYNASTY_KEY not in data:
        raise MalformedError(f"state: missing keys ['{DYNASTY_KEY}'] (option dynasty: true)")
    if not cfg.dynasty and DYNASTY_KEY in data:
        raise MalformedError(f"state.{DYNASTY_KEY}: only a dynasty (option dynasty: true) has it")
    games, deals = _dynasty(cfg, seed, data[DYNASTY_KEY]) if cfg.dynasty else ([], [])
    kings = king_owners(cfg, data["kings"], "state.kings")
    pile = tile_list(data["pile"], "state.pile")
    current_tiles, current_kings = _row(cfg, data["current"], "state.current", free=False)
    next_tiles, next_kings = _row(cfg, data["next"], "state.next", free=True)
    if next_tiles and len(next_tiles) != cfg.kings:
        raise MalformedError(f"state.next must hold {cfg.kings} tiles, or none in the last round")
    picker = _king_or_none(cfg, data["picker"], "state.picker")
    kingdoms = _kingdoms(cfg, data["kingdoms"], "state.kingdoms")

    # Every tile in exactly one place, as many as are played with.
    seen = 0
    count = 0
    places: list[tuple[str, list[int]]] = [("state.pile", pile), ("state.current", current_tiles),
                                           ("state.next", next_tiles)]
    places += [(f"state.kingdoms[{p}]", [_tile_of(a) for a in k.log]) for p, k in enumerate(kingdoms)]
    for what, tiles in places:
        for t in tiles:
            if seen >> t & 1:
                raise MalformedError(f"{what}: tile {t} is also elsewhere in the state")
            seen |= 1 << t
            count += 1
    if count != cfg.tiles:
        raise MalformedError(f"state: {count} tiles in the state; {cfg.players} players play with {cfg.tiles}")
    if len(pile) % cfg.kings:
        raise MalformedError(f"state.pile must hold a multiple of {cfg.kings} tiles (whole rows)")
    if pile and not next_tiles:
        raise MalformedError("state.next is empty but the pile is not: the next row must be laid")

    _check_turn(cfg, kings, current_kings, next_kings, picker, kingdoms)
    timed_out = -1
    if TIMED_OUT_KEY in data:
        value = data[TIMED_OUT_KEY]
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < cfg.players:
            raise MalformedError(f"state.{TIMED_OUT_KEY} must be a player 0..{cfg.players - 1} "
                                 f"(present only once a timeout ended the game), not {value!r}")
        if picker is None and not current_tiles:
            raise MalformedError(f"state.{TIMED_OUT_KEY}: the game was played to its end, no timeout ended it")
        timed_out = value
    if cfg.dynasty and picker is None and not current_tiles and len(games) < DYNASTY_GAMES - 1:
        raise MalformedError(f"state: game {len(games) + 1} of the dynasty is over, "
                             "so the next one must have been started")

    parts = KingdominoState(cfg, seed, kings, pile, current_tiles, current_kings, next_tiles, next_kings,
                    -1 if picker is None else picker, kingdoms, games, deals, timed_out)
    parts.bots = check_bots(data.get(BOTS_KEY), cfg.players, "state.bots")
    parts.log = check_log(data.get(LOG_KEY, []))
    parts.exit = _exit(data, timed_out, picker is None and not current_tiles)
    return parts


def _exit(data: dict[Any, Any], timed_out: int, played_out: bool) -> str:
    """The state's `EXIT_KEY` ("" when absent): a forfeit's exit names its player in `TIMED_OUT_KEY`, an
    abort none, and a game played to its end had none."""
    if EXIT_KEY not in data:
        return ""
    value = data[EXIT_KEY]
    if value not in HOWS:
        raise MalformedError(f"state.{EXIT_KEY}: {one_of(value, HOWS)}")
    assert isinstance(value, str)
    if played_out:
        raise MalformedError(f"state.{EXIT_KEY}: the game was played to its end, no exit ended it")
    if (value == ABORT) != (timed_out < 0):
        raise MalformedError(f"state.{EXIT_KEY}: {value!r} " + ("ends the game for no player: no state.timed_out"
                                                               if value == ABORT else
                                                               "names the player who forfeited in state.timed_out"))
    return value


def _dynasty(cfg: KDConfig, seed: int | None, value: object
             ) -> tuple[list[GameResult], list[tuple[list[int], list[int]]]]:
    """The finished games (each replayed, complete, its results recomputed) and the deals to come:
    none with a seed (each game's deal derives from it), one per game not yet started without."""
    what = f"state.{DYNASTY_KEY}"
    if not isinstance(value, dict) or set(value) != {"games", "deals"}:
        raise MalformedError(f"{what} must be an object with games and deals")
    raw_games = value["games"]
    if not isinstance(raw_games, list) or len(raw_games) > DYNASTY_GAMES - 1:
        raise MalformedError(f"{what}.games must list the finished games before the current one "
                             f"(at most {DYNASTY_GAMES - 1})")
    games = [_finished_game(cfg, item, f"{what}.games[{g}]") for g, item in enumerate(raw_games)]
    raw_deals = value["deals"]
    want = 0 if seed is not None else DYNASTY_GAMES - 1 - len(games)
    if not isinstance(raw_deals, list) or len(raw_deals) != want:
        raise MalformedError(f"{what}.deals must list {want} deals, one per game not yet started"
                             + (" (none with a seed: the deals derive from it)" if seed is not None else ""))
    deals = [explicit_deal(cfg, d, f"{what}.deals[{i}]") for i, d in enumerate(raw_deals)]
    return games, deals


def _finished_game(cfg: KDConfig, value: object, what: str) -> GameResult:
    if not isinstance(value, dict) or set(value) != set(RESULT_KEYS):
        raise MalformedError(f"{what} must be an object with {', '.join(RESULT_KEYS)}")
    kingdoms = _kingdoms(cfg, value["kingdoms"], f"{what}.kingdoms")
    each = cfg.tiles // cfg.players
    seen = 0
    for p, k in enumerate(kingdoms):
        if len(k.log) != each:
            raise MalformedError(f"{what}.kingdoms[{p}]: a finished game has {each} tiles per player, "
                                 f"not {len(k.log)}")
        for action in k.log:
            t = _tile_of(action)
            if seen >> t & 1:
                raise MalformedError(f"{what}.kingdoms[{p}]: tile {t} is in two kingdoms")
            seen |= 1 << t
    result = game_result(cfg, kingdoms)
    expected = result.to_dict()
    for key in RESULT_KEYS[1:]:
        if not _same(value[key], expected[key]):
            raise MalformedError(f"{what}.{key} must be what the kingdoms scored: {expected[key]!r}")
    return result


def _same(a: object, b: object) -> bool:
    """Equal as JSON: `True` is not `1`."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _tile_of(action: str) -> int:
    return KingdominoMove.parse(action).tile


def _king_or_none(cfg: KDConfig, value: object, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < cfg.kings:
        raise MalformedError(f"{what} must be a king 0..{cfg.kings - 1} or null, not {value!r}")
    return value


def _row(cfg: KDConfig, value: object, what: str, free: bool) -> tuple[list[int], list[int]]:
    """A row: [{"tile", "king"}...] in ascending tile order; `free`: a king may be null (-1)."""
    if not isinstance(value, list) or len(value) > cfg.kings:
        raise MalformedError(f"{what} must be a list of at most {cfg.kings} {{tile, king}} objects")
    tiles: list[int] = []
    kings: list[int] = []
    for i, item in enumerate(value):
        where = f"{what}[{i}]"
        if not isinstance(item, dict) or set(item) != {"tile", "king"}:
            raise MalformedError(f"{where} must be an object with tile and king")
        tile = tile_number(item["tile"], f"{where}.tile")
        if tiles and tile <= tiles[-1]:
            raise MalformedError(f"{what}: the tiles must be in ascending order")
        king = _king_or_none(cfg, item["king"], f"{where}.king")
        if king is None and not free:
            raise MalformedError(f"{where}.king: every tile of the current row has a king")
        if king is not None and king in kings:
            raise MalformedError(f"{what}: king {king} stands on two tiles")
        tiles.append(tile)
        kings.append(-1 if king is None else king)
    return tiles, kings


def _kingdoms(cfg: KDConfig, value: object, where: str) -> list[Kingdom]:
    """Replay every player's actions; each must have been legal when it was taken."""
    if not isinstance(value, list) or len(value) != cfg.players:
        raise MalformedError(f"{where} must list {cfg.players} lists of actions, player 0 first")
    geo = geometry(cfg.size)
    kingdoms: list[Kingdom] = []
    for p, log in enumerate(value):
        what = f"{where}[{p}]"
        if not isinstance(log, list) or len(log) > cfg.tiles // cfg.players:
            raise MalformedError(
                f"{what} must be a list of at most {cfg.tiles // cfg.players} place/discard actions")
        kingdom = Kingdom(geo)
        for i, action in enumerate(log):
            try:
                verb, tile, x, y, d = KingdominoMove.parse(action)
            except MalformedError as exc:
                raise MalformedError(f"{what}[{i}]: {exc}") from None
            if verb == "place":
                if not kingdom.can_place(tile, x, y, d):
                    raise MalformedError(f"{what}[{i}]: {action!r} is not a legal placement there: "
                                         f"{kingdom.why_not(tile, x, y, d)}")
                kingdom.place(tile, x, y, d)
            elif verb == "discard":
                if kingdom.fits(tile):
                    raise MalformedError(f"{what}[{i}]: tile {tile} fitted, it cannot have been discarded")
                kingdom.discard(tile)
            else:
                raise MalformedError(f"{what}[{i}]: a kingdom lists place and discard actions only")
            if kingdom.log[-1] != action:
                raise MalformedError(f"{what}[{i}]: {action!r} is not in canonical form")
        kingdoms.append(kingdom)
    return kingdoms


def _check_turn(cfg: KDConfig, kings: list[int], current: list[int], nxt: list[int],
                picker: int | None, kingdoms: list[Kingdom]) -> None:
    """The kings and the players' tile counts agree with one moment of RULES.md KD's turn order."""
    done = [len(k.log) for k in kingdoms]
    picked = [k for k in nxt if k >= 0]
    if not current and sum(done) == 0:
        # The first round: the kings pick in lot order (king k is the k-th to pick).
        if not nxt:
            raise MalformedError("state.next: the first row must be laid")
        if sorted(picked) != list(range(len(picked))) or picker != len(picked):
            raise MalformedError("state.picker: in the first round the kings pick in lot order")
        return
    if picker is not None:
        if not nxt:
            raise MalformedError("state.picker: nobody picks in the last round")
        if picker in picked or picker in current:
            raise MalformedError(f"state.picker: king {picker} already stands on a tile")
    elif not current and nxt:
        raise MalformedError("state: the current row is used up but the next one was not taken up")
    if set(current) & set(picked):
        raise MalformedError("state: a king stands on two tiles")
    if nxt and len(current) + len(picked) + (picker is not None) != cfg.kings:
        raise MalformedError("state: every king stands on a tile of a row or is picking")
    # Kings not in the current row have acted this round; earlier rounds were complete.
    acted_now = cfg.kings - len(current)
    full = sum(done) - acted_now
    if full < 0 or full % cfg.kings:
        raise MalformedError("state.kingdoms: the tiles placed do not add up to whole rounds")
    rounds = full // cfg.kings
    for p in range(cfg.players):
        acted = sum(1 for k in range(cfg.kings) if kings[k] == p and k not in current)
        if done[p] != rounds * cfg.kings_each + acted:
            raise MalformedError(
                f"state.kingdoms[{p}]: {done[p]} tiles, but the turn order gives player {p} "
                f"{rounds * cfg.kings_each + acted}")


__all__ = ["KingdominoState", "decode"]
