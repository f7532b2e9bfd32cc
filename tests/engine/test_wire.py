"""engine_service.edge.wire, the one codec of MatchState bytes, against protobuf itself.

The oracle is independent of `wire` and `codec`: `proto_oracle` builds the
expected `MatchState` from `Match.to_dict()` field by field with the generated
classes, and protobuf's deterministic serializer writes its bytes; reading goes
the other way (protobuf parses, the oracle turns the message into the dict
`Match.from_dict` reads). On states taken at every decision of seeded random
matches of every preset and player count (with non-default options too):

- `encode_state(m)` is exactly protobuf's canonical encoding of m;
- `decode_state` gives m back, without its protobuf fallback;
- every other valid encoding decodes as protobuf reads it, counted in
  ``domino_engine_state_decode_fallbacks_total`` when the fast reader hands it over;
- damaged bytes are read or refused with `MalformedError`, and a value a field
  cannot hold is refused naming the field.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from functools import cache
from typing import Any

import proto_oracle as po
import pytest
from domino.v1 import engine_pb2 as pb
from google.protobuf.message import DecodeError

from engine_service import metrics
from engine_service.edge import wire
from engine_service.rules import PRESETS, MalformedError, Match, RulesError, variants

Options = tuple[tuple[str, Any], ...]


@cache
def _states(variant: str, players: int, seed: int, rounds: int = 3, options: Options = ()) -> tuple[Match, ...]:
    """Copies of a seeded random match at every decision (and after each round), over a few rounds.

    Cached: tests must not change them (take a `.copy()`).
    """
    rng = random.Random(seed)
    match, _ = Match.new(variant, players, seed=seed, options=dict(options) or None)
    out = []
    for _ in range(rounds):
        actions = match.legal_actions()
        while actions:
            out.append(match.copy())
            match.apply(rng.choice(actions))
            actions = match.legal_actions()
        out.append(match.copy())
        if match.match_over:
            break
        match.start_round()
    return tuple(out)


def _cases() -> list[tuple[str, int]]:
    return [(name, n) for name, p in PRESETS.items() for n in range(p.min_players, p.max_players + 1)]


def _other_options(variant: str) -> dict[str, object]:
    """A value other than the default for each option of a preset (ints: the default plus some)."""
    spec = next(v for v in variants() if v["name"] == variant)
    out: dict[str, object] = {}
    for o in spec["options"]:
        if o["type"] == "bool":
            out[o["name"]] = o["default"] != "true"
        elif o["type"] == "enum" and len(o["allowed"]) > 1:
            out[o["name"]] = next(a for a in o["allowed"] if a != o["default"])
        elif o["type"] == "int":
            out[o["name"]] = int(o["default"]) + 7
    return out


def _option_states(variant: str) -> list[Match]:
    """States of a 4-player match for each non-default option value the preset accepts."""
    states: list[Match] = []
    for name, value in _other_options(variant).items():
        try:
            states.extend(_states(variant, PRESETS[variant].max_players, 4, rounds=1, options=((name, value),)))
        except RulesError:
            continue  # an option value this player count does not allow
    return states


def _fallbacks() -> float:
    """The fallback counter summed over its reasons (this process)."""
    return sum(s.value for family in metrics.STATE_FALLBACKS.collect() for s in family.samples
               if s.name == "domino_engine_state_decode_fallbacks_total")


def _canonical(data: bytes) -> bytes:
    """How protobuf itself writes the message it reads in `data` (unknown fields dropped)."""
    msg = pb.MatchState.FromString(data)
    msg.DiscardUnknownFields()
    return msg.SerializeToString(deterministic=True)


def _protobuf_reading(data: bytes) -> object:
    """The match protobuf reads in `data`, through the oracle and `Match.from_dict`: its dict, or "refused"."""
    try:
        msg = pb.MatchState.FromString(data)
    except DecodeError:
        return "refused"
    try:
        return Match.from_dict(po.state_dict(msg)).to_dict()
    except MalformedError:
        return "refused"


def _wire_reading(data: bytes) -> object:
    try:
        return wire.decode_state(data).to_dict()
    except MalformedError:
        return "refused"


# ---------------------------------------------------------------- canonical states


def _check_canonical(match: Match) -> None:
    d = match.to_dict()
    data = wire.encode_state(match)
    assert data == po.state_bytes(d)
    assert wire.decode_state(data).to_dict() == d


@pytest.mark.parametrize(("variant", "players"), _cases())
def test_encode_is_protobufs_canonical_encoding_and_decode_reads_it_back(variant: str, players: int) -> None:
    """Byte for byte the oracle's message as protobuf writes it, at every decision of two seeded matches."""
    states = _states(variant, players, 1) + _states(variant, players, 2)
    assert any(m.round is not None and m.round.over for m in states)
    for match in states:
        _check_canonical(match)


