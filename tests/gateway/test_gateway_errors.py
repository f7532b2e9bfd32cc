"""Every error mapping through a real gateway: engine refusals, engine trouble, HTTP-level errors.

Engine trouble is produced for real: a gateway pointed at a port nothing
listens on (UNAVAILABLE), or at a scripted in-process engine that is slow
(DEADLINE_EXCEEDED), broken (INTERNAL), or down for one call (retried).
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from domino.v1 import engine_pb2 as pb

from api_gateway.http import problems

from .conftest import REPO, FakeEngine, Gateway, free_port

pytestmark = pytest.mark.service

PROBLEM = "application/problem+json"
TINY_STATE = {"variant": "kozel", "players": 4}


def assert_problem(r: Any, status: int, name: str | None = None) -> dict[str, Any]:
    assert r.status == status, r.body
    assert r.content_type == PROBLEM
    body: dict[str, Any] = r.json
    assert body["status"] == status and body["title"]
    if name is not None:
        assert body["type"] == f"/v1/problems/{name}"
    return body


def test_malformed_input_is_400_naming_the_field_or_action(gateway: Gateway) -> None:
    state = gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 42}).json["state"]
    body = assert_problem(gateway.post("/v1/matches/apply", {"state": state, "action": "9-9@Q"}), 400, "malformed")
    assert body["action"] == "9-9@Q" and "9-9@Q" in body["detail"]
    body = assert_problem(gateway.post("/v1/matches", {"variant": "go", "players": 2}), 400, "malformed")
    assert "go" in body["detail"]
    broken = {**state, "round": {**state["round"], "hands": [["1-1"], [], [], []]}}
    body = assert_problem(gateway.post("/v1/matches/legal", {"state": broken}), 400, "malformed")
    assert "tiles missing" in body["detail"]
    bad_layout = {**state, "round": {**state["round"], "layout": ["1-1", "zz@E"]}}
    body = assert_problem(gateway.post("/v1/matches/legal", {"state": bad_layout}), 400, "malformed")
    assert body["field"] == "state.round.layout[1]"
    # The state's insides are the engine's: its refusals name the field, as 400s (not the gateway's 422).
    for damaged, field in ((["9-9"], "state.round.hands[2][0]"),):
        hands = [list(h) for h in state["round"]["hands"]]
        hands[2] = damaged + hands[2][1:]
        body = assert_problem(gateway.post("/v1/matches/apply", {"state": {**state, "round": {**state["round"],
                                                                                            "hands": hands}},
                                                                "action": "1-1"}), 400, "malformed")
        assert body["field"] == field
    body = assert_problem(gateway.post("/v1/matches/legal", {"state": {**state, "players": "4"}}), 400, "malformed")
    assert "players" in body["detail"]
    body = assert_problem(gateway.post("/v1/matches/apply", {"state": {**state, "options": {"nope": 1}},
                                                            "action": "1-1"}), 400, "malformed")
    assert "nope" in body["detail"]


SEVEN = ["0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6"]
SIX = ["1-1", "1-2", "1-3", "1-4", "1-5", "1-6"]
KNOWN = ["kozel", "kozel-classic", "osel", "bykovo", "threes-fives", "fives-and-threes", "all-threes",
         "all-fives", "block", "kingdomino"]


@pytest.mark.parametrize(("body", "field", "said"), [
    ({"variant": "kozle", "players": 4}, "variant",
     'no variant "kozle"; did you mean "kozel"? (known: ' + ", ".join(KNOWN) + ")"),
    ({"variant": "Kingdomino", "players": 2}, "variant", 'did you mean "kingdomino"?'),
    ({"variant": "kozel", "players": 5}, "players", "kozel is played by 2-4 players, not 5"),
    ({"variant": "kingdomino", "players": 5}, "players", "kingdomino is played by 2-4 players, not 5"),
    ({"variant": "osel", "players": 3, "options": {"boneyard_reserve": "auto"}}, "options.boneyard_reserve",
     '"auto" is not one of 0, 1, 2'),
    ({"variant": "threes-fives", "players": 3, "options": {"boneyard_reserve": 3}}, "options.boneyard_reserve",
     '3 is not one of 0, 1, 2, "auto"'),
    ({"variant": "kozel", "players": 4, "options": {"target": "101"}}, "options.target",
     'expected an integer 1..100000, got "101"'),
    ({"variant": "kozel", "players": 4, "options": {"lead": "lot"}}, "options.lead",
     '"lot" is not one of "one-one-up", "highest-double"'),
    ({"variant": "kozel", "players": 4, "options": {"targte": 51}}, "options.targte", 'did you mean "target"?'),
    ({"variant": "osel", "players": 3, "options": {"teams": True}}, "options.teams", "teams need exactly 4"),
    ({"variant": "kingdomino", "players": 3, "options": {"mighty_duel": True}}, "options.mighty_duel",
     "for 2 players"),
    ({"variant": "kozel", "players": 2, "deal": {"hands": [SEVEN, SIX]}}, "deal.hands[1]", "holds 6 tiles"),
    ({"variant": "kozel", "players": 4, "setup": {"written": [-1, 0, 0, 0]}}, "setup.written", "negative"),
    ({"variant": "kozel", "players": 4, "bots": [{"seat": 7, "level": "expert"}]}, "bots[0].seat", "0..3"),
])
def test_a_400_names_the_field_to_blame(gateway: Gateway, body: dict[str, Any], field: str, said: str) -> None:
    """docs/rest.md "Errors": `field` names the offending field when one is to blame (issue 28)."""
    problem = assert_problem(gateway.post("/v1/matches", body), 400, "malformed")
    assert problem["field"] == field, problem
    assert said in problem["detail"], problem


def test_a_bad_action_and_a_bad_carried_state_name_their_field(gateway: Gateway) -> None:
    state = gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 42}).json["state"]
    for action in ("9-9@Q", "1-1@E+2-3@W"):
        problem = assert_problem(gateway.post("/v1/matches/apply", {"state": state, "action": action}), 400,
                                 "malformed")
        assert (problem["field"], problem["action"]) == ("action", action), problem
        assert f'"{action}" is not an action' in problem["detail"]
    kd = gateway.post("/v1/matches", {"variant": "kingdomino", "players": 2, "seed": 1}).json["state"]
    problem = assert_problem(gateway.post("/v1/matches/apply", {"state": kd, "action": "pick two"}), 400, "malformed")
    assert problem["field"] == "action" and '"two" is not a tile number' in problem["detail"], problem
    for damaged, field in (({**state, "players": "4"}, "state.players"),
                           ({**state, "options": {"nope": 1}}, "state.options.nope"),
                           ({**state, "options": {"target": "101"}}, "state.options.target"),
                           ({**kd, "options": {"harmony": "yes"}}, "state.options.harmony"),
                           ({**kd, "players": 5}, "state.players"),
                           ({**state, "round": {**state["round"], "layout": ["1-1", "2-3@E"]}}, "state.round.layout")):
        problem = assert_problem(gateway.post("/v1/matches/legal", {"state": damaged}), 400, "malformed")
        assert problem["field"] == field, problem



def test_a_carried_value_outside_its_list_is_quoted_with_the_list_as_json(gateway: Gateway) -> None:
    """The engine's other "one of" refusals quote as its options' do (issue 28: "every 'not one of'
    message"): a carried state's round ending, its bot seats' levels."""
    state = gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 42}).json["state"]
    for damaged, field, said in (
            ({**state, "round": {**state["round"], "ending": "won"}}, "state.round.ending",
             '"won" is not one of "out", "fish", "blocked", "sortir", null'),
            ({**state, "bots": [{"seat": 1, "level": "hard"}]}, "state.bots[0].level",
             '"hard" is not one of "random", "greedy", "expert"')):
        problem = assert_problem(gateway.post("/v1/matches/legal", {"state": damaged}), 400, "malformed")
        assert (problem["field"], problem["detail"]) == (field, f"{field}: {said}"), problem

