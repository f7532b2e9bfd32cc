"""Kingdomino over REST (issue 14): /v1/matches with `variant: "kingdomino"`, transparent and sealed.

Through a real gateway and engine: games equal to the library's (every answer
exactly what its documented schema dumps), every OpenAPI example working, every
bad input of tests/variants/test_kingdomino_bad_input.py refused as a 400/422 or
409 problem naming the reason with the state unchanged, Dynasty to its total,
and in sealed mode each player acting only as itself and seeing only its own view
(no pile order, no seed, no other player's legal actions).
"""
from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from variants.test_kingdomino_bad_input import CASES, DEAL, PLACING

from api_gateway.http.schemas import (
    LegalAnswerSchema,
    MatchAnswerSchema,
    ReplayAnswerSchema,
    ViewAnswerSchema,
)
from engine_service.rules import IllegalActionError, Kingdomino, MalformedError

from .conftest import Gateway

pytestmark = pytest.mark.service


def _kd_state() -> dict[str, Any]:
    """Player 0 to place tile 1: the state of the Kingdomino examples (clients/openapi_examples.py)."""
    game, _ = Kingdomino.new(2, deal=DEAL)
    for action in PLACING:
        game.apply(action)
    state: dict[str, Any] = game.to_dict()
    return state


KD_STATE = _kd_state()

Json = dict[str, Any]
SECRET = {"pile", "seed", "deals"}


def ok(gateway: Gateway, path: str, body: Json, schema: Any = None, status: int = 200) -> Json:
    r = gateway.post(path, body)
    assert r.status == status, (path, r.json)
    answer: Json = r.json
    if schema is not None:
        assert schema.dump(answer) == answer, f"{path}: the answer differs from its schema's dump"
    return answer


def keys_named(node: Any) -> set[str]:
    """Every key that holds something (not null) anywhere in an answer."""
    if isinstance(node, dict):
        return {k for k, v in node.items() if v is not None} | {k for v in node.values() for k in keys_named(v)}
    if isinstance(node, list):
        return {k for v in node for k in keys_named(v)}
    return set()


def test_a_whole_game_over_rest_is_the_library_game(gateway: Gateway) -> None:
    rng = random.Random(3)
    for players, options in ((2, {}), (3, {"middle_kingdom": True}), (4, {"harmony": True})):
        answer = ok(gateway, "/v1/matches", {"variant": "kingdomino", "players": players, "seed": 21,
                                             "options": options}, MatchAnswerSchema(), 201)
        game, events = Kingdomino.new(players, options=options, seed=21)
        assert answer == {"state": game.to_dict(), "scores": game.totals()["scores"], "events": events}
        state = answer["state"]
        while not game.game_over:
            legal = ok(gateway, "/v1/matches/legal", {"state": state}, LegalAnswerSchema())
            assert legal == {"seat": game.to_move, "actions": game.legal_actions()}
            action = rng.choice(legal["actions"])
            answer = ok(gateway, "/v1/matches/apply", {"state": state, "action": action, "seat": legal["seat"]},
                        MatchAnswerSchema())
            assert answer["events"] == game.apply(action)
            state = answer["state"]
        assert state == game.to_dict()
        assert ok(gateway, "/v1/matches/legal", {"state": state}) == {"seat": None, "actions": []}
        view = ok(gateway, "/v1/matches/view", {"state": state, "seat": 0}, ViewAnswerSchema())["view"]
        assert (view["scores"], view["winners"], view["decided_by"], view["game_over"]) == (
            game.scores(), game.winners(), game.ranking()[1], True)
        assert answer["events"][-1]["type"] == "game_over"


def _at(gateway: Gateway, actions: list[str], options: Json | None = None) -> Json:
    deal: Json = {"games": [DEAL] * 3} if options and options.get("dynasty") else DEAL
    state = ok(gateway, "/v1/matches", {"variant": "kingdomino", "players": 2, "deal": deal,
                                        "options": options or {}}, status=201)["state"]
    if actions:
        state = ok(gateway, "/v1/matches/replay", {"state": state, "actions": actions})["state"]
    return state


REST_CASES = [c for c in CASES if c[2] is None or isinstance(c[2], (str, int, list))]