@pytest.mark.parametrize("variant", list(PRESETS))
def test_states_with_non_default_options_too(variant: str) -> None:
    """Options travel as a map of text (sorted by name in the canonical encoding) and come back typed."""
    states = _option_states(variant)
    assert states and all(m.overrides for m in states)
    for match in states[::3]:
        _check_canonical(match)
        assert dict(pb.MatchState.FromString(wire.encode_state(match)).options) == {
            k: po.option_text(v) for k, v in match.overrides.items()}


def _no_deal_states() -> list[Match]:
    """Matches before their first deal, with a setup where the family keeps a ledger, seeded or not."""
    out = []
    for name, p in PRESETS.items():
        for players in (p.min_players, p.max_players):
            out.append(Match.new(name, players, no_deal=True)[0])
            out.append(Match.new(name, players, seed=(1 << 64) - 1, no_deal=True)[0])
    out.append(Match.new("kozel", 3, setup={"written": [30, 32, 13], "remembered": [0, 4, 9], "pot": 2},
                         no_deal=True)[0])
    out.append(Match.new("all-fives", 2, setup={"scores": [35, 90]}, no_deal=True)[0])
    return out


def test_no_canonical_state_takes_the_fallback() -> None:
    """The fast reader takes every state the engine writes: the fallback counter does not move.

    Every decision of seeded matches of every preset and player count, with
    options, and matches before their first deal. A non-canonical copy at the end
    shows that the counter measured here does count fallbacks.
    """
    states = [m for variant, players in _cases() for seed in (1, 2) for m in _states(variant, players, seed)]
    states += [m for variant in PRESETS for m in _option_states(variant)]
    states += _no_deal_states()
    blobs = [wire.encode_state(m) for m in states]
    before = _fallbacks()
    decoded = [wire.decode_state(b) for b in blobs]
    assert _fallbacks() == before, "a canonical state was rewritten by protobuf before it was read"
    assert [m.to_dict() for m in decoded] == [m.to_dict() for m in states]
    assert len(states) > 3000
    wire.decode_state(blobs[-1] + b"\xa0\x06\x01")  # an unknown field: rewritten, counted
    assert _fallbacks() == before + 1


def test_no_deal_states_are_canonical_too() -> None:
    """Before the first deal there is no round field at all, and seeds up to 2^64-1 fit."""
    for match in _no_deal_states():
        _check_canonical(match)
        assert not pb.MatchState.FromString(wire.encode_state(match)).HasField("round")


def test_values_out_of_their_fields_range_are_not_encoded() -> None:
    """Encoding has no fallback: a value its field cannot hold is a bug (ValueError), not a truncation."""
    base = _states("kozel", 4, 1, rounds=1)[3]
    for attribute, value in (("seed", 1 << 64), ("round_number", 1 << 32), ("players", -1)):
        match = base.copy()
        setattr(match, attribute, value)
        with pytest.raises(ValueError, match="does not fit"):
            wire.encode_state(match)
    match = base.copy()
    match.ledger.pot = 1 << 31
    with pytest.raises(ValueError, match="int32"):
        wire.encode_state(match)
    match = base.copy()
    match.ledger.written[1] = -(1 << 31) - 1
    with pytest.raises(ValueError, match="int32"):
        wire.encode_state(match)


