"""The JSON face (`domino.v1.JsonEngine`) against a real engine process.

- Differential: seeded random matches of every preset and player count played
  move by move on both faces at once agree after every move (state, events,
  legal actions), and agree with the rules library.
- Sealed mode: the state travels as MatchState bytes and `view_as` names the
  viewer; the answer shows that viewer's view (`rules.views.view_for`) and the
  events as it may see them (another seat's drawn tile is null).
- Refusals: INVALID_ARGUMENT naming the argument or the state's field, with the
  rules' own messages; garbage is never INTERNAL.
"""
from __future__ import annotations

import base64
import copy
import json
import random
from pathlib import Path
from typing import Any

import grpc
import orjson
import proto_oracle as po
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc

from engine_service.edge import codec, game_state, wire
from engine_service.rules import PRESETS, MalformedError, Match
from engine_service.rules.views import public_view, redact_events, view_for

pytestmark = pytest.mark.service

Stub = engine_pb2_grpc.EngineStub
JsonStub = engine_pb2_grpc.JsonEngineStub
Json = dict[str, Any]
IA = grpc.StatusCode.INVALID_ARGUMENT
FP = grpc.StatusCode.FAILED_PRECONDITION
CASES = [(name, n) for name, p in PRESETS.items() for n in range(p.min_players, p.max_players + 1)]
MOVES = 45


def call(method: Any, args: Json, state: bytes = b"") -> tuple[Json, bytes]:
    """A JSON-face call: (its answer's JSON, its state bytes)."""
    reply: pb.JsonAnswer = method(pb.JsonCall(args=orjson.dumps(args), state=state), timeout=10)
    answer: Json = orjson.loads(reply.answer)
    return answer, reply.state


def refused(method: Any, args: Json | bytes, state: bytes = b"") -> grpc.RpcError:
    raw = args if isinstance(args, bytes) else orjson.dumps(args)
    with pytest.raises(grpc.RpcError) as info:
        method(pb.JsonCall(args=raw, state=state), timeout=10)
    return info.value


def sealed_match(state: bytes) -> Match:
    """The match in a sealed answer's bytes (a GameState holding a MatchState)."""
    game = game_state.decode(state)
    assert isinstance(game, Match) and pb.GameState.FromString(state).WhichOneof("kind") == "match"
    return game


def decoded(state: bytes) -> Json:
    return sealed_match(state).to_dict()


# ---------------------------------------------------------------- both faces, move by move


def _typed_state(reply: Any) -> Json:
    return wire.decode_state(reply.state.SerializeToString()).to_dict()


def _same_events(typed: Any, events: list[Json]) -> None:
    assert list(typed) == codec.events_to_proto(events)
    assert po.event_dicts(typed) == events


@pytest.mark.parametrize(("variant", "players"), CASES)
def test_both_faces_play_the_same_match(stub: Stub, json_stub: JsonStub, variant: str, players: int) -> None:
    """Typed Apply with a MatchState and JSON Apply with args.state, in parallel: same states, same events,
    same legal actions after every move and every new round, and the library's."""
    seed = 100 + 7 * players + len(variant)
    rng = random.Random(seed)
    typed = stub.NewMatch(pb.NewMatchRequest(variant=variant, players=players, seed=seed), timeout=10)
    answer, sealed = call(json_stub.NewMatch, {"variant": variant, "players": players, "seed": seed})
    match, events = Match.new(variant, players, seed=seed)
    assert sealed == b"" and set(answer) == {"state", "scores", "events"}
    kinds = set()
    for _ in range(MOVES):
        assert _typed_state(typed) == answer["state"] == match.to_dict()
        _same_events(typed.events, answer["events"])
        assert answer["events"] == events
        kinds.update(e["type"] for e in events)
        if match.match_over:
            break
        if match.round is not None and match.round.over:
            typed = stub.StartRound(pb.StartRoundRequest(state=typed.state), timeout=10)
            answer, _ = call(json_stub.StartRound, {"state": answer["state"]})
            events = match.start_round()
            continue
        legal = stub.LegalActions(pb.StateRequest(state=typed.state), timeout=10)
        listed, _ = call(json_stub.LegalActions, {"state": answer["state"]})
        assert listed == {"seat": legal.seat, "actions": list(legal.actions)}
        assert (legal.seat, list(legal.actions)) == (match.to_move, match.legal_actions())
        action = rng.choice(listed["actions"])
        typed = stub.Apply(pb.ApplyRequest(state=typed.state, action=action, seat=legal.seat), timeout=10)
        answer, _ = call(json_stub.Apply, {"state": answer["state"], "action": action, "seat": legal.seat})
        events = match.apply(action, legal.seat)
    assert "played" in kinds


