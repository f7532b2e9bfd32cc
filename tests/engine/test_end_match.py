"""EndMatch (issue 37): the exits of a match (resign, gone, abort) over a real engine, on both faces.

- The JSON face answers EndMatch exactly as Timeout: sealed, the viewer's view and events, the new state
  as bytes, the spectators' lines, ``over``, and with ``seat_lines`` every viewer's line; transparent, the
  state and every event. What it answers is the rules' `Game.end` (tests/rules/test_exits.py).
- The typed face's EndMatch (a GameState in, a GameResponse out) answers the same state and events.
- Refusals: a missing argument, a bad ``how`` or seat is INVALID_ARGUMENT; a match over FAILED_PRECONDITION.
- The record of an ended match holds the exit's step, and ImportRecord and ReplayRecord give it back.
"""
from __future__ import annotations

from typing import Any

import grpc
import orjson
import proto_oracle as po
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc

from engine_service.edge import game_state, kingdomino_codec, wire
from engine_service.rules import Kingdomino, Match

pytestmark = pytest.mark.service

JsonStub = engine_pb2_grpc.JsonEngineStub
Stub = engine_pb2_grpc.EngineStub
Json = dict[str, Any]
IA = grpc.StatusCode.INVALID_ARGUMENT
FP = grpc.StatusCode.FAILED_PRECONDITION

#: Kozel 2p (a timeout rule), All Fives 2p (none), All Fives in partnerships (two sides of two), Kingdomino.
GAMES: list[tuple[str, int, Json]] = [("kozel", 2, {}), ("all-fives", 2, {}), ("all-fives", 4, {"teams": True}),
                                      ("kingdomino", 3, {})]
HOWS = ["resign", "gone", "abort"]


def call(method: Any, args: Json, state: bytes = b"") -> pb.JsonAnswer:
    reply: pb.JsonAnswer = method(pb.JsonCall(args=orjson.dumps(args), state=state), timeout=10)
    return reply


def refused(method: Any, args: Json, state: bytes = b"") -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        method(pb.JsonCall(args=orjson.dumps(args), state=state), timeout=10)
    return info.value


def _new(json_stub: JsonStub, variant: str, players: int, options: Json) -> pb.JsonAnswer:
    return call(json_stub.NewMatch, {"variant": variant, "players": players, "options": options, "seed": 9,
                                     "view_as": "host"})


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(("variant", "players", "options"), GAMES)
def test_a_sealed_end_match_answers_as_timeout_does(json_stub: JsonStub, variant: str, players: int, options: Json,
                                                    how: str) -> None:
    """The answer is the library's: the new state as bytes, the viewer's view and events, every line."""
    started = _new(json_stub, variant, players, options)
    game = game_state.decode(started.state)
    seat = players - 1
    reply = call(json_stub.EndMatch, {"seat": seat, "how": how, "view_as": 0, "seat_lines": True}, started.state)
    events = game.end(how, seat)
    answer = orjson.loads(reply.answer)
    assert game_state.decode(reply.state).to_dict() == game.to_dict() and reply.over
    assert answer["events"] == game.redact(events, 0) and answer["view"] == game.view_for(0)
    assert answer["scores"] == game.match_scores()
    assert answer["events"][0] == {"type": {"resign": "resigned", "gone": "gone", "abort": "aborted"}[how],
                                   "player" if isinstance(game, Kingdomino) else "seat": seat}
    assert [orjson.loads(line) for line in reply.public.splitlines()] == game.spectated(events)
    lines = [orjson.loads(line) for line in [*reply.seats, reply.watcher]]
    assert len(lines) == players + 1
    for viewer, line in zip([*range(players), None], lines, strict=True):
        assert line == {"events": game.seen_by(events, viewer), "view": game.view_for(viewer),
                        "scores": game.match_scores(), "turn": None}
    # the sealed bytes are the library's own form of the ended game
    assert game_state.decode(game_state.encode(game)).result() == game.result()


@pytest.mark.parametrize("how", HOWS)
def test_a_transparent_end_match_answers_the_state_and_every_event(json_stub: JsonStub, how: str) -> None:
    match, _ = Match.new("all-fives", 4, options={"teams": True}, seed=4)
    answer = orjson.loads(call(json_stub.EndMatch, {"state": match.to_dict(), "seat": 2, "how": how}).answer)
    events = match.end(how, 2)
    assert answer["state"] == match.to_dict() and answer["events"] == events
    assert answer["state"]["match_over"] and answer["state"]["log"][-1] == f"{how} 2"