# ---------------------------------------------------------------- other encodings of the same message

Field = tuple[int, int, Any]  # field number, wire type (0 varint, 2 length-delimited), int or bytes


def _varint(v: int, padding: int = 0) -> bytes:
    """A varint (negative numbers as 64-bit two's complement), `padding` redundant bytes longer."""
    v &= (1 << 64) - 1
    out = bytearray()
    while v > 127:
        out.append(v & 127 | 128)
        v >>= 7
    out.append(v)
    for _ in range(padding):
        out[-1] |= 128
        out.append(0)
    return bytes(out)


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        b = data[i]
        i += 1
        v |= (b & 127) << shift
        shift += 7
        if b < 128:
            return v, i


def _fields(data: bytes) -> list[Field]:
    out: list[Field] = []
    i = 0
    while i < len(data):
        key, i = _read_varint(data, i)
        value: Any
        if key & 7 == 0:
            value, i = _read_varint(data, i)
        else:
            assert key & 7 == 2
            n, i = _read_varint(data, i)
            value = data[i:i + n]
            i += n
        out.append((key >> 3, key & 7, value))
    return out


def _field(number: int, wire_type: int, value: Any, padding: int = 0) -> bytes:
    key = _varint(number << 3 | wire_type)
    if wire_type == 0:
        return key + _varint(value, padding)
    return key + _varint(len(value), padding) + value


def _join(fields: list[Field]) -> bytes:
    return b"".join(_field(*f) for f in fields)


def _numbers(payload: bytes) -> list[int]:
    values, i = [], 0
    while i < len(payload):
        v, i = _read_varint(payload, i)
        values.append(v)
    return values


def _at(fields: list[Field], number: int) -> int | None:
    return next((i for i, f in enumerate(fields) if f[0] == number), None)


def _top(data: bytes, change: Callable[[list[Field]], list[Field] | None]) -> bytes | None:
    """`data` with its fields changed (None when the change does not apply)."""
    changed = change(_fields(data))
    return None if changed is None else _join(changed)


def _inside(data: bytes, number: int, change: Callable[[list[Field]], list[Field] | None]) -> bytes | None:
    """`data` with the fields of its sub-message `number` (ledger 6, round 7) changed (None when there is
    no such field or the change does not apply)."""
    top = _fields(data)
    i = _at(top, number)
    if i is None:
        return None
    changed = change(_fields(top[i][2]))
    if changed is None:
        return None
    top[i] = (number, 2, _join(changed))
    return _join(top)


def _with_round(data: bytes, change: Callable[[list[Field]], list[Field] | None]) -> bytes | None:
    return _inside(data, 7, change)


def _shuffled(fields: list[Field], rng: random.Random) -> list[Field]:
    """Fields in another order; a repeated field's items keep theirs (it is their meaning)."""
    rank = {n: rng.random() for n, _, _ in fields}
    return sorted(fields, key=lambda f: rank[f[0]])


PACKED = {"top": (10, 11, 12), "round": (3, 8, 14, 15), "ledger": (1, 2, 4)}
DEFAULTS = {"top": (2, 5, 9), "round": (1, 4, 6, 7, 10, 11, 12)}


def _pick_packed(fields: list[Field], where: str, rng: random.Random, least: int = 1) -> int | None:
    found = [i for i, f in enumerate(fields) if f[0] in PACKED[where] and len(_numbers(f[2])) >= least]
    return rng.choice(found) if found else None


def _unpack(fields: list[Field], where: str, rng: random.Random) -> list[Field] | None:
    """A packed list written one number per field (protobuf accepts both)."""
    i = _pick_packed(fields, where, rng)
    if i is None:
        return None
    number = fields[i][0]
    return fields[:i] + [(number, 0, v) for v in _numbers(fields[i][2])] + fields[i + 1:]


