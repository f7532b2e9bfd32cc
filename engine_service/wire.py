"""A `MatchState` read from and written to its serialized bytes: the servicer's hot path.

Every engine call decodes the state it carries and most encode the next one.
Through the generated protobuf classes that costs a Python object per field,
per hand and per placement, and under load it was most of a call's time. Here
a state goes between `Match` and bytes directly, with tables for tiles,
hands and placements (and `bytes(list)` for the packed lists).

The protobuf path in `engine_service.codec` stays the definition of the format:

- `encode_state(m)` writes exactly the bytes of
  `codec.state_to_proto(m.to_dict()).SerializeToString()`;
- `decode_state(data)` gives exactly the match (or the refusal, word for word)
  of `Match.from_dict(codec.state_from_proto(MatchState.FromString(data)))`.

It reads only the canonical encoding that protobuf writers produce (each
field once, repeated numbers packed, values within their types' ranges).
Anything else, and any state the rules refuse, goes to the protobuf path, so
that errors and their messages come from there. tests/engine/test_wire.py
compares both paths on states of every preset, and on corrupted ones.
"""
from __future__ import annotations

from typing import Any

from domino.v1 import engine_pb2 as pb

from engine_service import codec
from engine_service.rules.errors import MalformedError
from engine_service.rules.ledger import Ledger
from engine_service.rules.match import Match
from engine_service.rules.notation import Placement
from engine_service.rules.round import Round
from engine_service.rules.tiles import TILE_COUNT

__all__ = ["decode_state", "encode_state", "match_from_proto", "match_to_proto", "state_field"]


class _Unusual(Exception):
    """Not the canonical encoding of a state this module reads: the protobuf path takes it."""


_U32 = 1 << 32
_I32 = 1 << 31
_U64 = 1 << 64

# ---------------------------------------------------------------- writing

_BYTE: tuple[bytes, ...] = tuple(bytes((v,)) for v in range(128))


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
        raise _Unusual("out of uint32")
    return _varint(v)


def _i32(v: int) -> bytes:
    if not -_I32 <= v < _I32:
        raise _Unusual("out of int32")
    return _varint(v)


def _delimited(tag: bytes, payload: bytes) -> bytes:
    n = len(payload)
    return tag + (_BYTE[n] if n < 128 else _varint(n)) + payload


def _packed(tag: bytes, values: list[int], signed: bool) -> bytes:
    """A packed repeated uint32 (or int32 when `signed`) field; nothing for an empty list."""
    if not values:
        return b""
    if min(values) >= 0 and max(values) < 128:
        return _delimited(tag, bytes(values))
    encode = _i32 if signed else _u32
    return _delimited(tag, b"".join([encode(v) for v in values]))


def _placement_fields() -> dict[Placement, bytes]:
    """Each placement -> its whole `Round.layout` entry (tag, length, Placement), from codec's table."""
    out: dict[Placement, bytes] = {}
    for placed, (tile, arm, closes, flipped) in codec._ENCODE_PLACEMENT.items():
        msg = pb.Placement(tile=tile, arm=arm, closes=closes, flipped=flipped)  # type: ignore[arg-type]
        out[placed] = _delimited(b"\x2a", msg.SerializeToString())
    return out


_PLACEMENT_FIELD = _placement_fields()
_ARM_PB: tuple[int, ...] = codec._ARM_PB
_ENDING_PB: dict[str | None, int] = {None: 0, **{k: int(v) for k, v in codec.ENDINGS.items()}}


def _hand_field(mask: int) -> bytes:
    """A `Round.hands` entry: the tile ids of a bit set, ascending."""
    if not mask:
        return b"\x12\x00"
    ids = bytes(codec._ids(mask))
    return b"\x12" + _BYTE[len(ids) + 2] + b"\x0a" + _BYTE[len(ids)] + ids


