"""A `MatchState` between its serialized bytes and `Match`: the one codec of the state's proto form.

Every engine call decodes the state it carries and most encode the next one.
Through the generated protobuf classes that costs a Python object per field,
per hand and per placement; here a state goes between `Match` and bytes
directly, with the tables of `engine_service.edge.codec` for tiles, hands and
placements (and `bytes(list)` for the packed lists).

- `encode_state(match)` writes the canonical encoding, the bytes protobuf's own
  deterministic serializer writes for the same message (tests/engine/test_wire.py
  checks it field by field on states of every preset). There is no other path: a
  value that does not fit its field is a bug and raises.
- `decode_state(data)` reads the canonical encoding, and takes as they are the
  harmless variations of it (fields out of order, explicit default values,
  over-long varints). Bytes in any other valid encoding (a field repeated, a list
  not packed, an unknown field, a field of the wrong wire type) are first
  rewritten into the canonical one by protobuf (parse, drop unknown fields,
  serialize deterministically) and read again; each such rewrite is counted in
  ``domino_engine_state_decode_fallbacks_total``, so a peer that writes states
  another way shows on the dashboard, and the tests show that no state this
  engine writes takes it. A value the message cannot hold
  (a tile id above 27, an unknown ending or arm) is refused with a
  `MalformedError` naming the field, and every rule about a state's consistency
  is `match_form.decode_tiles`'s, the same checks as `Match.from_dict`'s.
"""
from __future__ import annotations

from typing import Any, Final

from domino.v1 import engine_pb2 as pb
from google.protobuf.message import DecodeError

from engine_service import metrics
from engine_service.edge.codec import (
    ARM_PB,
    DECODE_LEAD,
    DECODE_PLAY,
    ENCODE_PLACEMENT,
    ENDING_NAME,
    ENDINGS,
    ids,
    options_from_proto,
    options_to_proto,
)
from engine_service.rules.errors import MalformedError
from engine_service.rules.history import DRAW_STEP
from engine_service.rules.ledger import Ledger
from engine_service.rules.match import Match
from engine_service.rules.match_form import decode_tiles
from engine_service.rules.notation import Placement
from engine_service.rules.round import Round
from engine_service.rules.tiles import NAMES, TILE_COUNT

__all__ = ["decode_state", "encode_state"]