def _split_packed(fields: list[Field], where: str, rng: random.Random) -> list[Field] | None:
    """A packed list written as two packed fields (protobuf concatenates them)."""
    i = _pick_packed(fields, where, rng, least=2)
    if i is None:
        return None
    number, values = fields[i][0], _numbers(fields[i][2])
    k = rng.randrange(1, len(values))
    halves = [b"".join(_varint(v) for v in part) for part in (values[:k], values[k:])]
    return fields[:i] + [(number, 2, halves[0]), (number, 2, halves[1])] + fields[i + 1:]


def _split_message(data: bytes, number: int, rng: random.Random) -> bytes | None:
    """A sub-message (ledger 6, round 7) written as two fields of the same number (protobuf merges them)."""
    top = _fields(data)
    i = _at(top, number)
    if i is None:
        return None
    inner = _fields(top[i][2])
    if len(inner) < 2:
        return None
    k = rng.randrange(1, len(inner))
    return _join(top[:i] + [(number, 2, _join(inner[:k])), (number, 2, _join(inner[k:]))] + top[i + 1:])


def _with_explicit_default(fields: list[Field], where: str, rng: random.Random) -> list[Field] | None:
    absent = [n for n in DEFAULTS[where] if _at(fields, n) is None]
    return fields + [(rng.choice(absent), 0, 0)] if absent else None


def _unpacked_hand(fields: list[Field], rng: random.Random) -> list[Field] | None:
    hands = [i for i, f in enumerate(fields) if f[0] == 2 and f[2]]
    if not hands:
        return None
    i = rng.choice(hands)
    tiles = _numbers(_fields(fields[i][2])[0][2])
    fields[i] = (2, 2, _join([(1, 0, t) for t in tiles]))
    return fields


def _padded(data: bytes, rng: random.Random) -> bytes:
    """One number (a value or a length) written with redundant varint bytes."""
    top = _fields(data)
    i = rng.randrange(len(top))
    number, wire_type, value = top[i]
    return _join(top[:i]) + _field(number, wire_type, value, padding=rng.randint(1, 3)) + _join(top[i + 1:])


#: Same message, other bytes: name -> how to write it (None: not applicable to this state).
SAME: dict[str, Callable[[bytes, random.Random], bytes | None]] = {
    "fields out of order": lambda d, rng: _join(_shuffled(_fields(d), rng)),
    "round fields out of order": lambda d, rng: _with_round(d, lambda f: _shuffled(f, rng)),
    "over-long varint": _padded,
    "explicit default": lambda d, rng: _top(d, lambda f: _with_explicit_default(f, "top", rng)),
    "explicit default in the round": lambda d, rng: _with_round(d, lambda f: _with_explicit_default(f, "round", rng)),
    "unknown field": lambda d, rng: d + _field(100 + rng.randrange(50), 0, rng.randrange(1000)),
    "unknown field in the round": lambda d, rng: _with_round(d, lambda f: f + [(40, 2, b"\x08\x01")]),
    "a list not packed": lambda d, rng: _top(d, lambda f: _unpack(f, "top", rng)),
    "a ledger list not packed": lambda d, rng: _inside(d, 6, lambda f: _unpack(f, "ledger", rng)),
    "a round list not packed": lambda d, rng: _with_round(d, lambda f: _unpack(f, "round", rng)),
    "a list in two pieces": lambda d, rng: _inside(d, 6, lambda f: _split_packed(f, "ledger", rng)),
    "hand not packed": lambda d, rng: _with_round(d, lambda f: _unpacked_hand(f, rng)),
    "ledger in two pieces": lambda d, rng: _split_message(d, 6, rng),
    "round in two pieces": lambda d, rng: _split_message(d, 7, rng),
}
#: Those the fast reader does not take: each decode of them is one fallback.
HANDED_OVER = {"unknown field", "unknown field in the round", "a list not packed", "a ledger list not packed",
               "a round list not packed", "a list in two pieces", "hand not packed", "ledger in two pieces",
               "round in two pieces"}


