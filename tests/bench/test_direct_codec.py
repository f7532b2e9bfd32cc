"""The servicer's direct codec path equals the reference path (dicts in between), byte for byte.

`codec.match_to_proto(m)` must serialize exactly as `codec.state_to_proto(m.to_dict())`, and
`codec.match_from_proto(msg)` must give the match (or the error, word for word) that
`Match.from_dict(codec.state_from_proto(msg))` gives; `codec.seat_view_to_proto(m, seat)` must
serialize exactly as `codec.view_to_proto(m.view(seat))`: on states of every preset taken at every
decision of seeded random matches over several rounds, and on corrupted copies of them.
"""
from __future__ import annotations

import random

import pytest
from domino.v1 import engine_pb2 as pb

from engine_service import codec
from engine_service.rules import PRESETS, Match, RulesError


def _states(variant: str, players: int, seed: int, rounds: int = 3) -> list[Match]:
    rng = random.Random(seed)
    match, _ = Match.new(variant, players, seed=seed)
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
        return codec.match_from_proto(msg).to_dict()
    except RulesError as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize(("variant", "players"), _cases())
def test_direct_encode_and_decode_equal_the_reference(variant: str, players: int) -> None:
    for seed in (1, 2):
        for match in _states(variant, players, seed):
            direct = codec._match_to_proto(match)  # not the public wrapper: it falls back to the reference
            reference = codec.state_to_proto(match.to_dict())
            assert direct.SerializeToString(deterministic=True) == reference.SerializeToString(deterministic=True)
            assert direct.SerializeToString() == reference.SerializeToString()
            assert codec.match_from_proto(reference).to_dict() == match.to_dict()
            for seat in range(players):
                view = codec._seat_view_to_proto(match, seat)
                assert view.SerializeToString(deterministic=True) == \
                    codec.view_to_proto(match.view(seat)).SerializeToString(deterministic=True)


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
