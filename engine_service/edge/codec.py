"""The typed face's messages for everything but the state itself (which is `engine_service.edge.wire`).

`domino.v1.Engine` carries tiles as ids 0..27, placements as `Placement`
messages, options as text and endings as an enum. This module turns the rules'
values into those messages (events, a seat's view, the variant listing) and
reads a request's arguments (options, deals, hands, setup, endings) into the
values the rules take. The tables here (tile ids of a hand, placements, arms,
endings) are also the ones `wire` writes and reads a state with.

A request's values are only converted here; the rules check them and refuse
with messages naming the field (`MalformedError`).

>>> options_from_proto("kozel", {"target": "51", "double_pair": "true"})
{'double_pair': True, 'target': 51}
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, Final

from domino.v1 import engine_pb2 as pb

from engine_service.rules import Match, variants
from engine_service.rules.errors import MalformedError
from engine_service.rules.exits import EVENT_TYPES
from engine_service.rules.ledger import Ledger
from engine_service.rules.notation import ARM_COUNT, ARM_NAMES, CENTER, Placement
from engine_service.rules.options import OptionValue
from engine_service.rules.tiles import IS_DOUBLE, NAME_TO_ID, NAMES, TILE_COUNT

__all__ = [
    "ARM_PB",
    "DECODE_LEAD",
    "DECODE_PLAY",
    "ENCODE_PLACEMENT",
    "ENDINGS",
    "deal_from_proto",
    "ending_from_proto",
    "events_to_proto",
    "hands_from_proto",
    "ids",
    "options_from_proto",
    "options_to_proto",
    "record_from_proto",
    "record_to_proto",
    "seat_view_to_proto",
    "setup_from_proto",
    "variants_to_proto",
]

Json = dict[str, Any]

#: Arms: the rules' arm index -> the proto's Arm value (ARM_N for "N" ...; a KeyError at import
#: if the two ever diverge).
ARM_PB: Final[tuple[int, ...]] = tuple(pb.Arm.Value(f"ARM_{name}") for name in ARM_NAMES)

#: Round endings: the rules' word <-> the proto's enum (None <-> ENDING_NONE).
ENDINGS: Final[dict[str, int]] = {
    "out": pb.ENDING_OUT, "fish": pb.ENDING_FISH, "blocked": pb.ENDING_BLOCKED, "sortir": pb.ENDING_SORTIR,
}
ENDING_NAME: Final[dict[int, str | None]] = {pb.ENDING_NONE: None, **{v: k for k, v in ENDINGS.items()}}


# ---------------------------------------------------------------- tiles and placements

#: Tile ids (ascending) of a 7-bit slice of a hand's bit set: _IDS[k][m] for bits 7k..7k+6.
_IDS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(tuple(7 * k + i for i in range(7) if m >> i & 1) for m in range(128)) for k in range(4)
)


def ids(hand: int) -> tuple[int, ...]:
    """The tile ids of a hand's bit set, ascending."""
    i0, i1, i2, i3 = _IDS
    return i0[hand & 127] + i1[hand >> 7 & 127] + i2[hand >> 14 & 127] + i3[hand >> 21]


def _placements() -> tuple[dict[Placement, tuple[int, int, bool, bool]], dict[tuple[int, bool], Placement],
                           dict[tuple[int, int, bool], Placement]]:
    """The rules' placements <-> `Placement` fields (tile, arm, closes, flipped).

    The lead is ``(tile, CENTER, flipped)``: arm ARM_CENTER, `flipped` when its high
    number faces W. Any other placement is ``(tile, arm, closes)`` on a real arm, and only
    a double closes its arm (O).
    """
    encode: dict[Placement, tuple[int, int, bool, bool]] = {}
    lead: dict[tuple[int, bool], Placement] = {}
    play: dict[tuple[int, int, bool], Placement] = {}
    for t in range(TILE_COUNT):
        for flag in (False, True):
            if not (flag and IS_DOUBLE[t]):  # a double reads the same both ways: never flipped
                encode[(t, CENTER, flag)] = (t, pb.ARM_CENTER, False, flag)
                lead[(t, flag)] = (t, CENTER, flag)
            if flag and not IS_DOUBLE[t]:
                continue
            for arm in range(ARM_COUNT):
                encode[(t, arm, flag)] = (t, ARM_PB[arm], flag, False)
                play[(t, ARM_PB[arm], flag)] = (t, arm, flag)
    return encode, lead, play


#: (tile, arm, flag) -> (tile, Arm, closes, flipped), and back: DECODE_LEAD[(tile, flipped)],
#: DECODE_PLAY[(tile, Arm, closes)].
_PLACEMENTS: Final = _placements()
ENCODE_PLACEMENT: Final = _PLACEMENTS[0]
DECODE_LEAD: Final = _PLACEMENTS[1]
DECODE_PLAY: Final = _PLACEMENTS[2]


