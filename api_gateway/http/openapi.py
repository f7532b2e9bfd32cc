"""What the OpenAPI document says beyond the fields: request shape rules, examples, each operation's
id and problem answers (`operation`), and the streams' media types and items.

marshmallow describes each field; the rules that tie fields together (give
`state`, or `token` and `seat_key`; `seed` or `deal`, not both) are written here
once per schema as JSON Schema (`oneOf`, `not`, `required`) and merged into the
schema's component by `ShapeRules`, an apispec plugin. The schemas' own
`validates_schema` methods enforce the same rules on requests; schemathesis
(tests/gateway/test_gateway_schemathesis.py) sends requests valid and invalid by
the document and fails on any disagreement.

The examples Swagger UI prefills are real requests (`openapi_examples.json`, made
by `python -m clients.openapi_examples` with the rules, posted to a real gateway
by tests/gateway/test_gateway_examples.py).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from apispec import BasePlugin
from marshmallow import Schema

from api_gateway.http import problems
from api_gateway.http.bodies import Blueprint
from api_gateway.http.schemas import ProblemSchema
from api_gateway.http.stream_schemas import (
    SeatStreamPresenceSchema,
    SeatStreamUpdateSchema,
    SeatStreamViewSchema,
    SpectatorControlSchema,
    SpectatorDescriptionSchema,
    StreamClosedSchema,
)

F = TypeVar("F", bound=Callable[..., Any])
Json = dict[str, Any]

#: Operation name -> its named examples ({"summary", "value"}), each a body it accepts as it stands.
EXAMPLES: dict[str, dict[str, Json]] = json.loads((Path(__file__).parent / "openapi_examples.json").read_text())


class ShapeRules(BasePlugin):
    """Merges a marshmallow schema's `OPENAPI_RULES` (JSON Schema keywords) into its component."""

    def schema_helper(self, name: str, definition: Json, **kwargs: Any) -> Json | None:
        schema = kwargs.get("schema")
        cls = schema if isinstance(schema, type) else type(schema)
        rules: Json | None = getattr(cls, "OPENAPI_RULES", None)
        return dict(rules) if rules else None


# ---------------------------------------------------------------- one operation's documentation

RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before trying again", "schema": {"type": "integer"}}}
WWW_AUTHENTICATE = {"WWW-Authenticate": {"description": "`Bearer`: send a credential of this table",
                                         "schema": {"type": "string"}}}
#: Every problem answer's schema: one instance for the ~600 answers the document names. Given the class,
#: apispec makes an instance of it for each answer to find its component (the same one every time), and
#: those instances were half of what documenting the views cost a worker's start.
PROBLEM = ProblemSchema()
#: What any operation may answer besides what it documents: a gateway bug, or the server layer's own refusals.
DEFAULT_PROBLEM = {"description": "`internal-error` (500), or the server layer's own refusals (about:blank: 405, "
                                  "408, 414, 431, 429 before the request was read)",
                   "content": {problems.MEDIA_TYPE: {"schema": PROBLEM}}}


def problem_answers(names: Iterable[str]) -> dict[str, Json]:
    """The OpenAPI responses of the problem types `names` (`problems.PROBLEM_TYPES` or `PLAIN_TYPES`, a
    KeyError for any other name), one per status: each type named with its title, the Retry-After and
    WWW-Authenticate headers where the catalogue says the answer carries them."""
    by_status: dict[int, list[problems.ProblemType]] = {}
    for name in dict.fromkeys(names):  # a type two groups of an operation name is documented once
        kind = problems.PROBLEM_TYPES.get(name) or problems.PLAIN_TYPES[name]
        by_status.setdefault(kind.status, []).append(kind)
    answers: dict[str, Json] = {}
    for status, kinds in sorted(by_status.items()):
        answer: Json = {"description": "; ".join(f"`{k.name}`: {k.title}" for k in kinds),
                        "content": {problems.MEDIA_TYPE: {"schema": PROBLEM}}}
        headers = {**(RETRY_AFTER if any(k.retry_after for k in kinds) else {}),
                   **(WWW_AUTHENTICATE if status == 401 else {})}
        if headers:
            answer["headers"] = headers
        answers[str(status)] = answer
    return answers


