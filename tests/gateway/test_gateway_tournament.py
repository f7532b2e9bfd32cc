"""/v1/tournaments through a real gateway (gunicorn) and a real engine; the library is the reference.

Whole 5- and 7-participant tournaments are played through REST to the end,
each answer compared with what `Tournament` gives for the same seed and points;
every error is a problem document (400 malformed, 409 illegal-action, 422
validation-error). The schema checks at the top need no process.
"""
from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from flask.testing import FlaskClient

from api_gateway.app import create_app
from api_gateway.config import GatewayConfig
from api_gateway.http.schemas import StandingSchema, TournamentRoundSchema, TournamentStateSchema
from engine_service.rules import Tournament

from .conftest import Gateway

FIVE = ["Ann", "Bob", "Cid", "Dan", "Eve"]
SEVEN = FIVE + ["Fay", "Gus"]
PROBLEM = "application/problem+json"
service = pytest.mark.service


# ---------------------------------------------------------------- schemas and OpenAPI (no process)


def _finished_state() -> dict[str, Any]:
    t = Tournament.create(["Ann", "Bob", "Cid", "Dan"], seed=1)
    t.record_round([0, 100, 10, 10], 0)
    return t.to_dict()


def test_state_schemas_name_exactly_the_keys_the_rules_write() -> None:
    state = _finished_state()
    assert set(TournamentStateSchema().fields) == set(state)
    assert set(TournamentRoundSchema().fields) == set(state["rounds"][0])
    assert set(StandingSchema().fields) == set(state["standings"][0])
    assert TournamentStateSchema().load(state) == state
    assert TournamentStateSchema().dump(state) == state


@pytest.fixture
def local() -> FlaskClient:
    """An in-process app whose engine nothing listens on: only requests refused before any call."""
    return create_app(GatewayConfig(engine_target="127.0.0.1:9", engine_timeout=0.5)).test_client()


def test_openapi_documents_the_tournament_routes_and_their_problems(local: FlaskClient) -> None:
    doc = local.get("/openapi.json").get_json()
    assert {"/v1/tournaments", "/v1/tournaments/rounds", "/v1/tournaments/standings"} <= set(doc["paths"])
    rounds = doc["paths"]["/v1/tournaments/rounds"]["post"]
    for code in ("400", "409", "422"):
        assert PROBLEM in rounds["responses"][code]["content"]
    assert "201" in doc["paths"]["/v1/tournaments"]["post"]["responses"]
    schemas = doc["components"]["schemas"]
    assert {"TournamentState", "TournamentRound", "Standing", "TournamentEvent", "NewTournament",
            "RecordRound"} <= set(schemas)
    assert schemas["TournamentState"]["additionalProperties"] is False
    assert set(schemas["TournamentState"]["required"]) == {"participants", "seed"}
    assert set(schemas["RecordRound"]["required"]) == {"state", "points", "winner"}


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/v1/tournaments", {}, "participants"),
    ("/v1/tournaments", {"participants": FIVE, "seed": "1"}, "seed"),
    ("/v1/tournaments", {"participants": FIVE, "surprise": 1}, "surprise"),
    ("/v1/tournaments", {"participants": ["Ann", 2, "Cid", "Dan"]}, "participants[1]"),
    ("/v1/tournaments/rounds", {"state": _finished_state(), "points": [0, 1, 2, 3]}, "winner"),
    ("/v1/tournaments/rounds", {"state": _finished_state(), "points": [0, 1, 2, True], "winner": 0},
     "points[3]"),
    ("/v1/tournaments/rounds", {"state": [1], "points": [0, 1, 2, 3], "winner": 0}, "state"),
    ("/v1/tournaments/standings", {}, "state"),
])
def test_envelope_errors_are_422_naming_the_field(local: FlaskClient, path: str, body: Any, field: str) -> None:
    r = local.post(path, json=body)
    assert r.status_code == 422 and r.content_type == PROBLEM
    assert r.get_json()["type"] == "/v1/problems/validation-error" and r.get_json()["field"] == field


