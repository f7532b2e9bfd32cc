"""The OpenAPI document as a generator's input (issue 39, part 1): valid OpenAPI 3.0 by
openapi-spec-validator, every operation with a unique verb-noun `operationId` and a tag, the
streams with their media types and item schemas, the problem answers read from the one catalogue
(`api_gateway.http.problems`), and no private flask-smorest attribute anywhere in the gateway."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from openapi_spec_validator import validate

from api_gateway.app import API_DESCRIPTION, create_app
from api_gateway.config import GatewayConfig
from api_gateway.hosting import tournament_stream
from api_gateway.http import problems
from api_gateway.streams import seats
from api_gateway.tokens import KeyRing

REPO = Path(__file__).resolve().parents[2]
METHODS = ("get", "post", "put", "patch", "delete")
#: An operationId a generated client can name a call by: a verb, then what it acts on.
VERB_NOUN = re.compile(r"(create|list|get|apply|replay|settle|deal|time|suggest|export|import|record|spectate|seek"
                       r"|join|leave|renew|play|stream|resign|abort|claim)[A-Z][A-Za-z]*")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    app = create_app(GatewayConfig(engine_target="127.0.0.1:9", engine_timeout=0.5, token_keys=KeyRing.generate("k")))
    found: dict[str, Any] = app.test_client().get("/openapi.json").get_json()
    return found


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in document["paths"].items() for method, op in item.items()
            if method in METHODS]


def test_the_document_is_valid_openapi(document: dict[str, Any]) -> None:
    validate(document)  # raises naming the first violation


def test_every_operation_has_a_unique_verb_noun_id_and_a_tag(document: dict[str, Any]) -> None:
    ops = operations(document)
    ids = [str(op.get("operationId")) for _, _, op in ops]
    assert len(ops) >= 38
    assert [f"{method.upper()} {path}" for path, method, op in ops if not op.get("operationId")] == []
    assert len(set(ids)) == len(ids), sorted(i for i in ids if ids.count(i) > 1)
    assert [i for i in ids if not VERB_NOUN.fullmatch(i)] == []
    tags = {t["name"] for t in document["tags"]}
    assert [f"{method.upper()} {path}" for path, method, op in ops if not set(op.get("tags", ())) & tags] == []
    # the two applies a generated client used to name near-twins
    assert document["paths"]["/v1/matches/apply"]["post"]["operationId"] == "applyMove"
    assert document["paths"]["/v1/matches/{match_id}/apply"]["post"]["operationId"] == "applyTableMove"


def _sse_events(text: str) -> list[dict[str, str]]:
    """Server-Sent Events as a reader of the document sees them (WHATWG's fields: comments skipped, an event
    ended by a blank line), each a mapping of its fields: what OpenAPI 3.0's `schema` of an event stream
    describes, one event at a time (schemathesis validates each so). Not the SDK's decoder (httpx-sse): it hands
    a comment's block on as an empty event, which the SDK then skips."""
    events, current = [], {}
    for line in text.split("\n"):
        if line == "":
            if current:
                events.append(current)
            current = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            current[name] = value.removeprefix(" ")
    return events