def _ledger(ledger: Ledger) -> bytes:
    parts = [_packed(b"\x0a", ledger.written, True), _packed(b"\x12", ledger.remembered, True)]
    if ledger.pot:
        parts.append(b"\x18" + _i32(ledger.pot))
    parts.append(_packed(b"\x22", ledger.scores, True))
    for i, record in enumerate(ledger.history):
        where = f"state.ledger.history[{i}]"
        parts.append(_delimited(b"\x2a", codec._record_to_proto(record, where).SerializeToString()))
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
    layout = rnd.layout
    table = _PLACEMENT_FIELD
    parts.extend([table[p] for p in layout.placements])
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
    end = layout.end
    for a in layout.arms:
        value = end[a]
        parts.append(b"\x82\x01\x04\x08" + _BYTE[_ARM_PB[a]] + b"\x10" + _BYTE[value] if value
                     else b"\x82\x01\x02\x08" + _BYTE[_ARM_PB[a]])
    count = layout.count()
    if count:
        parts.append(b"\x88\x01" + _i32(count))
    return b"".join(parts)


def _encode(match: Match) -> bytes:
    parts = [_delimited(b"\x0a", match.preset.name.encode())]
    if match.players:
        parts.append(b"\x10" + _u32(match.players))
    for name, text in codec.options_to_proto(match.overrides).items():
        entry = _delimited(b"\x0a", name.encode()) + _delimited(b"\x12", text.encode())
        parts.append(_delimited(b"\x1a", entry))
    if match.seed is not None:
        if not 0 <= match.seed < _U64:
            raise _Unusual("seed out of uint64")
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
    return b"".join(parts)


def encode_state(match: Match) -> bytes:
    """The serialized `MatchState` of a match; MalformedError if it cannot be one (a bug)."""
    try:
        return _encode(match)
    except Exception:  # noqa: BLE001 - the protobuf path raises the precise error (or agrees)
        return codec.state_to_proto(match.to_dict()).SerializeToString()


def state_field(match: Match) -> bytes:
    """`encode_state(match)` as field 1 of an enclosing message (`MatchResponse.state`)."""
    state = encode_state(match)
    return b"\x0a" + _varint(len(state)) + state


def match_to_proto(match: Match) -> pb.MatchState:
    """`codec.state_to_proto(match.to_dict())`, built from the bytes."""
    return pb.MatchState.FromString(encode_state(match))


# ---------------------------------------------------------------- reading


def _varint_at(data: bytes, i: int) -> tuple[int, int]:
    """The varint starting at data[i] and the index after it."""
    v = 0
    shift = 0
    while True:
        b = data[i]  # IndexError when truncated
        i += 1
        v |= (b & 127) << shift
        if b < 128:
            return v, i
        shift += 7
        if shift > 63:
            raise _Unusual("varint longer than 10 bytes")


def _scan(data: bytes, repeated: frozenset[int]) -> dict[int, Any]:
    """Field number -> varint (int) or length-delimited payload (bytes); the `repeated` ones as lists.

    Other wire types, a field given twice that is not in `repeated`, or a truncated
    message are not canonical.
    """
    fields: dict[int, Any] = {}
    n = len(data)
    i = 0
    while i < n:
        key = data[i]
        i += 1
        if key > 127:
            key, i = _varint_at(data, i - 1)
        wire = key & 7
        if wire == 0:
            value: Any = data[i]
            i += 1
            if value > 127:
                value, i = _varint_at(data, i - 1)
        elif wire == 2:
            size = data[i]
            i += 1
            if size > 127:
                size, i = _varint_at(data, i - 1)
            value = data[i:i + size]
            i += size
            if i > n:
                raise _Unusual("truncated")
        else:
            raise _Unusual("wire type")
        number = key >> 3
        if number in repeated:
            fields.setdefault(number, []).append(value)
        elif number in fields:
            raise _Unusual("a field twice")
        else:
            fields[number] = value
    return fields


def _uint(fields: dict[int, Any], number: int, limit: int = _U32) -> int:
    v = fields.get(number, 0)
    if type(v) is not int or v >= limit:
        raise _Unusual("not a uint32 (or uint64)")
    return v


