"""Gateway pieces that need no engine: settings, problem mapping, OpenAPI, HTTP errors, the envelope's schemas.

The app here is built in-process (Flask's test client) with an engine target
nothing listens on: only requests refused before any engine call are sent.
"""
from __future__ import annotations

import warnings
from typing import Any

import grpc
import pytest
from flask import Flask
from flask.testing import FlaskClient

from api_gateway import config
from api_gateway.app import create_app
from api_gateway.config import ConfigError, GatewayConfig
from api_gateway.engine import (
    EngineBusy,
    EngineDeadline,
    EngineFailed,
    EngineIllegal,
    EngineMalformed,
    EngineMisdeal,
    EngineTooLarge,
    EngineUnavailable,
    problem_for_status,
)
from api_gateway.http import problems
from api_gateway.http.schemas import NewMatchSchema
from api_gateway.server import prepare
from api_gateway.tokens import KeyRing, KeyRingError, SeatKeyError, TokenError


def test_new_match_schema_refuses_seed_with_deal() -> None:
    from marshmallow import ValidationError

    with pytest.raises(ValidationError):
        NewMatchSchema().load({"variant": "kozel", "players": 4, "seed": 1, "deal": {"hands": []}})


# ---------------------------------------------------------------- settings


def test_settings_from_the_environment() -> None:
    cfg = config.from_env({"GATEWAY_PORT": "0", "GATEWAY_ENGINE": "ipv4:127.0.0.1:1,127.0.0.1:2",
                           "GATEWAY_ENGINE_TIMEOUT": "0.5", "GATEWAY_WORKERS": "3", "LOG_LEVEL": "debug",
                           "GATEWAY_HOST": " "})
    assert (cfg.port, cfg.engine_target, cfg.engine_timeout, cfg.workers, cfg.log_level, cfg.host) == (
        0, "ipv4:127.0.0.1:1,127.0.0.1:2", 0.5, 3, "DEBUG", "127.0.0.1")
    assert config.from_env({}) == GatewayConfig()
    assert config.from_env({}).busy_wait == 1.0
    assert config.from_env({"GATEWAY_BUSY_WAIT": "0"}).busy_wait == 0.0  # 429 at once
    assert config.from_env({}).metrics_port == 9465  # its own port, as the engine's 9464
    assert config.from_env({"GATEWAY_METRICS_PORT": "off"}).metrics_port is None
    assert config.from_env({"GATEWAY_METRICS_PORT": "0"}).metrics_port == 0


def test_stream_and_address_shares_follow_the_connections() -> None:
    """Streams take at most half of a worker's connections and one address three quarters, unless set;
    a stream cap as large as the connections would leave ordinary calls none (refused)."""
    small = config.from_env({"GATEWAY_CONNECTIONS": "100"})
    assert (small.streams, small.connections_per_address) == (50, 75)
    assert (small.streams_per_match, small.streams_per_address, small.spectate_keepalive) == (200, 20, 25)
    set_ = config.from_env({"GATEWAY_CONNECTIONS": "100", "GATEWAY_STREAMS": "99", "GATEWAY_CONNECTIONS_PER_ADDRESS": "0"})
    assert (set_.streams, set_.connections_per_address) == (99, 0)  # 0: no share per address
    for env in ({"GATEWAY_CONNECTIONS": "100", "GATEWAY_STREAMS": "100"},
                {"GATEWAY_CONNECTIONS": "100", "GATEWAY_CONNECTIONS_PER_ADDRESS": "101"},
                {"GATEWAY_STREAMS_PER_ADDRESS": "0"}, {"GATEWAY_SPECTATE_KEEPALIVE": "0"}):
        with pytest.raises(ConfigError, match=list(env)[-1]):
            config.from_env(env)


