"""One engine contract, two encodings: the typed `domino.v1.Engine`, the JSON face `domino.v1.JsonEngine` and
the REST gateway's request schemas (and so its OpenAPI document) name the same calls and the same fields.

The typed requests in proto/domino/v1/engine.proto are the description; everything else is held to them here:

- every JSON call is a typed call of the same name (the typed face also has Kingdomino's own RPCs);
- the keys a JSON call takes are its typed request's field names, plus the sealed envelope (`view_as`,
  `seat_lines`) on a call on a game, except the differences `domino.v1.jsonargs.DIFFERENCES` lists with
  their reasons; the JSON face refuses every other key (checked by calling it, not by reading its code);
- the gateway's request schemas, and the OpenAPI document generated from them, name the same fields as
  the JSON call each operation forwards to, plus the REST envelope (`token`, `seat_key`, `mode`), except
  the differences `REST_DIFFERENCES` lists below.
"""
from __future__ import annotations

from typing import Any

import orjson
import pytest
from domino.v1 import engine_pb2 as pb
from domino.v1.jsonargs import ARGUMENTS, DIFFERENCES, SEALED
from marshmallow import Schema

from api_gateway.app import create_app
from api_gateway.config import GatewayConfig
from api_gateway.http import schemas
from api_gateway.http.routes import OPERATIONS
from engine_service.edge.json_face import JsonEngineServicer
from engine_service.rules import MalformedError

ENGINE = pb.DESCRIPTOR.services_by_name["Engine"]
JSON_ENGINE = pb.DESCRIPTOR.services_by_name["JsonEngine"]

#: The typed face's own RPCs: Kingdomino's, which the JSON face serves through the shared calls (by the variant).
KINGDOMINO_TWINS = {"NewKingdomino": "NewMatch", "KingdominoLegalActions": "LegalActions",
                    "KingdominoApply": "Apply", "KingdominoReplay": "Replay", "KingdominoView": "View",
                    "KingdominoTimeout": "Timeout"}

#: The state messages of a call on a game (the JSON face also takes such a game sealed).
GAME_STATES = {"domino.v1.MatchState", "domino.v1.GameState"}


def _typed_fields(name: str) -> set[str]:
    return set(ENGINE.methods_by_name[name].input_type.fields_by_name)


def _on_a_game(name: str) -> bool:
    state = ENGINE.methods_by_name[name].input_type.fields_by_name.get("state")
    return state is not None and state.message_type.full_name in GAME_STATES


def _expected_json_keys(name: str) -> set[str]:
    """What the JSON call `name` must take, from the typed request and the listed differences."""
    keys = _typed_fields(name) | (set(SEALED) if _on_a_game(name) else set())
    difference = DIFFERENCES.get(name)
    if difference is not None:
        keys = (keys - difference.typed_only) | difference.json_only
    return keys


#: The JSON face's calls: every method but `Batch`, which carries several of them.
JSON_CALLS = [m.name for m in JSON_ENGINE.methods if m.name != "Batch"]


def test_every_json_call_is_a_typed_call_of_the_same_name() -> None:
    assert {m.name for m in JSON_ENGINE.methods} - set(JSON_CALLS) == {"Batch"}
    assert set(ARGUMENTS) == set(JSON_CALLS)  # the calls a batch may carry
    json_calls = set(JSON_CALLS)
    typed_calls = {m.name for m in ENGINE.methods}
    assert json_calls <= typed_calls, json_calls - typed_calls
    assert typed_calls - json_calls == set(KINGDOMINO_TWINS)
    assert set(KINGDOMINO_TWINS.values()) <= json_calls


def test_the_listed_differences_are_real_and_say_why() -> None:
    """Each listed difference names keys that do differ (a stale entry fails), with a reason."""
    for name, difference in DIFFERENCES.items():
        typed = _typed_fields(name)
        assert difference.typed_only <= typed, (name, difference.typed_only - typed)
        assert not (difference.json_only - set(SEALED)) & typed, name
        assert len(difference.reason) > 20, name


@pytest.mark.parametrize("name", JSON_CALLS)
def test_a_json_call_takes_exactly_its_typed_requests_fields(name: str) -> None:
    """The JSON face itself, called with an unknown key, lists the keys it takes: they are the typed ones."""
    assert ARGUMENTS[name] == _expected_json_keys(name)
    face = JsonEngineServicer()
    with pytest.raises(MalformedError) as refused:
        getattr(face, name)(pb.JsonCall(args=orjson.dumps({"zz_not_a_field": 1})), None)
    message = str(refused.value)
    assert message.startswith("zz_not_a_field: unknown argument (expected"), message
    listed = message.partition("(expected")[2].rstrip(")").strip()
    assert set(filter(None, listed.split(", "))) == _expected_json_keys(name)


# ---------------------------------------------------------------- the gateway

