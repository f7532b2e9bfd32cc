"""A match's dict form (the JSON state): `decode` checks one and `encode` writes one.

The REST transparent mode and the JSON engine carry a match as this dict, and
the gRPC codec (`edge/wire.py`) reads its message into the same shape, with the
tiles as ids (`decode_tiles`). A state may come from anyone, so nothing in it is
trusted: every key, type and range is checked, and the round must be one the
rules can reach (every tile in exactly one place, the layout replayed under the
variant's placement rules, the seats out holding nothing, the ending agreeing
with "over"). The first thing wrong is refused with a `MalformedError` naming
the field.

`decode` makes the checked state an instance of the class it is given (`Match`,
whose fields are `match_state.MatchState`'s), so this module does not import the
match (match.py imports it: the rules' imports form a tree,
tests/rules/test_import_tree.py), as `kingdomino_state` hands Kingdomino its state. It is compiled with the rules (setup.py
``COMPILED_SOURCES``), which wire's decoding needs.
"""
from __future__ import annotations

from typing import Any, Final, TypeVar

from .botseats import bots_to_list, check_bots
from .checks import (
    INT_LIMIT,
    check_bool,
    check_int,
    check_int_list,
    check_nonneg,
    check_seat,
    check_seat_list,
    check_seed,
)
from .errors import MalformedError, one_of
from .history import DIGEST_SIZE, MAX_LOG, check_log
from .ledger import Ledger
from .match_state import MatchState, near_limit
from .notation import Placement, format_placement, parse_placement
from .registry import make_family
from .round import Round
from .tiles import ALL_TILES, NAMES, TILE_COUNT, bits, names, parse_hands, parse_tile

#: How a round may end, as a state names it.
ENDINGS: Final = ("out", "fish", "blocked", "sortir")

#: The keys of a state and its parts, as `encode` writes them: any other key is refused (a
#: misspelled key would otherwise be dropped silently; the OpenAPI schema says the same).
STATE_KEYS: Final = frozenset({"variant", "players", "options", "seed", "round_number", "ledger", "round", "next_leader",
                        "match_over", "losers", "winners", "rating", "timed_out", "bots", "log",
                        "log_count", "log_digest"})
ROUND_KEYS: Final = frozenset({"leader", "hands", "boneyard", "reserve", "layout", "to_move", "passes", "out",
                        "last_placer", "last_score", "over", "ending", "winner", "round_points", "places", "ends",
                        "count"})
LEDGER_KEYS: Final = frozenset({"written", "remembered", "pot", "scores", "history"})
RECORD_KEYS: Final = frozenset({"number", "ending", "winner", "last_placer", "round_points", "written", "remembered", "pot",
                         "scores", "places", "out"})

#: The keys that may be null (the documented schema's `nullable` ones); any other given as null is refused.
_STATE_NULLABLE: Final = frozenset({"seed", "round", "next_leader", "timed_out"})
_ROUND_NULLABLE: Final = frozenset({"last_placer", "ending", "winner", "round_points", "places"})


# ---------------------------------------------------------------- encoding


def encode(match: MatchState) -> dict[str, Any]:
    """The canonical JSON state (the REST transparent form; mirrors proto MatchState).
    ``log_count`` and ``log_digest`` are there once entries have left the log, ``bots`` only
    when some seat is a bot."""
    state = {
        "variant": match.preset.name,
        "players": match.players,
        "options": {k: v for k, v in match.overrides.items()},
        "seed": match.seed,
        "round_number": match.round_number,
        "ledger": match.ledger.to_dict(),
        "round": None if match.round is None else round_to_dict(match.round),
        "next_leader": match.next_leader,
        "match_over": match.match_over,
        "losers": match.losers.copy(),
        "winners": match.winners.copy(),
        "rating": match.rating.copy(),
        "timed_out": match.timed_out,
        "log": match.log,
    }
    if match.log_count:
        state["log_count"] = match.log_count
        state["log_digest"] = match.log_digest.hex()
    if match.bots:
        state["bots"] = bots_to_list(match.bots)
    return state