def _last_score_in_five_bytes(fields: list[Field]) -> list[Field]:
    return [f for f in fields if f[0] != 10] + [(10, 0, -5 & 0xFFFFFFFF)]


#: Another message that protobuf reads its own way (the last of a repeated scalar, 32 bits of a longer
#: number, any non-zero bool): each is a fallback, and the result is what protobuf reads.
OTHER: dict[str, Callable[[bytes, random.Random], bytes | None]] = {
    "a scalar twice": lambda d, rng: d + _field(5, 0, rng.randrange(4)),
    "a bool of 2": lambda d, rng: d + _field(9, 0, 2),
    "a bool of 2 in the round": lambda d, rng: _with_round(d, lambda f: f + [(11, 0, 2)]),
    "a uint32 beyond 32 bits": lambda d, rng: d + _field(2, 0, (1 << 32) + pb.MatchState.FromString(d).players),
    "an int32 in 5 bytes": lambda d, rng: _with_round(d, _last_score_in_five_bytes),
    "a second ledger": lambda d, rng: d + _field(6, 2, _field(4, 2, b"\x05")),
}


def test_other_valid_encodings_decode_as_protobuf_reads_them() -> None:
    """Every way of writing the same message decodes to the same match, and another message to what
    protobuf reads in it; those the fast reader hands over are counted once each."""
    rng = random.Random(5)
    states = [m for variant, players in (("kozel", 4), ("osel", 3), ("all-fives", 2), ("block", 2),
                                         ("bykovo", 4), ("threes-fives", 4), ("kozel", 2))
              for m in _states(variant, players, 6) if m.round is not None]
    over = [m for m in _states("kozel", 2, 8, rounds=30) if m.match_over]
    assert over and over[0].losers
    states += over * (len(states) // 10)  # their losers, winners and rating are lists too
    tried = dict.fromkeys([*SAME, *OTHER], 0)
    for _ in range(1200):
        match = rng.choice(states)
        canonical = wire.encode_state(match)
        name = rng.choice(list(tried))
        data = (SAME | OTHER)[name](canonical, rng)
        if data is None or data == canonical:
            continue
        tried[name] += 1
        before = _fallbacks()
        if name in SAME:
            assert _canonical(data) == canonical, name  # the test's own check: the same message
            assert wire.decode_state(data).to_dict() == match.to_dict(), name
        else:
            assert _wire_reading(data) == _protobuf_reading(data), name
        counted = _fallbacks() - before
        if name in SAME and name not in HANDED_OVER:
            assert counted in (0, 1), name
        else:
            assert counted == 1, name
    assert min(tried.values()) >= 5, tried


# ---------------------------------------------------------------- damage


def _as_placements(msg: pb.MatchState) -> pb.MatchState:
    """`msg` with its layout as a state written before `layout_codes` gives it: Placement messages."""
    msg.round.layout.extend(po.code_placement(c) for c in msg.round.layout_codes)
    msg.round.ClearField("layout_codes")
    return msg


def _as_written_before(msg: pb.MatchState, match: Match) -> pb.MatchState:
    """`msg` as an earlier release wrote it: the layout as Placement messages, the open ends and
    their count beside it (derived on output, ignored on input)."""
    assert match.round is not None
    layout = match.round.layout
    msg.round.ends.extend(pb.OpenEnd(arm=po.arm_pb(a), value=v) for a, v in layout.ends().items())  # type: ignore[misc]
    msg.round.count = layout.count()
    return _as_placements(msg)


def test_a_state_written_before_the_layout_codes_reads_as_the_same_match() -> None:
    """States sealed or stored before issue 27 give the layout as Placement messages (6 bytes a tile, a
    code 1-2) and the open ends: they are read, to the same match, whose next state is written with
    the codes and without the ends."""
    tried = saved = 0
    for variant, players in _cases():
        for match in _states(variant, players, 2, rounds=2):
            data = wire.encode_state(match)
            msg = pb.MatchState.FromString(data)
            if not msg.round.layout_codes:
                continue
            old = _as_written_before(msg, match).SerializeToString(deterministic=True)
            saved += len(old) - len(data)
            before = _fallbacks()
            again = wire.decode_state(old)
            assert _fallbacks() == before  # canonical in its form: read directly, not rewritten
            assert again.to_dict() == match.to_dict()
            assert wire.encode_state(again) == data
            tried += 1
    assert tried > 100 and saved > 3 * tried


#: Damage to a state's message that leaves it a valid message whose value a field cannot hold.
REFUSALS: list[tuple[Callable[[pb.MatchState], Any], str]] = [
    (lambda m: m.round.hands[2].tiles.append(31),
     r"^state\.round\.hands\[2\]\.tiles\[\d\]: tile id 31 is not a tile \(0\.\.27\)$"),
    (lambda m: m.round.hands[1].tiles.append(200),
     r"^state\.round\.hands\[1\]\.tiles\[\d\]: tile id 200 is not a tile"),
    (lambda m: m.round.hands[0].tiles.insert(1, m.round.hands[0].tiles[0]),
     r"^state\.round\.hands\[0\]\.tiles\[1\]: .* is twice in the hand"),
    (lambda m: m.round.boneyard.append(31),
     r"^state\.round\.boneyard\[0\]: tile id 31 is not a tile \(0\.\.27\)$"),
    (lambda m: m.round.layout_codes.__setitem__(3, 31 | pb.ARM_E << 6),
     r"^state\.round\.layout_codes\[3\]: code 159: tile id 31 is not a tile \(0\.\.27\)$"),
    (lambda m: m.round.layout_codes.__setitem__(0, m.round.layout_codes[0] | pb.ARM_E << 6),
     r"^state\.round\.layout_codes\[0\]: code \d+: the first code is the lead \(arm 0\)$"),
    (lambda m: m.round.layout_codes.append(3 | 40 << 6),
     r"^state\.round\.layout_codes\[4\]: code 2563: unknown or central arm 40 after the lead$"),
    (lambda m: m.round.layout_codes.append(3),
     r"^state\.round\.layout_codes\[4\]: code 3: unknown or central arm 0 after the lead$"),
    (lambda m: m.round.layout_codes.append(3 | 1 << 5 | pb.ARM_E << 6),
     r"^state\.round\.layout_codes\[4\]: code 163: only a double closes its arm, not 0-3$"),
    (lambda m: m.round.layout.add(tile=3, arm=pb.ARM_E),
     r"^state\.round: the layout is given twice: as layout and as layout_codes$"),
    # A state written before the codes gives its layout as Placement messages: refused alike.
    (lambda m: setattr(_as_placements(m).round.layout[3], "tile", 31),
     r"^state\.round\.layout\[3\]\.tile: tile id 31 is not a tile \(0\.\.27\)$"),
    (lambda m: setattr(_as_placements(m).round.layout[0], "arm", pb.ARM_E),
     r"^state\.round\.layout\[0\]: the first placement is the lead"),
    (lambda m: _as_placements(m).round.layout.add(tile=3, arm=99),
     r"^state\.round\.layout\[4\]\.arm: unknown or central arm 99"),
    (lambda m: _as_placements(m).round.layout.add(tile=3, arm=pb.ARM_CENTER),
     r"^state\.round\.layout\[4\]\.arm: unknown or central arm 0"),
    (lambda m: _as_placements(m).round.layout.add(tile=3, arm=pb.ARM_E, flipped=True),
     r"^state\.round\.layout\[4\]\.flipped: only the lead"),
    (lambda m: _as_placements(m).round.layout.add(tile=3, arm=pb.ARM_E, closes=True),
     r"^state\.round\.layout\[4\]\.closes: only a double closes its arm, not 0-3$"),
    (lambda m: setattr(m.round, "ending", 9),
     r"^state\.round\.ending: unknown ending 9$"),
    (lambda m: m.ledger.history.add(number=1, ending=9),
     r"^state\.ledger\.history\[0\]\.ending: unknown ending 9$"),
    # The open ends are not written (derived from the layout); a state written before has them, checked.
    (lambda m: m.round.ends.add(arm=pb.ARM_N, value=9),
     r"^state\.round\.ends\[0\]\.value: 9 is not a number of the set \(0\.\.6\)$"),
    (lambda m: m.round.ends.add(arm=40, value=3),
     r"^state\.round\.ends\[0\]\.arm: unknown arm 40$"),
    (lambda m: m.round.ends.extend([pb.OpenEnd(arm=pb.ARM_E, value=3)] * 2),
     r"^state\.round\.ends\[1\]\.arm: repeated arm"),
    # The log is one string, its entries joined by newlines: none of them empty.
    (lambda m: setattr(m, "log", m.log + "\n"),
     r"^state\.log\[\d+\] must be one line of 1\.\.2000 characters$"),
    (lambda m: setattr(m, "log", m.log.replace("\n", "\n\n", 1)),
     r"^state\.log\[1\] must be one line of 1\.\.2000 characters$"),
    (lambda m: setattr(m, "log", "deal\n" + m.log),
     r"^state\.log\[0\] must be the match's start"),
]


@pytest.mark.parametrize(("damage", "message"), REFUSALS)
def test_a_value_its_field_cannot_hold_is_refused_naming_the_field(damage: Callable[[pb.MatchState], Any],
                                                                    message: str) -> None:
    """Canonical bytes (protobuf wrote them) with a tile id above 27, an unknown ending, arm or open end..."""
    match = _states("kozel", 4, 3, rounds=1)[4]
    assert len(match.round.layout.placements) == 4 and not match.round.boneyard  # type: ignore[union-attr]
    msg = pb.MatchState.FromString(wire.encode_state(match))
    damage(msg)
    data = msg.SerializeToString(deterministic=True)
    before = _fallbacks()
    with pytest.raises(MalformedError, match=message):
        wire.decode_state(data)
    assert _fallbacks() == before  # canonical bytes: refused as they are, not rewritten


def _damaged(blob: bytes, rng: random.Random) -> bytes:
    """Random bytes changed, cut or inserted, or random bytes altogether."""
    kind = rng.randrange(5)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
    if kind == 1:
        return blob[:rng.randrange(len(blob))]
    data = bytearray(blob)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(data))
        if kind == 2:
            data.insert(i, rng.randrange(256))
        else:
            data[i] = rng.randrange(256)
    return bytes(data)


