# mypy: allow-untyped-decorators
"""The /v1 resources: flask-smorest views that validate, call `Matches`, and serialize.

Every call that needs the match is a POST whose body carries it (the state in
transparent mode, the token and a seat key in sealed mode): the server keeps
nothing, and a token in a URL would end up in access logs.

Request schemas are given to `arguments` as instances made once: given a class,
webargs makes a new instance per request, and with it every nested schema
(about 0.5 ms of a transparent apply). A loaded schema keeps no per-request state.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import Response, current_app, jsonify, request
from flask.views import MethodView

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


@matches_blp.route("")
class NewMatch(MethodView):
    @matches_blp.arguments(NewMatchSchema(), examples=EXAMPLES["new_match"])
    @matches_blp.response(201, MatchAnswerSchema)
    @_problems(matches_blp, 400, 409, 413, 415, 422, 501, *_ENGINE)
    def post(self, body: Json) -> Response:
        """Start a match: deals the first round from `seed` (or a random one) or `deal`, unless `no_deal`.

        `mode: "sealed"` answers a token, one key per seat and a host key instead of the state.
        """
        return answer(matches().new_match(body), 201)


@matches_blp.route("/legal")
class Legal(MethodView):
    @matches_blp.arguments(CarrierSchema(), examples=EXAMPLES["legal"])
    @matches_blp.response(200, LegalAnswerSchema)
    @_problems(matches_blp, *_CARRIED)
    def post(self, body: Json) -> Response:
        """The seat to move and its legal actions (sealed: the actions only when you are that seat)."""
        return answer(matches().legal(body))


@matches_blp.route("/apply")
class Apply(MethodView):
    @matches_blp.arguments(ApplySchema(), examples=EXAMPLES["apply"])
    @matches_blp.response(200, MatchAnswerSchema)
    @_problems(matches_blp, *_CARRIED)
    def post(self, body: Json) -> Response:
        """Apply one action of the seat to move (sealed: your seat, and only on your turn)."""
        return answer(matches().apply(body))


@matches_blp.route("/replay")
class Replay(MethodView):
    @matches_blp.arguments(ReplaySchema(), examples=EXAMPLES["replay"])
    @matches_blp.response(200, ReplayAnswerSchema)
    @_problems(matches_blp, *_CARRIED)
    def post(self, body: Json) -> Response:
        """Apply actions in order, stopping at the first refused one (a refusal is part of the answer)."""
        return answer(matches().replay(body))


@matches_blp.route("/settle")
class Settle(MethodView):
    @matches_blp.arguments(SettleSchema(), examples=EXAMPLES["settle"])
    @matches_blp.response(200, MatchAnswerSchema)
    @_problems(matches_blp, *_CARRIED)
    def post(self, body: Json) -> Response:
        """Score a round played with physical tiles from the hands left (transparent mode only)."""
        return answer(matches().settle(body))


@matches_blp.route("/next-round")
class NextRound(MethodView):
    @matches_blp.arguments(NextRoundSchema(), examples=EXAMPLES["next_round"])
    @matches_blp.response(200, MatchAnswerSchema)
    @_problems(matches_blp, *_CARRIED)
    def post(self, body: Json) -> Response:
        """Deal the next round once the current one is over: from the match seed, or `deal` (transparent)."""
        return answer(matches().next_round(body))


@matches_blp.route("/timeout")
class Timeout(MethodView):
    @matches_blp.arguments(SeatArgumentSchema(), examples=EXAMPLES["timeout"])
    @matches_blp.response(200, MatchAnswerSchema)
    @_problems(matches_blp, *_CARRIED)
    def post(self, body: Json) -> Response:
        """A seat timed out: the match ends by the variant's rule (sealed: your own seat, or any with the host key)."""
        return answer(matches().timeout(body))


@matches_blp.route("/view")
class View(MethodView):
    @matches_blp.arguments(SeatArgumentSchema(), examples=EXAMPLES["view"])
    @matches_blp.response(200, ViewAnswerSchema)
    @_problems(matches_blp, *_CARRIED)
    def post(self, body: Json) -> Response:
        """What one seat may see (sealed: your own view; the host key gets the public part)."""
        return answer(matches().view(body))


@matches_blp.route("/suggest")
class Suggest(MethodView):
    @matches_blp.arguments(SuggestSchema(), examples=EXAMPLES["suggest"])
    @matches_blp.response(200, SuggestAnswerSchema)
    @_problems(matches_blp, *_BOTS)
    def post(self, body: Json) -> Response:
        """A computer opponent's move (random, greedy or expert) for the seat to move, decided from that
        seat's view only (sealed: your own seat, on your turn). The match is unchanged."""
        return answer(matches().suggest(body))


@matches_blp.route("/hints")
class Hints(MethodView):
    @matches_blp.arguments(HintsSchema(), examples=EXAMPLES["hints"])
    @matches_blp.response(200, HintsAnswerSchema)
    @_problems(matches_blp, *_BOTS)
    def post(self, body: Json) -> Response:
        """The coach: what the expert knows from one seat's view (numbers proven missing, where each unseen
        tile may be, each legal action's value). Sealed: your own seat. The match is unchanged."""
        return answer(matches().hints(body))


@matches_blp.route("/record")
class ExportRecord(MethodView):
    @matches_blp.arguments(ExportRecordSchema(), examples=EXAMPLES["record"])
    @matches_blp.response(200, RecordAnswerSchema)
    @_problems(matches_blp, *_CARRIED)
    def post(self, body: Json) -> Response:
        """The match's record, JSON and text forms (transparent: `view`, full by default; sealed: a seat's
        own record, the host's spectator record, the full record once the match is over)."""
        return answer(matches().record(body))


@records_blp.route("/import")
class ImportRecord(MethodView):
    @records_blp.arguments(RecordInputSchema(), examples=EXAMPLES["record_import"])
    @records_blp.response(200, ImportRecordAnswerSchema)
    @_problems(records_blp, 400, 409, 413, 415, 422, *_ENGINE)
    def post(self, body: Json) -> Response:
        """Read a record (`record` JSON or `text`), check every move (a refusal names the move and the line:
        400 unreadable, 409 a move the rules refuse) and answer the match at its end (full records)."""
        return answer(matches().import_record(body))


@records_blp.route("/replay")
class ReplayRecord(MethodView):
    @records_blp.arguments(ReplayRecordSchema(), examples=EXAMPLES["record_replay"])
    @records_blp.response(200, ReplayRecordAnswerSchema)
    @_problems(records_blp, 400, 409, 413, 415, 422, *_ENGINE)
    def post(self, body: Json) -> Response:
        """The state after move `upto` of a full record (every move before it checked)."""
        return answer(matches().replay_record(body))


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