def test_both_faces_settle_time_out_and_deal_alike(stub: Stub, json_stub: JsonStub) -> None:
    """The calls that change a match besides Apply: the same answer on both faces."""
    deal = {"hands": [["0-0", "1-2", "2-3", "3-4", "4-5", "5-6", "0-6"],
                      ["1-1", "0-1", "1-3", "2-4", "3-5", "4-6", "0-2"]]}  # the boneyard: the rest, ascending
    typed = stub.NewMatch(pb.NewMatchRequest(variant="kozel", players=2, no_deal=True, written=[20, 0]), timeout=10)
    answer, _ = call(json_stub.NewMatch, {"variant": "kozel", "players": 2, "no_deal": True,
                                          "setup": {"written": [20, 0]}})
    assert _typed_state(typed) == answer["state"]
    hands = [[], ["6-6", "5-6"]]
    settled = stub.Settle(pb.SettleRequest(state=typed.state, ending=pb.ENDING_OUT, hands=po.hand_msgs(hands),
                                           last_placer=0), timeout=10)
    answer, _ = call(json_stub.Settle, {"state": answer["state"], "ending": "out", "hands": hands,
                                        "last_placer": 0})
    assert _typed_state(settled) == answer["state"]
    _same_events(settled.events, answer["events"])
    dealt = stub.StartRound(pb.StartRoundRequest(state=settled.state, deal=po.deal_msg(deal)), timeout=10)
    answer, _ = call(json_stub.StartRound, {"state": answer["state"], "deal": deal})
    assert _typed_state(dealt) == answer["state"]
    assert answer["state"]["round"]["hands"][0] == sorted(deal["hands"][0], key=po.tile_id)
    _same_events(dealt.events, answer["events"])
    ended = stub.Timeout(pb.TimeoutRequest(state=dealt.state, seat=1), timeout=10)
    answer, _ = call(json_stub.Timeout, {"state": answer["state"], "seat": 1})
    assert _typed_state(ended) == answer["state"] and answer["state"]["match_over"]
    _same_events(ended.events, answer["events"])
    for seat in range(2):
        view, _ = call(json_stub.View, {"state": answer["state"], "seat": seat})
        typed = po.view_dict(stub.View(pb.ViewRequest(state=ended.state, seat=seat), timeout=10))
        assert {"view": typed, "scores": answer["scores"]} == view


# ---------------------------------------------------------------- sealed


def test_a_sealed_new_match_shows_the_host_the_public_view(json_stub: JsonStub) -> None:
    """NewMatch with view_as: the state only as bytes; the host sees the public view, a seat its own."""
    answer, state = call(json_stub.NewMatch, {"variant": "kozel", "players": 2, "seed": 5, "view_as": "host"})
    match, events = Match.new("kozel", 2, seed=5)
    assert set(answer) == {"view", "scores", "events"}  # the state travels as bytes only
    assert decoded(state) == match.to_dict()
    assert answer["view"] == public_view(match)
    assert answer["view"]["seat"] is None and answer["view"]["hand"] == [] and answer["view"]["legal"] == []
    assert answer["view"]["hand_sizes"] == [7, 7] and answer["events"] == events
    seat_view, state = call(json_stub.NewMatch, {"variant": "kozel", "players": 2, "seed": 5, "view_as": 1})
    assert seat_view["view"] == match.view(1) and decoded(state) == match.to_dict()


