# mypy: allow-untyped-decorators
"""The /v1 resources: flask-smorest views that validate, call `Matches`, and serialize.

The POST operations on a carried match or record are one table, `OPERATIONS` (path, request
and answer schemas, the `Matches` method, problem codes, docstring), each row registered
as a view by `register`; a new call is a new row.

Every call that needs the match is a POST whose body carries it (the state in
transparent mode, the token and a seat key in sealed mode): the server keeps
nothing, and a token in a URL would end up in access logs.

Request schemas are given to `arguments` as instances made once: given a class,
webargs makes a new instance per request, and with it every nested schema
(about 0.5 ms of a transparent apply). A loaded schema keeps no per-request state.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import Response, current_app, jsonify, request
from flask.views import MethodView
from marshmallow import Schema

from api_gateway import problems
from api_gateway.bodies import Blueprint
from api_gateway.matches import Matches
from api_gateway.openapi import EXAMPLES
from api_gateway.schemas import (
    ApplySchema,
    CarrierSchema,
    ExportRecordSchema,
    HintsAnswerSchema,
    HintsSchema,
    ImportRecordAnswerSchema,
    LegalAnswerSchema,
    MatchAnswerSchema,
    NewMatchSchema,
    NextRoundSchema,
    ProblemSchema,
    RecordAnswerSchema,
    RecordInputSchema,
    ReplayAnswerSchema,
    ReplayRecordAnswerSchema,
    ReplayRecordSchema,
    ReplaySchema,
    SeatArgumentSchema,
    SettleSchema,
    SuggestAnswerSchema,
    SuggestSchema,
    VariantListSchema,
    VariantSchema,
    ViewAnswerSchema,
)
from api_gateway.streams import Streams

F = TypeVar("F", bound=Callable[..., Any])
Json = dict[str, Any]

variants_blp = Blueprint("variants", __name__, url_prefix="/v1/variants",
                         description="The variants (presets) the engine plays, with their options.")
matches_blp = Blueprint("matches", __name__, url_prefix="/v1/matches",
                        description="Create a match and play it. Transparent mode: send `state`, get the new "
                                    "`state`. Sealed mode: send `token` and your `seat_key`, get a new `token` "
                                    "and your own `view`.")
records_blp = Blueprint("records", __name__, url_prefix="/v1/records",
                        description="Match records (docs/records.md): read one back, check it move by move, "
                                    "replay it to the state after any move. `POST /v1/matches/record` writes one.")
problems_blp = Blueprint("problems", __name__, url_prefix="/v1/problems",
                         description="What each problem `type` of an error answer means.")

_DESCRIPTIONS = {
    400: "Malformed: bad notation, unknown variant or option, inconsistent state, bad token",
    403: "Sealed mode: the key does not allow this",
    404: "Not found (a spectator stream: no live sealed match with this id)",
    409: "Illegal in this state (or a misdeal), or a sealed token that is not the match's latest; nothing changed",
    410: "Sealed mode: the match has been idle longer than the service keeps it",
    413: "Request body too large, or the match too large for one call (a long match's record)",
    415: "Send Content-Type: application/json",
    422: "The body does not match the schema",
    429: "Every bot of the engine is thinking for other calls (see Retry-After); nothing was done. "
         "A spectator stream: too many streams (in all, of this match or of your address; see Retry-After)",
    501: "Sealed mode is not configured",
    502: "The engine failed",
    503: "The engine, or in sealed mode the token version store, is unavailable (see Retry-After)",
    504: "The engine did not answer in time",
}

_RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before trying again",
                                "schema": {"type": "integer"}}}


def _problems(blp: Blueprint, *codes: int) -> Callable[[F], F]:
    """Document the problem answers of an operation."""

    def decorate(func: F) -> F:
        documented: Any = func
        for code in codes:
            headers = _RETRY_AFTER if code in (429, 503) else None
            documented = blp.alt_response(code, schema=ProblemSchema, content_type=problems.MEDIA_TYPE,
                                          description=_DESCRIPTIONS[code], headers=headers)(documented)
        # Keep the documentation, drop the wrappers: each `alt_response` wraps the view in a call
        # through `current_app.ensure_sync`, ~1 us each on every request.
        func.__dict__["_apidoc"] = documented._apidoc
        return func

    return decorate


def answer(payload: bytes | Json, status: int = 200) -> Response:
    """`payload` (the engine's JSON answer, or a dict) as the JSON answer, without a marshmallow dump.

    The engine's JSON face writes the answer schemas' keys exactly (tests/gateway
    check every answer against its schema); the `response` decorators keep
    documenting those schemas, and a returned `Response` is passed through as is.
    """
    if isinstance(payload, bytes):
        return current_app.response_class(payload, status=status, mimetype="application/json")
    response = jsonify(payload)
    response.status_code = status
    return response


def matches() -> Matches:
    found: Matches = current_app.extensions["domino_matches"]
    return found


_ENGINE = (502, 503, 504)
_CARRIED = (400, 403, 409, 410, 413, 415, 422, 501, *_ENGINE)
_BOTS = (*_CARRIED, 429)  # a client's expert suggestion or hints may find every bot slot busy


@variants_blp.route("")
class VariantList(MethodView):
    @variants_blp.response(200, VariantListSchema)
    @_problems(variants_blp, *_ENGINE)
    def get(self) -> Json:
        """List the variants, their player counts and options (type, allowed values, default)."""
        return {"variants": matches().variants()}


@variants_blp.route("/<string:name>")
class VariantOne(MethodView):
    @variants_blp.response(200, VariantSchema)
    @_problems(variants_blp, 404, *_ENGINE)
    def get(self, name: str) -> Json:
        """One variant by its preset name."""
        return matches().variant(name)


@dataclass(frozen=True)
class Operation:
    """One POST operation on a carried match or record: a row of `OPERATIONS`, registered by `register`.

    The view it makes validates the body with `request` (documented with the examples
    ``EXAMPLES[example]``), calls `call` on the app's `Matches` and answers the engine's JSON
    as is (`answer`), documenting `answer_schema` for `status` and the problem answers `problems`.
    `doc` is the view's docstring: its first paragraph the OpenAPI summary, the rest the description.
    """

    blueprint: Blueprint
    path: str
    name: str  # the view class's name, which is the Flask endpoint (``matches.Apply``)
    request: Schema
    example: str
    answer_schema: type[Schema]
    call: Callable[[Matches, Json], bytes]
    problems: tuple[int, ...]
    doc: str
    status: int = 200


#: Every POST operation of /v1/matches and /v1/records, in the order they are registered.
OPERATIONS: tuple[Operation, ...] = (
    Operation(matches_blp, "", "NewMatch", NewMatchSchema(), "new_match", MatchAnswerSchema, Matches.new_match,
              (400, 409, 413, 415, 422, 501, *_ENGINE),
              """Start a match: deals the first round from `seed` (or a random one) or `deal`, unless `no_deal`.

              `mode: "sealed"` answers a token, one key per seat and a host key instead of the state.
              """, status=201),
    Operation(matches_blp, "/legal", "Legal", CarrierSchema(), "legal", LegalAnswerSchema, Matches.legal, _CARRIED,
              """The seat to move and its legal actions (sealed: the actions only when you are that seat)."""),
    Operation(matches_blp, "/apply", "Apply", ApplySchema(), "apply", MatchAnswerSchema, Matches.apply, _CARRIED,
              """Apply one action of the seat to move (sealed: your seat, and only on your turn)."""),
    Operation(matches_blp, "/replay", "Replay", ReplaySchema(), "replay", ReplayAnswerSchema, Matches.replay,
              _CARRIED,
              """Apply actions in order, stopping at the first refused one (a refusal is part of the answer)."""),
    Operation(matches_blp, "/settle", "Settle", SettleSchema(), "settle", MatchAnswerSchema, Matches.settle,
              _CARRIED,
              """Score a round played with physical tiles from the hands left (transparent mode only)."""),
    Operation(matches_blp, "/next-round", "NextRound", NextRoundSchema(), "next_round", MatchAnswerSchema,
              Matches.next_round, _CARRIED,
              """Deal the next round once the current one is over: from the match seed, or `deal` (transparent)."""),
    Operation(matches_blp, "/timeout", "Timeout", SeatArgumentSchema(), "timeout", MatchAnswerSchema,
              Matches.timeout, _CARRIED,
              """A seat timed out: the match ends by the variant's rule (sealed: your own seat, or any with the """
              """host key)."""),
    Operation(matches_blp, "/view", "View", SeatArgumentSchema(), "view", ViewAnswerSchema, Matches.view, _CARRIED,
              """What one seat may see (sealed: your own view; the host key gets the public part)."""),
    Operation(matches_blp, "/suggest", "Suggest", SuggestSchema(), "suggest", SuggestAnswerSchema, Matches.suggest,
              _BOTS,
              """A computer opponent's move (random, greedy or expert) for the seat to move, decided from that
              seat's view only (sealed: your own seat, on your turn). The match is unchanged."""),
    Operation(matches_blp, "/hints", "Hints", HintsSchema(), "hints", HintsAnswerSchema, Matches.hints, _BOTS,
              """The coach: what the expert knows from one seat's view (numbers proven missing, where each unseen
              tile may be, each legal action's value). Sealed: your own seat. The match is unchanged."""),
    Operation(matches_blp, "/record", "ExportRecord", ExportRecordSchema(), "record", RecordAnswerSchema,
              Matches.record, _CARRIED,
              """The match's record, JSON and text forms (transparent: `view`, full by default; sealed: a seat's
              own record, the host's spectator record, the full record once the match is over)."""),
    Operation(records_blp, "/import", "ImportRecord", RecordInputSchema(), "record_import", ImportRecordAnswerSchema,
              Matches.import_record, (400, 409, 413, 415, 422, *_ENGINE),
              """Read a record (`record` JSON or `text`), check every move (a refusal names the move and the line:
              400 unreadable, 409 a move the rules refuse) and answer the match at its end (full records)."""),
    Operation(records_blp, "/replay", "ReplayRecord", ReplayRecordSchema(), "record_replay",
              ReplayRecordAnswerSchema, Matches.replay_record, (400, 409, 413, 415, 422, *_ENGINE),
              """The state after move `upto` of a full record (every move before it checked)."""),
)


