"""Conversion between the rules' JSON dicts and the `domino.v1` protobuf messages.

The rules library speaks JSON-shaped dicts (tiles as "a-b", placements and
actions as strings, see conformance/FORMAT.md); the wire speaks protobuf (tiles
as ids 0..27, placements as `Placement` messages). This module is the only
place that knows both, and it is shared by the engine servicer, the REST
gateway and the Python client, so every surface converts the same way.

Both directions validate what they read and raise `MalformedError` with the
path of the offending field (``state.round.hands[2].tiles[0]: ...``), so hostile
input is refused as INVALID_ARGUMENT before it reaches the rules. Validation
here is about shape only (ids in range, known enum values, integer ranges);
whether a state is consistent (tile counts, duplicates, layout) is the rules'
job in `Match.from_dict`.

>>> state_from_proto(state_to_proto({"variant": "kozel", "players": 2}))["round"] is None
True
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any, cast

from domino.v1 import engine_pb2 as pb

from engine_service.rules.errors import MalformedError
from engine_service.rules.notation import ARM_NAMES
from engine_service.rules.tiles import NAME_TO_ID, NAMES, TILE_COUNT

__all__ = [
    "ENDINGS",
    "deal_from_proto",
    "deal_to_proto",
    "ending_from_proto",
    "ending_to_proto",
    "events_from_proto",
    "events_to_proto",
    "hands_from_proto",
    "hands_to_proto",
    "options_from_proto",
    "options_to_proto",
    "seat_view_to_proto",
    "setup_from_proto",
    "setup_to_proto",
    "state_from_proto",
    "state_to_proto",
    "uint32",
    "uint64",
    "variants_from_proto",
    "variants_to_proto",
    "view_from_proto",
    "view_to_proto",
]

Json = dict[str, Any]

_UINT32 = (0, 2**32 - 1)
_INT32 = (-(2**31), 2**31 - 1)
_UINT64 = (0, 2**64 - 1)

# Arms: the rules' arm "E" is the proto's ARM_E (a KeyError at import if the two ever diverge).
_ARM_VALUE: dict[str, pb.Arm] = {name: cast(pb.Arm, pb.Arm.Value(f"ARM_{name}")) for name in ARM_NAMES}
_ARM_NAME: dict[int, str] = {v: k for k, v in _ARM_VALUE.items()}

#: Round endings: JSON string <-> proto enum (None <-> ENDING_NONE).
ENDINGS: dict[str, pb.Ending] = {
    "out": pb.ENDING_OUT, "fish": pb.ENDING_FISH, "blocked": pb.ENDING_BLOCKED,
    "sortir": pb.ENDING_SORTIR,
}
_ENDING_NAME: dict[int, str] = {v: k for k, v in ENDINGS.items()}


# ---------------------------------------------------------------- scalars


def _bad(where: str, what: str) -> MalformedError:
    return MalformedError(f"{where}: {what}")


def _int(value: object, where: str, bounds: tuple[int, int]) -> int:
    """An integer within `bounds` (bools are refused: JSON true is not 1)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(where, f"expected an integer, got {value!r}")
    if not bounds[0] <= value <= bounds[1]:
        raise _bad(where, f"{value} is out of range {bounds[0]}..{bounds[1]}")
    return value


def _uint(value: object, where: str) -> int:
    return _int(value, where, _UINT32)


def uint32(value: object, where: str) -> int:
    """A request's uint32 scalar (players, seat ...), checked before protobuf sees it."""
    return _int(value, where, _UINT32)


def uint64(value: object, where: str) -> int:
    """A request's uint64 scalar (the seed)."""
    return _int(value, where, _UINT64)


def _sint(value: object, where: str) -> int:
    return _int(value, where, _INT32)


def _bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(where, f"expected true or false, got {value!r}")
    return value


def _str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise _bad(where, f"expected a string, got {value!r}")
    return value


def _seq(value: object, where: str) -> Sequence[Any]:
    if not isinstance(value, (list, tuple)):
        raise _bad(where, f"expected a list, got {type(value).__name__}")
    return value


