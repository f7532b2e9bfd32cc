"""engine_service.edge.codec: the typed face's messages for everything but the state itself.

The tile id table, the placement table (lead orientation, arms, closing),
option text, deals, setups, endings, score table rows, events, the seat view
and the variant listing, each checked against the contract (engine.proto) and
against `proto_oracle`, a conversion written independently in the tests.
"""
from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import proto_oracle as po
import pytest
from domino.v1 import engine_pb2 as pb

from engine_service.edge import codec, wire
from engine_service.rules import PRESETS, MalformedError, Match, variants
from engine_service.rules.notation import ARM_NAMES, CENTER, format_placement, parse_placement
from engine_service.rules.tiles import IS_DOUBLE, NAMES, TILE_COUNT

PROTO = Path(__file__).resolve().parents[2] / "proto" / "domino" / "v1" / "engine.proto"
CASES = [(name, n) for name, p in PRESETS.items() for n in range(p.min_players, p.max_players + 1)]


def played(variant: str, players: int, seed: int, steps: int = 150) -> list[tuple[Match, list[Any]]]:
    """Snapshots (match copy, events of that step) along a seeded random match, rounds dealt as they end."""
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


# ---------------------------------------------------------------- tiles and placements


def test_tile_ids_follow_the_contracts_table() -> None:
    """engine.proto's comment table ("0-0=0 ... 6-6=27") is the rules' tile order, and `ids` follows it."""
    table = {f"{a}-{b}": int(t) for a, b, t in re.findall(r"(\d)-(\d)=(\d+)", PROTO.read_text())}
    assert table == {name: t for t, name in enumerate(NAMES)} and len(table) == TILE_COUNT
    hand = ["0-0", "0-1", "0-6", "1-1", "1-2", "5-6", "6-6"]
    assert codec.ids(sum(1 << table[n] for n in hand)) == (0, 1, 6, 7, 8, 26, 27)
    assert codec.ids((1 << TILE_COUNT) - 1) == tuple(range(TILE_COUNT)) and codec.ids(0) == ()
    assert codec.hands_from_proto([pb.Hand(tiles=[0, 1, 6, 7, 8, 26, 27]), pb.Hand()], "hands") == [hand, []]
    with pytest.raises(MalformedError, match=r"^hands\[1\]\.tiles\[2\]: tile id 28 is not a tile \(0\.\.27\)$"):
        codec.hands_from_proto([pb.Hand(), pb.Hand(tiles=[3, 4, 28])], "hands")


def test_arms_and_endings_follow_the_enums_by_name() -> None:
    """ARM_PB and ENDINGS map the rules' names to the enum values of the same names; unknown endings are
    refused."""
    assert [pb.Arm.Name(a) for a in codec.ARM_PB] == [f"ARM_{name}" for name in ARM_NAMES]  # type: ignore[arg-type]
    assert codec.ENDINGS == {e: po.ENDING_PB[e] for e in po.ENDING_NAMES}
    assert codec.ending_from_proto(pb.ENDING_NONE, "ending") is None
    assert codec.ending_from_proto(pb.ENDING_SORTIR, "ending") == "sortir"
    with pytest.raises(MalformedError, match=r"^settle\.ending: unknown ending 7$"):
        codec.ending_from_proto(7, "settle.ending")


def test_placements_encode_lead_orientation_arm_and_closing() -> None:
    """"6-3" is the lead 3-6 flipped; "3-3@E!" closes E; "6-2@W" is 2-6 on W; arms beyond W are N2, S2 ..."""
    cases = {
        ("6-3", True): (21, pb.ARM_CENTER, False, True),
        ("3-6", True): (21, pb.ARM_CENTER, False, False),
        ("3-3@E!", False): (18, pb.ARM_E, True, False),
        ("6-2@W", False): (17, pb.ARM_W, False, False),
        ("0-0@N2", False): (0, pb.ARM_N2, False, False),
        ("5-5@S7", False): (25, pb.ARM_S7, False, False),
    }
    for (text, first), fields in cases.items():
        placed = parse_placement(text, first)
        assert codec.ENCODE_PLACEMENT[placed] == fields, text
        expected = po.placement_msg(text)
        assert (expected.tile, expected.arm, expected.closes, expected.flipped) == fields, text
        tile, arm, closes, flipped = fields
        back = codec.DECODE_LEAD[(tile, flipped)] if first else codec.DECODE_PLAY[(tile, arm, closes)]
        assert back == placed and format_placement(back) == po.placement_text(expected), text