def round_to_dict(rnd: Round) -> dict[str, Any]:
    """A round as the state's ``round`` (``ends`` and ``count`` derived, for readers)."""
    return {
        "leader": rnd.leader,
        "hands": [names(h) for h in rnd.hands],
        "boneyard": [NAMES[t] for t in reversed(rnd.boneyard)],
        "reserve": rnd.reserve,
        "layout": [format_placement(p) for p in rnd.layout.placements],
        "to_move": rnd.to_move,
        "passes": rnd.passes,
        "out": rnd.out.copy(),
        "last_placer": rnd.last_placer,
        "last_score": rnd.last_score,
        "over": rnd.over,
        "ending": rnd.ending,
        "winner": rnd.winner,
        "round_points": None if rnd.round_points is None else rnd.round_points.copy(),
        "places": None if rnd.places is None else rnd.places.copy(),
        "ends": rnd.layout.ends(),
        "count": rnd.layout.count(),
    }


# ---------------------------------------------------------------- decoding


_Tiles = tuple[list[int], list[int], list[Placement]]
#: The class a state is decoded into: `Match`, whose fields `MatchState` declares.
S = TypeVar("S", bound=MatchState)


def decode(data: object, cls: type[S]) -> S:
    """Check a JSON state and make it an instance of `cls` (`Match`); MalformedError names the first
    thing wrong."""
    return _decode(data, None, cls)


def decode_tiles(data: object, hands: list[int], boneyard: list[int], placements: list[Placement],
                 cls: type[S], steps: bytes | None = None) -> S:
    """`decode` for a codec that carries tiles as ids (the gRPC one): no tile strings.

    `data` is a state as `decode` reads it, except that the round's "hands",
    "boneyard" and "layout" are ignored: they are given as bit sets (seat 0
    first), tile ids in draw order and ``(tile, arm, flag)`` placements
    (`notation.Placement`, the lead's arm `CENTER`); `steps`, when given, are the
    moves after the "log" entries as step codes (`MatchState.log_steps`: the codec
    checked that their plays lay the layout, no more, no less). Everything is
    checked as `decode` does; the first message may differ when a state is wrong
    in several ways.
    """
    for t in boneyard:
        if not 0 <= t < TILE_COUNT:
            raise MalformedError(f"state.round.boneyard: tile id {t} is not a tile")
    for i, (t, _arm, _flag) in enumerate(placements):
        if not 0 <= t < TILE_COUNT:
            raise MalformedError(f"state.round.layout[{i}]: tile id {t} is not a tile")
    return _decode(data, (hands, boneyard, placements), cls, steps)


def _decode(data: object, tiles: _Tiles | None, cls: type[S], steps: bytes | None = None) -> S:
    if not isinstance(data, dict):
        raise MalformedError("state must be an object")
    _known_keys(data, STATE_KEYS, "state")
    _no_nulls(data, _STATE_NULLABLE, "state")
    try:
        p, family, effective = make_family(data.get("variant"), data.get("players"), data.get("options", {}))
    except MalformedError as exc:  # its messages start with the field (variant, players, options.x)
        raise MalformedError(f"state.{exc}") from None
    players = int(data["players"])
    state = cls(p, family, effective, players, check_seed(data.get("seed"), "state.seed"))
    state.round_number = check_nonneg(data.get("round_number", 0), "state.round_number")
    state.ledger = _ledger_from_dict(data.get("ledger", {}), players, family.sides, family.score_is_written)
    nl = data.get("next_leader")
    state.next_leader = None if nl is None else check_seat(nl, players, "state.next_leader")
    state.match_over = check_bool(data.get("match_over", False), "state.match_over")
    state.losers = check_seat_list(data.get("losers", []), family.sides, "state.losers")
    state.winners = check_seat_list(data.get("winners", []), family.sides, "state.winners")
    rating = data.get("rating", [])
    state.rating = check_int_list(rating, players, "state.rating") if rating != [] else []
    to = data.get("timed_out")
    state.timed_out = None if to is None else check_seat(to, players, "state.timed_out")
    state.bots = check_bots(data.get("bots"), players, "state.bots")
    rnd = data.get("round")
    if rnd is not None:
        state.round = _round_from_dict(state, rnd) if tiles is None else _round_from_tiles(state, rnd, tiles)
    _log_from_dict(state, data, steps)
    state.at_limit = near_limit(state)
    return state


