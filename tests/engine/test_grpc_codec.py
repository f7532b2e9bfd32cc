"""engine_service.codec: rules dicts <-> domino.v1 protobuf, exact both ways, strict on bad input."""
from __future__ import annotations

import random
from typing import Any

import pytest
from domino.v1 import engine_pb2 as pb

from engine_service import codec
from engine_service.rules import PRESETS, MalformedError, Match, variants

# The matching games travel as MatchState (Kingdomino is not served over gRPC yet).
VARIANTS = [(v["name"], p) for v in variants() if v["name"] in PRESETS
            for p in range(v["min_players"], v["max_players"] + 1)]


def played_matches(variant: str, players: int, seed: int, steps: int = 120) -> list[tuple[Match, list[Any]]]:
    """Snapshots (match copy, events of that step) along a random seeded game."""
    rng = random.Random(seed)
    match, events = Match.new(variant, players, seed=seed)
    out = [(match.copy(), events)]
    for _ in range(steps):
        if match.match_over:
            break
        if match.round is None or match.round.over:
            events = match.start_round()
        else:
            events = match.apply(rng.choice(match.legal_actions()))
        out.append((match.copy(), events))
    return out


@pytest.mark.parametrize("variant,players", VARIANTS)
def test_state_view_and_events_round_trip_exactly(variant: str, players: int) -> None:
    for match, events in played_matches(variant, players, seed=players * 7 + 1):
        state = match.to_dict()
        wire = codec.state_to_proto(state)
        # through bytes, as on the wire
        back = codec.state_from_proto(pb.MatchState.FromString(wire.SerializeToString()))
        assert back == state
        assert Match.from_dict(back).to_dict() == state
        assert codec.events_from_proto(codec.events_to_proto(events)) == events
        view = match.view(match.to_move)
        assert codec.view_from_proto(codec.view_to_proto(view)) == view


def test_tile_ids_follow_the_contract_table() -> None:
    hands = [["0-0", "0-1", "0-6", "1-1", "1-2", "5-6", "6-6"]]
    msg = codec.hands_to_proto(hands, "hands")
    assert list(msg[0].tiles) == [0, 1, 6, 7, 8, 26, 27]
    assert codec.hands_from_proto(msg, "hands") == hands
    # either spelling of a tile is the same id; answers are low first
    assert list(codec.hands_to_proto([["6-3", "3-6"]], "h")[0].tiles) == [21, 21]


def test_placements_encode_lead_orientation_arm_and_closing() -> None:
    state = {"variant": "osel", "players": 2, "round": {"layout": ["6-3", "3-3@E!", "6-2@W", "0-0@N2"]}}
    layout = codec.state_to_proto(state).round.layout
    assert (layout[0].tile, layout[0].arm, layout[0].flipped) == (21, pb.ARM_CENTER, True)
    assert (layout[1].tile, layout[1].arm, layout[1].closes) == (18, pb.ARM_E, True)
    assert (layout[2].tile, layout[2].arm, layout[2].closes) == (17, pb.ARM_W, False)
    assert layout[3].arm == pb.ARM_N2
    assert codec.state_from_proto(codec.state_to_proto(state))["round"]["layout"] == ["6-3", "3-3@E!", "2-6@W", "0-0@N2"]


def test_mid_round_four_player_kozel_state_is_compact() -> None:
    sizes = []
    for seed in range(30):
        match, _ = Match.new("kozel", 4, seed=seed)
        rng = random.Random(seed)
        while not match.round.over and len(match.round.layout.placements) < 14:  # type: ignore[union-attr]
            match.apply(rng.choice(match.legal_actions()))
        if not match.round.over:  # type: ignore[union-attr]
            sizes.append(codec.state_to_proto(match.to_dict()).ByteSize())
    assert sizes and max(sizes) < 200, sizes


def test_options_travel_as_text_and_come_back_typed() -> None:
    state = {"variant": "kozel", "players": 4,
             "options": {"target": 51, "double_pair": True, "fish_scoring": "max_takes_all"}}
    wire = codec.state_to_proto(state)
    assert dict(wire.options) == {"target": "51", "double_pair": "true", "fish_scoring": "max_takes_all"}
    assert codec.state_from_proto(wire)["options"] == state["options"]
    # text that is not of the option's type is passed on for the rules to refuse by name
    assert codec.options_from_proto("kozel", {"target": "lots"}) == {"target": "lots"}
    with pytest.raises(MalformedError, match="target"):
        Match.new("kozel", 4, options=codec.options_from_proto("kozel", {"target": "lots"}))


def test_deal_keeps_whether_a_boneyard_was_given() -> None:
    hands: list[list[str]] = [[], []]
    assert codec.deal_from_proto(codec.deal_to_proto({"hands": hands})) == {"hands": hands}
    given = {"hands": [["1-1"], ["2-2"]], "boneyard": [], "leader": 1}
    msg = codec.deal_to_proto(given)
    assert msg.has_boneyard and msg.leader == 1
    assert codec.deal_from_proto(msg) == given