def operation(blp: Blueprint, operation_id: str, *problem_names: str, credential: bool | str = False,
              answer: Json | None = None) -> Callable[[F], F]:
    """The one preamble of a view: its stable `operationId` (verb-noun: what a generated client names the
    call), the problem answers it may give (by the catalogue's names), the bearer credential it takes
    (`credential`: True, or "optional" for a call some may make without one: a public table, a spectator's
    stream), and what its success answer says beyond a schema (`answer`: a stream's media type).

    It is flask-smorest's public `doc` decorator: one call more per request (~1-5 us, against one per
    documented status when each was an `alt_response`)."""
    responses: Json = {**problem_answers(problem_names), "default": DEFAULT_PROBLEM}
    if answer is not None:
        responses["200"] = answer
    doc: Json = {"operationId": operation_id, "responses": responses}
    if credential:
        doc["security"] = [{"bearer": []}, {}] if credential == "optional" else [{"bearer": []}]
    decorate: Callable[[F], F] = blp.doc(**doc)
    return decorate


# ---------------------------------------------------------------- the streams

def _ref(name: str) -> Json:
    return {"$ref": f"#/components/schemas/{name}"}


#: The schemas of the streams' items, registered as components by the app's `GatewayApi` (they are named
#: only from the streams' `x-` members, which apispec does not read).
STREAM_COMPONENTS: dict[str, type[Schema]] = {
    "SeatStreamView": SeatStreamViewSchema, "SeatStreamUpdate": SeatStreamUpdateSchema,
    "SeatStreamPresence": SeatStreamPresenceSchema, "StreamClosed": StreamClosedSchema, "SpectatorDescription": SpectatorDescriptionSchema,
    "SpectatorControl": SpectatorControlSchema,
}

#: `GET /v1/matches/{id}/events`: Server-Sent Events. `x-events` names each event's `data` schema.
SEAT_STREAM: Json = {
    "description": "Server-Sent Events, each with `id: <seq>` (the match's version after that change): `view` "
                   "first (without Last-Event-ID), then `update` per change as this viewer may see it, `end` "
                   "(`data: {}`) once the match is over; `presence` {here} (no id) when the seats here change; "
                   "`: keepalive` comments while idle; `closed` {reason} "
                   "when the server stops the stream early (reconnect with Last-Event-ID). `x-events` gives "
                   "each event's `data` (one line of JSON) schema.",
    "content": {"text/event-stream": {
        "schema": {"type": "object", "description": "one event (OpenAPI 3.0: the schema of each): its name, its id "
                                                    "(the match's version; none on `presence`) and its data, one line "
                                                    "of JSON (`x-events` gives each name's schema)",
                   "properties": {"event": {"type": "string", "enum": ["view", "update", "end", "presence", "closed"]},
                                  "id": {"type": "string"}, "data": {"type": "string"}},
                   "required": ["event", "data"]},
        "x-events": {"view": _ref("SeatStreamView"), "update": _ref("SeatStreamUpdate"),
                     "end": {"type": "object", "additionalProperties": False}, "presence": _ref("SeatStreamPresence"),
                     "closed": _ref("StreamClosed")},
    }},
}

#: `GET /v1/matches/{id}/spectate`: NDJSON. `x-itemSchema` (OpenAPI 3.2's `itemSchema`) is each line's schema.
SPECTATOR_STREAM: Json = {
    "description": "NDJSON (one JSON object a line): the match's `description` first, then one line per event "
                   "as a spectator sees it (no hidden tile; the hands `revealed` once a round ends), as they "
                   "happen; `{\"type\": \"keepalive\"}` after a few seconds without a line (skip it); "
                   "`{\"type\": \"end\"}` when the match ends, `{\"type\": \"closed\", \"reason\": ...}` when the "
                   "stream stops before (idle, max-duration, expired, store-unavailable, shutdown). "
                   "`x-itemSchema` is each line's schema; a consumer skips a `type` it does not know.",
    "content": {"application/x-ndjson": {
        "schema": {"type": "string", "description": "lines of JSON, each ended by a newline"},
        "x-itemSchema": {"oneOf": [_ref("SpectatorDescription"), _ref("Event"), _ref("KingdominoEvent"),
                                   _ref("SpectatorControl"), _ref("StreamClosed")]},
    }},
}


# ---------------------------------------------------------------- the problem types operations share

#: Any call to the engine.
ENGINE = ("engine-error", "engine-unavailable", "engine-timeout")
#: Any call with a JSON body.
BODY = ("malformed-json", "validation-error", "body-too-large", "unsupported-media-type")
#: A sealed match's token and seat key.
SEALED = ("invalid-token", "stale-token", "match-expired", "store-unavailable", "wrong-seat-key", "sealed-forbidden",
          "sealed-mode-disabled")
#: A call on a carried match (transparent state or sealed token).
CARRIED = (*BODY, "malformed", "illegal-action", "misdeal", "too-large", *SEALED, *ENGINE)