def _signed(v: int) -> int:
    """An int32 from its varint (negative ones come as 64-bit two's complement)."""
    if v < _I32:
        return v
    if v < _U64 - _I32:
        raise _Unusual("out of int32")
    return v - _U64


def _sint(fields: dict[int, Any], number: int) -> int:
    v = fields.get(number, 0)
    if type(v) is not int:
        raise _Unusual("not an int32")
    return _signed(v)


def _optional(fields: dict[int, Any], number: int, signed: bool = False, limit: int = _U32) -> int | None:
    """An `optional` field: None when absent, else an int32 (`signed`) or a uint below `limit`."""
    if number not in fields:
        return None
    return _sint(fields, number) if signed else _uint(fields, number, limit)


def _flag(fields: dict[int, Any], number: int) -> bool:
    v = fields.get(number, 0)
    if type(v) is not int or v > 1:
        raise _Unusual("not a canonical bool")
    return v == 1


def _numbers(fields: dict[int, Any], number: int, signed: bool = False) -> list[int]:
    """A packed repeated uint32 (int32 when `signed`) field."""
    payload = fields.get(number)
    if payload is None:
        return []
    if type(payload) is not bytes:
        raise _Unusual("not packed")
    if max(payload, default=0) < 128:
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
        raise _Unusual("out of uint32")
    return values


def _text(fields: dict[int, Any], number: int) -> str:
    payload = fields.get(number, b"")
    if type(payload) is not bytes:
        raise _Unusual("not a string")
    return payload.decode()  # UnicodeDecodeError: the protobuf path refuses it


def _known(fields: dict[int, Any], numbers: frozenset[int]) -> dict[int, Any]:
    """`fields`, if it has no field the message does not define (protobuf would keep those aside)."""
    if not numbers.issuperset(fields):
        raise _Unusual("unknown fields")
    return fields


# Canonical `Placement` payloads -> the rules' placement tuples: the lead, and a tile after it.
_LEAD_BY_PAYLOAD: dict[bytes, Placement] = {
    pb.Placement(tile=t, flipped=flag).SerializeToString(): placed
    for (t, flag), placed in codec._DECODE_LEAD.items()
}
_PLAY_BY_PAYLOAD: dict[bytes, Placement] = {
    pb.Placement(tile=t, arm=arm, closes=closes).SerializeToString(): placed  # type: ignore[arg-type]
    for (t, arm, closes), placed in codec._DECODE_PLAY.items()
}
# Canonical `OpenEnd` payloads the protobuf path accepts (a known arm, a value 0..6).
_END_PAYLOADS: frozenset[bytes] = frozenset(
    pb.OpenEnd(arm=arm, value=v).SerializeToString()  # type: ignore[arg-type]
    for arm in _ARM_PB for v in range(7)
)
_BIT: tuple[int, ...] = tuple(1 << t for t in range(TILE_COUNT))
_ENDING_NAME: dict[int, str | None] = {v: k for k, v in _ENDING_PB.items()}

_STATE_REPEATED = frozenset({3})
_LEDGER_REPEATED = frozenset({5})
_ROUND_REPEATED = frozenset({2, 5, 16})
_NO_REPEATED: frozenset[int] = frozenset()
_STATE_FIELDS = frozenset(range(1, 14))
_LEDGER_FIELDS = frozenset(range(1, 6))
_ROUND_FIELDS = frozenset(range(1, 18))
_ENTRY_FIELDS = frozenset({1, 2})


def _hand(payload: object) -> int:
    """A `Hand` payload -> its bit set."""
    if type(payload) is not bytes:
        raise _Unusual("not a message")
    if not payload:
        return 0
    if payload[0] != 0x0A or payload[1] != len(payload) - 2:
        raise _Unusual("not a canonical hand")
    bit = _BIT
    m = 0
    for t in payload[2:]:
        m |= bit[t]  # IndexError for an id above 27 (or a multi-byte one)
    if m.bit_count() != len(payload) - 2:
        raise _Unusual("a tile twice in a hand")
    return m