@pytest.mark.parametrize("what,moment,action,player,error,reason", REST_CASES, ids=[c[0] for c in REST_CASES])
def test_bad_input_is_a_problem_naming_the_reason_and_changes_nothing(
        gateway: Gateway, what: str, moment: list[str], action: Any, player: Any, error: type,
        reason: str) -> None:
    state = _at(gateway, moment)
    body: Json = {"state": state, "action": action}
    if player is not None:
        body["seat"] = player
    r = gateway.post("/v1/matches/apply", body)
    problem = r.json
    assert r.headers["content-type"].startswith("application/problem+json")
    if error is IllegalActionError:
        assert r.status == 409 and problem["type"] == "/v1/problems/illegal-action", problem
        assert re.search(reason, problem["detail"]), problem
    else:
        assert error is MalformedError
        assert r.status in (400, 422), problem
        if r.status == 400:  # the engine's refusal: the rules' reason
            assert re.search(reason, problem["detail"]), problem
        else:  # the envelope's: the field named
            assert set(problem["errors"]) <= {"action", "seat"} and problem["errors"], problem
    # Nothing changed: the state still takes the turn's legal actions.
    legal = ok(gateway, "/v1/matches/legal", {"state": state})
    assert legal["actions"] == Kingdomino.from_dict(state).legal_actions() != []


def test_a_broken_state_is_400_naming_its_field_and_rounds_do_not_apply(gateway: Gateway) -> None:
    state = json.loads(json.dumps(KD_STATE))
    state["kingdoms"][0] = ["place 1 3,3 N"]
    r = gateway.post("/v1/matches/apply", {"state": state, "action": "place 1 0,-2 N"})
    assert r.status == 400 and r.json["detail"].startswith("state.kingdoms[0][0]"), r.json
    for path, body in (("/v1/matches/next-round", {"state": KD_STATE}),
                       ("/v1/matches/settle", {"state": KD_STATE, "ending": "out", "hands": []})):
        r = gateway.post(path, body)
        assert r.status == 400 and "kingdomino has no rounds" in r.json["detail"], (path, r.json)
    r = gateway.post("/v1/matches", {"variant": "kingdomino", "players": 5})
    assert r.status == 400 and "2-4 players" in r.json["detail"]
    r = gateway.post("/v1/matches", {"variant": "kingdomino", "players": 2, "deal": {"tiles": [1, 2], "kings": []}})
    assert r.status == 400 and "deal.tiles" in r.json["detail"]


def test_a_dynasty_plays_to_its_total_and_a_timeout_ends_a_game(gateway: Gateway) -> None:
    game, _ = Kingdomino.new(2, options={"dynasty": True}, seed=9)
    actions = []
    while not game.game_over:
        actions.append(game.legal_actions()[0])
        game.apply(actions[-1])
    start = ok(gateway, "/v1/matches", {"variant": "kingdomino", "players": 2, "seed": 9,
                                        "options": {"dynasty": True}}, MatchAnswerSchema(), 201)
    done = ok(gateway, "/v1/matches/replay", {"state": start["state"], "actions": actions}, ReplayAnswerSchema())
    assert done["ok"] and done["state"] == game.to_dict()
    end = done["events"][-1]
    assert end["type"] == "dynasty_over" and end["scores"] == game.totals()["scores"]
    assert end["winners"] == game.winners() and end["games"] == game.game_scores()
    view = ok(gateway, "/v1/matches/view", {"state": done["state"], "seat": 1}, ViewAnswerSchema())["view"]
    assert view["dynasty"]["game"] == 3 and view["dynasty"]["totals"] == game.totals()
    timed = ok(gateway, "/v1/matches/timeout", {"state": KD_STATE, "seat": 1}, MatchAnswerSchema())
    assert [e["type"] for e in timed["events"]] == ["timed_out", "game_over"]
    assert timed["events"][1]["winners"] == [0] and timed["state"]["timed_out"] == 1


# ---------------------------------------------------------------- sealed mode


def sealed_game(gateway: Gateway, players: int, options: Json | None = None) -> Json:
    return ok(gateway, "/v1/matches", {"variant": "kingdomino", "players": players, "mode": "sealed",
                                       "options": options or {}}, MatchAnswerSchema(), 201)