def _obj(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(where, f"expected an object, got {type(value).__name__}")
    return value


def _ints(value: object, where: str, bounds: tuple[int, int]) -> list[int]:
    """A list of integers within `bounds`; the path of an item is only built when it is wrong."""
    seq = _seq(value, where)
    lo, hi = bounds
    for i, v in enumerate(seq):
        if type(v) is not int or not lo <= v <= hi:
            _int(v, f"{where}[{i}]", bounds)  # raises, naming the item (or accepts an int subclass)
    return list(seq)


def _opt(d: Mapping[str, Any], key: str) -> Any:
    """A key that may be absent or null (both mean: not set)."""
    return d.get(key)


# ---------------------------------------------------------------- tiles and placements


def tile_to_id(name: object, where: str) -> int:
    """ "3-6" or "6-3" -> 21."""
    t = NAME_TO_ID.get(name) if isinstance(name, str) else None
    if t is None:
        raise _bad(where, f"not a tile: {name!r} (expected 'a-b' with 0 <= a, b <= 6)")
    return t


def tile_from_id(t: int, where: str) -> str:
    """21 -> "3-6"; ids outside 0..27 are malformed."""
    if not 0 <= t < TILE_COUNT:
        raise _bad(where, f"tile id {t} is not a tile (0..{TILE_COUNT - 1})")
    return NAMES[t]


def _tiles_to_ids(names: object, where: str) -> list[int]:
    seq = _seq(names, where)
    try:
        return [NAME_TO_ID[n] for n in seq]
    except (KeyError, TypeError):  # slow path, to name the bad item
        return [tile_to_id(n, f"{where}[{i}]") for i, n in enumerate(seq)]


def _tiles_from_ids(ids: Iterable[int], where: str) -> list[str]:
    ids = list(ids)
    if ids and max(ids) >= TILE_COUNT:  # slow path, to name the bad item
        return [tile_from_id(t, f"{where}[{i}]") for i, t in enumerate(ids)]
    return [NAMES[t] for t in ids]


# Canonical placement strings after the lead ("3-6@E", "4-4@E!") <-> (tile, arm, closes): the hot
# path is a dict lookup; anything else (the other spelling "6-3@E", errors) takes the slow path.
_PLACED: dict[str, tuple[int, pb.Arm, bool]] = {}
for _t, _name in enumerate(NAMES):
    for _arm_name, _arm in _ARM_VALUE.items():
        _PLACED[f"{_name}@{_arm_name}"] = (_t, _arm, False)
        if _name[0] == _name[2]:
            _PLACED[f"{_name}@{_arm_name}!"] = (_t, _arm, True)
_PLACED_TEXT: dict[tuple[int, int, bool], str] = {v: k for k, v in _PLACED.items()}


def placement_to_proto(text: object, where: str, first: bool) -> pb.Placement:
    """ "6-3" (the lead, W first) / "3-6@E" / "4-4@E!" -> Placement."""
    text = _str(text, where)
    if first:
        t = tile_to_id(text, where)
        return pb.Placement(tile=t, flipped=NAMES[t] != text)
    tile_text, at, arm_text = text.partition("@")
    closes = arm_text.endswith("!")
    arm = _ARM_VALUE.get(arm_text[:-1] if closes else arm_text)
    if not at or arm is None:
        raise _bad(where, f"not a placement: {text!r} (expected 'a-b@ARM' or 'a-b@ARM!')")
    return pb.Placement(tile=tile_to_id(tile_text, where), arm=arm, closes=closes)


def placement_from_proto(p: pb.Placement, where: str, first: bool) -> str:
    name = tile_from_id(p.tile, f"{where}.tile")
    if first:
        if p.arm != pb.ARM_CENTER or p.closes:
            raise _bad(where, "the first placement is the lead: arm ARM_CENTER, closes false")
        low, _, high = name.partition("-")
        return f"{high}-{low}" if p.flipped else name
    arm = _ARM_NAME.get(p.arm)
    if arm is None:
        raise _bad(f"{where}.arm", f"unknown or central arm {p.arm} after the lead")
    if p.flipped:
        raise _bad(f"{where}.flipped", "only the lead can be flipped")
    return f"{name}@{arm}!" if p.closes else f"{name}@{arm}"


def _layout_to_proto(layout: object, where: str) -> list[pb.Placement]:
    out = []
    for i, text in enumerate(_seq(layout, where)):
        placed = _PLACED.get(text) if i and isinstance(text, str) else None
        if placed is not None:
            out.append(pb.Placement(tile=placed[0], arm=placed[1], closes=placed[2]))
        else:
            out.append(placement_to_proto(text, f"{where}[{i}]", i == 0))
    return out


def _layout_from_proto(layout: Iterable[pb.Placement], where: str) -> list[str]:
    out = []
    for i, p in enumerate(layout):
        text = _PLACED_TEXT.get((p.tile, p.arm, p.closes)) if i and not p.flipped else None
        out.append(text if text is not None else placement_from_proto(p, f"{where}[{i}]", i == 0))
    return out


def _ends_to_proto(ends: object, where: str) -> list[pb.OpenEnd]:
    out = []
    for arm, value in _obj(ends, where).items():
        if arm not in _ARM_VALUE:
            raise _bad(where, f"unknown arm {arm!r}")
        out.append(pb.OpenEnd(arm=_ARM_VALUE[arm], value=_int(value, f"{where}.{arm}", (0, 6))))
    return out


def _ends_from_proto(ends: Iterable[pb.OpenEnd], where: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, e in enumerate(ends):
        arm = _ARM_NAME.get(e.arm)
        if arm is None or arm in out:
            raise _bad(f"{where}[{i}].arm", f"unknown or repeated arm {e.arm}")
        if e.value > 6:
            raise _bad(f"{where}[{i}].value", f"{e.value} is not a number of the set (0..6)")
        out[arm] = e.value
    return out


def hands_to_proto(hands: object, where: str) -> list[pb.Hand]:
    """[["1-1", "2-3"], ...] -> [Hand(tiles=[7, 14]), ...] (order kept)."""
    return [pb.Hand(tiles=_tiles_to_ids(h, f"{where}[{i}]")) for i, h in enumerate(_seq(hands, where))]


def hands_from_proto(hands: Iterable[pb.Hand], where: str) -> list[list[str]]:
    return [_tiles_from_ids(h.tiles, f"{where}[{i}].tiles") for i, h in enumerate(hands)]


def ending_to_proto(ending: object, where: str) -> pb.Ending:
    """ "out" -> ENDING_OUT; None -> ENDING_NONE."""
    if ending is None:
        return pb.ENDING_NONE
    value = ENDINGS.get(ending) if isinstance(ending, str) else None
    if value is None:
        raise _bad(where, f"unknown ending {ending!r} (expected one of {', '.join(ENDINGS)})")
    return value


def ending_from_proto(value: int, where: str) -> str | None:
    if value == pb.ENDING_NONE:
        return None
    name = _ENDING_NAME.get(value)
    if name is None:
        raise _bad(where, f"unknown ending {value}")
    return name


# ---------------------------------------------------------------- options


def options_to_proto(options: object, where: str = "options") -> dict[str, str]:
    """Typed option values -> the wire's strings (true/false, decimal integers, enum names)."""
    if options is None:
        return {}
    out: dict[str, str] = {}
    for name, value in _obj(options, where).items():
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, (int, str)):
            out[name] = str(value)
        else:
            raise _bad(f"{where}.{name}", f"expected a boolean, integer or string, got {value!r}")
    return out


@cache
def _option_types(variant: str) -> dict[str, str]:
    """Option name -> "bool" / "int" / "enum" for a preset ({} for an unknown preset)."""
    from engine_service.rules import variants  # late: the registry is only needed here

    for v in variants():
        if v["name"] == variant:
            return {o["name"]: o["type"] for o in v["options"]}
    return {}


def options_from_proto(variant: str, options: Mapping[str, str]) -> dict[str, Any]:
    """The wire's strings -> typed values, by the preset's option types.

    A value that does not parse as its type, or an option the preset does not
    have, is passed on as text: the rules refuse it with a message naming it.
    """
    types = _option_types(variant) if options else {}
    out: dict[str, Any] = {}
    for name in sorted(options):
        text = options[name]
        kind = types.get(name)
        if kind == "bool" and text in ("true", "false"):
            out[name] = text == "true"
        elif kind == "int" and text.lstrip("-").isdigit() and len(text) < 12:
            out[name] = int(text)
        else:
            out[name] = text
    return out


# ---------------------------------------------------------------- state


def _record_to_proto(r: object, where: str) -> pb.RoundRecord:
    r = _obj(r, where)
    msg = pb.RoundRecord(
        number=_uint(r.get("number", 0), f"{where}.number"),
        ending=ending_to_proto(r.get("ending"), f"{where}.ending"),
        pot=_sint(r.get("pot", 0), f"{where}.pot"),
    )
    if _opt(r, "winner") is not None:
        msg.winner = _sint(r["winner"], f"{where}.winner")
    if _opt(r, "last_placer") is not None:
        msg.last_placer = _uint(r["last_placer"], f"{where}.last_placer")
    for key, bounds in (("round_points", _INT32), ("written", _INT32), ("remembered", _INT32),
                        ("scores", _INT32), ("places", _UINT32), ("out", _UINT32)):
        if _opt(r, key) is not None:
            getattr(msg, key).extend(_ints(r[key], f"{where}.{key}", bounds))
    return msg


def _record_from_proto(r: pb.RoundRecord, where: str) -> Json:
    return {
        "number": r.number,
        "ending": ending_from_proto(r.ending, f"{where}.ending"),
        "winner": r.winner if r.HasField("winner") else None,
        "last_placer": r.last_placer if r.HasField("last_placer") else None,
        "round_points": list(r.round_points),
        "written": list(r.written),
        "remembered": list(r.remembered),
        "pot": r.pot,
        "scores": list(r.scores),
        "places": list(r.places),
        "out": list(r.out),
    }


def _ledger_to_proto(d: object, where: str) -> pb.Ledger:
    d = _obj(d, where)
    msg = pb.Ledger(pot=_sint(d.get("pot", 0), f"{where}.pot"))
    for key in ("written", "remembered", "scores"):
        msg_field = getattr(msg, key)
        msg_field.extend(_ints(d.get(key) or [], f"{where}.{key}", _INT32))
    msg.history.extend(
        _record_to_proto(r, f"{where}.history[{i}]")
        for i, r in enumerate(_seq(d.get("history") or [], f"{where}.history"))
    )
    return msg


def _ledger_from_proto(msg: pb.Ledger, where: str) -> Json:
    return {
        "written": list(msg.written),
        "remembered": list(msg.remembered),
        "pot": msg.pot,
        "scores": list(msg.scores),
        "history": [_record_from_proto(r, f"{where}.history[{i}]") for i, r in enumerate(msg.history)],
    }


def _round_to_proto(d: object, where: str) -> pb.Round:
    d = _obj(d, where)
    msg = pb.Round(
        leader=_uint(d.get("leader", 0), f"{where}.leader"),
        reserve=_uint(d.get("reserve", 0), f"{where}.reserve"),
        to_move=_uint(d.get("to_move", 0), f"{where}.to_move"),
        passes=_uint(d.get("passes", 0), f"{where}.passes"),
        last_score=_sint(d.get("last_score", 0), f"{where}.last_score"),
        over=_bool(d.get("over", False), f"{where}.over"),
        ending=ending_to_proto(d.get("ending"), f"{where}.ending"),
        count=_sint(d.get("count", 0), f"{where}.count"),
    )
    msg.hands.extend(hands_to_proto(d.get("hands", []), f"{where}.hands"))
    msg.boneyard.extend(_tiles_to_ids(d.get("boneyard", []), f"{where}.boneyard"))
    msg.layout.extend(_layout_to_proto(d.get("layout", []), f"{where}.layout"))
    msg.out.extend(_ints(d.get("out") or [], f"{where}.out", _UINT32))
    if _opt(d, "last_placer") is not None:
        msg.last_placer = _uint(d["last_placer"], f"{where}.last_placer")
    if _opt(d, "winner") is not None:
        msg.winner = _sint(d["winner"], f"{where}.winner")
    if _opt(d, "round_points") is not None:
        msg.round_points.extend(_ints(d["round_points"], f"{where}.round_points", _INT32))
    if _opt(d, "places") is not None:
        msg.places.extend(_ints(d["places"], f"{where}.places", _UINT32))
    msg.ends.extend(_ends_to_proto(d.get("ends") or {}, f"{where}.ends"))
    return msg


def _round_from_proto(msg: pb.Round, where: str) -> Json:
    return {
        "leader": msg.leader,
        "hands": hands_from_proto(msg.hands, f"{where}.hands"),
        "boneyard": _tiles_from_ids(msg.boneyard, f"{where}.boneyard"),
        "reserve": msg.reserve,
        "layout": _layout_from_proto(msg.layout, f"{where}.layout"),
        "to_move": msg.to_move,
        "passes": msg.passes,
        "out": list(msg.out),
        "last_placer": msg.last_placer if msg.HasField("last_placer") else None,
        "last_score": msg.last_score,
        "over": msg.over,
        "ending": ending_from_proto(msg.ending, f"{where}.ending"),
        "winner": msg.winner if msg.HasField("winner") else None,
        "round_points": list(msg.round_points) if msg.round_points else None,
        "places": list(msg.places) if msg.places else None,
        "ends": _ends_from_proto(msg.ends, f"{where}.ends"),
        "count": msg.count,
    }


def state_to_proto(d: object, where: str = "state") -> pb.MatchState:
    """A `Match.to_dict()` dict -> MatchState (MalformedError naming the field on bad shape)."""
    d = _obj(d, where)
    msg = pb.MatchState(
        variant=_str(d.get("variant", ""), f"{where}.variant"),
        players=_uint(d.get("players", 0), f"{where}.players"),
        round_number=_uint(d.get("round_number", 0), f"{where}.round_number"),
        match_over=_bool(d.get("match_over", False), f"{where}.match_over"),
    )
    msg.options.update(options_to_proto(d.get("options"), f"{where}.options"))
    if _opt(d, "seed") is not None:
        msg.seed = _int(d["seed"], f"{where}.seed", _UINT64)
    msg.ledger.CopyFrom(_ledger_to_proto(d.get("ledger") or {}, f"{where}.ledger"))
    if _opt(d, "round") is not None:
        msg.round.CopyFrom(_round_to_proto(d["round"], f"{where}.round"))
    if _opt(d, "next_leader") is not None:
        msg.next_leader = _uint(d["next_leader"], f"{where}.next_leader")
    if _opt(d, "timed_out") is not None:
        msg.timed_out = _uint(d["timed_out"], f"{where}.timed_out")
    msg.losers.extend(_ints(d.get("losers") or [], f"{where}.losers", _UINT32))
    msg.winners.extend(_ints(d.get("winners") or [], f"{where}.winners", _UINT32))
    msg.rating.extend(_ints(d.get("rating") or [], f"{where}.rating", _INT32))
    return msg


def state_from_proto(msg: pb.MatchState, where: str = "state") -> Json:
    """MatchState -> the dict `Match.from_dict()` reads (MalformedError naming the field)."""
    return {
        "variant": msg.variant,
        "players": msg.players,
        "options": options_from_proto(msg.variant, msg.options),
        "seed": msg.seed if msg.HasField("seed") else None,
        "round_number": msg.round_number,
        "ledger": _ledger_from_proto(msg.ledger, f"{where}.ledger"),
        "round": _round_from_proto(msg.round, f"{where}.round") if msg.HasField("round") else None,
        "next_leader": msg.next_leader if msg.HasField("next_leader") else None,
        "match_over": msg.match_over,
        "losers": list(msg.losers),
        "winners": list(msg.winners),
        "rating": list(msg.rating),
        "timed_out": msg.timed_out if msg.HasField("timed_out") else None,
    }


# ---------------------------------------------------------------- deals and setup


def deal_to_proto(deal: object, where: str = "deal") -> pb.Deal:
    """{"hands": [[..]], "boneyard": [..] (optional), "leader": n (optional)} -> Deal."""
    deal = _obj(deal, where)
    msg = pb.Deal()
    msg.hands.extend(hands_to_proto(deal.get("hands", []), f"{where}.hands"))
    if _opt(deal, "boneyard") is not None:
        msg.has_boneyard = True
        msg.boneyard.extend(_tiles_to_ids(deal["boneyard"], f"{where}.boneyard"))
    if _opt(deal, "leader") is not None:
        msg.leader = _uint(deal["leader"], f"{where}.leader")
    return msg


def deal_from_proto(msg: pb.Deal, where: str = "deal") -> Json:
    deal: Json = {"hands": hands_from_proto(msg.hands, f"{where}.hands")}
    if msg.has_boneyard or msg.boneyard:
        deal["boneyard"] = _tiles_from_ids(msg.boneyard, f"{where}.boneyard")
    if msg.HasField("leader"):
        deal["leader"] = msg.leader
    return deal


def setup_to_proto(setup: object, request: pb.NewMatchRequest, where: str = "setup") -> None:
    """Copy a conformance `setup` ({"written", "remembered", "pot", "scores"}) into a request."""
    if setup is None:
        return
    setup = _obj(setup, where)
    unknown = set(setup) - {"written", "remembered", "pot", "scores"}
    if unknown:
        raise _bad(where, f"unknown keys {sorted(unknown)} (expected written, remembered, pot, scores)")
    for key in ("written", "remembered", "scores"):
        if _opt(setup, key) is not None:
            getattr(request, key).extend(_ints(setup[key], f"{where}.{key}", _INT32))
    request.pot = _sint(setup.get("pot", 0), f"{where}.pot")


def setup_from_proto(request: pb.NewMatchRequest) -> Json | None:
    """The setup keys a NewMatchRequest carries, or None when it carries none."""
    setup: Json = {}
    for key in ("written", "remembered", "scores"):
        values = list(getattr(request, key))
        if values:
            setup[key] = values
    if request.pot:
        setup["pot"] = request.pot
    return setup or None


# ---------------------------------------------------------------- events


def _event_to_proto(e: object, where: str) -> pb.Event:
    e = _obj(e, where)
    kind = e.get("type")
    msg = pb.Event()
    if kind == "played":
        msg.played.seat = _uint(e["seat"], f"{where}.seat")
        msg.played.action = _str(e["action"], f"{where}.action")
    elif kind == "drew":
        msg.drew.seat = _uint(e["seat"], f"{where}.seat")
        msg.drew.tile = tile_to_id(e["tile"], f"{where}.tile")
    elif kind == "passed":
        msg.passed.seat = _uint(e["seat"], f"{where}.seat")
    elif kind == "points_scored":
        msg.points_scored.seat = _uint(e["seat"], f"{where}.seat")
        msg.points_scored.points = _sint(e["points"], f"{where}.points")
        msg.points_scored.count = _sint(e.get("count", 0), f"{where}.count")
    elif kind == "round_ended":
        msg.round_ended.record.CopyFrom(_record_to_proto(e["record"], f"{where}.record"))
    elif kind == "match_ended":
        m = msg.match_ended
        m.losers.extend(_ints(e.get("losers") or [], f"{where}.losers", _UINT32))
        m.winners.extend(_ints(e.get("winners") or [], f"{where}.winners", _UINT32))
        m.rating.extend(_ints(e.get("rating") or [], f"{where}.rating", _INT32))
    elif kind == "next_leader":
        msg.next_leader.seat = _uint(e["seat"], f"{where}.seat")
    elif kind == "round_dealt":
        msg.round_dealt.number = _uint(e["number"], f"{where}.number")
        msg.round_dealt.leader = _uint(e["leader"], f"{where}.leader")
        msg.round_dealt.redealt = _bool(e.get("redealt", False), f"{where}.redealt")
    else:
        raise _bad(f"{where}.type", f"unknown event type {kind!r}")
    return msg


def events_to_proto(events: Iterable[Json], where: str = "events") -> list[pb.Event]:
    """Rules events (dicts with "type") -> Event messages."""
    return [_event_to_proto(e, f"{where}[{i}]") for i, e in enumerate(events)]


def _event_from_proto(msg: pb.Event, where: str) -> Json:
    kind = msg.WhichOneof("kind")
    if kind == "played":
        return {"type": kind, "seat": msg.played.seat, "action": msg.played.action}
    if kind == "drew":
        return {"type": kind, "seat": msg.drew.seat, "tile": tile_from_id(msg.drew.tile, f"{where}.drew.tile")}
    if kind == "passed":
        return {"type": kind, "seat": msg.passed.seat}
    if kind == "points_scored":
        p = msg.points_scored
        return {"type": kind, "seat": p.seat, "points": p.points, "count": p.count}
    if kind == "round_ended":
        return {"type": kind, "record": _record_from_proto(msg.round_ended.record, f"{where}.record")}
    if kind == "match_ended":
        m = msg.match_ended
        return {"type": kind, "losers": list(m.losers), "winners": list(m.winners), "rating": list(m.rating)}
    if kind == "next_leader":
        return {"type": kind, "seat": msg.next_leader.seat}
    if kind == "round_dealt":
        r = msg.round_dealt
        return {"type": kind, "number": r.number, "leader": r.leader, "redealt": r.redealt}
    raise _bad(where, "an event with no kind set")


def events_from_proto(events: Iterable[pb.Event], where: str = "events") -> list[Json]:
    return [_event_from_proto(e, f"{where}[{i}]") for i, e in enumerate(events)]


# ---------------------------------------------------------------- seat views


def view_to_proto(d: object, where: str = "view") -> pb.SeatView:
    """A `Match.view(seat)` dict -> SeatView."""
    d = _obj(d, where)
    msg = pb.SeatView(
        variant=_str(d.get("variant", ""), f"{where}.variant"),
        players=_uint(d.get("players", 0), f"{where}.players"),
        seat=_uint(d.get("seat", 0), f"{where}.seat"),
        round_number=_uint(d.get("round_number", 0), f"{where}.round_number"),
        boneyard_size=_uint(d.get("boneyard_size", 0), f"{where}.boneyard_size"),
        count=_sint(d.get("count", 0), f"{where}.count"),
        to_move=_uint(d.get("to_move", 0), f"{where}.to_move"),
        round_over=_bool(d.get("round_over", False), f"{where}.round_over"),
        ending=ending_to_proto(d.get("ending"), f"{where}.ending"),
        match_over=_bool(d.get("match_over", False), f"{where}.match_over"),
        last_score=_sint(d.get("last_score", 0), f"{where}.last_score"),
        dealt=_bool(d.get("dealt", False), f"{where}.dealt"),
    )
    msg.options.update(options_to_proto(d.get("options"), f"{where}.options"))
    msg.ledger.CopyFrom(_ledger_to_proto(d.get("ledger") or {}, f"{where}.ledger"))
    msg.hand.tiles.extend(_tiles_to_ids(d.get("hand") or [], f"{where}.hand"))
    msg.hand_sizes.extend(_ints(d.get("hand_sizes") or [], f"{where}.hand_sizes", _UINT32))
    msg.layout.extend(_layout_to_proto(d.get("layout") or [], f"{where}.layout"))
    msg.ends.extend(_ends_to_proto(d.get("ends") or {}, f"{where}.ends"))
    if _opt(d, "winner") is not None:
        msg.winner = _sint(d["winner"], f"{where}.winner")
    msg.round_points.extend(_ints(d.get("round_points") or [], f"{where}.round_points", _INT32))
    msg.revealed_hands.extend(hands_to_proto(d.get("revealed_hands") or [], f"{where}.revealed_hands"))
    msg.losers.extend(_ints(d.get("losers") or [], f"{where}.losers", _UINT32))
    msg.rating.extend(_ints(d.get("rating") or [], f"{where}.rating", _INT32))
    msg.legal.extend(_str(a, f"{where}.legal[{i}]") for i, a in enumerate(_seq(d.get("legal") or [], f"{where}.legal")))
    return msg


def view_from_proto(msg: pb.SeatView, where: str = "view") -> Json:
    return {
        "variant": msg.variant,
        "players": msg.players,
        "options": options_from_proto(msg.variant, msg.options),
        "seat": msg.seat,
        "round_number": msg.round_number,
        "ledger": _ledger_from_proto(msg.ledger, f"{where}.ledger"),
        "hand": _tiles_from_ids(msg.hand.tiles, f"{where}.hand"),
        "hand_sizes": list(msg.hand_sizes),
        "boneyard_size": msg.boneyard_size,
        "layout": _layout_from_proto(msg.layout, f"{where}.layout"),
        "ends": _ends_from_proto(msg.ends, f"{where}.ends"),
        "count": msg.count,
        "to_move": msg.to_move,
        "round_over": msg.round_over,
        "ending": ending_from_proto(msg.ending, f"{where}.ending"),
        "winner": msg.winner if msg.HasField("winner") else None,
        "round_points": list(msg.round_points),
        "revealed_hands": hands_from_proto(msg.revealed_hands, f"{where}.revealed_hands"),
        "match_over": msg.match_over,
        "losers": list(msg.losers),
        "rating": list(msg.rating),
        "legal": list(msg.legal),
        "last_score": msg.last_score,
        "dealt": msg.dealt,
    }


# ---------------------------------------------------------------- variants


def variants_to_proto(variants: Iterable[Json]) -> pb.ListVariantsResponse:
    """The rules' `variants()` list -> ListVariantsResponse."""
    resp = pb.ListVariantsResponse()
    for v in variants:
        msg = resp.variants.add(
            name=v["name"], family=v["family"], description=v.get("description", ""),
            min_players=v["min_players"], max_players=v["max_players"],
        )
        for o in v.get("options", []):
            msg.options.add(
                name=o["name"], type=o["type"], allowed=[str(a) for a in o.get("allowed", [])],
                default=str(o.get("default", "")), description=o.get("description", ""),
            )
    return resp


def variants_from_proto(resp: pb.ListVariantsResponse) -> list[Json]:
    return [
        {
            "name": v.name, "family": v.family, "description": v.description,
            "min_players": v.min_players, "max_players": v.max_players,
            "options": [
                {"name": o.name, "type": o.type, "allowed": list(o.allowed), "default": o.default,
                 "description": o.description}
                for o in v.options
            ],
        }
        for v in resp.variants
    ]


# ---------------------------------------------------------------- the direct path: Match -> SeatView
#
# The servicer's hot path for a seat's view (`View`, Apply's `view_as`): `seat_view_to_proto(m, s)`
# is `view_to_proto(m.view(s))`, without the JSON-shaped dict and its tile strings in between (tiles
# go from bit sets to ids through tables). A state itself goes between `Match` and its bytes in
# `engine_service.wire`, which uses the placement tables below. Both are checked equal to the
# reference path on random states of every variant (tests/engine/test_wire.py).

#: Tile ids (ascending) of a 7-bit slice of a hand's bit set: _IDS[k][m] for bits 7k..7k+6.
_IDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(7 * k + i for i in range(7) if m >> i & 1) for m in range(128)) for k in range(4)
)


