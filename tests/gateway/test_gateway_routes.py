"""Every /v1 route in transparent mode, through a real gateway (gunicorn) and a real engine.

The library is the reference: a match played through the gateway must end in
exactly the state the rules library reaches with the same seed and actions.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from api_gateway.app import create_app
from api_gateway.config import ConfigError, from_env
from api_gateway.hosting.tables import Tables
from api_gateway.http.table_schemas import (
    InvitesSchema,
    JoinAnswerSchema,
    LobbySchema,
    NewTableAnswerSchema,
    SeekAnswerSchema,
    TableAnswerSchema,
    TableSchema,
)
from api_gateway.http.tables_routes import MATCHMAKING, TABLES
from engine_service.rules import Match, variants

from .conftest import EngineProc, Gateway, gateway_env

pytestmark = pytest.mark.service

KOZEL_42 = {"variant": "kozel", "players": 4, "seed": 42}


def new_match(gateway: Gateway, **body: Any) -> dict[str, Any]:
    r = gateway.post("/v1/matches", {**KOZEL_42, **body})
    assert r.status == 201, r.json
    answer: dict[str, Any] = r.json
    return answer


def test_variants_list_every_preset_with_typed_option_defaults(gateway: Gateway) -> None:
    r = gateway.get("/v1/variants")
    assert r.status == 200 and r.content_type.startswith("application/json")
    names = [v["name"] for v in r.json["variants"]]
    assert {"kozel", "osel", "bykovo", "threes-fives", "block"} <= set(names)
    kozel = next(v for v in r.json["variants"] if v["name"] == "kozel")
    assert (kozel["family"], kozel["min_players"], kozel["max_players"]) == ("K", 2, 4)
    options = {o["name"]: o for o in kozel["options"]}
    assert options["double_pair"]["type"] == "bool" and options["double_pair"]["default"] is False
    assert options["hand_size"]["default"] in options["hand_size"]["allowed"]


def test_the_listing_is_the_engines_and_a_count_is_an_integer(gateway: Gateway) -> None:
    """GET /v1/variants serves the rules' `variants()` with typed defaults, an int's bounds and words
    (tests/variants/test_docs.py holds docs/variants.md to the same listing); and the request a
    newcomer types, a count as a number, is taken (issue 28)."""
    served = gateway.get("/v1/variants").json["variants"]
    typed: dict[str, Callable[[str], Any]] = {"bool": lambda text: text == "true", "int": int, "enum": str}
    assert served == [{**v, "options": [{**o, "default": o["default"] if o["default"] in o["allowed"]
                                         else typed[o["type"]](o["default"])} for o in v["options"]]}
                      for v in variants()]
    reserve = {v["name"]: next(o for o in v["options"] if o["name"] == "boneyard_reserve")
               for v in served if v["name"] in ("osel", "threes-fives")}
    assert {name: (o["type"], o["minimum"], o["maximum"], o["allowed"], o["default"]) for name, o in reserve.items()} \
        == {"osel": ("int", 0, 2, [], 0), "threes-fives": ("int", 0, 2, ["auto"], 0)}
    created = gateway.post("/v1/matches", {"variant": "osel", "players": 3, "options": {"boneyard_reserve": 2}})
    assert created.status == 201 and created.json["state"]["options"] == {"boneyard_reserve": 2}
    created = gateway.post("/v1/matches", {"variant": "threes-fives", "players": 3,
                                           "options": {"boneyard_reserve": "auto"}})
    assert created.status == 201 and created.json["state"]["options"] == {"boneyard_reserve": "auto"}


def test_one_variant_and_an_unknown_one(gateway: Gateway) -> None:
    r = gateway.get("/v1/variants/osel")
    assert r.status == 200 and r.json["name"] == "osel"
    r = gateway.get("/v1/variants/chess")
    assert r.status == 404 and r.content_type == "application/problem+json"
    assert r.json["type"] == "/v1/problems/unknown-variant" and "chess" in r.json["detail"]


def test_a_match_played_through_the_gateway_matches_the_library(gateway: Gateway) -> None:
    answer = new_match(gateway)
    reference, events = Match.new("kozel", 4, seed=42)
    assert answer["state"] == reference.to_dict()
    assert answer["events"] == events
    state = answer["state"]
    for _ in range(12):
        legal = gateway.post("/v1/matches/legal", {"state": state}).json
        assert (legal["seat"], legal["actions"]) == (reference.to_move, reference.legal_actions())
        action = legal["actions"][-1]
        r = gateway.post("/v1/matches/apply", {"state": state, "action": action, "seat": legal["seat"]})
        assert r.status == 200, r.json
        assert r.json["events"] == reference.apply(action)
        state = r.json["state"]
        assert state == reference.to_dict()


def test_replay_applies_in_order_and_reports_the_first_refusal(gateway: Gateway) -> None:
    start = new_match(gateway)["state"]
    reference, _ = Match.new("kozel", 4, seed=42)
    actions = []
    for _ in range(4):
        actions.append(reference.legal_actions()[0])
        reference.apply(actions[-1])
    r = gateway.post("/v1/matches/replay", {"state": start, "actions": actions})
    assert r.status == 200
    assert (r.json["ok"], r.json["applied"], r.json["failed_index"]) == (True, 4, -1)
    assert r.json["state"] == reference.to_dict()
    r = gateway.post("/v1/matches/replay", {"state": start, "actions": [*actions[:2], "6-6@N", actions[2]]})
    assert (r.json["ok"], r.json["applied"], r.json["failed_index"], r.json["error_kind"]) == (
        False, 2, 2, "illegal")
    assert r.json["reason"]
    r = gateway.post("/v1/matches/replay", {"state": start, "actions": ["nonsense"]})
    assert (r.json["ok"], r.json["applied"], r.json["error_kind"]) == (False, 0, "malformed")
    assert r.json["state"] == start


def test_settle_next_round_and_view(gateway: Gateway) -> None:
    answer = new_match(gateway, seed=None, no_deal=True)
    state = answer["state"]
    assert state["round"] is None and answer["events"] == []
    hands = [[], ["6-6", "5-5"], ["1-2"], ["0-1"]]
    r = gateway.post("/v1/matches/settle", {"state": state, "ending": "out", "hands": hands})
    assert r.status == 200, r.json
    reference, _ = Match.new("kozel", 4, no_deal=True)
    assert r.json["events"] == reference.settle("out", hands)
    assert r.json["state"] == reference.to_dict()

    dealt = new_match(gateway)["state"]
    deal = {"hands": dealt["round"]["hands"]}
    settled = gateway.post("/v1/matches/settle", {"state": r.json["state"], "ending": "out", "hands": hands}).json
    r = gateway.post("/v1/matches/next-round", {"state": settled["state"], "deal": deal})
    assert r.status == 200, r.json
    assert r.json["state"]["round"]["hands"] == deal["hands"]
    assert r.json["events"][0]["type"] == "round_dealt"

    view = gateway.post("/v1/matches/view", {"state": dealt, "seat": 2})
    assert view.status == 200 and list(view.json) == ["view", "scores"]  # `view` and `scores`, as in every answer
    assert view.json["view"]["hand"] == dealt["round"]["hands"][2]
    assert view.json["view"]["hand_sizes"] == [7, 7, 7, 7]
    assert "hands" not in view.json["view"] and "boneyard" not in view.json["view"]
    assert gateway.post("/v1/matches/view", {"state": dealt}).status == 422  # which seat?


def test_next_round_from_the_seed(gateway: Gateway) -> None:
    state = new_match(gateway)["state"]
    r = gateway.post("/v1/matches/next-round", {"state": state})
    assert r.status == 409 and "still being played" in r.json["detail"]


def test_timeout_ends_the_match(gateway: Gateway) -> None:
    state = new_match(gateway)["state"]
    r = gateway.post("/v1/matches/timeout", {"state": state, "seat": 1})
    assert r.status == 200, r.json
    reference, _ = Match.new("kozel", 4, seed=42)
    assert r.json["events"] == reference.timeout(1)
    assert r.json["state"]["match_over"] is True and r.json["state"] == reference.to_dict()


def test_new_match_with_options_setup_and_an_explicit_deal(gateway: Gateway) -> None:
    dealt = new_match(gateway)["state"]["round"]["hands"]
    answer = new_match(gateway, seed=None, options={"double_pair": True}, deal={"hands": dealt},
                       setup={"written": [10, 0, 0, 0]})
    state = answer["state"]
    assert state["options"] == {"double_pair": True}
    assert state["ledger"]["written"] == [10, 0, 0, 0]
    assert state["round"]["hands"] == dealt and state["seed"] is None


def test_health_readiness_and_docs(gateway: Gateway) -> None:
    assert gateway.get("/healthz").json == {"status": "ok"}
    assert gateway.get("/readyz").json == {"status": "ready", "engine": "SERVING"}
    assert gateway.get("/openapi.json").json["info"]["title"] == "Domino rules engine"
    docs = gateway.get("/docs")
    assert docs.status == 200 and b"swagger-ui-bundle.js" in docs.body
    assert gateway.get("/docs/assets/swagger-ui-bundle.js").status == 200
    for lead in ("/", "/docs/"):  # urllib follows the redirect: a person typing either lands on the docs
        landed = gateway.get(lead)
        assert landed.status == 200 and b"swagger-ui-bundle.js" in landed.body, lead


def test_every_answer_of_every_variant_has_the_score_in_one_place(gateway: Gateway) -> None:
    """`scores` in every answer, both modes: what an app draws a score table from (issue 16)."""
    for variant in gateway.get("/v1/variants").json["variants"]:
        name, players = variant["name"], variant["min_players"]
        created = gateway.post("/v1/matches", {"variant": name, "players": players, "seed": 5}).json
        state = created["state"]
        for _ in range(30):  # into the match, so that somebody may have scored
            legal = gateway.post("/v1/matches/legal", {"state": state}).json
            if not legal["actions"]:
                break
            answer = gateway.post("/v1/matches/apply", {"state": state, "action": legal["actions"][-1]}).json
            state = answer["state"]
            expected = (state["ledger"]["scores"] if name != "kingdomino"  # a single game: its running score
                        else gateway.post("/v1/matches/view", {"state": state, "seat": 0}).json["view"]["scores"])
            assert answer["scores"] == expected, name
        sealed = gateway.post("/v1/matches", {"variant": name, "players": players, "mode": "sealed"}).json
        assert sealed["scores"] == [0] * len(sealed["scores"]), name
        view = gateway.post("/v1/matches/view", {"token": sealed["token"], "seat_key": sealed["host_key"]}).json
        assert view["scores"] == sealed["scores"], name


FORGED = {"Host": "evil.example", "X-Forwarded-Host": "evil.example"}


def _links(answer: dict[str, Any]) -> list[str]:
    return [invite["link"] for invite in answer["invites"]]


def test_a_forged_host_header_changes_no_invite_link(gateway: Gateway) -> None:
    """Invite links are made from the address the gateway listens on, never from the request's Host
    (issue 39): a client that forges it gets the same links as anyone else."""
    body = {"variant": "kozel", "players": 2}
    honest = gateway.post("/v1/tables", body)
    forged = gateway.post("/v1/tables", body, headers=FORGED)
    assert honest.status == forged.status == 201, forged.json
    assert honest.headers["cache-control"] == "no-store"  # it holds the host key: no cache keeps it
    for link in _links(honest.json) + _links(forged.json):
        assert link.startswith(f"{gateway.url}/play?table="), link
    table_id = forged.json["table_id"]
    fresh = gateway.get(f"/v1/tables/{table_id}/invites",
                        headers={**FORGED, "Authorization": f"Bearer {forged.json['host_key']}"})
    assert fresh.status == 200 and _links(fresh.json), fresh.json
    assert all(link.startswith(f"{gateway.url}/play?table={table_id}&invite=") for link in _links(fresh.json))
    sought = gateway.post("/v1/seek", {"variant": "osel", "players": 3, "name": "Anna"}, headers=FORGED)
    assert sought.status == 200 and "evil" not in sought.body.decode(), sought.json


def test_links_come_from_the_configured_public_url(engine_proc: EngineProc, tmp_path: Path,
                                                   start_gateway: Callable[..., Gateway]) -> None:
    """GATEWAY_PUBLIC_URL (behind a proxy, or the address friends type) is every link's base, whatever
    the request's Host says."""
    gw = start_gateway(engine_proc.address, env=gateway_env(tmp_path, GATEWAY_PUBLIC_URL="https://domino.example/games/"))
    opened = gw.post("/v1/tables", {"variant": "kozel", "players": 2}, headers=FORGED)
    assert opened.status == 201, opened.json
    assert _links(opened.json) and all(link.startswith("https://domino.example/games/play?table=")
                                       for link in _links(opened.json)), _links(opened.json)