def test_sealed_apply_shows_the_viewer_its_view_and_hides_the_others_draws(json_stub: JsonStub) -> None:
    """Two-player Kozel with draws: the drawing seat sees its tile, the other seat and the host see null."""
    rng = random.Random(2)
    _, state = call(json_stub.NewMatch, {"variant": "kozel", "players": 2, "seed": 11, "view_as": "host"})
    match, _ = Match.new("kozel", 2, seed=11)
    draws = 0
    while match.legal_actions():
        mover = match.to_move
        action = rng.choice(match.legal_actions())
        after = match.copy()
        events = after.apply(action)
        for viewer in (mover, 1 - mover, None):
            answer, new_state = call(json_stub.Apply, {"action": action, "view_as": "host" if viewer is None
                                                       else viewer}, state)
            assert decoded(new_state) == after.to_dict()
            assert answer["view"] == view_for(after, viewer)
            assert answer["events"] == redact_events(events, viewer)
            for e in answer["events"]:
                if e["type"] == "drew":
                    draws += 1
                    assert (e["tile"] is not None) == (viewer == e["seat"] == mover)
        state, match = new_state, after
    assert draws >= 6  # seen by the three viewers: at least two draws


def test_sealed_legal_actions_only_for_the_seat_to_move(json_stub: JsonStub) -> None:
    """Sealed LegalActions: every viewer learns whose turn it is, only that seat its actions; no new state."""
    _, state = call(json_stub.NewMatch, {"variant": "kozel", "players": 4, "seed": 42, "view_as": "host"})
    match = sealed_match(state)
    for viewer in (0, 1, 2, 3, "host"):
        answer, unchanged = call(json_stub.LegalActions, {"view_as": viewer}, state)
        shown = match.legal_actions() if viewer == match.to_move else []
        assert answer == {"seat": match.to_move, "actions": shown} and unchanged == b""
    assert match.legal_actions()  # the seat to move does see something


def test_sealed_view_is_the_viewers_view(json_stub: JsonStub) -> None:
    """Sealed View is `rules.views.view_for` for each seat and the host, along a few moves."""
    rng = random.Random(4)
    _, state = call(json_stub.NewMatch, {"variant": "threes-fives", "players": 3, "seed": 4, "view_as": "host"})
    for _ in range(6):
        match = sealed_match(state)
        for viewer in (0, 1, 2, None):
            answer, unchanged = call(json_stub.View, {"view_as": "host" if viewer is None else viewer}, state)
            assert answer == {"view": view_for(match, viewer), "scores": match.ledger.scores} and unchanged == b""
        _, state = call(json_stub.Apply, {"action": rng.choice(match.legal_actions()), "view_as": "host"}, state)


def test_sealed_replay_with_a_seat_applies_only_that_seats_actions(json_stub: JsonStub) -> None:
    """Sealed Replay with `seat` stops at the first action of another seat; nothing applied, no new state."""
    _, state = call(json_stub.NewMatch, {"variant": "kozel", "players": 4, "seed": 42, "view_as": "host"})
    match = sealed_match(state)
    mover = match.to_move
    first = match.legal_actions()[0]
    after = match.copy()
    events = after.apply(first)
    second = after.legal_actions()[0]  # the next seat's
    answer, new_state = call(json_stub.Replay, {"actions": [first, second], "seat": mover, "view_as": mover}, state)
    assert (answer["applied"], answer["ok"], answer["failed_index"], answer["error_kind"]) == (1, False, 1, "illegal")
    assert f"seat {after.to_move}" in answer["reason"]
    assert decoded(new_state) == after.to_dict() and answer["view"] == after.view(mover)
    assert answer["events"] == redact_events(events, mover)
    # the other seat's action first: nothing applied, no new state
    answer, unchanged = call(json_stub.Replay, {"actions": [second], "seat": mover, "view_as": mover}, new_state)
    assert (answer["applied"], answer["ok"]) == (0, False) and unchanged == b""
    # without `seat`, each action is the seat to move's
    answer, both = call(json_stub.Replay, {"actions": [first, second], "view_as": "host"}, state)
    assert (answer["applied"], answer["ok"]) == (2, True)
    after.apply(second)
    assert decoded(both) == after.to_dict()