def _log_from_dict(state: MatchState, data: dict[str, Any], steps: bytes | None) -> None:
    """The state's log: the current round's entries (the moves after "log" as `steps` when given), and the
    count and digest of those that left it (both or neither; a state from before states shed their rounds
    has a whole log and neither)."""
    count = data.get("log_count", 0)
    if type(count) is not int or not 0 <= count <= MAX_LOG:
        raise MalformedError(f"state.log_count must be an integer 0..{MAX_LOG}")
    digest = data.get("log_digest", "")
    if type(digest) is bytes:
        raw = digest
    elif type(digest) is str and len(digest) == 2 * DIGEST_SIZE:
        try:
            raw = bytes.fromhex(digest)
        except ValueError:
            raw = b""
    else:
        raw = b"" if digest == "" else b"?"
    if (count == 0) != (raw == b"") or (count and len(raw) != DIGEST_SIZE):
        raise MalformedError(f"state.log_digest must be {DIGEST_SIZE} bytes ({2 * DIGEST_SIZE} hex digits) when "
                             "state.log_count is above 0, and absent when it is 0")
    moves = 0 if steps is None else len(steps)
    log = check_log(data.get("log", []), whole=count == 0, moves=moves)
    if count + len(log) + moves > MAX_LOG:
        raise MalformedError(f"state.log: more than {MAX_LOG} entries in all")
    state.restore_log(log, count, raw, steps)


def _no_nulls(data: dict[Any, Any], nullable: frozenset[str], where: str) -> None:
    for key, value in data.items():
        if value is None and key not in nullable:
            raise MalformedError(f"{where}.{key} must not be null")


def _known_keys(data: dict[Any, Any], allowed: frozenset[str], where: str) -> None:
    if allowed.issuperset(data):  # the common case, in C: every decode asks it of each object
        return
    unknown = sorted(str(k) for k in data if k not in allowed)
    raise MalformedError(f"{where}: unknown keys {unknown}")


def _round_from_dict(state: MatchState, data: object) -> Round:
    if not isinstance(data, dict):
        raise MalformedError("state.round must be an object or null")
    _known_keys(data, ROUND_KEYS, "state.round")
    _no_nulls(data, _ROUND_NULLABLE, "state.round")
    players = state.players
    hands_in = data.get("hands")
    if not isinstance(hands_in, list) or len(hands_in) != players:
        raise MalformedError(f"state.round.hands must list {players} hands")
    hands, seen = parse_hands(hands_in, "state.round.hands", "state: {} appears twice")
    boneyard_in = data.get("boneyard", [])
    if not isinstance(boneyard_in, list):
        raise MalformedError("state.round.boneyard must be a list of tiles")
    boneyard = []
    for i, item in enumerate(boneyard_in):
        t = parse_tile(item, f"state.round.boneyard[{i}]")
        if seen >> t & 1:
            raise MalformedError(f"state: {NAMES[t]} appears twice")
        seen |= 1 << t
        boneyard.append(t)
    layout_in = data.get("layout", [])
    if not isinstance(layout_in, list):
        raise MalformedError("state.round.layout must be a list of placements")
    placements = []
    for i, item in enumerate(layout_in):
        try:
            placements.append(parse_placement(item, i == 0))
        except MalformedError as exc:
            raise MalformedError(f"state.round.layout[{i}]: {exc}") from None
    return _round_from_parts(state, data, hands, seen, boneyard, placements)


def _round_from_tiles(state: MatchState, data: object, tiles: _Tiles) -> Round:
    """`_round_from_dict` with the tiles given as bit sets and ids (see `decode_tiles`)."""
    if not isinstance(data, dict):
        raise MalformedError("state.round must be an object or null")
    hands_in, boneyard_in, placements = tiles
    players = state.players
    if len(hands_in) != players:
        raise MalformedError(f"state.round.hands must list {players} hands")
    hands: list[int] = []
    seen = 0
    for m in hands_in:
        if m & seen:
            raise MalformedError(f"state: {NAMES[next(bits(m & seen))]} appears twice")
        if not 0 <= m <= ALL_TILES:
            raise MalformedError("state.round.hands: not a set of tiles")
        seen |= m
        hands.append(m)
    boneyard: list[int] = []
    for t in boneyard_in:
        if seen >> t & 1:
            raise MalformedError(f"state: {NAMES[t]} appears twice")
        seen |= 1 << t
        boneyard.append(t)
    return _round_from_parts(state, data, hands, seen, boneyard, list(placements))


