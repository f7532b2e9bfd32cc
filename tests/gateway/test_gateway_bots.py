"""Computer opponents over REST (issue 15): bot seats carried by the match, suggest, hints."""
from __future__ import annotations

from typing import Any

import pytest

from engine_service import calls
from engine_service.rules import Kingdomino, Match

from .conftest import Gateway

pytestmark = pytest.mark.service

BOTS = [{"seat": 1, "level": "expert"}, {"seat": 2, "level": "greedy"}, {"seat": 3, "level": "random"}]


def test_bots_play_their_turns_and_the_library_agrees_move_for_move(gateway: Gateway) -> None:
    created = gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 5, "bots": BOTS})
    assert created.status == 201, created.json
    match, events = calls.new_match("kozel", 4, seed=5, bots=BOTS)
    assert created.json["state"] == match.to_dict() and created.json["events"] == events
    state = created.json["state"]
    assert state["bots"] == BOTS
    moves = 0
    while not state["round"]["over"]:
        assert state["round"]["to_move"] == 0  # every answer stops at the human's turn
        legal = gateway.post("/v1/matches/legal", {"state": state}).json["actions"]
        answer = gateway.post("/v1/matches/apply", {"state": state, "action": legal[0]}).json
        assert answer["events"] == calls.apply(match, legal[0])  # the bots' moves included, the same
        state = answer["state"]
        assert state == match.to_dict()
        moves += 1
    assert moves >= 2 and any(e["type"] == "played" and e["seat"] != 0 for e in answer["events"])


def test_sealed_bots_keep_their_hands_hidden(gateway: Gateway) -> None:
    created = gateway.post("/v1/matches", {"variant": "threes-fives", "players": 2, "mode": "sealed",
                                           "options": {"draw_when_able": True},
                                           "bots": [{"seat": 1, "level": "expert"}]}).json
    token, key = created["token"], created["seat_keys"][0]
    seen: list[dict[str, Any]] = list(created["events"])
    view = gateway.post("/v1/matches/view", {"token": token, "seat_key": key}).json["view"]  # create shows the host's
    for _ in range(60):
        # Threes-and-Fives scores the total in play, and reaching the target wins at once (the hand
        # abandoned, the round not over): a long hand with the expert drawing and scoring can do it.
        if view["round_over"] or view["match_over"]:
            break
        assert view["to_move"] == 0 and view["legal"], view
        answer = gateway.post("/v1/matches/apply", {"token": token, "seat_key": key, "action": view["legal"][0]})
        assert answer.status == 200, answer.json
        token, view = answer.json["token"], answer.json["view"]
        seen += answer.json["events"]
    assert view["round_over"] or view["match_over"]
    bot_draws = [e for e in seen if e["type"] == "drew" and e["seat"] == 1]
    assert all(e["tile"] is None for e in bot_draws)  # the bot's draws, hidden from seat 0
    assert any(e["type"] == "played" and e["seat"] == 1 for e in seen)


def test_suggest_answers_a_legal_move_for_the_seat_to_move_only(gateway: Gateway) -> None:
    state = gateway.post("/v1/matches", {"variant": "all-fives", "players": 2, "seed": 9}).json["state"]
    match = Match.from_dict(state)
    for level in ("random", "greedy", "expert"):
        r = gateway.post("/v1/matches/suggest", {"state": state, "level": level, "seed": 3})
        assert r.status == 200, r.json
        assert r.json["seat"] == match.to_move and r.json["action"] in match.legal_actions()
        again = gateway.post("/v1/matches/suggest", {"state": state, "level": level, "seed": 3}).json
        assert again == r.json  # reproducible for a seed
    sealed = gateway.post("/v1/matches", {"variant": "all-fives", "players": 2, "mode": "sealed"}).json
    mover = sealed["view"]["to_move"]  # the host's public view says who is to move
    mine = gateway.post("/v1/matches/suggest", {"token": sealed["token"], "seat_key": sealed["seat_keys"][mover],
                                                "level": "expert", "budget_ms": 200})
    assert mine.status == 200 and mine.json["seat"] == mover
    other = gateway.post("/v1/matches/suggest", {"token": sealed["token"],
                                                 "seat_key": sealed["seat_keys"][1 - mover], "level": "expert"})
    assert other.status == 409 and "turn" in other.json["detail"]
    host = gateway.post("/v1/matches/suggest", {"token": sealed["token"], "seat_key": sealed["host_key"],
                                                "level": "expert"})
    assert host.status == 403