def test_sealed_settle_start_round_and_timeout_answer_the_new_state_as_bytes(json_stub: JsonStub) -> None:
    """Settle, Timeout and StartRound sealed: the new state as bytes is the library's, with the viewer's view."""
    _, state = call(json_stub.NewMatch, {"variant": "kozel", "players": 3, "no_deal": True, "view_as": "host",
                                         "setup": {"written": [30, 32, 13]}})
    match = sealed_match(state)
    answer, state = call(json_stub.Settle, {"ending": "out", "hands": [[], ["6-6"], ["5-5"]], "view_as": 0}, state)
    events = match.settle("out", [[], ["6-6"], ["5-5"]])
    assert decoded(state) == match.to_dict() and answer["events"] == events and answer["view"] == match.view(0)
    answer, state = call(json_stub.Timeout, {"seat": 2, "view_as": "host"}, state)
    events = match.timeout(2)
    assert decoded(state) == match.to_dict() and answer["events"] == events and match.match_over
    _, state = call(json_stub.NewMatch, {"variant": "kozel", "players": 2, "seed": 8, "no_deal": True,
                                         "view_as": "host"})
    answer, state = call(json_stub.StartRound, {"view_as": 1}, state)
    match, _ = Match.new("kozel", 2, seed=8)
    assert decoded(state) == match.to_dict() and answer["view"] == match.view(1)


@pytest.mark.parametrize(("args", "sealed", "details"), [
    ({"state": {}, "view_as": 0}, True, "state: give the state in args or as bytes, not both"),
    ({}, True, "view_as: required"),
    ({"view_as": 2}, True, "view_as: a seat 0..1 or 'host', not 2"),
    ({"view_as": -1}, True, "view_as: a seat 0..1 or 'host', not -1"),
    ({"view_as": "nobody"}, True, "view_as: a seat or 'host', not 'nobody'"),
    ({"view_as": True}, True, "view_as: "),
    ({"view_as": 0, "colour": "red"}, True, "colour: unknown argument"),
    ({"view_as": 0}, False, "view_as: only with a sealed state"),
    ({}, False, "state: required"),
])
def test_sealed_refusals_name_the_argument(json_stub: JsonStub, args: Json, sealed: bool, details: str) -> None:
    """State given twice, view_as missing, out of range or not a seat, unknown keys: INVALID_ARGUMENT naming
    it."""
    _, state = call(json_stub.NewMatch, {"variant": "kozel", "players": 2, "seed": 5, "view_as": "host"})
    for method in (json_stub.LegalActions, json_stub.View):
        err = refused(method, args, state if sealed else b"")
        assert err.code() == IA and err.details().startswith(details), err.details()


def test_refusals_of_the_arguments_themselves(json_stub: JsonStub) -> None:
    """Arguments that are not JSON, not an object, unknown or missing: INVALID_ARGUMENT naming them."""
    cases: list[tuple[Any, Json | bytes, str]] = [
        (json_stub.NewMatch, {"variant": "kozel", "players": 2, "view_as": 2}, "view_as: a seat 0..1"),
        (json_stub.NewMatch, {"variant": "kozel", "players": 2, "no_deal": "yes"}, "no_deal: expected true or false"),
        (json_stub.NewMatch, {"variant": "kozel", "players": 2, "seats": 2}, "seats: unknown argument"),
        (json_stub.NewMatch, b"{not json", "args: not JSON"),
        (json_stub.NewMatch, b"[1, 2]", "args: expected a JSON object"),
        (json_stub.ListVariants, {"variant": "kozel"}, "variant: unknown argument"),
        (json_stub.Apply, {"state": {}}, "action: required"),
        (json_stub.Replay, {"state": {}, "actions": "1-1"}, "actions: required, a list"),
        (json_stub.View, {"state": Match.new("kozel", 2, seed=1)[0].to_dict()}, "seat: required"),
        (json_stub.Timeout, {"state": {}}, "seat: required"),
        (json_stub.RecordTournamentRound, {"state": {}, "points": [0, 1, 2, 3]}, "state: "),
    ]
    for method, args, details in cases:
        err = refused(method, args)
        assert err.code() == IA and err.details().startswith(details), (details, err.details())