def test_damaged_bytes_are_read_or_refused_as_malformed() -> None:
    """Whatever the bytes, decode_state returns a match or raises MalformedError, nothing else; and a
    match it reads is the one protobuf reads in them."""
    rng = random.Random(11)
    blobs = [wire.encode_state(m) for variant in ("kozel", "osel", "all-fives", "bykovo")
             for m in _states(variant, 4, 7, rounds=1)[::4]]
    crashes: dict[type[BaseException], tuple[bytes, BaseException]] = {}
    read = 0
    for _ in range(1500):
        data = _damaged(rng.choice(blobs), rng)
        try:
            got = wire.decode_state(data).to_dict()
        except MalformedError:
            continue
        except Exception as exc:  # noqa: BLE001 - what this test looks for
            crashes.setdefault(type(exc), (data, exc))
            continue
        read += 1
        assert got == _protobuf_reading(data), data.hex()
    assert read > 20
    assert not crashes, f"decode_state raised other than MalformedError: {crashes}"


def _no_deal_bytes() -> bytes:
    return wire.encode_state(Match.new("kozel", 4, seed=3, no_deal=True)[0])


def _dealt_bytes() -> bytes:
    return wire.encode_state(_states("kozel", 4, 3, rounds=1)[4])


def _without(data: bytes, number: int) -> bytes:
    return _join([f for f in _fields(data) if f[0] != number])


