"""What the engine gives an online table (issue 24), against a real engine process.

- `seat_lines`: a sealed call that changes the match answers, per seat and for the
  public, the call's events as that viewer may see them and its view after the call
  (`JsonAnswer.seats`, `JsonAnswer.watcher`): the lines the gateway stores for each
  seat's event stream. Each is the rules' own `seen_by` and `view_for`, so a drawn tile
  reaches only its drawer and the hands only once a round is over.
- `SeatBot`: a seat whose person left is played by the computer from then on (and by
  a person again); never the last person's seat, never once the match is over.
"""
from __future__ import annotations

import random
from typing import Any

import grpc
import orjson
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1 import engine_pb2_grpc

from engine_service.edge import game_state
from engine_service.rules.views import view_for

pytestmark = pytest.mark.service

JsonStub = engine_pb2_grpc.JsonEngineStub
Json = dict[str, Any]
IA = grpc.StatusCode.INVALID_ARGUMENT


def call(method: Any, args: Json, state: bytes = b"") -> pb.JsonAnswer:
    reply: pb.JsonAnswer = method(pb.JsonCall(args=orjson.dumps(args), state=state), timeout=10)
    return reply


def refused(method: Any, args: Json, state: bytes = b"") -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        method(pb.JsonCall(args=orjson.dumps(args), state=state), timeout=10)
    return info.value


def test_every_seat_and_the_public_get_their_own_line_of_each_call(json_stub: JsonStub) -> None:
    """Two-player Kozel with draws to the end of a round: each line is the rules' `seen_by` and
    `view_for` for its viewer; a drawn tile is in its drawer's line only; the hands are revealed
    in every line once the round ends."""
    rng = random.Random(3)
    reply = call(json_stub.NewMatch, {"variant": "kozel", "players": 2, "seed": 11, "view_as": "host",
                                      "seat_lines": True})
    assert len(reply.seats) == 2 and reply.watcher
    state = reply.state
    draws_seen, revealed = 0, 0
    while True:
        match = game_state.decode(state)
        legal = match.legal_actions()
        if not legal:
            break
        action = rng.choice(legal)
        after = match.copy()
        events = after.apply(action)
        reply = call(json_stub.Apply, {"action": action, "view_as": match.to_move, "seat_lines": True}, state)
        lines = [orjson.loads(line) for line in reply.seats] + [orjson.loads(reply.watcher)]
        for viewer, line in zip((0, 1, None), lines, strict=True):
            assert line == {"events": after.seen_by(events, viewer), "view": view_for(after, viewer),
                            "scores": after.match_scores(), "turn": after.turn}
            for e in line["events"]:
                if e["type"] == "drew":
                    assert (e["tile"] is not None) == (viewer == e["seat"])
                    draws_seen += e["tile"] is not None
                revealed += e["type"] == "revealed"
        state = reply.state
    assert draws_seen >= 1 and revealed == 3  # every viewer saw the hands once, at the round's end
    assert lines[-1]["turn"] is None  # the round is over: nobody is to act (no clock runs)


def test_without_seat_lines_no_line_is_computed(json_stub: JsonStub) -> None:
    reply = call(json_stub.NewMatch, {"variant": "kozel", "players": 2, "seed": 1, "view_as": "host"})
    assert list(reply.seats) == [] and reply.watcher == b""
    match = game_state.decode(reply.state)
    moved = call(json_stub.Apply, {"action": match.legal_actions()[0], "view_as": match.to_move}, reply.state)
    assert list(moved.seats) == [] and moved.watcher == b""


def test_seat_lines_is_a_sealed_boolean(json_stub: JsonStub) -> None:
    err = refused(json_stub.NewMatch, {"variant": "kozel", "players": 2, "seat_lines": True})
    assert err.code() == IA and err.details() == "seat_lines: only with a sealed state"
    err = refused(json_stub.NewMatch, {"variant": "kozel", "players": 2, "view_as": "host", "seat_lines": 1})
    assert err.code() == IA and err.details() == "seat_lines: expected true or false, not 1"


def test_kingdomino_lines_are_the_players_events_without_the_seed(json_stub: JsonStub) -> None:
    reply = call(json_stub.NewMatch, {"variant": "kingdomino", "players": 2, "seed": 4, "view_as": "host",
                                      "seat_lines": True})
    lines = [orjson.loads(line) for line in reply.seats] + [orjson.loads(reply.watcher)]
    game = game_state.decode(reply.state)
    for viewer, line in zip((0, 1, None), lines, strict=True):
        assert line["view"] == game.view_for(viewer)
        started = [e for e in line["events"] if e["type"] == "game_started"]
        assert started and all(e["seed"] is None for e in started)


def test_a_seat_a_person_left_is_played_by_the_computer_then_by_a_person_again(json_stub: JsonStub) -> None:
    """Kozel for four, seats 2 and 3 bots: seat 1 made a bot while it is to move plays at once (the
    turn comes back to a person); made a person again, the bots leave it alone."""
    reply = call(json_stub.NewMatch, {"variant": "kozel", "players": 4, "seed": 42, "view_as": "host",
                                      "bots": [{"seat": 2, "level": "greedy"}, {"seat": 3, "level": "greedy"}]})
    state = reply.state
    match = game_state.decode(state)
    while match.to_move != 1:  # seat 0 plays until seat 1 is to move
        reply = call(json_stub.Apply, {"action": match.legal_actions()[0], "view_as": 0}, state)
        state, match = reply.state, game_state.decode(reply.state)
    reply = call(json_stub.SeatBot, {"seat": 1, "level": "greedy", "view_as": "host", "seat_lines": True}, state)
    after = game_state.decode(reply.state)
    assert after.bots == {1: "greedy", 2: "greedy", 3: "greedy"}
    assert after.round is not None and (after.round.over or after.to_move == 0)
    played = [e for e in orjson.loads(reply.answer)["events"] if e["type"] in ("played", "passed")]
    assert played and played[0]["seat"] == 1
    assert len(reply.seats) == 4
    err = refused(json_stub.SeatBot, {"seat": 0, "level": "greedy", "view_as": "host"}, reply.state)
    assert err.code() == IA and "last one a person plays" in err.details()
    back = call(json_stub.SeatBot, {"seat": 1, "level": None, "view_as": "host"}, reply.state)
    assert game_state.decode(back.state).bots == {2: "greedy", 3: "greedy"}
    for args, details in (({"seat": 4, "level": None, "view_as": "host"}, "seat must be a seat 0..3, not 4"),
                          ({"seat": 1, "level": "genius", "view_as": "host"}, "level: "),
                          ({"seat": 1, "view_as": "host"}, "seat and level: required")):
        err = refused(json_stub.SeatBot, args, back.state)
        assert err.code() == IA and err.details().startswith(details), err.details()


def test_no_seat_changes_hands_once_the_match_is_over(json_stub: JsonStub) -> None:
    reply = call(json_stub.NewMatch, {"variant": "kozel", "players": 2, "seed": 5, "view_as": "host"})
    over = call(json_stub.Timeout, {"seat": 0, "view_as": "host"}, reply.state)
    assert over.over
    err = refused(json_stub.SeatBot, {"seat": 1, "level": "greedy", "view_as": "host"}, over.state)
    assert err.code() == IA and err.details() == "the match is over: no seat can change hands"
