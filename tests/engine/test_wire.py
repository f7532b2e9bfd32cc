"""The servicer's direct paths equal the reference path (dicts in between), byte for byte.

`wire.encode_state(m)` must be exactly the bytes of `codec.state_to_proto(m.to_dict())`, and
`wire.decode_state(data)` must give the match (or the error, word for word) that
`Match.from_dict(codec.state_from_proto(MatchState.FromString(data)))` gives;
`codec.seat_view_to_proto(m, seat)` must serialize exactly as `codec.view_to_proto(m.view(seat))`:
on states of every preset taken at every decision of seeded random matches over several rounds,
with options, on corrupted copies of them, on encodings other than the canonical one, and on
random bytes.
"""
from __future__ import annotations

import random

import pytest
from domino.v1 import engine_pb2 as pb

from engine_service import codec, wire
from engine_service.rules import PRESETS, MalformedError, Match, RulesError, variants


def _states(variant: str, players: int, seed: int, rounds: int = 3,
            options: dict[str, object] | None = None) -> list[Match]:
    rng = random.Random(seed)
    match, _ = Match.new(variant, players, seed=seed, options=options)
    out = []
    for _ in range(rounds):
        actions = match.legal_actions()
        while actions:
            out.append(Match.from_dict(match.to_dict()))
            match.apply(rng.choice(actions))
            actions = match.legal_actions()
        out.append(Match.from_dict(match.to_dict()))
        if match.match_over:
            break
        match.start_round()
    return out


def _cases() -> list[tuple[str, int]]:
    return [(name, n) for name, p in PRESETS.items() for n in range(p.min_players, p.max_players + 1)]


def _reference_decode(msg: pb.MatchState) -> object:
    try:
        return Match.from_dict(codec.state_from_proto(msg)).to_dict()
    except RulesError as exc:
        return (type(exc).__name__, str(exc))


def _direct_decode(msg: pb.MatchState) -> object:
    try:
        return wire.match_from_proto(msg).to_dict()
    except RulesError as exc:
        return (type(exc).__name__, str(exc))


def _decoded(data: bytes) -> object:
    """What `wire.decode_state` makes of some bytes: the match as a dict, or the refusal."""
    try:
        return wire.decode_state(data).to_dict()
    except RulesError as exc:
        return (type(exc).__name__, str(exc))


def _reference_decoded(data: bytes) -> object:
    try:
        msg = pb.MatchState.FromString(data)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError: the wire path refuses it as malformed
        return ("MalformedError", "state: not a valid MatchState message")
    return _reference_decode(msg)


def _fast(data: bytes) -> bool:
    """Whether the wire path read these bytes itself (rather than handing them to the protobuf path)."""
    try:
        wire._decode(data)
    except Exception:  # noqa: BLE001
        return False
    return True


@pytest.mark.parametrize(("variant", "players"), _cases())
def test_direct_encode_and_decode_equal_the_reference(variant: str, players: int) -> None:
    for seed in (1, 2):
        for match in _states(variant, players, seed):
            reference = codec.state_to_proto(match.to_dict())
            # not the public wrapper: it falls back to the reference path
            assert wire._encode(match) == reference.SerializeToString()
            assert wire.match_to_proto(match) == reference
            data = reference.SerializeToString()
            assert wire.decode_state(data).to_dict() == match.to_dict()
            assert match.round is None or _fast(data)
            for seat in range(players):
                view = codec._seat_view_to_proto(match, seat)
                assert view.SerializeToString(deterministic=True) == \
                    codec.view_to_proto(match.view(seat)).SerializeToString(deterministic=True)


def _other_options(variant: str) -> dict[str, object]:
    """A value other than the default for each enum and bool option of a preset (ints left alone)."""
    spec = next(v for v in variants() if v["name"] == variant)
    out: dict[str, object] = {}
    for o in spec["options"]:
        if o["type"] == "bool":
            out[o["name"]] = o["default"] != "true"
        elif o["type"] == "enum" and len(o["allowed"]) > 1:
            out[o["name"]] = next(a for a in o["allowed"] if a != o["default"])
    return out


