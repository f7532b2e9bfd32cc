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
from typing import Any

from flask import Response, current_app, jsonify, request
from flask.views import MethodView
from marshmallow import Schema

from api_gateway.http import problems
from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import BODY, CARRIED, ENGINE, EXAMPLES, SPECTATOR_STREAM, operation
from api_gateway.http.schemas import (
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
    ProblemTypeSchema,
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
from api_gateway.matches import Matches
from api_gateway.streams import Streams, body_framing

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


_BOTS = (*CARRIED, "engine-busy", "help-refused")  # every bot slot may be busy; a rated table's seat gets no help
_RECORD = (*BODY, "malformed", "illegal-action", "too-large", *ENGINE)


@variants_blp.route("")
class VariantList(MethodView):
    @variants_blp.response(200, VariantListSchema)
    @operation(variants_blp, "listVariants", *ENGINE)
    def get(self) -> Json:
        """List the variants, their player counts and options (type, allowed values, default)."""
        return {"variants": matches().variants()}


@variants_blp.route("/<string:name>")
class VariantOne(MethodView):
    @variants_blp.response(200, VariantSchema)
    @operation(variants_blp, "getVariant", "unknown-variant", *ENGINE)
    def get(self, name: str) -> Json:
        """One variant by its preset name."""
        return matches().variant(name)


@dataclass(frozen=True)
class Operation:
    """One POST operation on a carried state (a match, a record, a tournament): a row of `OPERATIONS`
    (or of `api_gateway.tournaments.OPERATIONS`), registered by `register`.

    The view it makes validates the body with `request` (documented with the examples
    ``EXAMPLES[example]``), calls `call` on what `service` answers (the app's `Matches`, or its
    `Tournaments`) and answers the engine's JSON as is (`answer`), documenting `answer_schema` for
    `status`, the problem types `problems` and the stable `operation_id` a generated client names the
    call by. `doc` is the view's docstring: its first paragraph the OpenAPI summary, the rest the description.
    """

    blueprint: Blueprint
    path: str
    name: str  # the view class's name, which is the Flask endpoint (``matches.Apply``)
    operation_id: str
    request: Schema
    example: str
    answer_schema: type[Schema]
    call: Callable[[Any, Json], bytes]  # a method of `service`'s class (Matches.apply)
    problems: tuple[str, ...]
    doc: str
    status: int = 200
    service: Callable[[], Any] = matches


#: Every POST operation of /v1/matches and /v1/records, in the order they are registered.
OPERATIONS: tuple[Operation, ...] = (
    Operation(matches_blp, "", "NewMatch", "createMatch",
              NewMatchSchema(), "new_match", MatchAnswerSchema, Matches.new_match,
              (*BODY, "malformed", "misdeal", "too-large", "sealed-mode-disabled", "store-unavailable", "rate-limited",
               *ENGINE),
              """Start a match: deals the first round from `seed` (or a random one) or `deal`, unless `no_deal`.

              `mode: "sealed"` answers a token, one key per seat and a host key instead of the state.
              """, status=201),
    Operation(matches_blp, "/legal", "Legal", "getLegalActions",
              CarrierSchema(), "legal", LegalAnswerSchema, Matches.legal, CARRIED,
              """The seat to move and its legal actions (sealed: the actions only when you are that seat)."""),
    Operation(matches_blp, "/apply", "Apply", "applyMove",
              ApplySchema(), "apply", MatchAnswerSchema, Matches.apply, CARRIED,
              """Apply one action of the seat to move (sealed: your seat, and only on your turn)."""),
    Operation(matches_blp, "/replay", "Replay", "replayMoves",
              ReplaySchema(), "replay", ReplayAnswerSchema, Matches.replay,
              CARRIED,
              """Apply actions in order, stopping at the first refused one (a refusal is part of the answer)."""),
    Operation(matches_blp, "/settle", "Settle", "settleRound",
              SettleSchema(), "settle", MatchAnswerSchema, Matches.settle,
              CARRIED,
              """Score a round played with physical tiles from the hands left (transparent mode only)."""),
    Operation(matches_blp, "/next-round", "NextRound", "dealNextRound",
              NextRoundSchema(), "next_round", MatchAnswerSchema,
              Matches.next_round, CARRIED,
              """Deal the next round once the current one is over: from the match seed, or `deal` (transparent)."""),
    Operation(matches_blp, "/timeout", "Timeout", "timeOutSeat",
              SeatArgumentSchema(), "timeout", MatchAnswerSchema,
              Matches.timeout, CARRIED,
              """A seat timed out: the match ends by the variant's rule (sealed: your own seat, or any with the """
              """host key)."""),
    Operation(matches_blp, "/view", "View", "getSeatView",
              SeatArgumentSchema(), "view", ViewAnswerSchema, Matches.view, CARRIED,
              """What one seat may see (sealed: your own view; the host key gets the public part)."""),
    Operation(matches_blp, "/suggest", "Suggest", "suggestMove",
              SuggestSchema(), "suggest", SuggestAnswerSchema, Matches.suggest,
              _BOTS,
              """A computer opponent's move (random, greedy or expert) for the seat to move, decided from that
              seat's view only (sealed: your own seat, on your turn). The match is unchanged."""),
    Operation(matches_blp, "/hints", "Hints", "getHints",
              HintsSchema(), "hints", HintsAnswerSchema, Matches.hints, _BOTS,
              """The coach: what the expert knows from one seat's view (numbers proven missing, where each unseen
              tile may be, each legal action's value). Sealed: your own seat. The match is unchanged."""),
    Operation(matches_blp, "/record", "ExportRecord", "exportRecord",
              ExportRecordSchema(), "record", RecordAnswerSchema,
              Matches.record, CARRIED,
              """The match's record, JSON and text forms (transparent: `view`, full by default; sealed: a seat's
              own record, the host's spectator record, the full record once the match is over)."""),
    Operation(records_blp, "/import", "ImportRecord", "importRecord",
              RecordInputSchema(), "record_import", ImportRecordAnswerSchema,
              Matches.import_record, _RECORD,
              """Read a record (`record` JSON or `text`), check every move (a refusal names the move and the line:
              400 unreadable, 409 a move the rules refuse) and answer the match at its end (full records)."""),
    Operation(records_blp, "/replay", "ReplayRecord", "replayRecord", ReplayRecordSchema(), "record_replay",
              ReplayRecordAnswerSchema, Matches.replay_record, _RECORD,
              """The state after move `upto` of a full record (every move before it checked)."""),
)


def register(op: Operation) -> type[MethodView]:
    """`op`'s view on its blueprint: a MethodView named `op.name` whose `post` is documented as `op` says."""
    call, service, status = op.call, op.service, op.status

    def post(self: MethodView, body: Json) -> Response:
        return answer(call(service(), body), status)

    post.__doc__ = op.doc
    documented = op.blueprint.arguments(op.request, examples=EXAMPLES[op.example])(
        op.blueprint.response(op.status, op.answer_schema)(
            operation(op.blueprint, op.operation_id, *op.problems)(post)))
    view: type[MethodView] = op.blueprint.route(op.path)(type(op.name, (MethodView,), {"post": documented}))
    return view


for _operation in OPERATIONS:
    register(_operation)


def streams() -> Streams:
    found: Streams = current_app.extensions["domino_streams"]
    return found


@matches_blp.route("/<string:match_id>/spectate")
class Spectate(MethodView):
    @matches_blp.response(200, content_type="application/x-ndjson", description=SPECTATOR_STREAM["description"])
    @operation(matches_blp, "spectateMatch", "unknown-match", "too-many-streams", "sealed-mode-disabled",
               "store-unavailable", "spectators-off", answer=SPECTATOR_STREAM)
    def get(self, match_id: str) -> Response:
        """Watch a live sealed match (anyone with its `match_id`): its public events as they happen.

        A private online table's match is watched only through its table's stream, with its spectator link
        (403 spectators-off here)."""
        # 404 / 429 / 501 / 503 before the stream starts
        stream = streams().open(match_id, request.remote_addr or "", request.environ.get("gunicorn.socket"),
                                chunked=body_framing(request.environ))
        return current_app.response_class(
            stream, mimetype="application/x-ndjson", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@problems_blp.route("/<string:name>")
class ProblemTypeDoc(MethodView):
    @problems_blp.response(200, ProblemTypeSchema)
    @operation(problems_blp, "getProblemType", "not-found")
    def get(self, name: str) -> Json:
        """The meaning of one problem type (the `type` member of error answers)."""
        t = problems.PROBLEM_TYPES.get(name)
        if t is None:
            raise problems.Problem(404, "Not Found", f"no problem type named {name!r}")
        return {"type": problems.TYPE_PREFIX + t.name, "title": t.title, "status": t.status,
                "description": t.description, "members": list(t.members), "retry_after": t.retry_after}