def _names(tile_ids: Iterable[int], where: str) -> list[str]:
    """Tile ids -> names; an id above 27 is malformed (naming the item)."""
    out = []
    for i, t in enumerate(tile_ids):
        if t >= TILE_COUNT:
            raise MalformedError(f"{where}[{i}]: tile id {t} is not a tile (0..{TILE_COUNT - 1})")
        out.append(NAMES[t])
    return out


# ---------------------------------------------------------------- request arguments


def hands_from_proto(hands: Iterable[pb.Hand], where: str) -> list[list[str]]:
    """Hand messages -> the rules' hands (tile names), seat 0 first."""
    return [_names(h.tiles, f"{where}[{i}].tiles") for i, h in enumerate(hands)]


def deal_from_proto(msg: pb.Deal, where: str = "deal") -> Json:
    """A Deal -> the deal the rules take ({"hands", "boneyard", "leader"}, only what is given)."""
    deal: Json = {"hands": hands_from_proto(msg.hands, f"{where}.hands")}
    if msg.has_boneyard or msg.boneyard:
        deal["boneyard"] = _names(msg.boneyard, f"{where}.boneyard")
    if msg.HasField("leader"):
        deal["leader"] = msg.leader
    return deal


def setup_from_proto(request: pb.NewMatchRequest) -> Json | None:
    """The setup a NewMatchRequest carries (written, remembered, pot, scores), or None."""
    setup: Json = {}
    for key in ("written", "remembered", "scores"):
        values = list(getattr(request, key))
        if values:
            setup[key] = values
    if request.pot:
        setup["pot"] = request.pot
    return setup or None


def ending_from_proto(value: int, where: str) -> str | None:
    """An Ending -> the rules' word (None for ENDING_NONE); an unknown value is malformed."""
    if value not in ENDING_NAME:
        raise MalformedError(f"{where}: unknown ending {value}")
    return ENDING_NAME[value]


_DECIMAL: Final = re.compile(r"-?[0-9]{1,11}")


@cache
def _option_types(variant: str) -> dict[str, str]:
    """Option name -> "bool" / "int" / "enum" for a preset ({} for an unknown preset)."""
    for v in variants():
        if v["name"] == variant:
            return {o["name"]: o["type"] for o in v["options"]}
    return {}


def options_from_proto(variant: str, options: Mapping[str, str]) -> dict[str, OptionValue]:
    """The wire's option text -> typed values, by the preset's option types.

    "true"/"false" for a bool, a decimal for an int; any other text (and any option
    the preset does not have) is passed on as text, for the rules to refuse by name.
    """
    types = _option_types(variant) if options else {}
    out: dict[str, OptionValue] = {}
    for name in sorted(options):
        text = options[name]
        kind = types.get(name)
        if kind == "bool" and text in ("true", "false"):
            out[name] = text == "true"
        elif kind == "int" and _DECIMAL.fullmatch(text):
            out[name] = int(text)
        else:
            out[name] = text
    return out


def options_to_proto(options: Mapping[str, OptionValue]) -> dict[str, str]:
    """Typed option values -> the wire's text (true/false, decimal integers, enum names)."""
    return {name: ("true" if value else "false") if isinstance(value, bool) else str(value)
            for name, value in options.items()}


# ---------------------------------------------------------------- score table rows


def record_to_proto(r: Json) -> pb.RoundRecord:
    """A row of the score table (`Ledger.history`) -> RoundRecord."""
    msg = pb.RoundRecord(number=r["number"], ending=ENDINGS[r["ending"]], pot=r["pot"],  # type: ignore[arg-type]
                         round_points=r["round_points"], written=r["written"], remembered=r["remembered"],
                         scores=r["scores"], places=r["places"], out=r["out"])
    if r["winner"] is not None:
        msg.winner = r["winner"]
    if r["last_placer"] is not None:
        msg.last_placer = r["last_placer"]
    return msg


def record_from_proto(r: pb.RoundRecord, where: str) -> Json:
    """RoundRecord -> a row as the rules read it (`match_form.decode_tiles` checks it)."""
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


# ---------------------------------------------------------------- events


#: The exits' events (`rules.exits`), each a SeatExit in the field of its name.
_EXITS: Final = frozenset(EVENT_TYPES.values())