# ---------------------------------------------------------------- a bad transparent state


def _state() -> Json:
    match, _ = Match.new("kozel", 4, seed=3)
    match.apply(match.legal_actions()[0])
    return match.to_dict()



@pytest.mark.parametrize(("damage", "path"), [
    (lambda d: d["round"]["hands"][2].__setitem__(0, "9-9"), "state.round.hands[2]"),
    (lambda d: d["round"].update(boneyard=["7-7"]), "state.round.boneyard[0]"),
    (lambda d: d["round"]["layout"].append("1-2@Q"), "state.round.layout[1]"),
    (lambda d: d["round"]["hands"].pop(), "state.round.hands"),
    (lambda d: d["round"].update(to_move=9), "state.round.to_move"),
    (lambda d: d["round"].update(ending="won", over=True), "state.round.ending"),
    (lambda d: d.update(seed=-1), "state.seed"),
    (lambda d: d["ledger"].update(history=[{"ending": "fish", "winner": []}]), "state.ledger.history[0].winner"),
    (lambda d: d["ledger"].update(written=[1, "x", 3, 4]), "state.ledger.written"),
])
def test_a_bad_transparent_state_is_refused_with_the_rules_message_naming_the_field(
        json_stub: JsonStub, damage: Any, path: str) -> None:
    """A damaged JSON state is refused with exactly the rules' message, which names the field."""
    d = _state()
    damage(d)
    with pytest.raises(MalformedError) as rules:
        Match.from_dict(d)
    for method, args in ((json_stub.LegalActions, {"state": d}), (json_stub.Apply, {"state": d, "action": "pass"})):
        err = refused(method, args)
        assert err.code() == IA and err.details() == str(rules.value)
        assert path in err.details(), err.details()


# ---------------------------------------------------------------- garbage


def _garbage(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, 1, -1, 3, 27, 28, 2**31, 2**63 - 1, -(2**63)])
    if kind == 3:
        return rng.choice([0.5, -2.0, 1e300])
    if kind == 4:
        return rng.choice(["", "1-1", "9-9", "kozel", "out", "N", "host", "x" * 50])
    if kind == 5:
        return []
    if kind == 6:
        return [_garbage(rng, depth + 1) for _ in range(rng.randrange(5))]
    keys = ["variant", "players", "round", "hands", "layout", "ledger", "history", "ending", "options", "seed", "x"]
    return {rng.choice(keys): _garbage(rng, depth + 1) for _ in range(rng.randrange(5))}


def _damaged_dict(d: Any, rng: random.Random) -> None:
    """Replace one value somewhere inside a state dict by garbage."""
    while True:
        keys = list(d) if isinstance(d, dict) else list(range(len(d)))
        if not keys:
            return
        key = rng.choice(keys)
        if isinstance(d[key], (dict, list)) and d[key] and rng.random() < 0.6:
            d = d[key]
            continue
        d[key] = _garbage(rng)
        return


def test_json_garbage_in_the_state_is_never_internal(json_stub: JsonStub) -> None:
    """Random JSON where the state goes, and real states with a random value replaced: refused (or read),
    never INTERNAL."""
    rng = random.Random(21)
    states = [_state(), Match.new("threes-fives", 3, seed=2)[0].to_dict(),
              Match.new("osel", 4, seed=2, no_deal=True)[0].to_dict()]
    codes: dict[str, int] = {}
    for i in range(400):
        if i % 4 == 0:
            state = _garbage(rng)
        else:
            state = copy.deepcopy(rng.choice(states))
            for _ in range(rng.randint(1, 2)):
                _damaged_dict(state, rng)
        try:
            call(json_stub.LegalActions, {"state": state})
            code = "OK"
        except grpc.RpcError as err:
            code = err.code().name
            assert err.code() != grpc.StatusCode.INTERNAL, (state, err.details())
        codes[code] = codes.get(code, 0) + 1
    assert set(codes) <= {"OK", "INVALID_ARGUMENT", "FAILED_PRECONDITION"}, codes
    assert codes["INVALID_ARGUMENT"] > 250, codes


