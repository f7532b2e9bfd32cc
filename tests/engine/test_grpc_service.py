"""Every Engine RPC and every error mapping, against a real server process.

States go in as protobuf writes them (`proto_oracle` builds the message of a
state dict) and answers are read with `wire.decode_state` and compared with the
rules library playing the same moves. Garbage is refused cleanly on both faces:
INVALID_ARGUMENT (or FAILED_PRECONDITION), never INTERNAL.
"""
from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import orjson
import proto_oracle as po
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc

from engine_service.edge import wire
from engine_service.rules import PRESETS, Match, variants
from engine_service.rules.tiles import NAMES

pytestmark = pytest.mark.service

Stub = engine_pb2_grpc.EngineStub
JsonStub = engine_pb2_grpc.JsonEngineStub
IA = grpc.StatusCode.INVALID_ARGUMENT
FP = grpc.StatusCode.FAILED_PRECONDITION

#: Kozel, 4 players: tile ids dealt round robin (seat 3 holds 1-1 and must lead it).
ROUND_ROBIN = {"hands": [[NAMES[t] for t in range(s, 28, 4)] for s in range(4)]}
#: Seat 0 holds five doubles: a misdeal in `kozel`.
FIVE_DOUBLES = {"hands": [
    ["0-0", "1-1", "2-2", "3-3", "4-4", "0-1", "0-2"],
    ["0-3", "0-4", "0-5", "0-6", "1-2", "1-3", "1-4"],
    ["1-5", "1-6", "2-3", "2-4", "2-5", "2-6", "3-4"],
    ["3-5", "3-6", "4-5", "4-6", "5-5", "5-6", "6-6"],
]}


def refused(call: Any, request: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call(request, timeout=10)
    return info.value


def new_state(stub: Stub, seed: int = 42, variant: str = "kozel", players: int = 4) -> pb.MatchState:
    return stub.NewMatch(pb.NewMatchRequest(variant=variant, players=players, seed=seed), timeout=10).state


def library(state: pb.MatchState) -> Match:
    """The match a typed answer carries, as the engine itself reads it."""
    return wire.decode_state(state.SerializeToString())


def assert_state(state: pb.MatchState, match: Match) -> None:
    """A typed answer's state is the library's match: as protobuf would write it, and read back."""
    assert state == po.state_msg(match.to_dict())
    assert library(state).to_dict() == match.to_dict()


def json_call(method: Any, args: dict[str, Any], state: bytes = b"") -> dict[str, Any]:
    answer: dict[str, Any] = orjson.loads(method(pb.JsonCall(args=orjson.dumps(args), state=state),
                                                 timeout=10).answer)
    return answer


# ---------------------------------------------------------------- every RPC


def test_list_variants_lists_every_preset_with_its_options(stub: Stub) -> None:
    """ListVariants is the rules' listing of every preset served: those MatchState carries and Kingdomino."""
    reply = stub.ListVariants(pb.ListVariantsRequest(), timeout=10)
    served = [v for v in variants() if v["name"] in PRESETS or v["name"] == "kingdomino"]
    assert po.variants_list(reply) == served
    kozel = next(v for v in reply.variants if v.name == "kozel")
    assert (kozel.min_players, kozel.max_players) == (2, 4)
    target = next(o for o in kozel.options if o.name == "target")
    assert (target.type, target.default) == ("int", "101")


def test_new_match_from_a_seed_is_reproducible(stub: Stub) -> None:
    """A seed deals the same match every time, the library's, with every tile dealt."""
    request = pb.NewMatchRequest(variant="kozel", players=4, seed=7)
    first, second = stub.NewMatch(request, timeout=10), stub.NewMatch(request, timeout=10)
    assert first == second
    assert first.state.seed == 7 and first.state.round_number == 1
    assert first.events[0].WhichOneof("kind") == "round_dealt"
    match, events = Match.new("kozel", 4, seed=7)
    assert_state(first.state, match)
    assert po.event_dicts(first.events) == events
    assert sorted(t for h in first.state.round.hands for t in h.tiles) == list(range(28))


def test_new_match_without_seed_records_the_random_seed(stub: Stub) -> None:
    """Without a seed the engine picks one and records it: replaying it gives the same state."""
    reply = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=2), timeout=10)
    assert reply.state.HasField("seed")
    again = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=2, seed=reply.state.seed), timeout=10)
    assert again.state == reply.state