@pytest.mark.parametrize("path", ["/v1/matches/{match_id}/events", "/v1/tournaments/hosted/{tournament_id}/events"])
def test_each_event_of_a_stream_as_written_fits_its_documented_schema(document: dict[str, Any], path: str) -> None:
    """Schemathesis once found a finished match's stream (a `view`, then `end`) outside the document: its
    `schema` said a string, where OpenAPI 3.0 has it describe each event (its fields), not the whole text."""
    media = document["paths"][path]["get"]["responses"]["200"]["content"]["text/event-stream"]
    written = (seats.event(b"view", 0, b'{"seq": 0}') + seats.event(b"update", 1, b'{"seq": 1}')
               + seats.event(b"presence", None, b'{"here": [0, 1]}') + seats.KEEPALIVE + seats.END
               + seats.closed("idle")) if "matches" in path else (
        tournament_stream._event("tournament", {"id": "t"}, 3) + tournament_stream._event("end", {})
        + b": keepalive\n\n" + tournament_stream._event("closed", {"reason": "idle"}))
    events = _sse_events(written.decode())
    assert len(events) == (5 if "matches" in path else 3)
    validator = jsonschema.Draft4Validator(media["schema"])
    for event in events:
        assert list(validator.iter_errors(event)) == [], event
        if event["event"] in ("end", "closed", "presence"):  # the events written above with every field of data
            whole = {**media["x-events"][event["event"]], "components": document["components"]}
            assert list(jsonschema.Draft4Validator(whole).iter_errors(json.loads(event["data"]))) == [], event
    assert list(validator.iter_errors("event: view\ndata: {}")) != []  # a string is not an event


def test_the_streams_have_their_media_types_and_item_schemas(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]

    def resolve(ref: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = schemas[ref["$ref"].rpartition("/")[2]]
        return found

    seat = document["paths"]["/v1/matches/{match_id}/events"]["get"]["responses"]["200"]["content"]
    events = seat["text/event-stream"]["x-events"]
    assert set(events) == {"view", "update", "end", "presence", "closed"}
    assert resolve(events["presence"])["required"] == ["here"]
    assert {"seq", "view", "scores", "turn", "over"} <= set(resolve(events["view"])["properties"])
    assert {"seq", "events", "view", "scores", "turn"} <= set(resolve(events["update"])["properties"])
    assert "reason" in resolve(events["closed"])["properties"]
    spectator = document["paths"]["/v1/matches/{match_id}/spectate"]["get"]["responses"]["200"]["content"]
    lines = spectator["application/x-ndjson"]["x-itemSchema"]["oneOf"]
    assert {ref["$ref"].rpartition("/")[2] for ref in lines} >= {"SpectatorDescription", "Event", "StreamClosed"}
    for ref in lines:
        resolve(ref)  # every line's schema is a component


def test_the_problem_answers_are_the_catalogues(document: dict[str, Any]) -> None:
    """Each documented problem answer names catalogue types of its own status, and carries Retry-After
    exactly when one of them says to try again later."""
    catalogue = {**problems.PROBLEM_TYPES, **problems.PLAIN_TYPES}
    seen = set()
    for path, method, op in operations(document):
        for status, answer in op["responses"].items():
            if not status.isdigit() or int(status) < 400:
                continue
            assert problems.MEDIA_TYPE in answer["content"], (path, method, status)
            names = re.findall(r"`([a-z-]+)`", answer["description"])
            assert names and all(catalogue[name].status == int(status) for name in names), (path, status, names)
            seen.update(names)
            retry = any(catalogue[name].retry_after for name in names)
            assert ("Retry-After" in answer.get("headers", {})) == retry, (path, status)
    assert set(problems.PROBLEM_TYPES) - seen == {"internal-error"}  # the default answer's


def test_the_description_speaks_of_tables_too(document: dict[str, Any]) -> None:
    info = document["info"]
    assert info["description"] == API_DESCRIPTION
    assert "keeps nothing" not in info["description"]
    assert "/v1/tables" in info["description"] and "text/event-stream" in info["description"]


def test_no_private_flask_smorest_attribute_is_used() -> None:
    """The gateway uses flask-smorest's public surface: no `_apidoc` written by hand, no private method
    overridden, nothing from its `utils` (a flask-smorest upgrade may change any of them)."""
    private = re.compile(r"\b_apidoc\b|\b_register_responses\b|\b_register_error_handlers\b|flask_smorest\.utils")
    used = [f"{path.relative_to(REPO)}: {match.group(0)}" for path in sorted((REPO / "api_gateway").rglob("*.py"))
            for match in private.finditer(path.read_text())]
    assert used == []