@pytest.mark.parametrize("data", [
    pytest.param(lambda: _no_deal_bytes() + b"\x38\x05", id="round as a varint"),
    pytest.param(lambda: _without(_dealt_bytes(), 6) + b"\x30\x05", id="ledger as a varint"),
    pytest.param(lambda: _dealt_bytes() + b"\x18\x05", id="an option entry as a varint"),
    pytest.param(lambda: _with_round(_dealt_bytes(), lambda f: f + [(2, 0, 5)]), id="a hand as a varint"),
    pytest.param(lambda: _with_round(_dealt_bytes(), lambda f: f + [(2, 0, 0)]), id="a hand as a varint 0"),
    pytest.param(lambda: _with_round(_dealt_bytes(), lambda f: f + [(5, 0, 1)]), id="a placement as a varint"),
    pytest.param(lambda: _with_round(_dealt_bytes(), lambda f: f + [(16, 0, 1)]), id="an open end as a varint"),
    pytest.param(lambda: _with_round(_dealt_bytes(), lambda f: f + [(18, 0, 1)]), id="a layout code unpacked"),
    pytest.param(lambda: _with_round(_dealt_bytes(), lambda f: f + [(2, 2, b"\x0a")]), id="a hand of one byte"),
])
def test_a_field_of_the_wrong_wire_type_is_read_as_protobuf_reads_it(data: Callable[[], bytes]) -> None:
    """Protobuf keeps a field of the wrong wire type aside as an unknown field (or refuses a truncated
    message); the reader must do the same, not crash."""
    blob = data()
    assert _wire_reading(blob) == _protobuf_reading(blob)