def test_new_match_with_an_explicit_deal_and_options(stub: Stub) -> None:
    """An explicit deal has no seed; options travel as text; the leader follows the deal."""
    request = pb.NewMatchRequest(variant="kozel", players=4, deal=po.deal_msg(ROUND_ROBIN),
                                 options={"target": "51"})
    reply = stub.NewMatch(request, timeout=10)
    assert not reply.state.HasField("seed")
    assert dict(reply.state.options) == {"target": "51"}
    assert reply.state.round.leader == 3
    legal = stub.LegalActions(pb.StateRequest(state=reply.state), timeout=10)
    assert (legal.seat, list(legal.actions)) == (3, ["1-1"])


def test_new_match_with_setup_and_no_deal(stub: Stub) -> None:
    """no_deal leaves the round absent; the setup lands in the ledger."""
    reply = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=3, written=[30, 32, 13], pot=2,
                                             no_deal=True), timeout=10)
    assert not reply.state.HasField("round") and list(reply.events) == []
    assert list(reply.state.ledger.written) == [30, 32, 13] and reply.state.ledger.pot == 2


def test_start_round_deals_the_next_round_or_refuses(stub: Stub) -> None:
    """StartRound deals explicitly or from the seed, and refuses a round in play or a match with no seed."""
    state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=4, no_deal=True), timeout=10).state
    dealt = stub.StartRound(pb.StartRoundRequest(state=state, deal=po.deal_msg(ROUND_ROBIN)), timeout=10)
    assert dealt.state.round_number == 1 and dealt.events[0].round_dealt.leader == 3
    err = refused(stub.StartRound, pb.StartRoundRequest(state=dealt.state))
    assert err.code() == FP and "still being played" in err.details()
    err = refused(stub.StartRound, pb.StartRoundRequest(state=state))  # no seed, no deal
    assert err.code() == FP and "no seed" in err.details()


def test_legal_actions_and_apply_match_the_library(stub: Stub) -> None:
    """Move by move, LegalActions and Apply answer the library's legal actions, state and events."""
    state = new_state(stub, seed=11)
    rng = random.Random(11)
    for _ in range(30):
        match = library(state)
        if match.round is None or match.round.over:
            break
        legal = stub.LegalActions(pb.StateRequest(state=state), timeout=10)
        assert (legal.seat, list(legal.actions)) == (match.to_move, match.legal_actions())
        action = rng.choice(list(legal.actions))
        reply = stub.Apply(pb.ApplyRequest(state=state, action=action, seat=legal.seat), timeout=10)
        events = match.apply(action)
        assert_state(reply.state, match)
        assert po.event_dicts(reply.events) == events
        state = reply.state


def test_replay_applies_everything_or_stops_at_the_first_refusal(stub: Stub) -> None:
    """Replay applies all or stops at the first refusal, saying which and why, with the state before it."""
    state = new_state(stub, seed=5)
    match = library(state)
    actions = []
    for _ in range(6):
        actions.append(match.legal_actions()[0])
        match.apply(actions[-1])
    whole = stub.Replay(pb.ReplayRequest(state=state, actions=actions), timeout=10)
    assert (whole.ok, whole.applied, whole.failed_index, whole.reason, whole.error_kind) == (True, 6, -1, "", "")
    assert_state(whole.state, match)

    before = library(state)
    for a in actions[:2]:
        before.apply(a)
    bad = stub.Replay(pb.ReplayRequest(state=state, actions=[*actions[:2], "6-6@Q", *actions[2:]]), timeout=10)
    assert (bad.ok, bad.applied, bad.failed_index, bad.error_kind) == (False, 2, 2, "malformed")
    assert "6-6@Q" in bad.reason
    assert_state(bad.state, before)

    illegal = stub.Replay(pb.ReplayRequest(state=state, actions=[actions[0], actions[0]]), timeout=10)
    assert (illegal.ok, illegal.applied, illegal.failed_index, illegal.error_kind) == (False, 1, 1, "illegal")
    assert [e.WhichOneof("kind") for e in illegal.events] == ["played"]

    empty = stub.Replay(pb.ReplayRequest(state=state), timeout=10)
    assert (empty.ok, empty.applied, empty.failed_index) == (True, 0, -1) and empty.state == state


def test_settle_scores_a_round_from_the_hands_left(stub: Stub) -> None:
    """Settle scores as the library does; only ENDING_OUT and ENDING_BLOCKED are accepted."""
    state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=2, no_deal=True), timeout=10).state
    hands = [[], ["6-6", "5-6"]]
    reply = stub.Settle(pb.SettleRequest(state=state, ending=pb.ENDING_OUT,
                                         hands=po.hand_msgs(hands)), timeout=10)
    expected = library(state)
    events = expected.settle("out", hands)
    assert_state(reply.state, expected)
    assert po.event_dicts(reply.events) == events
    record = reply.state.ledger.history[0]
    assert record.ending == pb.ENDING_OUT and list(record.round_points) == [0, 23]
    for ending in (pb.ENDING_NONE, pb.ENDING_FISH):
        err = refused(stub.Settle, pb.SettleRequest(state=state, ending=ending,
                                                    hands=po.hand_msgs(hands)))
        assert err.code() == IA and err.details().startswith("ending:")