def _event_to_proto(e: Json) -> pb.Event:
    kind = e["type"]
    msg = pb.Event()
    if kind == "played":
        msg.played.seat = e["seat"]
        msg.played.action = e["action"]
    elif kind == "drew":
        msg.drew.seat = e["seat"]
        msg.drew.tile = NAME_TO_ID[e["tile"]]
    elif kind == "passed":
        msg.passed.seat = e["seat"]
    elif kind == "points_scored":
        msg.points_scored.seat = e["seat"]
        msg.points_scored.points = e["points"]
        msg.points_scored.count = e.get("count", 0)
    elif kind == "round_ended":
        msg.round_ended.record.CopyFrom(record_to_proto(e["record"]))
    elif kind == "match_ended":
        m = msg.match_ended
        m.losers.extend(e["losers"])
        m.winners.extend(e["winners"])
        m.rating.extend(e["rating"])
    elif kind == "next_leader":
        msg.next_leader.seat = e["seat"]
    elif kind == "round_dealt":
        msg.round_dealt.number = e["number"]
        msg.round_dealt.leader = e["leader"]
        msg.round_dealt.redealt = e["redealt"]
    elif kind in _EXITS:  # resigned, gone, aborted: one message, the oneof's field says which
        getattr(msg, kind).seat = e["seat"]
    else:
        raise KeyError(f"unknown event type {kind!r}")
    return msg


def events_to_proto(events: Iterable[Json]) -> list[pb.Event]:
    """The rules' events (dicts with "type") -> Event messages; anything else is a bug (KeyError)."""
    return [_event_to_proto(e) for e in events]


# ---------------------------------------------------------------- a seat's view


def _ledger_into(msg: pb.Ledger, ledger: Ledger) -> None:
    msg.written.extend(ledger.written)
    msg.remembered.extend(ledger.remembered)
    msg.scores.extend(ledger.scores)
    if ledger.pot:
        msg.pot = ledger.pot
    if ledger.history:
        msg.history.extend(record_to_proto(r) for r in ledger.history)


def seat_view_to_proto(match: Match, seat: int) -> pb.SeatView:
    """What `seat` (one of the match's seats) may see: the message of `Match.view(seat)`.

    Built straight from the match (tiles go from bit sets to ids through tables);
    tests/engine check it against `Match.view` for every seat of states of every preset.
    """
    msg = pb.SeatView(variant=match.preset.name, players=match.players, seat=seat,
                      round_number=match.round_number, match_over=match.match_over)
    if match.overrides:
        msg.options.update(options_to_proto(match.overrides))
    msg.ledger.SetInParent()
    _ledger_into(msg.ledger, match.ledger)
    rnd = match.round
    if rnd is not None:
        msg.dealt = True
        hands = rnd.hands
        msg.hand.tiles.extend(ids(hands[seat]))
        msg.hand_sizes.extend([h.bit_count() for h in hands])
        msg.boneyard_size = len(rnd.boneyard)
        layout = rnd.layout
        add = msg.layout.add
        for p in layout.placements:
            tile, arm, closes, flipped = ENCODE_PLACEMENT[p]
            placed = add()
            placed.tile = tile
            if arm:
                placed.arm = arm  # type: ignore[assignment]
            if closes:
                placed.closes = True
            if flipped:
                placed.flipped = True
        end = layout.end
        add_end = msg.ends.add
        for a in layout.arms:
            e = add_end()
            e.arm = ARM_PB[a]  # type: ignore[assignment]
            e.value = end[a]
        msg.count = layout.count()
        msg.to_move = rnd.to_move
        msg.round_over = rnd.over
        if rnd.ending is not None:
            msg.ending = ENDINGS[rnd.ending]  # type: ignore[assignment]
        if rnd.winner is not None:
            msg.winner = rnd.winner
        if rnd.round_points:
            msg.round_points.extend(rnd.round_points)
        if rnd.over:
            add_hand = msg.revealed_hands.add
            for h in hands:
                add_hand().tiles.extend(ids(h))
        msg.last_score = rnd.last_score
        if rnd.to_move == seat:
            msg.legal.extend(match.legal_actions())
    if match.losers:
        msg.losers.extend(match.losers)
    if match.rating:
        msg.rating.extend(match.rating)
    return msg


# ---------------------------------------------------------------- variants


def variants_to_proto(listing: Iterable[Json]) -> pb.ListVariantsResponse:
    """The rules' `variants()` list -> ListVariantsResponse."""
    resp = pb.ListVariantsResponse()
    for v in listing:
        msg = resp.variants.add(
            name=v["name"], family=v["family"], description=v.get("description", ""),
            min_players=v["min_players"], max_players=v["max_players"], timeout_rule=v["timeout_rule"],
        )
        for o in v.get("options", []):
            msg.options.add(
                name=o["name"], type=o["type"], allowed=[str(a) for a in o.get("allowed", [])],
                default=str(o.get("default", "")), description=o.get("description", ""),
                minimum=o.get("minimum"), maximum=o.get("maximum"),
            )
    return resp