# ---------------------------------------------------------------- through the real processes


def create(gateway: Gateway, **body: Any) -> dict[str, Any]:
    r = gateway.post("/v1/tournaments", body)
    assert r.status == 201, r.json
    answer: dict[str, Any] = r.json
    return answer


@service
def test_create_is_the_library_tournament(gateway: Gateway) -> None:
    answer = create(gateway, participants=FIVE, seed=3, rating=["Eve"])
    assert answer == {"state": Tournament.create(FIVE, 3, ["Eve"]).to_dict(), "events": []}
    assert answer["state"]["next_players"] == [0, 1, 2, 3] and answer["state"]["limit"] == 75
    random_seed = create(gateway, participants=FIVE, seed=None)["state"]
    assert create(gateway, participants=FIVE, seed=random_seed["seed"])["state"] == random_seed


def play_through_rest(gateway: Gateway, participants: list[str], seed: int) -> Tournament:
    """Create, then record rounds with seeded random points until the end, checking every answer."""
    library = Tournament.create(participants, seed=seed)
    state = create(gateway, participants=participants, seed=seed)["state"]
    rng = random.Random(seed)
    rounds = 0
    while not library.over:
        standings = gateway.post("/v1/tournaments/standings", {"state": state})
        assert standings.status == 200
        assert standings.json == {"standings": library.standings(), "next_players": library.next_players(),
                                  "over": False}
        winner = rng.randrange(4)
        points = [0 if s == winner else rng.randrange(0, 45) for s in range(4)]
        r = gateway.post("/v1/tournaments/rounds", {"state": state, "points": points, "winner": winner})
        assert r.status == 200, r.json
        assert r.json["events"] == library.record_round(points, winner)
        assert r.json["state"] == library.to_dict()
        state = r.json["state"]
        rounds += 1
    final = gateway.post("/v1/tournaments/standings", {"state": state}).json
    assert final == {"standings": library.standings(), "next_players": [], "over": True}
    assert [s["official"] for s in final["standings"]] == [True, True, True] + [False] * (len(participants) - 3)
    assert sum(not s["out"] for s in final["standings"]) <= 3
    assert rounds == len(state["rounds"]) >= 2
    return library


@service
@pytest.mark.parametrize(("participants", "seed"), [(FIVE, 5), (SEVEN, 7)])
def test_a_whole_tournament_through_rest_matches_the_library(gateway: Gateway, participants: list[str],
                                                             seed: int) -> None:
    library = play_through_rest(gateway, participants, seed)
    assert library.limit == {5: 75, 7: 50}[len(participants)]


def problem(r: Any, status: int, name: str) -> dict[str, Any]:
    assert r.status == status, r.json
    assert r.content_type == PROBLEM
    body: dict[str, Any] = r.json
    assert body["type"] == f"/v1/problems/{name}" and body["status"] == status
    return body


@service
@pytest.mark.parametrize(("body", "words"), [
    ({"participants": ["Ann", "Bob", "Ann", "Dan"]}, "twice"),
    ({"participants": FIVE, "rating": ["Zed"]}, "rating"),
])
def test_bad_creations_are_400(gateway: Gateway, body: dict[str, Any], words: str) -> None:
    found = problem(gateway.post("/v1/tournaments", body), 400, "malformed")
    assert words in found["detail"] and found["instance"] == "/v1/tournaments"


@service
@pytest.mark.parametrize("names", [["Ann", "Bob", "Cid"], SEVEN + ["Hal"]])
def test_a_count_of_participants_outside_4_to_7_is_refused_by_the_documented_schema(
        gateway: Gateway, names: list[str]) -> None:
    found = problem(gateway.post("/v1/tournaments", {"participants": names}), 422, "validation-error")
    assert found["field"] == "participants" and "between 4 and 7" in str(found["errors"])
    documented = gateway.get("/openapi.json").json["components"]["schemas"]["NewTournament"]
    assert documented["properties"]["participants"]["minItems"] == 4
    assert documented["properties"]["participants"]["maxItems"] == 7