def _placement_tables() -> tuple[dict[tuple[int, int, bool], tuple[int, int, bool, bool]],
                                 dict[tuple[int, bool], Any], dict[tuple[int, int, bool], Any]]:
    """Placement tuples <-> proto fields, each entry made by the reference functions themselves."""
    from engine_service.rules.notation import ARM_COUNT, CENTER, format_placement, parse_placement

    encode: dict[tuple[int, int, bool], tuple[int, int, bool, bool]] = {}
    lead: dict[tuple[int, bool], Any] = {}
    play: dict[tuple[int, int, bool], Any] = {}
    for t in range(TILE_COUNT):
        for flag in (False, True):
            p = placement_to_proto(format_placement((t, CENTER, flag)), "", True)
            encode[(t, CENTER, flag)] = (p.tile, p.arm, p.closes, p.flipped)
            msg = pb.Placement(tile=t, flipped=flag)
            lead[(t, flag)] = parse_placement(placement_from_proto(msg, "", True), True)
            for arm in range(ARM_COUNT):
                if flag and NAMES[t][0] != NAMES[t][2]:
                    continue  # only a double closes an arm
                p = placement_to_proto(format_placement((t, arm, flag)), "", False)
                encode[(t, arm, flag)] = (p.tile, p.arm, p.closes, p.flipped)
                play[(t, int(p.arm), flag)] = parse_placement(placement_from_proto(p, "", False), False)
    return encode, lead, play