def _options(entries: list[bytes]) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in entries:
        f = _known(_scan(entry, _NO_REPEATED), _ENTRY_FIELDS)
        name = _text(f, 1)
        if name in out:
            raise _Unusual("an option twice")
        out[name] = _text(f, 2)
    return out


def _ledger_from(payload: bytes) -> dict[str, Any]:
    f = _known(_scan(payload, _LEDGER_REPEATED), _LEDGER_FIELDS)
    history = []
    for i, record in enumerate(f.get(5, ())):
        history.append(codec._record_from_proto(pb.RoundRecord.FromString(record), f"state.ledger.history[{i}]"))
    return {
        "written": _numbers(f, 1, True),
        "remembered": _numbers(f, 2, True),
        "pot": _sint(f, 3),
        "scores": _numbers(f, 4, True),
        "history": history,
    }


def _decode(data: bytes) -> Match:
    f = _known(_scan(data, _STATE_REPEATED), _STATE_FIELDS)
    r = f.get(7)
    if type(r) is not bytes:
        raise _Unusual("no round")  # before the first deal: rare, the protobuf path reads it
    g = _known(_scan(r, _ROUND_REPEATED), _ROUND_FIELDS)
    hands = [_hand(h) for h in g.get(2, ())]
    placements: list[Placement] = []
    layout = g.get(5)
    if layout:
        placements.append(_LEAD_BY_PAYLOAD[layout[0]])  # KeyError: not a canonical lead
        play = _PLAY_BY_PAYLOAD
        placements.extend([play[p] for p in layout[1:]])
    ends = g.get(16, ())
    if ends and not (_END_PAYLOADS.issuperset(ends) and len({e[1] for e in ends}) == len(ends)):
        raise _Unusual("an open end the protobuf path refuses")
    if 17 in g:
        _sint(g, 17)  # count: derived on output, ignored on input
    ending = _ENDING_NAME[_uint(g, 12)]  # KeyError: an unknown ending
    rnd = {
        "leader": _uint(g, 1),
        "reserve": _uint(g, 4),
        "to_move": _uint(g, 6),
        "passes": _uint(g, 7),
        "out": _numbers(g, 8),
        "last_placer": _optional(g, 9),
        "last_score": _sint(g, 10),
        "over": _flag(g, 11),
        "ending": ending,
        "winner": _optional(g, 13, signed=True),
        "round_points": _numbers(g, 14, True) or None,
        "places": _numbers(g, 15) or None,
    }
    variant = _text(f, 1)
    state = {
        "variant": variant,
        "players": _uint(f, 2),
        "options": codec.options_from_proto(variant, _options(f.get(3, []))),
        "seed": _optional(f, 4, limit=_U64),
        "round_number": _uint(f, 5),
        "ledger": _ledger_from(f.get(6, b"")),
        "round": rnd,
        "next_leader": _optional(f, 8),
        "match_over": _flag(f, 9),
        "losers": _numbers(f, 10),
        "winners": _numbers(f, 11),
        "rating": _numbers(f, 12, True),
        "timed_out": _optional(f, 13),
    }
    return Match.from_tiles(state, hands, _numbers(g, 3), placements)


def decode_state(data: bytes) -> Match:
    """The match in a serialized `MatchState`; MalformedError (naming the field) if it is not one."""
    try:
        return _decode(data)
    except Exception:  # noqa: BLE001,S110 - the protobuf path below names what is wrong
        pass
    try:
        msg = pb.MatchState.FromString(data)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError, and its kin
        raise MalformedError("state: not a valid MatchState message") from exc
    return Match.from_dict(codec.state_from_proto(msg))


def match_from_proto(msg: pb.MatchState) -> Match:
    """`Match.from_dict(codec.state_from_proto(msg))`, read from the message's bytes."""
    return decode_state(msg.SerializeToString())