@pytest.mark.parametrize("variant", [name for name in PRESETS if name != "kingdomino"])
def test_states_with_options_go_through_the_wire_path(variant: str) -> None:
    """Options travel as a map: the encoding is the reference's message (maps have no byte order)."""
    players = PRESETS[variant].max_players
    options = _other_options(variant)
    for name, value in options.items():
        try:
            matches = _states(variant, players, 4, rounds=1, options={name: value})
        except RulesError:
            continue  # an option value this player count does not allow
        for match in matches[::5]:
            assert match.overrides
            reference = codec.state_to_proto(match.to_dict())
            assert pb.MatchState.FromString(wire._encode(match)) == reference
            data = reference.SerializeToString()
            assert _fast(data)
            assert wire.decode_state(data).to_dict() == match.to_dict()


def _varint(v: int) -> bytes:
    out = bytearray()
    v &= (1 << 64) - 1
    while v > 127:
        out.append(v & 127 | 128)
        v >>= 7
    out.append(v)
    return bytes(out)


def _round_field(data: bytes) -> tuple[bytes, bytes, bytes]:
    """(what comes before the round field, the round's payload, what comes after)."""
    f = wire._scan(data, wire._STATE_REPEATED)
    payload = f[7]
    field = b"\x3a" + _varint(len(payload)) + payload
    i = data.index(field)
    return data[:i], payload, data[i + len(field):]


def _with_round(data: bytes, payload: bytes) -> bytes:
    before, _, after = _round_field(data)
    return before + b"\x3a" + _varint(len(payload)) + payload + after


def _non_canonical(data: bytes, rng: random.Random) -> bytes:
    """The same message (or one protobuf reads in its own way) written otherwise than protobuf writes it."""
    choice = rng.randrange(16)
    if choice == 10:
        return data + b"\x40" + _varint((1 << 32) + 1)       # next_leader beyond uint32: cut to 32 bits
    if choice == 11:
        return data + b"\x32\x02\x18\x05"                 # the ledger twice: protobuf merges the two
    if choice == 0:
        return data + b"\xa0\x06\x01"                    # an unknown field (100): protobuf keeps it aside
    if choice == 1:
        return data + b"\x28" + _varint(rng.randrange(4))  # round_number twice: the last one counts
    if choice == 2:
        return data + b"\x48\x02"                         # match_over = 2: true for protobuf
    if choice == 3:
        return data + b"\x10" + _varint((1 << 32) + 4)     # players beyond uint32: cut to 32 bits
    if choice == 4:
        return data + b"\x62\x05\xff\xff\xff\xff\x0f"    # rating [-1] in 5 bytes: cut to int32
    _, payload, _ = _round_field(data)
    if choice == 5:                                       # boneyard unpacked, one number per field
        f = wire._scan(payload, wire._ROUND_REPEATED)
        tiles = f.get(3, b"")
        packed = b"\x1a" + _varint(len(tiles)) + tiles if tiles else b""
        loose = b"".join(b"\x18" + _varint(t) for t in tiles)
        return _with_round(data, payload.replace(packed, loose, 1) if packed else payload + b"\x18\x03")
    if choice == 6:
        return _with_round(data, payload + b"\x58\x00")   # over = false, written out
    if choice == 7:
        return _with_round(data, payload + b"\x2a\x02\x08\x05")  # a layout entry appended
    if choice == 8:
        return _with_round(data, payload + b"\x12\x04\x08\x01\x08\x02")  # a hand with unpacked tiles
    if choice == 12:
        return _with_round(data, payload + b"\x10\x00")   # a hand of the wrong wire type: kept aside
    if choice == 13:
        return _with_round(data, payload + b"\x50" + _varint(-5))  # last_score -5, as int32 writes it
    if choice == 14:
        return _with_round(data, payload + b"\x50\xfb\xff\xff\xff\x0f")  # -5 in 5 bytes: cut to int32
    return _with_round(data, payload + b"\x3a\x00")       # a field of the wrong wire type (boneyard)


@pytest.mark.parametrize("variant", ["kozel", "osel", "all-fives", "block", "bykovo"])
def test_other_encodings_and_random_bytes_decode_as_protobuf_reads_them(variant: str) -> None:
    rng = random.Random(variant)
    players = 4 if variant in ("kozel", "osel", "bykovo") else 2
    blobs = [codec.state_to_proto(m.to_dict()).SerializeToString()
             for m in _states(variant, players, 6, rounds=1) if m.round is not None]
    for _ in range(300):
        data = _non_canonical(rng.choice(blobs), rng)
        assert _decoded(data) == _reference_decoded(data)
    for _ in range(600):
        data = bytearray(rng.choice(blobs))
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        assert _decoded(bytes(data)) == _reference_decoded(bytes(data))
    with pytest.raises(MalformedError, match="not a valid MatchState"):
        wire.decode_state(blobs[0][:-3])