def test_view_hides_the_other_hands(stub: Stub) -> None:
    """View shows a seat its own hand, the others' sizes and its legal actions only when it is to move."""
    state = new_state(stub, seed=9)
    match = library(state)
    for seat in range(4):
        view = stub.View(pb.ViewRequest(state=state, seat=seat), timeout=10)
        assert po.view_dict(view) == match.view(seat)
        assert list(view.hand.tiles) == list(state.round.hands[seat].tiles)
        assert list(view.hand_sizes) == [7, 7, 7, 7] and not view.revealed_hands
        assert bool(view.legal) == (seat == match.to_move)
    err = refused(stub.View, pb.ViewRequest(state=state, seat=4))
    assert err.code() == IA and "seat" in err.details()


def test_timeout_ends_the_match_with_the_rating_rule(stub: Stub) -> None:
    """Timeout ends a Kozel match with the rating rule; a second one is refused."""
    state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=3, written=[30, 32, 13], no_deal=True),
                          timeout=10).state
    reply = stub.Timeout(pb.TimeoutRequest(state=state, seat=1), timeout=10)
    assert reply.state.match_over and list(reply.state.rating) == [1, 0, 2]
    assert reply.state.timed_out == 1
    assert reply.events[-1].WhichOneof("kind") == "match_ended"
    err = refused(stub.Timeout, pb.TimeoutRequest(state=reply.state, seat=0))
    assert err.code() == FP and "over" in err.details()


# ---------------------------------------------------------------- error mapping


def test_malformed_input_is_invalid_argument_naming_what_is_wrong(stub: Stub) -> None:
    """Bad notation, variants, options, deals: INVALID_ARGUMENT with details naming what is wrong."""
    state = new_state(stub)
    cases = [
        (stub.Apply, pb.ApplyRequest(state=state, action="9-9"), 'action: "9-9" is not an action'),
        (stub.Apply, pb.ApplyRequest(action="pass"), "state: required"),
        (stub.NewMatch, pb.NewMatchRequest(variant="nope", players=4), 'variant: no variant "nope"'),
        (stub.NewMatch, pb.NewMatchRequest(variant="kozel", players=9), "players: kozel is played by 2-4"),
        (stub.NewMatch, pb.NewMatchRequest(variant="kozel", players=4, options={"eggs": "1"}), "eggs"),
        (stub.NewMatch, pb.NewMatchRequest(variant="kozel", players=4, options={"target": "x"}),
         'options.target: expected an integer 1..100000, got "x"'),
        (stub.NewMatch, pb.NewMatchRequest(variant="kozel", players=4, no_deal=True,
                                           deal=po.deal_msg(ROUND_ROBIN)), "deal and no_deal"),
        (stub.NewMatch, pb.NewMatchRequest(variant="kozel", players=4, deal=pb.Deal(hands=[pb.Hand(tiles=[30])])),
         "deal.hands[0].tiles[0]: tile id 30"),
    ]
    for call, request, needle in cases:
        err = refused(call, request)
        assert err.code() == IA, (needle, err.details())
        assert needle in err.details()


def test_illegal_actions_are_failed_precondition(stub: Stub) -> None:
    """Well-formed actions the rules forbid now: FAILED_PRECONDITION."""
    state = new_state(stub, seed=42)
    match = library(state)
    not_held = next(n for n in NAMES if n not in match.to_dict()["round"]["hands"][match.to_move])
    for request, needle in [
        (pb.ApplyRequest(state=state, action=not_held), "does not hold"),
        (pb.ApplyRequest(state=state, action=match.legal_actions()[0], seat=(match.to_move + 1) % 4), "turn"),
        (pb.ApplyRequest(state=state, action="draw"), ""),
    ]:
        err = refused(stub.Apply, request)
        assert err.code() == FP and needle in err.details()