class _Odd(Exception):
    """Bytes this reader does not take as they are: another encoding, or a value the field cannot hold.

    `reason` is a short fixed phrase (the fallback counter's label); `path` and `problem`
    say what is wrong when the bytes were canonical (the refusal's message).
    """

    def __init__(self, reason: str, path: str = "state", problem: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.message = f"{path}: {problem or reason}"


_U32: Final = 1 << 32
_I32: Final = 1 << 31
_U64: Final = 1 << 64

# ---------------------------------------------------------------- writing

_BYTE: Final[tuple[bytes, ...]] = tuple(bytes((v,)) for v in range(128))


def _varint(v: int) -> bytes:
    """A varint; a negative number as its 64-bit two's complement (int32 fields do so)."""
    if 0 <= v < 128:
        return _BYTE[v]
    if v < 0:
        v += _U64
    out = bytearray()
    while v > 127:
        out.append(v & 127 | 128)
        v >>= 7
    out.append(v)
    return bytes(out)


def _u32(v: int) -> bytes:
    if not 0 <= v < _U32:
        raise ValueError(f"{v} does not fit a uint32 field")
    return _varint(v)


def _i32(v: int) -> bytes:
    if not -_I32 <= v < _I32:
        raise ValueError(f"{v} does not fit an int32 field")
    return _varint(v)


def _delimited(tag: bytes, payload: bytes) -> bytes:
    n = len(payload)
    return tag + (_BYTE[n] if n < 128 else _varint(n)) + payload


def state_field(state: bytes) -> bytes:
    """`state` (an encoded `MatchState`) as field 1 of a message: a `MatchResponse` holding just it,
    which the servicer completes (it writes the state once, here, not again through protobuf)."""
    return _delimited(b"\x0a", state)


def _packed(tag: bytes, values: list[int], signed: bool) -> bytes:
    """A packed repeated uint32 (or int32 when `signed`) field; nothing for an empty list."""
    if not values:
        return b""
    try:
        raw = bytes(values)  # ValueError for a value below 0 or above 255
    except ValueError:
        raw = b"\x80"
    if raw.isascii():  # all below 128: a byte each
        return _delimited(tag, raw)
    encode = _i32 if signed else _u32
    return _delimited(tag, b"".join([encode(v) for v in values]))


def _layout_codes() -> tuple[dict[Placement, bytes], dict[int, Placement], dict[int, Placement]]:
    """Each placement -> its `Round.layout_codes` value as varint bytes, and back from the value:
    the lead's and a later tile's (``tile | flag << 5 | arm << 6``, engine.proto)."""
    encode: dict[Placement, bytes] = {}
    lead: dict[int, Placement] = {}
    play: dict[int, Placement] = {}
    for placed, (tile, arm, closes, flipped) in ENCODE_PLACEMENT.items():
        code = tile | (closes or flipped) << 5 | arm << 6
        encode[placed] = _varint(code)
        (play if arm else lead)[code] = placed
    return encode, lead, play


_CODES: Final = _layout_codes()
_CODE_BYTES: Final = _CODES[0]
_LEAD_BY_CODE: Final = _CODES[1]
_PLAY_BY_CODE: Final = _CODES[2]
_ENDING_PB: Final[dict[str | None, int]] = {None: 0}
_ENDING_PB.update(ENDINGS)


#: The tile ids of each 7-bit slice of a hand's bit set, as bytes (slice k: tiles 7k..7k+6), and a
#: `Round.hands` entry's head for n tiles (tag, length, the Hand's tag and length).
_SLICE_IDS: Final[tuple[tuple[bytes, ...], ...]] = tuple(
    tuple(bytes(ids(chunk << 7 * k)) for chunk in range(128)) for k in range(4))
_HAND_HEAD: Final[tuple[bytes, ...]] = tuple(b"\x12" + bytes([n + 2]) + b"\x0a" + bytes([n]) for n in range(TILE_COUNT + 1))


def _hand_field(mask: int) -> bytes:
    """A `Round.hands` entry: the tile ids of a bit set, ascending (four table slices: a state writes
    a hand a seat)."""
    if not mask:
        return b"\x12\x00"
    s0, s1, s2, s3 = _SLICE_IDS
    tiles = s0[mask & 127] + s1[mask >> 7 & 127] + s2[mask >> 14 & 127] + s3[mask >> 21 & 127]
    return _HAND_HEAD[len(tiles)] + tiles


def _ledger(ledger: Ledger) -> bytes:
    parts = [_packed(b"\x0a", ledger.written, True), _packed(b"\x12", ledger.remembered, True)]
    if ledger.pot:
        parts.append(b"\x18" + _i32(ledger.pot))
    parts.append(_packed(b"\x22", ledger.scores, True))
    for record in ledger.history:
        parts.append(_delimited(b"\x2a", _record(record)))
    return b"".join(parts)


def _record(r: dict[str, Any]) -> bytes:
    """A score table row as a canonical RoundRecord (what `record_to_proto` serializes, written here
    without building the message: a row is in most states)."""
    parts: list[bytes] = []
    if r["number"]:
        parts.append(b"\x08" + _u32(r["number"]))
    ending = ENDINGS[r["ending"]]
    if ending:
        parts.append(b"\x10" + _varint(ending))
    if r["winner"] is not None:
        parts.append(b"\x18" + _i32(r["winner"]))
    if r["last_placer"] is not None:
        parts.append(b"\x20" + _u32(r["last_placer"]))
    parts.append(_packed(b"\x2a", r["round_points"], True))
    parts.append(_packed(b"\x32", r["written"], True))
    parts.append(_packed(b"\x3a", r["remembered"], True))
    if r["pot"]:
        parts.append(b"\x40" + _i32(r["pot"]))
    parts.append(_packed(b"\x4a", r["scores"], True))
    parts.append(_packed(b"\x52", r["places"], False))
    parts.append(_packed(b"\x5a", r["out"], False))
    return b"".join(parts)


def _round(rnd: Round) -> bytes:
    parts: list[bytes] = []
    if rnd.leader:
        parts.append(b"\x08" + _u32(rnd.leader))
    parts.extend([_hand_field(h) for h in rnd.hands])
    if rnd.boneyard:
        parts.append(_packed(b"\x1a", rnd.boneyard[::-1], False))
    if rnd.reserve:
        parts.append(b"\x20" + _u32(rnd.reserve))
    if rnd.to_move:
        parts.append(b"\x30" + _u32(rnd.to_move))
    if rnd.passes:
        parts.append(b"\x38" + _u32(rnd.passes))
    if rnd.out:
        parts.append(_packed(b"\x42", rnd.out, False))
    if rnd.last_placer is not None:
        parts.append(b"\x48" + _u32(rnd.last_placer))
    if rnd.last_score:
        parts.append(b"\x50" + _i32(rnd.last_score))
    if rnd.over:
        parts.append(b"\x58\x01")
    ending = _ENDING_PB[rnd.ending]
    if ending:
        parts.append(b"\x60" + _BYTE[ending])
    if rnd.winner is not None:
        parts.append(b"\x68" + _i32(rnd.winner))
    if rnd.round_points is not None:
        parts.append(_packed(b"\x72", rnd.round_points, True))
    if rnd.places is not None:
        parts.append(_packed(b"\x7a", rnd.places, False))
    placements = rnd.layout.placements
    if placements:  # the open ends and their count (16, 17) are derived from it: not written
        table = _CODE_BYTES
        parts.append(_delimited(b"\x92\x01", b"".join([table[p] for p in placements])))
    return b"".join(parts)


def encode_state(match: Match) -> bytes:
    """The serialized `MatchState` of a match (canonical encoding); ValueError would be a bug."""
    parts = [_delimited(b"\x0a", match.preset.name.encode())]
    if match.players:
        parts.append(b"\x10" + _u32(match.players))
    for name, text in sorted(options_to_proto(match.overrides).items()):
        entry = _delimited(b"\x0a", name.encode()) + _delimited(b"\x12", text.encode())
        parts.append(_delimited(b"\x1a", entry))
    if match.seed is not None:
        if not 0 <= match.seed < _U64:
            raise ValueError(f"seed {match.seed} does not fit a uint64 field")
        parts.append(b"\x20" + _varint(match.seed))
    if match.round_number:
        parts.append(b"\x28" + _u32(match.round_number))
    parts.append(_delimited(b"\x32", _ledger(match.ledger)))
    if match.round is not None:
        parts.append(_delimited(b"\x3a", _round(match.round)))
    if match.next_leader is not None:
        parts.append(b"\x40" + _u32(match.next_leader))
    if match.match_over:
        parts.append(b"\x48\x01")
    parts.append(_packed(b"\x52", match.losers, False))
    parts.append(_packed(b"\x5a", match.winners, False))
    parts.append(_packed(b"\x62", match.rating, True))
    if match.timed_out is not None:
        parts.append(b"\x68" + _u32(match.timed_out))
    for seat in sorted(match.bots):
        level = match.bots[seat].encode()
        parts.append(_delimited(b"\x72", (b"\x08" + _u32(seat) if seat else b"") + _delimited(b"\x12", level)))
    if match.log_text:
        parts.append(_delimited(b"\x7a", "\n".join(match.log_text).encode()))
    if match.log_count:
        parts.append(b"\x90\x01" + _u32(match.log_count))
        parts.append(_delimited(b"\x9a\x01", match.log_digest))
    steps = match.log_steps
    if steps:
        parts.append(_delimited(b"\xa2\x01", bytes(steps)))
    return b"".join(parts)


def _plays(codes: bytes, placements: list[Placement]) -> None:
    """`MatchState.log_steps` lay the round's layout, every tile and no more (`history.unstep` reads the
    plays from it): a pass and a draw lay none, any other code one tile fewer than itself."""
    laid = sum([code - 1 for code in codes if code > DRAW_STEP])
    if laid > len(placements):
        raise _Odd("log steps", "state.log_steps", "more plays than the round's layout holds")
    if laid < len(placements):
        raise _Odd("log steps", "state.log_steps", "fewer plays than the round's layout holds")


# ---------------------------------------------------------------- reading


def _varint_at(data: bytes, i: int) -> tuple[int, int]:
    """The varint starting at data[i] and the index after it."""
    v = 0
    shift = 0
    n = len(data)
    while True:
        if i >= n:
            raise _Odd("truncated")
        b = data[i]
        i += 1
        v |= (b & 127) << shift
        if b < 128:
            return v, i
        shift += 7
        if shift > 63:
            raise _Odd("long varint")


class _Shape:
    """What a message's fields are: which it defines, which repeat, which are length-delimited."""

    __slots__ = ("kinds",)

    def __init__(self, known: range | set[int], repeated: set[int], lengthy: set[int]) -> None:
        #: By field number: 0 unknown, else _KNOWN, with _REPEATED and _LENGTHY when they apply (a tuple
        #: indexed by number: a state's every field asks it, cheaper than three set lookups).
        self.kinds: tuple[int, ...] = tuple(
            (_KNOWN | (_REPEATED if n in repeated else 0) | (_LENGTHY if n in lengthy else 0)) if n in known else 0
            for n in range(max(known) + 1))


_KNOWN: Final = 1
_REPEATED: Final = 2
_LENGTHY: Final = 4


_STATE: Final = _Shape({*range(1, 16), 18, 19, 20}, {3, 14}, {1, 3, 6, 7, 10, 11, 12, 14, 15, 19, 20})
_BOT: Final = _Shape({1, 2}, set(), {2})
_LEDGER: Final = _Shape(range(1, 6), {5}, {1, 2, 4, 5})
_ROUND: Final = _Shape(range(1, 19), {2, 5, 16}, {2, 3, 5, 8, 14, 15, 16, 18})
_HAND: Final = _Shape({1}, set(), {1})
_RECORD: Final = _Shape(range(1, 12), set(), {5, 6, 7, 9, 10, 11})
_ENTRY: Final = _Shape({1, 2}, set(), {1, 2})
_PLACEMENT: Final = _Shape({1, 2, 3, 4}, set(), set())
_END: Final = _Shape({1, 2}, set(), set())


def _scan(data: bytes, shape: _Shape) -> dict[int, Any]:
    """Field number -> varint (int) or length-delimited payload (bytes); the repeated ones as lists.

    A field of another wire type than its own, a field given twice that does not
    repeat, a field the message does not define or a truncated message are another
    encoding (protobuf keeps a field of the wrong wire type aside, as unknown).
    """
    fields: dict[int, Any] = {}
    n = len(data)
    i = 0
    kinds = shape.kinds
    top = len(kinds)
    while i < n:
        key = data[i]
        i += 1
        if key > 127:
            key, i = _varint_at(data, i - 1)
        wire = key & 7
        number = key >> 3
        kind = kinds[number] if number < top else 0
        if wire == 0:
            if kind & _LENGTHY:
                raise _Odd("wire type")
            if i >= n:
                raise _Odd("truncated")
            value: Any = data[i]
            i += 1
            if value > 127:
                value, i = _varint_at(data, i - 1)
        elif wire == 2:
            if not kind & _LENGTHY:
                raise _Odd("wire type")
            if i >= n:
                raise _Odd("truncated")
            size = data[i]
            i += 1
            if size > 127:
                size, i = _varint_at(data, i - 1)
            value = data[i:i + size]
            i += size
            if i > n:
                raise _Odd("truncated")
        else:
            raise _Odd("wire type")
        if not kind:
            raise _Odd("unknown field")
        if kind & _REPEATED:
            fields.setdefault(number, []).append(value)
        elif number in fields:
            raise _Odd("field twice")
        else:
            fields[number] = value
    return fields


def _uint(fields: dict[int, Any], number: int, limit: int = _U32) -> int:
    v = fields.get(number, 0)
    if type(v) is not int or v >= limit:
        raise _Odd("not a varint field")
    return v


def _signed(v: int) -> int:
    """An int32 from its varint (negative ones come as 64-bit two's complement)."""
    if v < _I32:
        return v
    if v < _U64 - _I32:
        raise _Odd("int32 range")
    return v - _U64


def _sint(fields: dict[int, Any], number: int) -> int:
    v = fields.get(number, 0)
    if type(v) is not int:
        raise _Odd("not a varint field")
    return _signed(v)


def _optional(fields: dict[int, Any], number: int, signed: bool = False, limit: int = _U32) -> int | None:
    """An `optional` field: None when absent, else an int32 (`signed`) or a uint below `limit`."""
    if number not in fields:
        return None
    return _sint(fields, number) if signed else _uint(fields, number, limit)


def _flag(fields: dict[int, Any], number: int) -> bool:
    v = fields.get(number, 0)
    if type(v) is not int or v > 1:
        raise _Odd("bool")
    return v == 1


def _numbers(fields: dict[int, Any], number: int, signed: bool = False) -> list[int]:
    """A packed repeated uint32 (int32 when `signed`) field."""
    payload = fields.get(number)
    if payload is None:
        return []
    if type(payload) is not bytes:
        raise _Odd("not packed")
    if payload.isascii():  # every byte below 128: each a value of its own (C speed, as `bytes(list)`)
        return list(payload)
    values: list[int] = []
    i = 0
    n = len(payload)
    while i < n:
        v, i = _varint_at(payload, i)
        values.append(v)
    if signed:
        return [_signed(v) for v in values]
    if max(values) >= _U32:
        raise _Odd("uint32 range")
    return values


def _text(fields: dict[int, Any], number: int) -> str:
    payload = fields.get(number, b"")
    if type(payload) is not bytes:
        raise _Odd("not a string")
    try:
        return payload.decode()
    except UnicodeDecodeError:
        raise _Odd("not UTF-8") from None


def _lines(text: str) -> list[str]:
    """The log's entries from its one field (rules/history.py: entries are single lines)."""
    return text.split("\n") if text else []


# Canonical `Placement` payloads -> the rules' placement tuples: the lead, and a tile after it.
_LEAD_BY_PAYLOAD: Final[dict[bytes, Placement]] = {
    pb.Placement(tile=t, flipped=flag).SerializeToString(): placed for (t, flag), placed in DECODE_LEAD.items()
}
_PLAY_BY_PAYLOAD: Final[dict[bytes, Placement]] = {
    pb.Placement(tile=t, arm=arm, closes=closes).SerializeToString(): placed  # type: ignore[arg-type]
    for (t, arm, closes), placed in DECODE_PLAY.items()
}
# Canonical `OpenEnd` payloads (a known arm, a value 0..6): derived on output, checked on input.
_END_PAYLOADS: Final[frozenset[bytes]] = frozenset(
    pb.OpenEnd(arm=arm, value=v).SerializeToString()  # type: ignore[arg-type]
    for arm in ARM_PB for v in range(7)
)



def _hand(payload: bytes, where: str) -> int:
    """A `Hand` payload -> its bit set."""
    if not payload:
        return 0
    if len(payload) < 2 or payload[0] != 0x0A or payload[1] != len(payload) - 2:
        raise _Odd("hand encoding")
    m = 0
    for i in range(2, len(payload)):  # by index, not enumerate(payload[2:]): a state has a hand a seat
        t = payload[i]
        if t >= TILE_COUNT:  # an id above 27 (or the first byte of a multi-byte one)
            tiles = _numbers(_scan(payload, _HAND), 1)
            bad = next(j for j, u in enumerate(tiles) if u >= TILE_COUNT)
            raise _Odd("tile id", f"{where}.tiles[{bad}]",
                       f"tile id {tiles[bad]} is not a tile (0..{TILE_COUNT - 1})")
        b = 1 << t
        if m & b:
            raise _Odd("tile twice", f"{where}.tiles[{i - 2}]", f"{NAMES[t]} is twice in the hand")
        m |= b
    return m


def _placement(payload: bytes, i: int) -> Placement:
    """A `Round.layout` entry -> the rules' placement (the lead when `i` is 0)."""
    placed = (_LEAD_BY_PAYLOAD if i == 0 else _PLAY_BY_PAYLOAD).get(payload)
    if placed is not None:
        return placed
    where = f"state.round.layout[{i}]"
    f = _scan(payload, _PLACEMENT)
    tile, arm, flipped = _uint(f, 1), _uint(f, 2), _flag(f, 4)
    _flag(f, 3)  # closes: a flag like the others (what is wrong with it is said below)
    if tile >= TILE_COUNT:
        raise _Odd("tile id", f"{where}.tile", f"tile id {tile} is not a tile (0..{TILE_COUNT - 1})")
    if i == 0:
        raise _Odd("lead", where, "the first placement is the lead: arm ARM_CENTER, closes false")
    if arm not in ARM_PB:
        raise _Odd("arm", f"{where}.arm", f"unknown or central arm {arm} after the lead")
    if flipped:
        raise _Odd("flipped", f"{where}.flipped", "only the lead can be flipped")
    raise _Odd("closes", f"{where}.closes", f"only a double closes its arm, not {NAMES[tile]}")


def _layout(payload: bytes) -> list[Placement]:
    """`Round.layout_codes` -> the rules' placements (the first the lead)."""
    if type(payload) is not bytes:
        raise _Odd("not packed")
    placements: list[Placement] = []
    lead, play = _LEAD_BY_CODE, _PLAY_BY_CODE
    n = len(payload)
    i = 0
    while i < n:
        code = payload[i]
        i += 1
        if code > 127:  # most codes are two bytes: read inline, a longer varint by `_varint_at`
            if i < n and payload[i] < 128:
                code = (code & 127) | payload[i] << 7
                i += 1
            else:
                code, i = _varint_at(payload, i - 1)
        placed = (play if placements else lead).get(code)
        if placed is None:
            raise _code_refused(code, len(placements))
        placements.append(placed)
    return placements


def _code_refused(code: int, i: int) -> _Odd:
    """What is wrong with layout code `code` at index `i` (it stands for no placement there)."""
    where = f"state.round.layout_codes[{i}]"
    tile, arm = code & 31, code >> 6  # the flag (bit 5) is wrong only where the rest is right
    if tile >= TILE_COUNT:
        return _Odd("tile id", where, f"code {code}: tile id {tile} is not a tile (0..{TILE_COUNT - 1})")
    if i == 0:
        if arm:
            return _Odd("lead", where, f"code {code}: the first code is the lead (arm 0)")
        return _Odd("flipped", where, f"code {code}: a double is never flipped")
    if arm == 0 or arm not in ARM_PB:
        return _Odd("arm", where, f"code {code}: unknown or central arm {arm} after the lead")
    return _Odd("closes", where, f"code {code}: only a double closes its arm, not {NAMES[tile]}")


def _options(entries: list[bytes]) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in entries:
        f = _scan(entry, _ENTRY)
        name = _text(f, 1)
        if name in out:
            raise _Odd("option twice")
        out[name] = _text(f, 2)
    return out


def _ledger_from(payload: bytes) -> dict[str, Any]:
    f = _scan(payload, _LEDGER)
    history = [_record_from(record, f"state.ledger.history[{i}]") for i, record in enumerate(f.get(5, ()))]
    return {
        "written": _numbers(f, 1, True),
        "remembered": _numbers(f, 2, True),
        "pot": _sint(f, 3),
        "scores": _numbers(f, 4, True),
        "history": history,
    }


def _record_from(payload: bytes, where: str) -> dict[str, Any]:
    """A RoundRecord's row as the rules read it (`record_from_proto`'s, read without the message)."""
    g = _scan(payload, _RECORD)
    value = _uint(g, 2)
    if value not in ENDING_NAME:
        raise _Odd("ending", f"{where}.ending", f"unknown ending {value}")
    return {
        "number": _uint(g, 1),
        "ending": ENDING_NAME[value],
        "winner": _optional(g, 3, signed=True),
        "last_placer": _optional(g, 4),
        "round_points": _numbers(g, 5, True),
        "written": _numbers(g, 6, True),
        "remembered": _numbers(g, 7, True),
        "pot": _sint(g, 8),
        "scores": _numbers(g, 9, True),
        "places": _numbers(g, 10),
        "out": _numbers(g, 11),
    }


def _ending(g: dict[int, Any]) -> str | None:
    value = _uint(g, 12)
    if value not in ENDING_NAME:
        raise _Odd("ending", "state.round.ending", f"unknown ending {value}")
    return ENDING_NAME[value]


def _ends(ends: list[bytes]) -> None:
    """The open ends: derived on output and ignored on input, but they must be ends."""
    seen = set()
    for i, e in enumerate(ends):
        if e not in _END_PAYLOADS:
            f = _scan(e, _END)
            if _uint(f, 2) > 6:
                raise _Odd("end value", f"state.round.ends[{i}].value",
                           f"{_uint(f, 2)} is not a number of the set (0..6)")
            raise _Odd("end arm", f"state.round.ends[{i}].arm", f"unknown arm {_uint(f, 1)}")
        if e[1] in seen:
            raise _Odd("end arm", f"state.round.ends[{i}].arm", f"repeated arm {e[1]}")
        seen.add(e[1])


def _bot(payload: bytes, i: int) -> dict[str, Any]:
    """A BotSeat: its seat and level, checked by the rules (`botseats.check_bots`)."""
    g = _scan(payload, _BOT)
    return {"seat": _uint(g, 1), "level": _text(g, 2)}


def _read(data: bytes) -> Match:
    """The match in canonical bytes; `_Odd` when they are not that, MalformedError from the rules."""
    f = _scan(data, _STATE)
    variant = _text(f, 1)
    state: dict[str, Any] = {
        "variant": variant,
        "players": _uint(f, 2),
        "options": options_from_proto(variant, _options(f.get(3, []))),
        "seed": _optional(f, 4, limit=_U64),
        "round_number": _uint(f, 5),
        "ledger": _ledger_from(f.get(6, b"")),
        "round": None,
        "next_leader": _optional(f, 8),
        "match_over": _flag(f, 9),
        "losers": _numbers(f, 10),
        "winners": _numbers(f, 11),
        "rating": _numbers(f, 12, True),
        "timed_out": _optional(f, 13),
        "log": _lines(_text(f, 15)),
    }
    if 18 in f or 19 in f:
        digest = f.get(19, b"")
        if type(digest) is not bytes:
            raise _Odd("not bytes")
        state["log_count"] = _uint(f, 18)
        state["log_digest"] = digest
    if 14 in f:
        state["bots"] = [_bot(b, i) for i, b in enumerate(f[14])]
    r = f.get(7)
    if r is None:
        if 20 in f:
            raise _Odd("log steps", "state.log_steps", "moves without a round")
        return decode_tiles(state, [], [], [], Match)
    g = _scan(r, _ROUND)
    hands = [_hand(h, f"state.round.hands[{i}]") for i, h in enumerate(g.get(2, ()))]
    codes = g.get(18)
    if codes is None:  # a state written before the codes (engine.proto: Round.layout)
        placements = [_placement(p, i) for i, p in enumerate(g.get(5, ()))]
    elif 5 in g:
        raise _Odd("layout twice", "state.round", "the layout is given twice: as layout and as layout_codes")
    else:
        placements = _layout(codes)
    steps = f.get(20)
    if steps is not None:
        if type(steps) is not bytes:
            raise _Odd("not bytes")
        _plays(steps, placements)
    _ends(g.get(16, []))
    if 17 in g:
        _sint(g, 17)  # count: derived on output, ignored on input
    boneyard = _numbers(g, 3)
    for i, t in enumerate(boneyard):
        if t >= TILE_COUNT:
            raise _Odd("tile id", f"state.round.boneyard[{i}]", f"tile id {t} is not a tile (0..{TILE_COUNT - 1})")
    state["round"] = {
        "leader": _uint(g, 1),
        "reserve": _uint(g, 4),
        "to_move": _uint(g, 6),
        "passes": _uint(g, 7),
        "out": _numbers(g, 8),
        "last_placer": _optional(g, 9),
        "last_score": _sint(g, 10),
        "over": _flag(g, 11),
        "ending": _ending(g),
        "winner": _optional(g, 13, signed=True),
        "round_points": _numbers(g, 14, True) or None,
        "places": _numbers(g, 15) or None,
    }
    return decode_tiles(state, hands, boneyard, placements, Match, steps)


def _canonical(data: bytes) -> bytes:
    """`data` rewritten by protobuf into the canonical encoding (unknown fields dropped)."""
    try:
        msg = pb.MatchState.FromString(data)
    except DecodeError as exc:  # and its kin: not a MatchState at all
        raise MalformedError("state: not a valid MatchState message") from exc
    msg.DiscardUnknownFields()
    return msg.SerializeToString(deterministic=True)


def decode_state(data: bytes) -> Match:
    """The match in a serialized `MatchState`; MalformedError (naming the field) if it is not one."""
    try:
        return _read(data)
    except _Odd as odd:
        first = odd
    canonical = _canonical(data)
    if canonical == data:  # already canonical: a value the field cannot hold
        raise MalformedError(first.message)
    metrics.record_state_fallback(first.reason)
    try:
        return _read(canonical)
    except _Odd as odd:
        raise MalformedError(odd.message) from None