@pytest.mark.parametrize("env", [{"GATEWAY_PORT": "70000"}, {"GATEWAY_PORT": "x"}, {"GATEWAY_ENGINE_TIMEOUT": "0"},
                                 {"GATEWAY_ENGINE_ATTEMPTS": "9"}, {"GATEWAY_DEV_TOKEN_KEY": "maybe"},
                                 {"LOG_LEVEL": "loud"}, {"GATEWAY_MAX_BODY_BYTES": "10"},
                                 {"GATEWAY_BUSY_WAIT": "-1"}, {"GATEWAY_BUSY_WAIT": "soon"},
                                 {"GATEWAY_METRICS_PORT": "70000"}])
def test_bad_settings_name_their_variable(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=next(iter(env))):
        config.from_env(env)


def test_flags_become_the_environment_the_workers_read() -> None:
    environ: dict[str, str] = {}
    cfg, dev = prepare(["--port", "0", "--engine", "h:1", "--workers", "3", "--dev-token-key"], environ)
    assert (cfg.port, cfg.engine_target, cfg.workers, dev) == (0, "h:1", 3, False)
    assert environ["GATEWAY_ENGINE"] == "h:1"
    KeyRing.parse(environ["STATE_TOKEN_KEYS"])  # one key made for the run, shared by every worker
    with pytest.raises(KeyRingError):
        prepare([], {"STATE_TOKEN_KEYS": "k:short"})
    with pytest.raises(ConfigError):
        prepare(["--port", "-1"], {})


# ---------------------------------------------------------------- engine statuses and problems


@pytest.mark.parametrize(("code", "details", "kind"), [
    (grpc.StatusCode.INVALID_ARGUMENT, "x", EngineMalformed),
    (grpc.StatusCode.FAILED_PRECONDITION, "x", EngineIllegal),
    (grpc.StatusCode.FAILED_PRECONDITION, "misdeal: deal again", EngineMisdeal),
    (grpc.StatusCode.UNAVAILABLE, "x", EngineUnavailable),
    (grpc.StatusCode.RESOURCE_EXHAUSTED, "x", EngineUnavailable),  # grpcio's "Concurrent RPC limit exceeded"
    (grpc.StatusCode.RESOURCE_EXHAUSTED, "busy: every bot is deciding", EngineBusy),
    (grpc.StatusCode.RESOURCE_EXHAUSTED, "SERVER: Sent message larger than max (2003 vs. 1000)", EngineTooLarge),
    (grpc.StatusCode.RESOURCE_EXHAUSTED, "Stream removed (CLIENT: Received message larger than max (703 vs. 500))",
     EngineTooLarge),
    (grpc.StatusCode.DEADLINE_EXCEEDED, "x", EngineDeadline),
    (grpc.StatusCode.INTERNAL, "x", EngineFailed),
    (grpc.StatusCode.UNIMPLEMENTED, "x", EngineFailed),
])
def test_grpc_statuses_become_typed_exceptions(code: grpc.StatusCode, details: str, kind: type) -> None:
    exc = problem_for_status(code, details, "Apply")
    assert type(exc) is kind and exc.details == details and exc.method == "Apply"


@pytest.mark.parametrize(("details", "what", "size", "limit"), [
    ("SERVER: Sent message larger than max (2003 vs. 1000)", "answer", 2003, 1000),
    ("SERVER: Received message larger than max (2005 vs. 1000)", "request", 2005, 1000),
    ("CLIENT: Sent message larger than max (705 vs. 500)", "request", 705, 500),
    ("Stream removed (CLIENT: Received message larger than max (703 vs. 500))", "answer", 703, 500),
])
def test_a_message_over_a_limit_says_which_and_by_how_much(details: str, what: str, size: int, limit: int) -> None:
    """grpcio's words on either side (the engine's or the gateway's channel): the request or the answer."""
    exc = problem_for_status(grpc.StatusCode.RESOURCE_EXHAUSTED, details, "ExportRecord")
    assert isinstance(exc, EngineTooLarge) and (exc.what, exc.size, exc.limit) == (what, size, limit)