def test_a_misdeal_is_failed_precondition_starting_misdeal(stub: Stub) -> None:
    """A refused explicit deal is FAILED_PRECONDITION with details starting misdeal:; without the rule it
    deals."""
    err = refused(stub.NewMatch, pb.NewMatchRequest(variant="kozel", players=4,
                                                    deal=po.deal_msg(FIVE_DOUBLES)))
    assert err.code() == FP and err.details().startswith("misdeal:")
    # the same deal is fine without the misdeal rule
    ok = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=4, options={"misdeal": "none"},
                                          deal=po.deal_msg(FIVE_DOUBLES)), timeout=10)
    assert ok.state.round_number == 1


def _state_dict(stub: Stub) -> dict[str, Any]:
    return library(new_state(stub, seed=3)).to_dict()


@pytest.mark.parametrize("damage,needle", [
    (lambda d: d["round"]["hands"][0].append(d["round"]["hands"][1][0]), "twice"),
    (lambda d: d["round"]["hands"][0].pop(), "missing"),
    (lambda d: d["round"]["hands"].pop(), "hands"),
    (lambda d: d["round"].update(layout=["5-6", "1-2@E"]), ""),
    (lambda d: d.update(variant="chess"), "chess"),
    (lambda d: d.update(players=7), "players"),
    (lambda d: d["round"].update(to_move=9), "to_move"),
    (lambda d: d["ledger"].update(written=[1, 2]), "written"),
])
def test_garbage_states_are_refused_cleanly_on_both_faces(stub: Stub, json_stub: JsonStub, damage: Any,
                                                          needle: str) -> None:
    """The same inconsistent state as a MatchState (typed face) and as JSON (JSON face): INVALID_ARGUMENT."""
    d = _state_dict(stub)
    damage(d)
    err = refused(stub.LegalActions, pb.StateRequest(state=po.state_msg(d)))
    assert err.code() == IA and needle in err.details()
    err = refused(json_stub.LegalActions, pb.JsonCall(args=orjson.dumps({"state": d})))
    assert err.code() == IA and needle in err.details()


@pytest.mark.parametrize("method", ["/domino.v1.Engine/Apply", "/domino.v1.JsonEngine/Apply"])
def test_undecodable_bytes_are_invalid_argument(channel: grpc.Channel, method: str) -> None:
    """Bytes that are no request at all: INVALID_ARGUMENT on both faces, not grpcio's INTERNAL."""
    raw = channel.unary_unary(method)
    with pytest.raises(grpc.RpcError) as info:
        raw(b"\xff\xff\xff\xff\x0f", timeout=10)
    assert info.value.code() == IA


def test_messages_over_the_limit_are_resource_exhausted(stub: Stub) -> None:
    """Over the message limit: RESOURCE_EXHAUSTED; just under it: refused on its merits, with short details."""
    state = new_state(stub)
    err = refused(stub.Apply, pb.ApplyRequest(state=state, action="x" * (300 * 1024)))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # just under the limit is read, and refused on its merits with a short message
    err = refused(stub.Apply, pb.ApplyRequest(state=state, action="x" * (200 * 1024)))
    assert err.code() == IA and len(err.details()) <= 500


def _outcome(call: Any, request: Any) -> str:
    try:
        call(request, timeout=10)
        return "OK"
    except grpc.RpcError as err:
        return str(err.code().name)