def test_the_placement_tables_are_inverse_and_only_doubles_close() -> None:
    """Every placement the rules can make has one message and comes back from it."""
    leads = {p: f for p, f in codec.ENCODE_PLACEMENT.items() if p[1] == CENTER}
    plays = {p: f for p, f in codec.ENCODE_PLACEMENT.items() if p[1] != CENTER}
    assert len(set(codec.ENCODE_PLACEMENT.values())) == len(codec.ENCODE_PLACEMENT)
    for (tile, _arm, flag), (t, arm, closes, flipped) in leads.items():
        assert (t, arm, closes, flipped) == (tile, pb.ARM_CENTER, False, flag)
        assert codec.DECODE_LEAD[(t, flipped)] == (tile, CENTER, flag)
    for (tile, arm_index, flag), (t, arm, closes, flipped) in plays.items():
        assert (t, arm, closes, flipped) == (tile, codec.ARM_PB[arm_index], flag, False)
        assert codec.DECODE_PLAY[(t, arm, closes)] == (tile, arm_index, flag)
        assert IS_DOUBLE[tile] or not closes
    assert len(plays) == len(codec.DECODE_PLAY) == (TILE_COUNT + 7) * len(ARM_NAMES)
    assert len(leads) == len(codec.DECODE_LEAD)


# ---------------------------------------------------------------- request arguments


def test_options_travel_as_text_and_come_back_typed() -> None:
    """Typed options become the wire's text and come back typed by the preset's option types."""
    typed = {"target": 51, "double_pair": True, "fish_scoring": "max_takes_all", "open_threshold": -3}
    text = {"target": "51", "double_pair": "true", "fish_scoring": "max_takes_all", "open_threshold": "-3"}
    assert codec.options_to_proto(typed) == text
    assert codec.options_from_proto("kozel", text) == typed
    assert codec.options_to_proto({"boneyard_reserve": 2, "teams": False}) == {"boneyard_reserve": "2",
                                                                                 "teams": "false"}
    assert codec.options_from_proto("osel", {"boneyard_reserve": "2", "teams": "false"}) == {
        "boneyard_reserve": 2, "teams": False}
    # a count with words (threes-fives' boneyard_reserve "auto"): the word stays text, the digits an integer
    assert codec.options_from_proto("threes-fives", {"boneyard_reserve": "auto"}) == {"boneyard_reserve": "auto"}
    assert codec.options_from_proto("threes-fives", {"boneyard_reserve": "1"}) == {"boneyard_reserve": 1}
    # text that is not of the option's type, an unknown option or variant, is passed on for the rules to refuse
    for variant, options in (("kozel", {"target": "lots"}), ("kozel", {"double_pair": "yes"}),
                             ("kozel", {"eggs": "1"}), ("chess", {"target": "5"})):
        assert codec.options_from_proto(variant, options) == options
    with pytest.raises(MalformedError, match="target"):
        Match.new("kozel", 4, options=codec.options_from_proto("kozel", {"target": "lots"}))


@pytest.mark.parametrize("text", ["--5", "²"])
def test_option_text_that_is_no_number_is_passed_on_for_the_rules_to_refuse(text: str) -> None:
    """Text that only looks numeric to str.isdigit is not a number: passed on as text, never a ValueError."""
    assert codec.options_from_proto("kozel", {"target": text}) == {"target": text}


def test_deal_keeps_whether_a_boneyard_was_given() -> None:
    """A Deal becomes the rules' deal with exactly the keys given: an empty boneyard given stays given."""
    hands = [["1-1", "2-2"], ["3-3", "4-4"]]
    assert codec.deal_from_proto(po.deal_msg({"hands": hands})) == {"hands": hands}
    given = {"hands": hands, "boneyard": [], "leader": 1}
    assert codec.deal_from_proto(po.deal_msg(given)) == given
    assert codec.deal_from_proto(po.deal_msg({"hands": hands, "boneyard": ["6-6", "0-0"]})) == {
        "hands": hands, "boneyard": ["6-6", "0-0"]}
    # a boneyard without the flag is still a boneyard
    assert codec.deal_from_proto(pb.Deal(boneyard=[5]))["boneyard"] == ["0-5"]
    with pytest.raises(MalformedError, match=r"^deal\.hands\[0\]\.tiles\[0\]: tile id 30"):
        codec.deal_from_proto(pb.Deal(hands=[pb.Hand(tiles=[30])]))
    with pytest.raises(MalformedError, match=r"^deal\.boneyard\[1\]: tile id 99"):
        codec.deal_from_proto(pb.Deal(boneyard=[1, 99]))