def test_random_bytes_as_a_sealed_state_are_never_internal(json_stub: JsonStub) -> None:
    """Random bytes, and sealed states with bytes changed, with a view_as: refused (or read), never INTERNAL."""
    rng = random.Random(5)
    blobs = [call(json_stub.NewMatch, {"variant": v, "players": 4, "seed": 9, "view_as": "host"})[1]
             for v in ("kozel", "osel", "bykovo")]
    codes: dict[str, int] = {}
    for i in range(300):
        if i % 3 == 0:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 120)))
        else:
            damaged = bytearray(rng.choice(blobs))
            for _ in range(rng.randint(1, 3)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
            data = bytes(damaged)
        try:
            call(json_stub.View, {"view_as": rng.choice([0, "host"])}, data)
            code = "OK"
        except grpc.RpcError as err:
            code = err.code().name
        codes[code] = codes.get(code, 0) + 1
    assert set(codes) <= {"OK", "INVALID_ARGUMENT"}, codes
    assert codes["INVALID_ARGUMENT"] > 200, codes


# ---------------------------------------------------------------- the sealed game's kind (issue 26)

EARLIER = Path(__file__).parent / "data" / "earlier_sealed_states.json"


def test_sealed_bytes_are_a_game_state_in_protobufs_canonical_encoding(json_stub: JsonStub) -> None:
    """A sealed answer's bytes are a GameState whose `kind` says the game, exactly as protobuf's
    deterministic serializer writes it, for both kinds."""
    for variant, players in (("kozel", 4), ("kingdomino", 3)):
        _, state = call(json_stub.NewMatch, {"variant": variant, "players": players, "seed": 5, "view_as": "host"})
        message = pb.GameState.FromString(state)
        assert message.WhichOneof("kind") == ("kingdomino" if variant == "kingdomino" else "match")
        assert message.SerializeToString(deterministic=True) == state
        assert game_state.encode(game_state.decode(state)) == state


def test_sealed_states_of_earlier_releases_still_read(json_stub: JsonStub) -> None:
    """Bare MatchState and KingdominoState bytes, which earlier releases sealed (saved in
    tests/engine/data), read by their variant: the same game, and a call on them answers the new form."""
    saved = json.loads(EARLIER.read_text())["states"]
    assert {s["variant"] for s in saved} == {"kozel", "kingdomino"}
    for entry in saved:
        old = base64.b64decode(entry["sealed"])
        assert pb.GameState.FromString(old).WhichOneof("kind") is None  # a bare state: no kind field
        game = game_state.decode(old)
        assert game.variant == entry["variant"] and game.to_dict() == entry["state"]
        seat = game.to_move
        answer, unchanged = call(json_stub.View, {"view_as": "host"}, old)
        assert answer["view"] == game.view_for(None) and unchanged == b""
        action = game.legal_actions()[0]
        answer, new = call(json_stub.Apply, {"action": action, "view_as": seat}, old)
        game.apply(action, seat)
        assert game_state.decode(new).to_dict() == game.to_dict() and new == game_state.encode(game)


def test_a_game_state_holds_one_game_alone(json_stub: JsonStub) -> None:
    """A GameState with its game and anything beside it, or two games, is refused, not guessed at."""
    _, state = call(json_stub.NewMatch, {"variant": "kozel", "players": 4, "seed": 5, "view_as": "host"})
    for bad in (state + state, state + b"\x08\x01", b"\x0a\x05kozel" + state):
        error = refused(json_stub.View, {"view_as": "host"}, bad)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and "GameState" in (error.details() or "")