def register(op: Operation) -> type[MethodView]:
    """`op`'s view on its blueprint: a MethodView named `op.name` whose `post` is documented as `op` says."""
    call, status = op.call, op.status

    def post(self: MethodView, body: Json) -> Response:
        return answer(call(matches(), body), status)

    post.__doc__ = op.doc
    documented = op.blueprint.arguments(op.request, examples=EXAMPLES[op.example])(
        op.blueprint.response(op.status, op.answer_schema)(_problems(op.blueprint, *op.problems)(post)))
    view: type[MethodView] = op.blueprint.route(op.path)(type(op.name, (MethodView,), {"post": documented}))
    return view


for _operation in OPERATIONS:
    register(_operation)


def streams() -> Streams:
    found: Streams = current_app.extensions["domino_streams"]
    return found


@matches_blp.route("/<string:match_id>/spectate")
class Spectate(MethodView):
    @matches_blp.response(200, content_type="application/x-ndjson", description=(
        "NDJSON: the match's description first, then one line per event as a spectator sees it (no hidden "
        "tile; the hands `revealed` once a round ends), as they happen; `{\"type\": \"keepalive\"}` after a "
        "few seconds without a line (skip it); `{\"type\": \"end\"}` when the match ends, "
        "`{\"type\": \"closed\", \"reason\": ...}` when the stream stops before (idle, max-duration, expired, "
        "store-unavailable, shutdown)"))
    @_problems(matches_blp, 404, 429, 501, 503)
    def get(self, match_id: str) -> Response:
        """Watch a live sealed match (anyone with its `match_id`): its public events as they happen."""
        # 404 / 429 / 501 / 503 before the stream starts
        stream = streams().open(match_id, request.remote_addr or "", request.environ.get("gunicorn.socket"))
        return current_app.response_class(
            stream, mimetype="application/x-ndjson", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@problems_blp.route("/<string:name>")
class ProblemTypeDoc(MethodView):
    @problems_blp.response(200)
    @_problems(problems_blp, 404)
    def get(self, name: str) -> Json:
        """The meaning of one problem type (the `type` member of error answers)."""
        t = problems.PROBLEM_TYPES.get(name)
        if t is None:
            raise problems.Problem(404, "Not Found", f"no problem type named {name!r}")
        return {"type": problems.TYPE_PREFIX + t.name, "title": t.title, "status": t.status,
                "description": t.description}