@pytest.mark.parametrize("text", ["evil.example", "ftp://domino.example", "https://", "https://a.example/?x=1",
                                  "http://a.example:port"])
def test_a_public_url_that_is_no_web_address_is_refused_at_start(text: str) -> None:
    with pytest.raises(ConfigError, match="GATEWAY_PUBLIC_URL"):
        from_env({"GATEWAY_PUBLIC_URL": text})
    assert from_env({"GATEWAY_PUBLIC_URL": " http://192.168.1.20:8080/ "}).public_url == "http://192.168.1.20:8080"


def test_the_table_answers_schemas_drop_nothing(engine_proc: EngineProc, tmp_path: Path) -> None:
    """Table answers are serialized by their response schemas (api_gateway/http/table_schemas.py), which drop
    a key they do not declare: every key `Tables` answers is declared, so none is lost on the way."""
    env = gateway_env(tmp_path, GATEWAY_ENGINE=engine_proc.address, GATEWAY_PUBLIC_URL="https://domino.example")
    app = create_app(from_env(env))
    tables: Tables = app.extensions[TABLES]
    with app.test_request_context():
        opened = tables.create({"variant": "kozel", "players": 2, "public": True, "name": "Anna's",
                                "clock": {"move": 30}}, "https://domino.example")
        joined = tables.join(opened["table_id"], {"invite": opened["invites"][0]["code"], "name": "Anna"})
        answers = [(NewTableAnswerSchema, opened), (JoinAnswerSchema, joined),
                   (TableSchema, tables.get(opened["table_id"])), (LobbySchema, tables.lobby(None, 20, None)),
                   (InvitesSchema, tables.invites(opened["table_id"], opened["host_key"], "https://domino.example")),
                   (SeekAnswerSchema, app.extensions[MATCHMAKING].seek({"variant": "osel", "players": 3,
                                                                         "name": "Boris"}, "https://domino.example")),
                   (TableAnswerSchema, tables.leave(opened["table_id"], joined["credential"]))]
        for schema, answer in answers:
            assert schema().dump(answer) == answer, schema.__name__