def test_an_unknown_variant_by_name_lists_them_all_and_suggests_the_closest(gateway: Gateway) -> None:
    problem = assert_problem(gateway.get("/v1/variants/kingdomno"), 404, "unknown-variant")
    assert problem["field"] == "name"
    assert problem["detail"] == 'no variant "kingdomno"; did you mean "kingdomino"? (known: ' + ", ".join(KNOWN) + ")"


def test_schema_violations_are_422(gateway: Gateway) -> None:
    body = assert_problem(gateway.post("/v1/matches", {"variant": "kozel"}), 422, "validation-error")
    assert body["field"] == "players" and "players" in body["errors"]
    body = assert_problem(gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "colour": "red"}),
                          422, "validation-error")
    assert body["field"] == "colour"



@pytest.mark.parametrize(("body", "field", "said"), [
    ({"variant": "kozel", "players": 4, "mode": "Sealed"}, "mode", '"Sealed" is not one of "transparent", "sealed"'),
    ({"variant": "kozel", "players": 4, "bots": [{"seat": 1, "level": "hard"}]}, "bots[0].level",
     '"hard" is not one of "random", "greedy", "expert"'),
])
def test_a_422_quotes_the_choices_as_json(gateway: Gateway, body: dict[str, Any], field: str, said: str) -> None:
    """A value the schema does not list is quoted with what would be accepted, as JSON, as the
    engine's 400s do (issue 28: "make every 'not one of' message quote the allowed values as the
    JSON that would be accepted"; marshmallow said "Must be one of: transparent, sealed."), and
    `field` writes an index as the 400s do (`bots[0].level`, not `bots.0.level`)."""
    problem = assert_problem(gateway.post("/v1/matches", body), 422, "validation-error")
    assert problem["field"] == field, problem
    messages = problem["errors"]
    while isinstance(messages, dict):   # down the path to the field's own messages
        messages = next(iter(messages.values()))
    assert messages == [said], problem