def test_engine_details_name_their_field() -> None:
    assert EngineMalformed("state.round.hands[2].tiles[0]: tile id 31").field == "state.round.hands[2].tiles[0]"
    assert EngineMalformed("'6-6@W': seat 0 does not hold 6-6").field is None
    assert EngineMalformed("no field here").field is None


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app(GatewayConfig(engine_target="127.0.0.1:9", engine_timeout=0.5,
                                    token_keys=KeyRing.generate("k1"), max_body_bytes=4096, retry_after=7))


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.mark.parametrize(("details", "field"), [
    ("state.round.hands[2].tiles[0]: tile id 31 is not a tile (0..27)", "state.round.hands[2].tiles[0]"),
    ("options.target: expected an integer 1..100000, got \"101\"", "options.target"),
    ("players must be an integer, not '4'", "players"),
    ("bots[0].seat must be a seat 0..3, not 7", "bots[0].seat"),
    ('variant: no variant "kozle"; did you mean "kozel"?', "variant"),
    ("deal and no_deal: give one or the other", None),     # two fields: none to blame alone
    ("it is seat 2's turn, not seat 0's", None),
    ("a must-have", None),
])
def test_the_field_is_the_path_the_engine_names_first(details: str, field: str | None) -> None:
    """The engine's messages name the field to blame first, as `path: why` or `path must ...`."""
    assert EngineMalformed(details).field == field


@pytest.mark.parametrize(("exc", "status", "name"), [
    (EngineMalformed("state.players: bad"), 400, "malformed"),
    (EngineIllegal("no"), 409, "illegal-action"),
    (EngineMisdeal("misdeal: again"), 409, "misdeal"),
    (EngineUnavailable("down", "Apply"), 503, "engine-unavailable"),
    (EngineBusy("busy: all deciding", "Hints"), 429, "engine-busy"),
    (EngineTooLarge("SERVER: Sent message larger than max (9 vs. 8)", "ExportRecord"), 413, "too-large"),
    (EngineDeadline("slow", "Apply"), 504, "engine-timeout"),
    (EngineFailed("boom", "Apply", "INTERNAL"), 502, "engine-error"),
    (TokenError("token: truncated"), 400, "invalid-token"),
    (SeatKeyError("seat_key: no"), 403, "wrong-seat-key"),
    (problems.SealedForbidden("no", "deal"), 403, "sealed-forbidden"),
    (problems.UnknownVariant("x", ["kozel"]), 404, "unknown-variant"),
    (problems.SealedModeDisabled("off"), 501, "sealed-mode-disabled"),
    (RuntimeError("bug"), 500, "internal-error"),
])
def test_every_exception_maps_to_its_problem(app: Flask, exc: Exception, status: int, name: str) -> None:
    with app.test_request_context("/v1/matches/apply", method="POST", json={"action": "1-1"}):
        response = problems.handle(exc)
    body = response.get_json(force=True)
    assert response.status_code == status == body["status"]
    assert response.mimetype == "application/problem+json"
    assert body["type"] == f"/v1/problems/{name}"
    assert body["title"] == problems.PROBLEM_TYPES[name].title
    assert body["instance"] == "/v1/matches/apply"
    if status in (429, 503):
        assert response.headers["Retry-After"] == "7"
    if status == 413:  # permanent: no Retry-After, and it says what was too large
        assert "Retry-After" not in response.headers and (body["what"], body["size"], body["limit"]) == ("answer", 9, 8)
    if status == 500:
        assert "bug" not in response.get_data(as_text=True)  # no internals leak
    if name in ("illegal-action", "misdeal", "malformed") and isinstance(exc, (EngineIllegal, EngineMalformed)):
        assert body["action"] == "1-1"


def test_long_details_are_cut(app: Flask) -> None:
    with app.test_request_context("/v1/matches/apply", method="POST"):
        body = problems.handle(EngineMalformed("x" * 5000)).get_json(force=True)
    assert len(body["detail"]) == problems.MAX_DETAIL and body["detail"].endswith("...")