def test_setup_comes_from_a_request() -> None:
    """The setup fields of a NewMatchRequest become the rules' setup, None when none is given."""
    request = pb.NewMatchRequest(written=[30, 32, 13], remembered=[1, 2, 3], pot=4, scores=[5, 6, 7])
    assert codec.setup_from_proto(request) == {"written": [30, 32, 13], "remembered": [1, 2, 3], "pot": 4,
                                               "scores": [5, 6, 7]}
    assert codec.setup_from_proto(pb.NewMatchRequest(written=[30, 32, 13])) == {"written": [30, 32, 13]}
    assert codec.setup_from_proto(pb.NewMatchRequest()) is None


# ---------------------------------------------------------------- what the typed face answers


def test_variants_listing_is_the_rules_listing() -> None:
    """ListVariants carries every field of `variants()` for the presets the typed face serves."""
    listed = [v for v in variants() if v["name"] in PRESETS]
    assert po.variants_list(codec.variants_to_proto(listed)) == listed


@pytest.mark.parametrize(("variant", "players"), CASES)
def test_events_and_score_rows_are_the_rules_ones(variant: str, players: int) -> None:
    """`events_to_proto` says what the rules' events say, read back by the oracle, over a whole match."""
    kinds: set[str] = set()
    for match, events in played(variant, players, seed=players * 7 + 1):
        messages = codec.events_to_proto(events)
        assert po.event_dicts(messages) == events
        kinds.update(e["type"] for e in events)
        for i, row in enumerate(match.ledger.history):
            assert po.record_dict(codec.record_to_proto(row)) == row
            assert codec.record_from_proto(po.record_msg(row), f"h[{i}]") == row
    assert {"round_dealt", "played", "round_ended"} <= kinds


def test_every_kind_of_event_is_covered() -> None:
    """The matches sampled here produce every kind of Event the contract has, so the tests above cover them
    all."""
    kinds = {e["type"] for name, n in (("kozel", 2), ("threes-fives", 2), ("kozel", 4), ("block", 2))
             for _, events in played(name, n, seed=3, steps=400) for e in events}
    for how in ("resign", "gone", "abort"):  # the exits of a match (issue 37), read back by the oracle
        match, _ = Match.new("all-fives", 4, options={"teams": True}, seed=3)
        events = match.end(how, 3)
        assert po.event_dicts(codec.events_to_proto(events)) == events
        kinds.update(e["type"] for e in events)
    assert kinds == {f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields}
    with pytest.raises(KeyError, match="exploded"):
        codec.events_to_proto([{"type": "exploded"}])


@pytest.mark.parametrize(("variant", "players"), CASES)
def test_seat_view_is_the_rules_view_for_every_seat(variant: str, players: int) -> None:
    """`seat_view_to_proto(match, seat)` read back by the oracle is `Match.view(seat)`, before, during and
    after rounds."""
    snapshots = [m for m, _ in played(variant, players, seed=players + 11, steps=200)]
    snapshots.append(Match.new(variant, players, no_deal=True)[0])
    sampled = snapshots[::4] + [m for m in snapshots if m.round is None or m.round.over or m.match_over]
    assert any(m.round is not None and m.round.over for m in sampled)
    for match in sampled:
        for seat in range(players):
            assert po.view_dict(codec.seat_view_to_proto(match, seat)) == match.view(seat)


def test_a_mid_round_four_player_kozel_state_is_compact() -> None:
    """A 4-player Kozel state mid-round is under 200 bytes on the wire, its action log (issue 18: a
    record can be written from any state) aside, which costs at most 7 bytes an entry (one field: its
    tag and length, then the entries joined by newlines)."""
    sizes = []
    for seed in range(30):
        match, _ = Match.new("kozel", 4, seed=seed)
        rng = random.Random(seed)
        while not match.round.over and len(match.round.layout.placements) < 14:  # type: ignore[union-attr]
            match.apply(rng.choice(match.legal_actions()))
        if not match.round.over:  # type: ignore[union-attr]
            log_bytes = 3 + sum(1 + len(item) for item in match.log)
            assert log_bytes <= 7 * len(match.log)
            sizes.append(len(wire.encode_state(match)) - log_bytes)
    assert len(sizes) > 10 and max(sizes) < 200, sizes


def test_docstring_examples() -> None:
    """The codec module's docstring examples hold."""
    import doctest

    assert doctest.testmod(codec).failed == 0