def _round_from_parts(state: MatchState, data: dict[str, Any], hands: list[int], seen: int,
                      boneyard: list[int], placements: list[Placement]) -> Round:
    """The rest of a round's decoding, once its tiles are read: layout, consistency, scalars."""
    family = state.family
    players = state.players
    layout = family.new_layout()
    try:
        layout.replay(placements)
    except MalformedError as exc:  # "entry 3 is a second lead", "impossible layout at entry 2: ..."
        raise MalformedError(f"state.round.layout: {exc}") from None
    if layout.on_table & seen:
        raise MalformedError(f"state: {NAMES[next(bits(layout.on_table & seen))]} is both on the table and elsewhere")
    seen |= layout.on_table
    if seen != ALL_TILES:
        missing = ", ".join(NAMES[t] for t in bits(ALL_TILES & ~seen))
        raise MalformedError(f"state: tiles missing (every one of the {TILE_COUNT} must be somewhere): {missing}")
    leader = check_seat(data.get("leader", 0), players, "state.round.leader")
    over = check_bool(data.get("over", False), "state.round.over")
    lead_mask = ALL_TILES
    if not placements and not over:
        lead_mask = family.lead_mask(state.round_context(), hands, leader)
    rnd = Round(family, hands, boneyard, leader, lead_mask, layout)
    reserve = check_nonneg(data.get("reserve", 0), "state.round.reserve")
    if reserve != min(family.reserve, rnd.reserve + len(boneyard)) and reserve != rnd.reserve:
        raise MalformedError(f"state.round.reserve: {reserve}, but the variant keeps {family.reserve}")
    rnd.reserve = min(reserve, len(boneyard))
    rnd.to_move = check_seat(data.get("to_move", leader), players, "state.round.to_move")
    if not placements and rnd.to_move != leader:
        raise MalformedError("state.round: before the lead, the seat to move must be the leader")
    rnd.passes = check_nonneg(data.get("passes", 0), "state.round.passes")
    rnd.out = check_seat_list(data.get("out", []), players, "state.round.out")
    for s in rnd.out:
        if hands[s]:
            raise MalformedError(f"state.round.out: seat {s}'s hand is not empty")
    lp = data.get("last_placer")
    rnd.last_placer = None if lp is None else check_seat(lp, players, "state.round.last_placer")
    rnd.last_score = check_int(data.get("last_score", 0), "state.round.last_score")
    if rnd.last_score and not family.counts:
        raise MalformedError(f"state.round.last_score: {state.preset.name} scores nothing in play, so it is 0")
    rnd.over = over
    ending = data.get("ending")
    if ending is not None and ending not in ENDINGS:
        raise MalformedError(f"state.round.ending: {one_of(ending, [*ENDINGS, None])}")
    if over != (ending is not None):
        raise MalformedError("state.round: over and ending disagree")
    rnd.ending = ending
    w = data.get("winner")
    rnd.winner = None if w is None else check_seat(w, max(players, family.sides), "state.round.winner")
    rp = data.get("round_points")
    rnd.round_points = None if rp is None else check_int_list(rp, players, "state.round.round_points")
    pl = data.get("places")
    rnd.places = None if pl is None else check_int_list(pl, players, "state.round.places")
    if not over:
        empty = [s for s, h in enumerate(hands) if h == 0]
        if empty and not family.many_out:
            raise MalformedError(f"state.round: seat {empty[0]} has no tiles, so the round is over")
        if sorted(empty) != sorted(rnd.out):
            raise MalformedError("state.round.out must list exactly the seats with no tiles")
        if placements and rnd.to_move in rnd.out:
            raise MalformedError("state.round: the seat to move has gone out")
    return rnd