def test_the_engine_s_field_is_reported(app: Flask) -> None:
    with app.test_request_context("/v1/matches/apply", method="POST"):
        body = problems.handle(EngineMalformed("state.round.hands[2].tiles[0]: tile id 31")).get_json(force=True)
    assert body["field"] == "state.round.hands[2].tiles[0]"


# ---------------------------------------------------------------- HTTP errors answered before the engine


def test_unknown_path_is_a_problem(client: FlaskClient) -> None:
    r = client.get("/v1/nothing")
    assert r.status_code == 404 and r.mimetype == "application/problem+json"
    assert r.get_json()["type"] == "about:blank" and r.get_json()["title"] == "Not Found"


def test_wrong_method_carries_allow(client: FlaskClient) -> None:
    r = client.delete("/v1/matches/apply")
    assert r.status_code == 405 and r.mimetype == "application/problem+json"
    assert set(r.headers["Allow"].replace(" ", "").split(",")) == {"POST", "OPTIONS"}


def test_oversized_body_is_413(client: FlaskClient) -> None:
    r = client.post("/v1/matches/apply", data=b'{"state": "' + b"x" * 5000 + b'"}', content_type="application/json")
    assert r.status_code == 413 and r.mimetype == "application/problem+json"


def test_non_json_body_is_415(client: FlaskClient) -> None:
    r = client.post("/v1/matches/apply", data="action=1-1", content_type="application/x-www-form-urlencoded")
    assert r.status_code == 415 and r.mimetype == "application/problem+json"


def test_broken_json_is_400(client: FlaskClient) -> None:
    r = client.post("/v1/matches/apply", data=b'{"action": ', content_type="application/json")
    assert r.status_code == 400 and r.get_json()["type"] == "/v1/problems/malformed-json"


@pytest.mark.parametrize(("body", "field"), [
    ({"action": "1-1"}, "state"),                                          # neither state nor token
    ({"state": {"variant": "kozel", "players": 4}, "token": "t", "seat_key": "k", "action": "1-1"}, "state"),
    ({"token": "t", "action": "1-1"}, "seat_key"),
    ({"state": {"variant": "kozel", "players": 4}}, "action"),             # required
    ({"state": {"variant": "kozel", "players": 4}, "action": "1-1", "extra": 1}, "extra"),
    ({"state": [1], "action": "1-1"}, "state"),                            # a state is an object
    ({"state": {}, "action": 7}, "action"),
    ([1, 2], None),
])
def test_envelope_errors_are_422_naming_the_field(client: FlaskClient, body: Any, field: str | None) -> None:
    r = client.post("/v1/matches/apply", json=body)
    problem = r.get_json()
    assert r.status_code == 422, problem
    assert problem["type"] == "/v1/problems/validation-error" and problem["errors"]
    assert problem.get("field") == field


def test_sealed_mode_off_is_501() -> None:
    app = create_app(GatewayConfig(engine_target="127.0.0.1:9", engine_timeout=0.5))
    r = app.test_client().post("/v1/matches", json={"variant": "kozel", "players": 4, "mode": "sealed"})
    assert r.status_code == 501 and r.get_json()["type"] == "/v1/problems/sealed-mode-disabled"


def test_problem_types_are_documented(client: FlaskClient) -> None:
    for name, t in problems.PROBLEM_TYPES.items():
        r = client.get(f"/v1/problems/{name}")
        assert r.status_code == 200 and r.get_json()["status"] == t.status
    assert client.get("/v1/problems/nonsense").status_code == 404


# ---------------------------------------------------------------- OpenAPI and docs