@pytest.mark.parametrize(("args", "details"), [
    ({"seat": 0}, "seat and how: required"),
    ({"how": "resign"}, "seat and how: required"),
    ({"seat": 0, "how": "quit"}, 'how: "quit" is not one of "resign", "gone", "abort"'),
    ({"seat": 0, "how": ["resign"]}, "how: "),
    ({"seat": 2, "how": "resign"}, "seat must be a seat 0..1, not 2"),
    ({"seat": "0", "how": "abort"}, "seat"),
    ({"seat": 0, "how": "abort", "reason": "x"}, "reason: unknown argument"),
])
def test_refusals_name_the_argument(json_stub: JsonStub, args: Json, details: str) -> None:
    started = _new(json_stub, "kozel", 2, {})
    err = refused(json_stub.EndMatch, {**args, "view_as": "host"}, started.state)
    assert err.code() == IA and err.details().startswith(details), err.details()


@pytest.mark.parametrize("variant", ["kozel", "kingdomino"])
def test_a_match_that_is_over_has_no_exit(json_stub: JsonStub, variant: str) -> None:
    started = _new(json_stub, variant, 2, {})
    over = call(json_stub.EndMatch, {"seat": 0, "how": "resign", "view_as": "host"}, started.state)
    for ended in (over.state, call(json_stub.Timeout, {"seat": 1, "view_as": "host"}, started.state).state):
        for how in HOWS:
            err = refused(json_stub.EndMatch, {"seat": 1, "how": how, "view_as": 1}, ended)
            assert err.code() == FP and err.details() in ("the match is over", "the game is over"), err.details()


def _typed_state(answer: pb.GameResponse) -> Json:
    if answer.WhichOneof("kind") == "kingdomino":
        return kingdomino_codec.state_from_proto(answer.kingdomino.state).to_dict()
    return wire.decode_state(answer.match.state.SerializeToString()).to_dict()


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(("variant", "players", "options"), GAMES)
def test_the_typed_end_match_answers_what_the_json_face_answers(stub: Stub, json_stub: JsonStub, variant: str,
                                                                players: int, options: Json, how: str) -> None:
    started = _new(json_stub, variant, players, options)
    game = game_state.decode(started.state)
    typed = stub.EndMatch(pb.EndMatchRequest(state=pb.GameState.FromString(started.state), seat=1, how=how),
                          timeout=10)
    plain = orjson.loads(call(json_stub.EndMatch, {"state": game.to_dict(), "seat": 1, "how": how}).answer)
    assert typed.WhichOneof("kind") == ("kingdomino" if isinstance(game, Kingdomino) else "match")
    assert _typed_state(typed) == plain["state"]
    if isinstance(game, Kingdomino):
        kinds = [e.WhichOneof("kind") for e in typed.kingdomino.events]
        assert kinds == [e["type"] for e in plain["events"]]
        assert getattr(typed.kingdomino.events[0], kinds[0]).player == 1
        assert typed.kingdomino.events[1].game_over.decided_by == plain["events"][1]["decided_by"]
    else:
        assert po.event_dicts(typed.match.events) == plain["events"]


def test_the_typed_end_match_refuses_a_bad_how(stub: Stub) -> None:
    match, _ = Match.new("kozel", 2, seed=1)
    state = pb.GameState.FromString(game_state.encode(match))
    for request, details in ((pb.EndMatchRequest(state=state, seat=0), 'how: "" is not one of'),
                             (pb.EndMatchRequest(state=state, seat=5, how="gone"), "seat must be a seat 0..1")):
        with pytest.raises(grpc.RpcError) as info:
            stub.EndMatch(request, timeout=10)
        assert info.value.code() == IA and details in (info.value.details() or ""), info.value.details()


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("variant", ["kozel", "kingdomino"])
def test_the_record_of_an_ended_match_holds_its_exit_and_replays(json_stub: JsonStub, variant: str,
                                                                 how: str) -> None:
    """ExportRecord of the sealed ended match (the full record once over), then ImportRecord and
    ReplayRecord of its text give the ended state back."""
    started = _new(json_stub, variant, 2, {})
    game = game_state.decode(started.state)
    ended = call(json_stub.EndMatch, {"seat": 1, "how": how, "view_as": 0}, started.state)
    game.end(how, 1)
    exported = orjson.loads(call(json_stub.ExportRecord, {"view_as": 0}, ended.state).answer)
    assert exported["record"]["view"] == "full" and exported["record"]["moves"][-1]["step"] == f"{how} 1"
    assert exported["record"]["moves"][-1]["seat"] is None  # the table's step
    assert f"- {how} 1\n" in exported["text"]
    imported = orjson.loads(call(json_stub.ImportRecord, {"text": exported["text"]}).answer)
    assert imported["state"] == game.to_dict()
    replayed = orjson.loads(call(json_stub.ReplayRecord, {"record": exported["record"]}).answer)
    assert replayed["state"] == game.to_dict() and replayed["move"] == replayed["moves"]