def _ledger_from_dict(data: object, players: int, sides: int, score_is_written: bool) -> Ledger:
    if not isinstance(data, dict):
        raise MalformedError("state.ledger must be an object")
    _known_keys(data, LEDGER_KEYS, "state.ledger")
    _no_nulls(data, frozenset(), "state.ledger")
    # Each list and check written out (no setattr, getattr or generator): every decode reads a ledger.
    ledger = Ledger(_side_ints(data, "written", sides), _side_ints(data, "remembered", sides), 0,
                    _side_ints(data, "scores", sides))
    for v in ledger.written:
        if v < 0:
            raise MalformedError("state.ledger.written must not be negative")
    for v in ledger.remembered:
        if v < 0:
            raise MalformedError("state.ledger.remembered must not be negative")
    if score_is_written and ledger.scores != ledger.written:
        # K, O: scores mirror the written points; a state written before they did has zeros there.
        if any(ledger.scores):
            raise MalformedError("state.ledger.scores must equal state.ledger.written in this variant "
                                 "(the score is the written points)")
        ledger.scores = ledger.written.copy()
    ledger.pot = check_nonneg(data.get("pot", 0), "state.ledger.pot")
    history = data.get("history", [])
    if not isinstance(history, list):
        raise MalformedError("state.ledger.history must be a list")
    for i, record in enumerate(history):
        if not isinstance(record, dict):
            raise MalformedError(f"state.ledger.history[{i}] must be an object")
        ledger.history.append(_record_from_dict(record, i, players, sides))
    return ledger


def _side_ints(data: dict[str, Any], key: str, sides: int) -> list[int]:
    """A ledger list: one integer per side (zeros when absent or empty)."""
    v = data.get(key, [])
    if type(v) is list and not v:
        return [0] * sides
    return check_int_list(v, sides, f"state.ledger.{key}")


#: A score table row's lists and how many entries each holds when not empty: (key, per seat?).
_RECORD_LISTS: Final[tuple[tuple[str, bool], ...]] = (("round_points", True), ("written", False), ("remembered", False),
                                               ("scores", False), ("places", True), ("out", True))


def _record_from_dict(r: dict[str, Any], i: int, players: int, sides: int) -> dict[str, Any]:
    """One row of the score table, checked against the match's seats and sides.

    Every state after a match's first round carries one row: its checks are written out, with no
    closure or generator per call (the pure build's decode of the last state of a match spent
    more on its row than on its layout)."""
    where = f"state.ledger.history[{i}]"
    _known_keys(r, RECORD_KEYS, where)
    ending = r.get("ending")
    if ending not in ENDINGS:
        raise MalformedError(f"{where}.ending: {one_of(ending, ENDINGS)}")
    record: dict[str, Any] = {
        "number": check_nonneg(r.get("number", i + 1), f"{where}.number"),
        "ending": ending,
        "winner": None,
        "last_placer": None,
        "round_points": [],
        "written": [],
        "remembered": [],
        "pot": check_nonneg(r.get("pot", 0), f"{where}.pot"),
        "scores": [],
        "places": [],
        "out": [],
    }
    winner = r.get("winner")
    if winner is not None:
        record["winner"] = check_seat(winner, max(players, sides), f"{where}.winner")
    last_placer = r.get("last_placer")
    if last_placer is not None:
        record["last_placer"] = check_seat(last_placer, players, f"{where}.last_placer")
    for key, per_seat in _RECORD_LISTS:
        v = r.get(key, [])
        if type(v) is not list:
            raise MalformedError(f"{where}.{key} must be a list of integers")
        for x in v:
            if type(x) is not int or not -INT_LIMIT <= x <= INT_LIMIT:
                if not isinstance(x, int) or isinstance(x, bool):
                    raise MalformedError(f"{where}.{key} must be a list of integers")
                raise MalformedError(f"{where}.{key}: an integer is out of range")
        if not v:
            continue
        if key == "out":
            record[key] = check_seat_list(v, players, f"{where}.out")
            continue
        n = players if per_seat else sides
        if len(v) != n:
            raise MalformedError(f"{where}.{key} must list {n} integers")
        record[key] = v.copy()
    return record