def test_illegal_actions_and_misdeals_are_409(gateway: Gateway) -> None:
    state = gateway.post("/v1/matches", {"variant": "kozel", "players": 4, "seed": 42}).json["state"]
    body = assert_problem(gateway.post("/v1/matches/apply", {"state": state, "action": "6-6"}), 409,
                          "illegal-action")
    assert body["action"] == "6-6"
    body = assert_problem(gateway.post("/v1/matches/apply", {"state": state, "action": "1-1", "seat": 0}),
                          409, "illegal-action")
    assert "turn" in body["detail"]
    five_doubles = [["0-0", "1-1", "2-2", "3-3", "4-4", "0-1", "0-2"],
                    ["5-5", "0-3", "0-4", "0-5", "0-6", "1-2", "1-3"],
                    ["6-6", "1-4", "1-5", "1-6", "2-3", "2-4", "2-5"],
                    ["2-6", "3-4", "3-5", "3-6", "4-5", "4-6", "5-6"]]
    body = assert_problem(gateway.post("/v1/matches", {"variant": "kozel", "players": 4,
                                                       "deal": {"hands": five_doubles}}), 409, "misdeal")
    assert body["detail"].startswith("misdeal:")


def test_http_level_errors(gateway: Gateway) -> None:
    assert_problem(gateway.get("/v1/nowhere"), 404)
    r = gateway.get("/v1/matches/apply")
    assert_problem(r, 405)
    assert "POST" in r.headers["allow"]
    assert_problem(gateway.post("/v1/matches/apply", raw=b"x" * (300 * 1024)), 413)
    assert_problem(gateway.post("/v1/matches/apply", raw=b"{}", headers={"Content-Type": "text/plain"}), 415)
    assert_problem(gateway.post("/v1/matches/apply", raw=b"{nope"), 400, "malformed-json")
    assert_problem(gateway.post("/v1/matches/apply", raw=b'{"action": "\xff"}'), 400, "malformed-json")


def test_an_unreachable_engine_is_503_with_retry_after(start_gateway: Callable[..., Gateway]) -> None:
    gw = start_gateway(f"127.0.0.1:{free_port()}", "--engine-timeout", "3")
    started = time.monotonic()
    r = gw.get("/v1/variants")
    body = assert_problem(r, 503, "engine-unavailable")
    assert int(r.headers["retry-after"]) >= 1 and "ListVariants" in body["detail"]
    assert time.monotonic() - started < 3  # retried with backoff, not hung until the deadline
    r = gw.get("/readyz")
    assert_problem(r, 503, "engine-unavailable")
    assert "retry-after" in r.headers
    assert gw.get("/healthz").status == 200  # alive, just not ready


def test_a_slow_engine_is_504(start_gateway: Callable[..., Gateway], fake_engine: Callable[[], FakeEngine]) -> None:
    engine = fake_engine()
    release = threading.Event()

    def slow(request: Any, context: grpc.ServicerContext) -> Any:
        release.wait(5)
        return _legal(0)

    engine.servicer.handlers["LegalActions"] = slow
    gw = start_gateway(engine.address, "--engine-timeout", "0.3")
    try:
        started = time.monotonic()
        body = assert_problem(gw.post("/v1/matches/legal", {"state": TINY_STATE}), 504, "engine-timeout")
        assert time.monotonic() - started < 3 and "LegalActions" in body["detail"]
    finally:
        release.set()


def test_an_engine_failure_is_502_without_its_details(start_gateway: Callable[..., Gateway],
                                                     fake_engine: Callable[[], FakeEngine]) -> None:
    engine = fake_engine()

    def broken(request: Any, context: grpc.ServicerContext) -> Any:
        context.abort(grpc.StatusCode.INTERNAL, "secret stack trace")

    engine.servicer.handlers["LegalActions"] = broken
    gw = start_gateway(engine.address)
    body = assert_problem(gw.post("/v1/matches/legal", {"state": TINY_STATE}), 502, "engine-error")
    assert "secret" not in body["detail"] and "INTERNAL" in body["detail"]
    assert engine.servicer.calls == ["LegalActions"]  # INTERNAL is not retried