def test_openapi_document_covers_every_route_and_answers_problems(client: FlaskClient) -> None:
    doc = client.get("/openapi.json").get_json()
    assert doc["openapi"].startswith("3.")
    assert set(doc["paths"]) >= {
        "/v1/variants", "/v1/variants/{name}", "/v1/matches", "/v1/matches/legal", "/v1/matches/apply",
        "/v1/matches/replay", "/v1/matches/settle", "/v1/matches/next-round", "/v1/matches/timeout",
        "/v1/matches/view"}
    apply = doc["paths"]["/v1/matches/apply"]["post"]
    assert "application/json" in apply["requestBody"]["content"]
    assert "application/problem+json" in apply["responses"]["409"]["content"]
    schemas = doc["components"]["schemas"]
    assert {"MatchState", "Round", "Ledger", "SeatView", "Event", "Problem"} <= set(schemas)
    nullable_round = schemas["MatchState"]["properties"]["round"]["anyOf"]
    assert {"$ref": "#/components/schemas/Round"} in nullable_round
    assert "Retry-After" in apply["responses"]["503"]["headers"]
    assert schemas["MatchState"]["additionalProperties"] is False  # unknown keys are refused


def test_the_openapi_document_is_built_without_warnings() -> None:
    """Each schema is one component under its own name: two schemas of one name made apispec warn and
    publish the second as `Table1` (the drawn layout's and an online table's were both `TableSchema`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = create_app(GatewayConfig(engine_target="127.0.0.1:9", engine_timeout=0.5,
                                        token_keys=KeyRing.generate("k1")))
        doc = made.test_client().get("/openapi.json").get_json()
    schemas = doc["components"]["schemas"]
    assert not [name for name in schemas if name[-1].isdigit()]
    assert "table_id" in schemas["Table"]["properties"] and "arms" in schemas["TableLayout"]["properties"]


def test_swagger_ui_is_served_from_the_package_not_a_cdn(client: FlaskClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "/docs/assets/swagger-ui-bundle.js" in html and "/openapi.json" in html
    assert "https://" not in html and "http://" not in html
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-standalone-preset.js"):
        r = client.get(f"/docs/assets/{asset}")
        assert r.status_code == 200 and len(r.data) > 1000
    assert client.get("/docs/assets/../../app.py").status_code == 404


# ---------------------------------------------------------------- cheap hostile bodies


DEEP = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize(("path", "raw", "words"), [
    ("/v1/matches", DEEP, "nested deeper"),
    ("/v1/matches", '{"variant": "kozel", "players": 4, "options": {"x": ' + DEEP + "}}", "nested deeper"),
    ("/v1/matches/apply", '{"state": {"variant": "kozel", "players": 4, "round": {"layout": ' + DEEP + '}}, '
                          '"action": "1-1"}', "nested deeper"),
    ("/v1/matches", '{"variant": "kozel", "players": 4, "seed": ' + "9" * 4000 + "}", "number"),
    ("/v1/matches", '{"variant": "kozel", "players": ' + "9" * 4000 + "}", "number"),
    ("/v1/matches", '{"variant": "\\ud800", "players": 4}', "surrogate"),
    ("/v1/matches", b'{"variant": "\xff", "players": 4}', "utf-8"),
    ("/v1/tournaments", '{"participants": ' + DEEP + "}", "nested deeper"),
])
def test_cheap_hostile_bodies_are_400_problems_never_500(client: FlaskClient, path: str, raw: str | bytes,
                                                          words: str) -> None:
    """JSON nested a thousand levels deep, numbers of thousands of digits, lone surrogates and bytes that are
    not UTF-8 are refused by the body reader (api_gateway.http.bodies) before anything else reads them."""
    r = client.post(path, data=raw, content_type="application/json")
    problem = r.get_json()
    assert r.status_code == 400 and r.mimetype == "application/problem+json", problem
    assert problem["type"] == "/v1/problems/malformed-json" and words in problem["detail"].lower()


def test_a_body_as_deep_as_the_limit_is_read() -> None:
    from api_gateway.http.bodies import MAX_DEPTH, BodyError, parse

    assert parse("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    with pytest.raises(BodyError):
        parse("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert parse('{"a": [{"b": {"c": 1}}]}') == {"a": [{"b": {"c": 1}}]}