SAFE_CODES = {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION"}


def test_randomly_damaged_bytes_never_crash_the_server(channel: grpc.Channel, stub: Stub) -> None:
    """Byte-level damage to a real request: answered OK, INVALID_ARGUMENT or FAILED_PRECONDITION."""
    rng = random.Random(2024)
    raw = channel.unary_unary("/domino.v1.Engine/Apply")
    base = pb.ApplyRequest(state=new_state(stub, seed=8), action="pass").SerializeToString()
    codes: dict[str, int] = {}
    for _ in range(250):
        data = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        code = _outcome(raw, bytes(data))
        codes[code] = codes.get(code, 0) + 1
    assert set(codes) <= SAFE_CODES, codes
    assert codes.get("INVALID_ARGUMENT", 0) > 100, codes


def _damage(d: dict[str, Any], rng: random.Random) -> None:
    """One plausible-looking but inconsistent change to a state dict."""
    rnd = d["round"]
    hands = rnd["hands"]
    kind = rng.randrange(8)
    if kind == 0:  # a tile changes hands
        src, dst = rng.sample(range(len(hands)), 2)
        if hands[src]:
            hands[dst].append(hands[src].pop(rng.randrange(len(hands[src]))))
    elif kind == 1 and rnd["layout"]:  # a layout entry names another tile
        i = rng.randrange(len(rnd["layout"]))
        tile = rng.choice(NAMES)
        rnd["layout"][i] = tile if i == 0 else f"{tile}@{rng.choice('NESW')}"
    elif kind == 2:
        rnd[rng.choice(["to_move", "leader", "passes", "reserve"])] = rng.randrange(6)
    elif kind == 3:
        rnd["over"] = not rnd["over"]
        rnd["ending"] = rng.choice([None, "out", "fish", "blocked", "sortir"])
        rnd["winner"] = rng.choice([None, 0, 3, 5])
    elif kind == 4:
        rnd["layout"].reverse()
    elif kind == 5:
        d["ledger"]["history"].append({"number": rng.randrange(5), "ending": "fish",
                                       "round_points": [rng.randrange(-5, 200) for _ in hands]})
    elif kind == 6:
        rnd["out"] = [rng.randrange(len(hands))]
    else:
        d[rng.choice(["round_number", "next_leader", "timed_out"])] = rng.randrange(5)
        d["match_over"] = rng.random() < 0.3


def test_randomly_inconsistent_states_never_crash_the_server(stub: Stub, json_stub: JsonStub) -> None:
    """Well-formed but impossible states, on both faces: refused INVALID_ARGUMENT (or played on), never
    INTERNAL."""
    rng = random.Random(7)
    codes: dict[tuple[str, str], int] = {}
    for i in range(200):
        match = library(new_state(stub, seed=i, variant=rng.choice(["kozel", "osel", "all-fives", "bykovo"])))
        for _ in range(rng.randrange(12)):
            if match.round is None or match.round.over:
                break
            match.apply(rng.choice(match.legal_actions()))
        d = match.to_dict()
        for _ in range(rng.randint(1, 2)):
            _damage(d, rng)
        state = po.state_msg(d)
        action = rng.choice(["pass", "draw", "1-1"])
        seat = rng.randrange(4)
        for call, request in [(stub.LegalActions, pb.StateRequest(state=state)),
                              (stub.Apply, pb.ApplyRequest(state=state, action=action)),
                              (stub.View, pb.ViewRequest(state=state, seat=seat)),
                              (json_stub.Apply, pb.JsonCall(args=orjson.dumps({"state": d, "action": action}))),
                              (json_stub.View, pb.JsonCall(args=orjson.dumps({"state": d, "seat": seat})))]:
            code = _outcome(call, request)
            face = "json" if isinstance(request, pb.JsonCall) else "typed"
            codes[face, code] = codes.get((face, code), 0) + 1
    assert {code for _, code in codes} <= SAFE_CODES, codes
    assert codes.get(("typed", "INVALID_ARGUMENT"), 0) > 200, codes
    assert codes.get(("json", "INVALID_ARGUMENT"), 0) > 150, codes


def test_concurrent_calls_are_independent(stub: Stub) -> None:
    """Sixteen matches played at once on eight threads each end where the library does."""
    def play(seed: int) -> bool:
        state = new_state(stub, seed=seed)
        match = library(state)
        for _ in range(10):
            action = match.legal_actions()[0]
            state = stub.Apply(pb.ApplyRequest(state=state, action=action), timeout=10).state
            match.apply(action)
            if match.round is None or match.round.over:
                break
        return library(state).to_dict() == match.to_dict()

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(play, range(16)))


# ---------------------------------------------------------------- inputs that once answered INTERNAL


def test_option_text_that_is_no_number_is_invalid_argument(stub: Stub) -> None:
    """An int option given as text that is no number is the caller's error, not INTERNAL."""
    err = refused(stub.NewMatch, pb.NewMatchRequest(variant="kozel", players=4, seed=1, options={"target": "--5"}))
    assert err.code() == IA and "target" in err.details()


def _request_with(state: bytes, tail: bytes) -> bytes:
    """A serialized StateRequest whose state is `state` followed by the raw bytes `tail`."""
    inner = state + tail
    assert len(inner) < 1 << 14
    size = bytes([len(inner)]) if len(inner) < 128 else bytes([len(inner) & 127 | 128, len(inner) >> 7])
    return b"\x0a" + size + inner


def test_a_state_with_a_field_of_the_wrong_wire_type_is_read_as_protobuf_reads_it(channel: grpc.Channel,
                                                                                  stub: Stub) -> None:
    """A field of the wrong wire type is an unknown field to protobuf: the engine must read the rest, not fail
    INTERNAL."""
    state = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=4, seed=3, no_deal=True), timeout=10).state
    raw = channel.unary_unary("/domino.v1.Engine/LegalActions", response_deserializer=pb.LegalActionsResponse.FromString)
    # field 7 (the round, a message) as a varint: protobuf keeps it aside and reads a match not yet dealt
    assert _outcome(raw, _request_with(state.SerializeToString(), b"\x38\x05")) == "OK"