def test_a_state_has_one_typed_form() -> None:
    """A state the reader accepts is written back the same way whichever form it went through."""
    msg = pb.MatchState.FromString(wire.encode_state(_states("kozel", 4, 3, rounds=1)[1]))
    assert msg.round.layout_codes[0] == po.tile_id("1-1")
    msg.round.layout_codes[0] |= 1 << 5  # "1-1" led with its high number W: the same tile
    try:
        match = wire.decode_state(msg.SerializeToString(deterministic=True))
    except MalformedError as exc:
        assert str(exc) == "state.round.layout_codes[0]: code 39: a double is never flipped"
        return
    assert wire.encode_state(match) == wire.encode_state(Match.from_dict(match.to_dict()))


# ---------------------------------------------------------------- the rules' layout replay


def _slots(layout: object) -> dict[str, object]:
    """Every attribute of a layout (`__mypyc_attrs__` names them when the rules are compiled)."""
    names = getattr(type(layout), "__slots__", None) or type(layout).__mypyc_attrs__  # type: ignore[attr-defined]
    return {name: getattr(layout, name) for name in names}


@pytest.mark.parametrize(("variant", "players"), _cases())
def test_layout_replay_equals_laying_tile_by_tile(variant: str, players: int) -> None:
    """`Layout.replay` (how a decoded state rebuilds its layout) ends exactly where lead + attach end."""
    from engine_service.rules.notation import CENTER

    for match in _states(variant, players, 3, rounds=2):
        if match.round is None or not match.round.layout.placements:
            continue
        placements = match.round.layout.placements
        by_hand = match.family.new_layout()
        for tile, arm, flag in placements:
            if arm == CENTER:
                by_hand.lead(tile, flag)
            else:
                by_hand.attach(tile, arm, flag)
        replayed = match.family.new_layout()
        replayed.replay(list(placements))
        assert _slots(replayed) == _slots(by_hand)