@service
@pytest.mark.parametrize(("points", "winner", "words"), [
    ([0, 10, 20], 0, "4 round points"),
    ([0, 10, 20, 30, 40], 0, "4 round points"),
    ([0, 10, 20, 300], 0, "4 round points"),
    ([5, 0, 20, 30], 0, "scores 0"),
    ([0, 10, 20, 30], 7, "seat 0..3"),
])
def test_bad_rounds_are_400(gateway: Gateway, points: list[int], winner: int, words: str) -> None:
    state = create(gateway, participants=FIVE, seed=1)["state"]
    found = problem(gateway.post("/v1/tournaments/rounds", {"state": state, "points": points, "winner": winner}),
                    400, "malformed")
    assert words in found["detail"]


@service
def test_recording_after_the_end_is_409(gateway: Gateway) -> None:
    state = create(gateway, participants=["Ann", "Bob", "Cid", "Dan"], seed=1)["state"]
    r = gateway.post("/v1/tournaments/rounds", {"state": state, "points": [0, 100, 10, 10], "winner": 0})
    assert r.status == 200 and r.json["state"]["over"]
    assert [e["type"] for e in r.json["events"]] == ["tournament_round", "eliminated", "tournament_over"]
    found = problem(gateway.post("/v1/tournaments/rounds", {"state": r.json["state"], "points": [0, 1, 2, 3],
                                                            "winner": 0}), 409, "illegal-action")
    assert "over" in found["detail"]


@service
@pytest.mark.parametrize(("damage", "field"), [
    (lambda s: s["rounds"][0]["totals"].__setitem__(0, 55), "state"),
    (lambda s: s["rounds"][0].__setitem__("players", [0, 1, 2, 4]), "state"),
    (lambda s: s.__setitem__("first_sitters", [0, 1]), "state"),
    (lambda s: s.__setitem__("first_sitters", [s["first_sitters"][0]] * 2), "state"),
    (lambda s: s["rounds"].append(copy.deepcopy(s["rounds"][-1])), "state"),
    (lambda s: s.__setitem__("participants", ["Ann"] * 6), "state"),
    (lambda s: s.pop("seed"), "state"),
])
def test_a_tampered_state_is_400_on_both_routes(gateway: Gateway, damage: Any, field: str) -> None:
    t = Tournament.create(SEVEN[:6], seed=2)
    t.record_round([0, 10, 20, 30], 0)
    state = t.to_dict()
    damage(state)
    for path, extra in (("/v1/tournaments/standings", {}),
                        ("/v1/tournaments/rounds", {"points": [0, 1, 2, 3], "winner": 0})):
        found = problem(gateway.post(path, {"state": state, **extra}), 400, "malformed")
        assert found["field"] == field, found


@service
def test_a_finished_state_with_a_round_after_the_end_is_400_not_409(gateway: Gateway) -> None:
    state = _finished_state()
    state["rounds"].append(copy.deepcopy(state["rounds"][0]))
    found = problem(gateway.post("/v1/tournaments/standings", {"state": state}), 400, "malformed")
    assert found["field"] == "state" and "recorded after the tournament ended" in found["detail"]


@service
def test_tournament_routes_are_in_the_gateway_metrics(gateway: Gateway) -> None:
    # A tournament the engine creates (one the gateway refuses never reaches the engine's call metric).
    assert gateway.post("/v1/tournaments", {"participants": ["Ann", "Bob", "Cid", "Dan"]}).status == 201
    text = gateway.metrics()
    assert 'route="/v1/tournaments"' in text
    assert 'method="CreateTournament"' in text