_ENCODE_PLACEMENT: dict[tuple[int, int, bool], tuple[int, int, bool, bool]]
_DECODE_LEAD: dict[tuple[int, bool], Any]
_DECODE_PLAY: dict[tuple[int, int, bool], Any]
_ENCODE_PLACEMENT, _DECODE_LEAD, _DECODE_PLAY = _placement_tables()
_ARM_PB: tuple[int, ...] = tuple(_ARM_VALUE[name] for name in ARM_NAMES)


def _ids(hand: int) -> tuple[int, ...]:
    """The tile ids of a hand's bit set, ascending."""
    i0, i1, i2, i3 = _IDS
    return i0[hand & 127] + i1[hand >> 7 & 127] + i2[hand >> 14 & 127] + i3[hand >> 21]


def _ledger_into(msg: pb.Ledger, ledger: Any, where: str) -> None:
    msg.written.extend(ledger.written)
    msg.remembered.extend(ledger.remembered)
    msg.scores.extend(ledger.scores)
    if ledger.pot:
        msg.pot = ledger.pot
    if ledger.history:
        msg.history.extend(_record_to_proto(r, f"{where}.history[{i}]") for i, r in enumerate(ledger.history))


def _layout_into(field: Any, layout: Any) -> None:
    add = field.add
    table = _ENCODE_PLACEMENT
    for p in layout.placements:
        tile, arm, closes, flipped = table[p]
        placed = add()
        placed.tile = tile
        if arm:
            placed.arm = arm
        if closes:
            placed.closes = True
        if flipped:
            placed.flipped = True