#: The REST operation (routes.OPERATIONS' names) -> the JSON call it forwards to.
REST_CALLS = {"NewMatch": "NewMatch", "Legal": "LegalActions", "Apply": "Apply", "Replay": "Replay",
              "Settle": "Settle", "NextRound": "StartRound", "Timeout": "Timeout", "View": "View",
              "Suggest": "Suggest", "Hints": "Hints", "ExportRecord": "ExportRecord",
              "ImportRecord": "ImportRecord", "ReplayRecord": "ReplayRecord"}

#: The tournaments' operations (api_gateway/tournaments.py: path -> request schema, JSON call).
TOURNAMENT_CALLS: dict[str, tuple[type[Schema], str]] = {
    "/v1/tournaments": (schemas.NewTournamentSchema, "CreateTournament"),
    "/v1/tournaments/rounds": (schemas.RecordRoundSchema, "RecordTournamentRound"),
    "/v1/tournaments/standings": (schemas.TournamentCarrierSchema, "TournamentStandings"),
}

#: JSON calls no REST request body carries: ListVariants is a GET; SeatBot is made by the gateway's online
#: tables themselves (a seat's person left, a turn clock's autopilot: docs/tables.md), never by a caller.
NOT_FORWARDED = {"ListVariants", "SeatBot", "EndMatch"}

#: The REST envelope: a sealed match's token and the caller's key (the gateway turns them into the sealed
#: state and `view_as`), and a new match's `mode` (sealed or transparent).
ENVELOPE = {"token", "seat_key", "mode"}

#: Where a REST body differs from the JSON call it forwards to (beyond the envelope), and why.
REST_DIFFERENCES: dict[str, tuple[set[str], set[str], str]] = {
    "Replay": (set(), {"seat"}, "sealed, the gateway sets `seat` from the seat key (each action must be the key's "
                                "seat's); a transparent caller replays for whichever seat is to move"),
}


def _rest_fields(schema: Schema | type[Schema]) -> set[str]:
    instance = schema() if isinstance(schema, type) else schema
    return {field.data_key or name for name, field in instance.fields.items()}


def _expected_rest_fields(call: str, operation: str) -> set[str]:
    """The JSON call's keys without the sealed envelope (the gateway's), with the listed REST differences."""
    keys = set(ARGUMENTS[call]) - set(SEALED)
    rest_only, json_only, _ = REST_DIFFERENCES.get(operation, (set(), set(), ""))
    return (keys - json_only) | rest_only


def test_the_listed_rest_differences_are_real() -> None:
    for operation, (rest_only, json_only, reason) in REST_DIFFERENCES.items():
        call = ARGUMENTS[REST_CALLS[operation]]
        assert json_only <= call and not rest_only & call and len(reason) > 20, operation


def test_every_forwarded_call_has_a_rest_operation() -> None:
    assert {op.name for op in OPERATIONS} == set(REST_CALLS)
    forwarded = set(REST_CALLS.values()) | {call for _, call in TOURNAMENT_CALLS.values()}
    assert forwarded | NOT_FORWARDED == set(ARGUMENTS)


@pytest.mark.parametrize("operation", sorted(REST_CALLS))
def test_a_rest_request_schema_names_the_typed_fields(operation: str) -> None:
    op = next(o for o in OPERATIONS if o.name == operation)
    assert _rest_fields(op.request) - ENVELOPE == _expected_rest_fields(REST_CALLS[operation], operation)


@pytest.mark.parametrize("path", sorted(TOURNAMENT_CALLS))
def test_a_tournament_request_schema_names_the_typed_fields(path: str) -> None:
    schema, call = TOURNAMENT_CALLS[path]
    assert _rest_fields(schema) == _expected_rest_fields(call, call)


def _document() -> dict[str, Any]:
    app = create_app(GatewayConfig(engine_target="127.0.0.1:9", engine_timeout=0.5))
    document: dict[str, Any] = app.test_client().get("/openapi.json").get_json()
    return document


def test_the_openapi_documents_request_bodies_name_the_typed_fields() -> None:
    """The published document (generated from the schemas) says the same fields for every forwarded call."""
    document = _document()
    components = document["components"]["schemas"]
    paths = {"/v1/matches" + op.path if op.blueprint.name == "matches" else "/v1/records" + op.path:
             (REST_CALLS[op.name], op.name) for op in OPERATIONS}
    paths.update({path: (call, call) for path, (_, call) in TOURNAMENT_CALLS.items()})
    for path, (call, operation) in paths.items():
        reference = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        properties = set(components[reference.rpartition("/")[2]]["properties"])
        assert properties - ENVELOPE == _expected_rest_fields(call, operation), path
    forwarding = {p for p, ops in document["paths"].items() if "post" in ops and "{" not in p
                  and p.startswith(("/v1/matches", "/v1/records", "/v1/tournaments"))
                  and not p.startswith("/v1/tournaments/hosted")}  # hosted by the gateway, not forwarded
    assert forwarding == set(paths)