def test_setup_round_trips_through_a_request() -> None:
    request = pb.NewMatchRequest()
    codec.setup_to_proto({"written": [30, 32, 13], "pot": 4}, request)
    assert codec.setup_from_proto(request) == {"written": [30, 32, 13], "pot": 4}
    assert codec.setup_from_proto(pb.NewMatchRequest()) is None
    with pytest.raises(MalformedError, match="setup: unknown keys"):
        codec.setup_to_proto({"eggs": 1}, pb.NewMatchRequest())


def test_variants_round_trip() -> None:
    listed = variants()
    assert codec.variants_from_proto(codec.variants_to_proto(listed)) == listed


# ---------------------------------------------------------------- malformed protobuf


def _state_msg() -> pb.MatchState:
    match, _ = Match.new("kozel", 4, seed=3)
    match.apply(match.legal_actions()[0])
    return codec.state_to_proto(match.to_dict())


@pytest.mark.parametrize("damage,field", [
    (lambda m: m.round.hands[2].tiles.append(28), r"state\.round\.hands\[2\]\.tiles\[\d+\]: tile id 28"),
    (lambda m: m.round.boneyard.append(200), r"state\.round\.boneyard\[0\]: tile id 200"),
    (lambda m: setattr(m.round.layout[0], "arm", pb.ARM_E), r"state\.round\.layout\[0\]: the first placement"),
    (lambda m: m.round.layout.add(tile=3, arm=99), r"state\.round\.layout\[1\]\.arm: unknown"),
    (lambda m: m.round.layout.add(tile=3, arm=pb.ARM_CENTER), r"state\.round\.layout\[1\]\.arm"),
    (lambda m: m.round.layout.add(tile=3, arm=pb.ARM_E, flipped=True), r"layout\[1\]\.flipped"),
    (lambda m: setattr(m.round, "ending", 42), r"state\.round\.ending: unknown ending 42"),
    (lambda m: m.ledger.history.add(ending=9), r"state\.ledger\.history\[0\]\.ending"),
    (lambda m: m.round.ends.add(arm=pb.ARM_E, value=3), r"state\.round\.ends\[\d\]\.arm: unknown or repeated"),
    (lambda m: m.round.ends.add(arm=pb.ARM_N, value=9), r"state\.round\.ends\[\d\]\.value"),
])
def test_malformed_protobuf_names_the_field(damage: Any, field: str) -> None:
    msg = _state_msg()
    damage(msg)
    with pytest.raises(MalformedError, match=field):
        codec.state_from_proto(msg)


def test_event_without_kind_and_bad_drawn_tile_are_malformed() -> None:
    with pytest.raises(MalformedError, match=r"events\[0\]: an event with no kind"):
        codec.events_from_proto([pb.Event()])
    with pytest.raises(MalformedError, match=r"events\[0\]\.drew\.tile"):
        codec.events_from_proto([pb.Event(drew=pb.Drew(seat=0, tile=28))])


# ---------------------------------------------------------------- malformed dicts (the gateway's input)


@pytest.mark.parametrize("state,field", [
    ([], r"^state: expected an object"),
    ({"variant": 3}, r"state\.variant: expected a string"),
    ({"players": -1}, r"state\.players: -1 is out of range"),
    ({"players": True}, r"state\.players: expected an integer"),
    ({"seed": 2**64}, r"state\.seed: .* out of range"),
    ({"match_over": "yes"}, r"state\.match_over: expected true or false"),
    ({"options": {"target": [1]}}, r"state\.options\.target"),
    ({"ledger": {"written": [1, 2**40]}}, r"state\.ledger\.written\[1\]"),
    ({"ledger": {"history": [{"ending": "won"}]}}, r"state\.ledger\.history\[0\]\.ending: unknown ending"),
    ({"round": {"hands": [["1-1", "7-7"]]}}, r"state\.round\.hands\[0\]\[1\]: not a tile: '7-7'"),
    ({"round": {"hands": "1-1"}}, r"state\.round\.hands: expected a list"),
    ({"round": {"layout": ["1-1", "1-2"]}}, r"state\.round\.layout\[1\]: not a placement"),
    ({"round": {"layout": ["1-1", "1-2@Q"]}}, r"state\.round\.layout\[1\]: not a placement"),
    ({"round": {"ends": {"X": 1}}}, r"state\.round\.ends: unknown arm 'X'"),
    ({"round": {"ends": {"E": 7}}}, r"state\.round\.ends\.E: 7 is out of range"),
])
def test_malformed_dict_names_the_field(state: Any, field: str) -> None:
    with pytest.raises(MalformedError, match=field):
        codec.state_to_proto(state)


def test_malformed_events_and_views_name_the_field() -> None:
    with pytest.raises(MalformedError, match=r"events\[0\]\.type: unknown event type 'exploded'"):
        codec.events_to_proto([{"type": "exploded"}])
    with pytest.raises(MalformedError, match=r"view\.hand\[0\]"):
        codec.view_to_proto({"hand": ["x"]})
    with pytest.raises(MalformedError, match=r"deal\.leader"):
        codec.deal_to_proto({"hands": [], "leader": -2})


def test_docstring_examples() -> None:
    import doctest

    assert doctest.testmod(codec).failed == 0