def _ends_into(field: Any, layout: Any) -> None:
    end = layout.end
    add = field.add
    for a in layout.arms:
        e = add()
        e.arm = _ARM_PB[a]
        e.value = end[a]


def seat_view_to_proto(match: Any, seat: object) -> pb.SeatView:
    """`view_to_proto(match.view(seat))`, built straight from the match (the servicer's hot path)."""
    if type(seat) is int and 0 <= seat < match.players:
        try:
            return _seat_view_to_proto(match, seat)
        except Exception:  # noqa: BLE001,S110 - the reference path raises the precise error (or agrees)
            pass
    return view_to_proto(match.view(seat))


def _seat_view_to_proto(match: Any, seat: int) -> pb.SeatView:
    msg = pb.SeatView(variant=match.preset.name, players=match.players, seat=seat,
                      round_number=match.round_number, match_over=match.match_over)
    if match.overrides:
        msg.options.update(options_to_proto(match.overrides))
    msg.ledger.SetInParent()
    _ledger_into(msg.ledger, match.ledger, "view.ledger")
    rnd = match.round
    if rnd is not None:
        msg.dealt = True
        hands = rnd.hands
        msg.hand.tiles.extend(_ids(hands[seat]))
        msg.hand_sizes.extend([h.bit_count() for h in hands])
        msg.boneyard_size = len(rnd.boneyard)
        layout = rnd.layout
        _layout_into(msg.layout, layout)
        _ends_into(msg.ends, layout)
        msg.count = layout.count()
        msg.to_move = rnd.to_move
        msg.round_over = rnd.over
        msg.ending = ending_to_proto(rnd.ending, "view.ending")
        if rnd.winner is not None:
            msg.winner = rnd.winner
        if rnd.round_points:
            msg.round_points.extend(rnd.round_points)
        if rnd.over:
            add = msg.revealed_hands.add
            for h in hands:
                add().tiles.extend(_ids(h))
        msg.last_score = rnd.last_score
        if rnd.to_move == seat:
            msg.legal.extend(match.legal_actions())
    if match.losers:
        msg.losers.extend(match.losers)
    if match.rating:
        msg.rating.extend(match.rating)
    return msg