def test_unavailable_is_retried_until_it_answers(start_gateway: Callable[..., Gateway],
                                                 fake_engine: Callable[[], FakeEngine]) -> None:
    engine = fake_engine()
    answers = iter([grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNAVAILABLE, None])

    def flaky(request: Any, context: grpc.ServicerContext) -> Any:
        code = next(answers)
        if code is not None:
            context.abort(code, "restarting")
        return _legal(2, ["1-1"])

    engine.servicer.handlers["LegalActions"] = flaky
    gw = start_gateway(engine.address)
    r = gw.post("/v1/matches/legal", {"state": TINY_STATE})
    assert r.status == 200 and r.json == {"seat": 2, "actions": ["1-1"]}
    assert engine.servicer.calls == ["LegalActions"] * 3


def test_a_busy_engine_is_asked_again_then_the_answer_is_429(start_gateway: Callable[..., Gateway],
                                                             fake_engine: Callable[[], FakeEngine]) -> None:
    """Every bot worker busy: the gateway asks again after 0.1, 0.2 and 0.4 s (GATEWAY_BUSY_WAIT, 1 s), then
    answers 429 engine-busy with Retry-After; a slot that comes free meanwhile answers the call."""
    engine = fake_engine()
    busy = [True, True, False]

    def hints(request: Any, context: grpc.ServicerContext) -> Any:
        if not busy or busy.pop(0):
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "busy: every bot is deciding")
        return pb.JsonAnswer(answer=b'{"hints": {"seat": 0}}')

    engine.servicer.handlers["Hints"] = hints
    gw = start_gateway(engine.address)
    r = gw.post("/v1/matches/hints", {"state": TINY_STATE, "seat": 0})
    assert r.status == 200 and r.json == {"hints": {"seat": 0}} and engine.servicer.calls == ["Hints"] * 3
    started = time.monotonic()
    body = assert_problem(gw.post("/v1/matches/hints", {"state": TINY_STATE, "seat": 0}), 429, "engine-busy")
    assert 0.6 < time.monotonic() - started < 3 and "Hints" in body["detail"]
    assert engine.servicer.calls == ["Hints"] * 7
    at_once = start_gateway(engine.address, env={"GATEWAY_BUSY_WAIT": "0"})
    r = at_once.post("/v1/matches/hints", {"state": TINY_STATE, "seat": 0})
    assert r.status == 429 and int(r.headers["retry-after"]) >= 1 and engine.servicer.calls == ["Hints"] * 8


def _legal(seat: int, actions: list[str] | None = None) -> pb.JsonAnswer:
    """The JSON face's LegalActions answer."""
    return pb.JsonAnswer(answer=json.dumps({"seat": seat, "actions": actions or []}).encode())


def _answer_seat(seat: int) -> Callable[[Any, grpc.ServicerContext], pb.JsonAnswer]:
    return lambda request, context: _legal(seat)


def test_calls_are_balanced_over_several_engines(start_gateway: Callable[..., Gateway],
                                                 fake_engine: Callable[[], FakeEngine]) -> None:
    engines = [fake_engine(), fake_engine()]
    for i, engine in enumerate(engines):
        engine.servicer.handlers["LegalActions"] = _answer_seat(i)
    target = "ipv4:" + ",".join(e.address for e in engines)
    gw = start_gateway(target)
    seats: set[int] = set()
    for _ in range(200):  # round-robin over the replicas that are connected; both are, soon
        seats.add(gw.post("/v1/matches/legal", {"state": TINY_STATE}).json["seat"])
        if seats == {0, 1}:
            break
    assert seats == {0, 1}
    assert all(e.servicer.calls for e in engines)


def test_sealed_mode_without_keys_is_501(start_gateway: Callable[..., Gateway], engine_proc: Any) -> None:
    gw = start_gateway(engine_proc.address)
    body = assert_problem(gw.post("/v1/matches", {"variant": "kozel", "players": 4, "mode": "sealed"}), 501,
                          "sealed-mode-disabled")
    assert "STATE_TOKEN_KEYS" in body["detail"]
    assert gw.post("/v1/matches", {"variant": "kozel", "players": 4}).status == 201  # transparent still works


def test_the_docs_table_of_problem_types_is_the_catalogues() -> None:
    """docs/rest.md's table of problem types is `problems.markdown_table()`: a type added, renamed or
    retitled in the catalogue changes the page too (issue 36: problem types written once)."""
    page = (REPO / "docs" / "rest.md").read_text()
    assert problems.markdown_table() in page
    for name in problems.PROBLEM_TYPES:
        assert page.count(f"| `{name}` |") == 1, name


def test_a_problem_types_page_says_its_members_and_whether_to_try_again(gateway: Gateway) -> None:
    """GET /v1/problems/{name} serves the catalogue's members and `retry_after`, which also puts the
    Retry-After header on the answers (engine-unavailable and engine-busy above)."""
    documented = gateway.get("/v1/problems/store-unavailable").json
    assert documented["retry_after"] is True and documented["members"] == []
    assert gateway.get("/v1/problems/stale-token").json["members"] == ["field", "latest"]