def test_hints_tell_what_the_expert_knows(gateway: Gateway) -> None:
    state = gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 2}).json["state"]
    r = gateway.post("/v1/matches/hints", {"state": state, "seat": 0})
    assert r.status == 200, r.json
    hints = r.json["hints"]
    assert hints["seat"] == 0 and set(hints["whereabouts"]) and len(hints["proven_missing"]) == 4
    for tile, where in hints["whereabouts"].items():
        assert abs(sum(where["hands"]) + where["boneyard"] - 1.0) < 0.01, tile
    assert gateway.post("/v1/matches/hints", {"state": state}).status == 422  # whose view?


@pytest.mark.parametrize("body,status,words", [
    ({"bots": [{"seat": s, "level": "random"} for s in range(3)]}, 400, "human"),
    ({"bots": [{"seat": 4, "level": "random"}]}, 400, "seat"),
    ({"bots": [{"seat": 1, "level": "random"}, {"seat": 1, "level": "expert"}]}, 400, "twice"),
    ({"bots": [{"seat": 1, "level": "genius"}]}, 422, ""),
])
def test_bad_bot_seats_are_refused(gateway: Gateway, body: dict[str, Any], status: int, words: str) -> None:
    r = gateway.post("/v1/matches", {"variant": "block", "players": 3, "seed": 1, **body})
    assert r.status == status, r.json
    assert words in r.json.get("detail", "")


def test_the_engine_gives_bots_the_round_history_from_the_log(gateway: Gateway) -> None:
    """The voids a pass or a draw proves reach the bots over the wire: the engine rebuilds the round's
    history from the state's action log, as the seat saw it (another seat's drawn tiles hidden)."""
    state = gateway.post("/v1/matches", {"variant": "all-fives", "players": 2, "seed": 2}).json["state"]
    proven: list[list[int]] = [[], []]
    for _ in range(20):  # until a pass or a draw has proved something
        legal = gateway.post("/v1/matches/legal", {"state": state}).json["actions"]
        state = gateway.post("/v1/matches/apply", {"state": state, "action": legal[0]}).json["state"]
        if state["round"]["over"]:
            break
        hints = gateway.post("/v1/matches/hints", {"state": state, "seat": 0}).json["hints"]
        assert hints["history_used"] is True
        proven = hints["proven_missing"]
        if proven[1]:
            break
    assert proven[1], "no void proven in 20 moves"
    view = calls.seat_view(Match.from_dict(state), 0)
    drawn_by_other = [e for e in view["history"] if e["type"] == "drew" and e["seat"] == 1]
    assert drawn_by_other and all(e["tile"] is None for e in drawn_by_other)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_kingdomino_hints_answer_every_player_sealed_and_transparent(gateway: Gateway, players: int) -> None:
    """Issue 29: the coach for a Kingdomino player who is not to move was 502 (engine INTERNAL, a traceback in
    its log). Every player is coached now, as in the matching games: the pile's chances for all, the expert's
    values only for the player to move."""
    created = gateway.post("/v1/matches", {"variant": "kingdomino", "players": players, "seed": 7})
    assert created.status == 201, created.json
    state = created.json["state"]
    game = Kingdomino.from_dict(state)
    sealed = gateway.post("/v1/matches", {"variant": "kingdomino", "players": players, "seed": 7,
                                          "mode": "sealed"}).json
    for player in range(players):
        key = sealed["seat_keys"][player]
        for body in ({"state": state, "seat": player}, {"token": sealed["token"], "seat_key": key}):
            r = gateway.post("/v1/matches/hints", {**body, "budget_ms": 30})
            assert r.status == 200, (player, "token" in body, r.json)
            hints = r.json["hints"]
            assert hints["player"] == player and len(hints["pile"]) > 0
            assert bool(hints["values"]) == (player == game.to_move), hints["values"]