def test_a_sealed_game_to_the_end_each_player_seeing_only_its_own_view(gateway: Gateway) -> None:
    created = sealed_game(gateway, 2)
    keys, token = created["seat_keys"], created["token"]
    assert not keys_named(created) & SECRET and created["view"]["player"] is None
    assert created["events"][0]["seed"] is None
    turns = 0
    while True:
        seen = [ok(gateway, "/v1/matches/view", {"token": token, "seat_key": keys[p]}, ViewAnswerSchema())["view"]
                for p in range(2)]
        assert [v["player"] for v in seen] == [0, 1] and not keys_named(seen) & SECRET
        mover = seen[0]["to_move"]
        if mover is None:
            break
        other = 1 - mover
        assert seen[other]["legal"] == [] and seen[mover]["legal"]
        assert ok(gateway, "/v1/matches/legal", {"token": token, "seat_key": keys[other]}) == {
            "seat": mover, "actions": []}
        # Out of turn, or as another seat: refused, nothing changes.
        r = gateway.post("/v1/matches/apply", {"token": token, "seat_key": keys[other],
                                               "action": seen[mover]["legal"][0]})
        assert r.status == 409 and f"it is player {mover}'s turn" in r.json["detail"], r.json
        r = gateway.post("/v1/matches/apply", {"token": token, "seat_key": keys[other], "seat": mover,
                                               "action": seen[mover]["legal"][0]})
        assert r.status == 403 and r.json["field"] == "seat"
        answer = ok(gateway, "/v1/matches/apply", {"token": token, "seat_key": keys[mover],
                                                   "action": seen[mover]["legal"][-1]}, MatchAnswerSchema())
        assert answer["view"]["player"] == mover and not keys_named(answer) & SECRET
        # The same request again (a retry after an unknown outcome) is answered what it was answered;
        # any other request with the spent token is stale.
        again = gateway.post("/v1/matches/apply", {"token": token, "seat_key": keys[mover],
                                                   "action": seen[mover]["legal"][-1]})
        assert again.status == 200 and again.json["token"] == answer["token"], again.json
        r = gateway.post("/v1/matches/view", {"token": token, "seat_key": keys[mover]})
        assert r.status == 409 and r.json["type"] == "/v1/problems/stale-token"
        r = gateway.post("/v1/matches/apply", {"token": token, "seat_key": keys[other],
                                               "action": seen[mover]["legal"][-1]})
        assert r.status == 409 and r.json["type"] == "/v1/problems/stale-token"
        token, turns = answer["token"], turns + 1
    assert turns == 48 and seen[0]["game_over"] and seen[0]["winners"]
    r = gateway.post("/v1/matches/view", {"token": token, "seat_key": keys[0], "seat": 1})
    assert r.status == 403 and r.json["field"] == "seat"


def test_sealed_host_and_seat_timeouts_and_the_host_cannot_play(gateway: Gateway) -> None:
    created = sealed_game(gateway, 3, {"dynasty": True})
    keys, host, token = created["seat_keys"], created["host_key"], created["token"]
    legal = ok(gateway, "/v1/matches/legal", {"token": token, "seat_key": host})
    assert legal["actions"] == []
    r = gateway.post("/v1/matches/apply", {"token": token, "seat_key": host, "action": "pick 1"})
    assert r.status == 403 and r.json["field"] == "seat_key"
    view = ok(gateway, "/v1/matches/view", {"token": token, "seat_key": host})["view"]
    assert view["player"] is None and view["dynasty"]["game"] == 1 and not keys_named(view) & SECRET
    r = gateway.post("/v1/matches/timeout", {"token": token, "seat_key": keys[0], "seat": 2})
    assert r.status == 403
    mine = ok(gateway, "/v1/matches/timeout", {"token": token, "seat_key": keys[2]}, MatchAnswerSchema())
    assert [e["type"] for e in mine["events"]] == ["timed_out", "game_over", "dynasty_over"]
    assert mine["view"]["timed_out"] == 2 and 2 not in mine["view"]["winners"]
    r = gateway.post("/v1/matches/timeout", {"token": mine["token"], "seat_key": host, "seat": 0})
    assert r.status == 409 and "the game is over" in r.json["detail"]


def test_sealed_replay_takes_only_the_players_own_actions(gateway: Gateway) -> None:
    created = sealed_game(gateway, 2)
    keys, token = created["seat_keys"], created["token"]
    mover = created["view"]["to_move"]
    legal = ok(gateway, "/v1/matches/legal", {"token": token, "seat_key": keys[mover]})["actions"]
    done = ok(gateway, "/v1/matches/replay", {"token": token, "seat_key": keys[mover],
                                              "actions": [legal[0], legal[1], legal[2]]}, ReplayAnswerSchema())
    assert done["applied"] >= 1 and not keys_named(done) & SECRET
    if not done["ok"]:
        assert done["error_kind"] == "illegal"