@pytest.mark.parametrize(("attribute", "value"), [("seed", 1 << 64), ("round_number", 1 << 32)])
def test_values_out_of_their_fields_range_are_refused_as_the_reference_refuses_them(
        attribute: str, value: int) -> None:
    match = _states("kozel", 4, 1, rounds=1)[3]
    setattr(match, attribute, value)
    with pytest.raises(MalformedError) as reference:
        codec.state_to_proto(match.to_dict())
    with pytest.raises(MalformedError) as direct:
        wire.encode_state(match)
    assert str(direct.value) == str(reference.value)


def test_an_empty_hand_of_the_wrong_wire_type_is_not_a_hand() -> None:
    """Protobuf keeps a field of the wrong wire type aside: a seat that went out then has no hand."""
    ended = next(m for m in _states("kozel", 4, 2, rounds=1)
                 if m.round is not None and m.round.over and 0 in m.round.hands)
    data = codec.state_to_proto(ended.to_dict()).SerializeToString()
    _, payload, _ = _round_field(data)
    assert b"\x12\x00" in payload
    data = _with_round(data, payload.replace(b"\x12\x00", b"\x10\x00", 1))
    assert _decoded(data) == _reference_decoded(data)
    assert _decoded(data)[0] == "MalformedError"  # type: ignore[index]


def test_numbers_out_of_int32_in_the_ledger_are_refused() -> None:
    match = _states("kozel", 4, 1, rounds=1)[3]
    match.ledger.pot = 1 << 31
    with pytest.raises(MalformedError, match="pot"):
        wire.encode_state(match)
    match.ledger.pot = 0
    match.ledger.written[1] = -(1 << 31) - 1
    with pytest.raises(MalformedError, match="written"):
        wire.encode_state(match)


def _corrupt(msg: pb.MatchState, rng: random.Random) -> pb.MatchState:
    bad = pb.MatchState()
    bad.CopyFrom(msg)
    r = bad.round
    choice = rng.randrange(9)
    if choice == 0 and r.hands:
        h = rng.choice(list(r.hands))
        h.tiles.append(rng.randrange(32))
    elif choice == 1 and r.layout:
        p = rng.choice(list(r.layout))
        p.tile = rng.randrange(32)
    elif choice == 2 and r.layout:
        p = rng.choice(list(r.layout))
        p.arm = rng.randrange(17)  # type: ignore[assignment]
    elif choice == 3 and r.layout:
        rng.choice(list(r.layout)).flipped = True
    elif choice == 4 and r.layout:
        rng.choice(list(r.layout)).closes = True
    elif choice == 5:
        r.boneyard.append(rng.randrange(30))
    elif choice == 6:
        r.to_move = rng.randrange(6)
    elif choice == 7:
        del r.hands[-1]
    else:
        r.ending = rng.randrange(6)  # type: ignore[assignment]
    return bad


@pytest.mark.parametrize("variant", ["kozel", "osel", "all-fives", "block", "bykovo"])
def test_direct_decode_refuses_exactly_as_the_reference(variant: str) -> None:
    rng = random.Random(variant)
    players = 4 if variant in ("kozel", "osel", "bykovo") else 2
    states = _states(variant, players, 5, rounds=1)
    for _ in range(400):
        msg = _corrupt(codec.state_to_proto(rng.choice(states).to_dict()), rng)
        assert _direct_decode(msg) == _reference_decode(msg)
        assert _decoded(msg.SerializeToString()) == _reference_decode(msg)


def _slots(layout: object) -> dict[str, object]:
    """Every attribute of a layout (`__mypyc_attrs__` names them when the rules are compiled)."""
    names = getattr(type(layout), "__slots__", None) or type(layout).__mypyc_attrs__  # type: ignore[attr-defined]
    return {name: getattr(layout, name) for name in names}


@pytest.mark.parametrize(("variant", "players"), _cases())
def test_layout_replay_equals_laying_tile_by_tile(variant: str, players: int) -> None:
    """`Layout.replay` (its fast lane for lines included) ends exactly where lead + attach end."""
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
