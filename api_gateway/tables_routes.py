# mypy: allow-untyped-decorators
"""The online tables' REST face (issue 24; the contract: docs/tables.md): flask-smorest views over
`api_gateway.tables.Tables`, and the seat streams (`api_gateway.seat_streams`).

Credentials travel only in ``Authorization: Bearer <value>``; a browser's EventSource, which
sends no header, starts its stream with a single-use ticket instead.
"""
from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any, TypeVar

from flask import Response, current_app, jsonify, request
from flask.views import MethodView
from marshmallow import RAISE, Schema, fields, validate

from api_gateway import problems
from api_gateway.bodies import Blueprint
from api_gateway.config import GatewayConfig
from api_gateway.hosting.tables import Tables
from api_gateway.problems import SealedForbidden
from api_gateway.schemas import (
    LegalAnswerSchema,
    MatchAnswerSchema,
    OneOf,
    OptionValue,
    ProblemSchema,
    StrictBoolean,
    StrictInteger,
    StrictSchema,
    view_field,
)
from api_gateway.seat_streams import SeatStreams

F = TypeVar("F", bound=Callable[..., Any])
Json = dict[str, Any]
TABLES = "domino_tables"
MATCHMAKING = "domino_matchmaking"
SEAT_STREAMS = "domino_seat_streams"
LEVELS = ["random", "greedy", "expert"]
#: Bytes of a seat stream's unsent lines the kernel keeps (SO_SNDBUF; Linux doubles it for its books).
STREAM_SEND_BUFFER = 32 * 1024
#: Listening addresses that name no one address a person could type.
WILDCARD_HOSTS = ("", "0.0.0.0", "::")

tables_blp = Blueprint("tables", __name__, url_prefix="/v1",
                       description="Online tables (docs/tables.md): open a table, invite people, each plays its "
                                   "seat from its own device with a credential; the seat's match by credentials "
                                   "alone, and its events as they happen (Server-Sent Events).")

_DESCRIPTIONS = {
    400: "Malformed (the engine refused the variant's players or options, an action's notation), or a bad cursor",
    401: "No credential of this table in `Authorization: Bearer` (or a bad, spent or expired stream ticket)",
    403: "Another table's credential, an invite that is not valid, a private table without an invite, "
         "or a seat that is not yours",
    404: "No such table, variant or live hosted match",
    409: "The seat is taken or the table full, the match over (or not over), not seated, or an action the rules "
         "refuse now (not your turn); nothing changed",
    410: "The match has been idle longer than the service keeps it",
    415: "Send Content-Type: application/json",
    422: "The body or query does not match the schema",
    429: "Too many streams (of this worker, this seat or match, or your address; see Retry-After)",
    501: "Sealed mode is not configured (tables host sealed matches)",
    502: "The engine failed",
    503: "The engine or the store is unavailable (see Retry-After)",
    504: "The engine did not answer in time",
}
_RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before trying again", "schema": {"type": "integer"}}}
_ENGINE = (502, 503, 504)


#: The OpenAPI security scheme of the calls that take a credential (registered by the app factory).
BEARER = {"type": "http", "scheme": "bearer",
          "description": "a seat's credential (answered by join) or the table's host key"}


def _problems(*codes: int) -> Callable[[F], F]:
    def decorate(func: F) -> F:
        documented: Any = func
        if 401 in codes:
            documented = tables_blp.doc(security=[{"bearer": []}])(documented)
        for code in codes:
            documented = tables_blp.alt_response(code, schema=ProblemSchema, content_type=problems.MEDIA_TYPE,
                                                 description=_DESCRIPTIONS[code],
                                                 headers=_RETRY_AFTER if code in (429, 503) else None)(documented)
        func.__dict__["_apidoc"] = documented._apidoc
        return func
    return decorate


# ---------------------------------------------------------------- schemas


class SeatSpecSchema(StrictSchema):
    kind = fields.String(required=True, validate=OneOf(["open", "bot"]),
                         metadata={"description": "open: for a person; bot: a computer player"})
    level = fields.String(validate=OneOf(LEVELS), metadata={"description": "a bot's level (default greedy)"})


class NewTableSchema(StrictSchema):
    variant = fields.String(required=True, validate=validate.Length(1, 200), metadata={"example": "kozel"})
    players = StrictInteger(required=True, validate=validate.Range(1, 16), metadata={"example": 4})
    options = fields.Dict(keys=fields.String(), values=OptionValue(), metadata={
        "description": "overrides of the preset's defaults"})
    seats = fields.List(fields.Nested(SeatSpecSchema), validate=validate.Length(1, 16), metadata={
        "description": "one per seat (default: all open); at least one open"})
    public = StrictBoolean(metadata={"description": "listed in the lobby (GET /v1/tables); default false"})
    on_leave = fields.String(validate=OneOf(["wait", "bot"]), metadata={
        "description": "wait (default): the match waits for someone to take a freed seat; bot: a greedy bot "
                       "plays it"})
    name = fields.String(validate=validate.Length(1, 60))
    clock = fields.Dict(metadata={
        "description": 'a turn clock the service applies itself (docs/tables.md, "Clocks"): {"move": seconds} '
                       '(5-3600, each move) or {"bank": seconds, "increment": seconds} (30-14400 a match, 0-120 '
                       'more after each move), with "on_timeout": "rule" (the variant\'s timeout rule: the '
                       'match ends; the default) or "autopilot" (a bot of "autopilot_level", greedy by '
                       'default, plays the seat on until its person is back)',
        "example": {"move": 30}})


class SeekSchema(StrictSchema):
    variant = fields.String(required=True, validate=validate.Length(1, 200), metadata={"example": "kozel"})
    players = StrictInteger(required=True, validate=validate.Range(1, 16), metadata={"example": 4})
    options = fields.Dict(keys=fields.String(), values=OptionValue(), metadata={
        "description": "overrides of the preset's defaults (a new table's)"})
    name = fields.String(validate=validate.Length(1, 40), metadata={"description": "the name the table shows"})
    player = fields.String(validate=validate.Length(1, 1000), metadata={
        "description": "a player assertion signed by the host app (docs/tables.md, Player ids): its skill picks "
                       "the table; none: a guest, with a newcomer's skill"})
    clock = fields.Dict(metadata={"description": "only tables with this turn clock (as POST /v1/tables); none: "
                                                 "tables without one"})
    bots_after = StrictInteger(validate=validate.Range(0, 600), metadata={
        "description": "a table this seek opens fills its free seats with bots after this many seconds without "
                       "people; none: it waits for people"})
    bots_level = fields.String(validate=OneOf(LEVELS), metadata={"description": "those bots' level (greedy)"})


class TableSeatSchema(Schema):
    seat = fields.Integer()
    kind = fields.String(metadata={"description": "open or bot"})
    level = fields.String(allow_none=True, metadata={"description": "the bot's level (a bot, or an open seat a "
                                                                    "bot plays since its person left)"})
    taken = fields.Boolean()
    name = fields.String(allow_none=True)
    player = fields.String(allow_none=True, metadata={"description": "the player id holding a person's seat "
                                                                     "(GET /v1/players/{id}: its ratings); null: free "
                                                                     "or a bot"})


class TableSchema(Schema):
    table_id = fields.String()
    name = fields.String(allow_none=True)
    variant = fields.String()
    players = fields.Integer()
    options = fields.Dict()
    public = fields.Boolean()
    on_leave = fields.String()
    clock = fields.Dict(allow_none=True, metadata={"description": "the table's turn clock setting, null: none"})
    seats = fields.List(fields.Nested(TableSeatSchema))
    status = fields.String(metadata={"description": "waiting (open seats not all taken), playing or over"})
    match_id = fields.String(allow_none=True, metadata={"description": "the current match once dealt"})
    matches = fields.Integer(metadata={"description": "matches dealt at this table so far"})
    created = fields.Integer(metadata={"description": "unix seconds"})


class InviteSchema(Schema):
    seat = fields.Integer()
    code = fields.String()
    link = fields.String(metadata={"description": "the page's link that takes the seat"})


class NewTableAnswerSchema(Schema):
    table_id = fields.String()
    host_key = fields.String(metadata={"description": "the table's owner: send as Authorization: Bearer; "
                                                      "answered once"})
    invites = fields.List(fields.Nested(InviteSchema))
    table = fields.Nested(TableSchema)


class InvitesSchema(Schema):
    invites = fields.List(fields.Nested(InviteSchema))


class TableAnswerSchema(Schema):
    table = fields.Nested(TableSchema)


class LobbyArgsSchema(Schema):
    class Meta:
        unknown = RAISE

    variant = fields.String(validate=validate.Length(1, 200))
    limit = fields.Integer(load_default=20, validate=validate.Range(1, 100))
    cursor = fields.String(validate=validate.Length(1, 200))


class LobbySchema(Schema):
    tables = fields.List(fields.Nested(TableSchema))
    next_cursor = fields.String(allow_none=True)


class JoinSchema(StrictSchema):
    invite = fields.String(validate=validate.Length(1, 64), metadata={"description": "an invite's code"})
    seat = StrictInteger(validate=validate.Range(0, 64), metadata={"description": "a public table's seat"})
    name = fields.String(validate=validate.Length(1, 40), metadata={"description": "the name the table shows"})
    player = fields.String(validate=validate.Length(1, 1000), metadata={
        "description": "a player assertion signed by the host app (docs/tables.md, Player ids); none: a guest"})


class JoinAnswerSchema(Schema):
    table_id = fields.String()
    seat = fields.Integer()
    credential = fields.String(metadata={"description": "the seat's credential: send as Authorization: Bearer"})
    player_id = fields.String(allow_none=True)
    match_id = fields.String(allow_none=True)
    table = fields.Nested(TableSchema)


class SeekAnswerSchema(JoinAnswerSchema):
    opened = fields.Boolean(metadata={"description": "true: no table was waiting, this seek opened one (public, "
                                                     "in the lobby) and took its first seat"})


class SeatAnswerSchema(Schema):
    match_id = fields.String()
    table_id = fields.String()
    seat = fields.Integer(allow_none=True, metadata={"description": "null for the host"})
    seq = fields.Integer()
    token = fields.String(metadata={"description": "the latest token: works with every sealed /v1/matches call"})
    seat_key = fields.String()
    view = view_field()
    scores = fields.List(fields.Integer())
    turn = fields.Integer(allow_none=True, metadata={"description": "the seat to act now (null between rounds "
                                                                    "and once over)"})
    clocks = fields.Dict(allow_none=True, metadata={
        "description": "a table with a turn clock: each seat's seconds left (`remaining`, as of the latest "
                       "change), the seat whose clock runs (`running`) and when it runs out (`deadline`, unix "
                       "seconds), the seats on `autopilot`; null without a clock"})
    over = fields.Boolean()


class SeatApplySchema(StrictSchema):
    action = fields.String(required=True, validate=validate.Length(1, 200), metadata={"example": "6-6"})


class EmptySchema(StrictSchema):
    pass


class EventsArgsSchema(Schema):
    class Meta:
        unknown = RAISE

    ticket = fields.String(validate=validate.Length(1, 200), metadata={
        "description": "a stream ticket (POST .../events/ticket), for an EventSource"})
    last_event_id = fields.Integer(validate=validate.Range(-1, 2**31), metadata={
        "description": "resume after this event id (as the Last-Event-ID header)"})
    seat = fields.Integer(validate=validate.Range(0, 64), metadata={
        "description": "the seat whose stream this is (must be the credential's own)"})


class TicketSchema(Schema):
    ticket = fields.String()
    expires_in = fields.Integer(metadata={"description": "seconds"})


# ---------------------------------------------------------------- helpers


def tables() -> Tables:
    found: Tables = current_app.extensions[TABLES]
    return found


def _bearer() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def link_base() -> str:
    """The base of the links answers carry (a table's invites): GATEWAY_PUBLIC_URL, else the address this
    gateway listens on (a wildcard host or port 0: the local address of the connection, which the kernel
    names). Never the request's Host header: a client writes that, and a forged one would hand out links
    to another site."""
    cfg: GatewayConfig = current_app.config["GATEWAY_CONFIG"]
    if cfg.public_url:
        return cfg.public_url
    host, port = cfg.host, cfg.port
    sock = request.environ.get("gunicorn.socket") or request.environ.get("werkzeug.socket")
    if sock is not None and (host in WILDCARD_HOSTS or port == 0):
        host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _json(payload: bytes | Json, status: int = 200) -> Response:
    if isinstance(payload, bytes):
        return current_app.response_class(payload, status=status, mimetype="application/json")
    response = jsonify(payload)
    response.status_code = status
    response.headers["Cache-Control"] = "no-store"
    return response


# ---------------------------------------------------------------- tables


@tables_blp.route("/tables")
class TableList(MethodView):
    @tables_blp.arguments(NewTableSchema(), examples={"kozel": {"summary": "Kozel: two people, two bots", "value": {
        "variant": "kozel", "players": 4, "seats": [{"kind": "open"}, {"kind": "open"},
                                                     {"kind": "bot", "level": "greedy"},
                                                     {"kind": "bot", "level": "expert"}],
        "public": False, "on_leave": "wait", "name": "Anna's table"}}})
    @tables_blp.response(201, NewTableAnswerSchema)
    @_problems(400, 404, 415, 422, 501, *_ENGINE)
    def post(self, body: Json) -> Response:
        """Open a table: answers its id, the host key (once) and one invite per open seat."""
        return _json(tables().create(body, link_base()), 201)

    @tables_blp.arguments(LobbyArgsSchema(), location="query", as_kwargs=True)
    @tables_blp.response(200, LobbySchema)
    @_problems(400, 422, 501, 503)
    def get(self, limit: int, variant: str | None = None, cursor: str | None = None) -> Response:
        """The lobby: public tables with a seat still free, newest first (cursor-paginated)."""
        return _json(tables().lobby(variant, limit, cursor))


@tables_blp.route("/seek")
class Seek(MethodView):
    @tables_blp.arguments(SeekSchema(), examples={"kozel": {"summary": "quick play: Kozel for two", "value": {
        "variant": "kozel", "players": 2, "name": "Anna", "bots_after": 60}}})
    @tables_blp.response(200, SeekAnswerSchema)
    @_problems(400, 404, 415, 422, 501, *_ENGINE)
    def post(self, body: Json) -> Response:
        """Quick play: a seat at a waiting public table of the variant and player count whose opener's skill
        is nearest yours, or a new one (found by the next seekers; filled with bots after `bots_after`)."""
        return _json(current_app.extensions[MATCHMAKING].seek(body, link_base()))


@tables_blp.route("/tables/<string:table_id>")
class TableOne(MethodView):
    @tables_blp.response(200, TableSchema)
    @_problems(404, 501, 503)
    def get(self, table_id: str) -> Response:
        """A table (anyone holding its id): seats, status, the current match."""
        return _json(tables().get(table_id))


@tables_blp.route("/tables/<string:table_id>/join")
class Join(MethodView):
    @tables_blp.arguments(JoinSchema(), examples={"invite": {"summary": "with an invite", "value": {
        "invite": "K7QM2XPD", "name": "Boris"}}})
    @tables_blp.response(200, JoinAnswerSchema)
    @_problems(400, 403, 404, 409, 415, 422, 501, *_ENGINE)
    def post(self, body: Json, table_id: str) -> Response:
        """Take a seat (an invite, or a seat number on a public table): answers the seat's credential.
        The match is dealt when the last open seat is taken."""
        return _json(tables().join(table_id, body))


@tables_blp.route("/tables/<string:table_id>/leave")
class Leave(MethodView):
    BODYLESS = True  # no body needed (one sent must be JSON)

    @tables_blp.response(200, TableAnswerSchema)
    @_problems(401, 403, 404, 409, 501, *_ENGINE)
    def post(self, table_id: str) -> Response:
        """Give up your seat (seat credential): a bot plays it, or the match waits, as the table says."""
        return _json(tables().leave(table_id, _bearer()))


@tables_blp.route("/tables/<string:table_id>/invites")
class Invites(MethodView):
    @tables_blp.response(200, InvitesSchema)
    @_problems(401, 403, 404, 501, 503)
    def get(self, table_id: str) -> Response:
        """Fresh invites for every open seat not taken (host key); earlier unused ones stop working."""
        return _json(tables().invites(table_id, _bearer(), link_base()))


@tables_blp.route("/tables/<string:table_id>/again")
class Again(MethodView):
    BODYLESS = True  # no body needed (one sent must be JSON)

    @tables_blp.response(200, TableAnswerSchema)
    @_problems(401, 403, 404, 409, 501, *_ENGINE)
    def post(self, table_id: str) -> Response:
        """Play again: a new match for the same seats once the current one is over (host key or a seat)."""
        return _json(tables().again(table_id, _bearer()))


# ---------------------------------------------------------------- the seat's match by credentials


@tables_blp.route("/matches/<string:match_id>/seat")
class SeatLatest(MethodView):
    @tables_blp.response(200, SeatAnswerSchema)
    @_problems(401, 403, 404, 501, 503)
    def get(self, match_id: str) -> Response:
        """Your seat's latest view, token and key, from any device (Bearer: seat credential or host key)."""
        t = tables()
        return _json(t.latest(t.context(match_id, _bearer())))


@tables_blp.route("/matches/<string:match_id>/apply")
class SeatApply(MethodView):
    @tables_blp.arguments(SeatApplySchema(), examples={"play": {"summary": "play a tile", "value": {
        "action": "6-6"}}})
    @tables_blp.response(200, MatchAnswerSchema)
    @_problems(400, 401, 403, 404, 409, 410, 415, 422, 501, *_ENGINE)
    def post(self, body: Json, match_id: str) -> Response:
        """Act for your seat without a token (Bearer: the seat's credential); out of turn: 409."""
        t = tables()
        return _json(t.apply(t.context(match_id, _bearer()), body["action"]))


@tables_blp.route("/matches/<string:match_id>/legal")
class SeatLegal(MethodView):
    @tables_blp.response(200, LegalAnswerSchema)
    @_problems(401, 403, 404, 410, 501, *_ENGINE)
    def get(self, match_id: str) -> Response:
        """The seat to move, and your legal actions when it is you."""
        t = tables()
        return _json(t.legal(t.context(match_id, _bearer())))


@tables_blp.route("/matches/<string:match_id>/next-round")
class SeatNextRound(MethodView):
    @tables_blp.arguments(EmptySchema(), examples={"next": {"summary": "deal the next round", "value": {}}})
    @tables_blp.response(200, MatchAnswerSchema)
    @_problems(401, 403, 404, 409, 410, 415, 422, 501, *_ENGINE)
    def post(self, body: Json, match_id: str) -> Response:
        """Deal the next round once the current one is over (any seat, or the host)."""
        t = tables()
        return _json(t.next_round(t.context(match_id, _bearer())))


@tables_blp.route("/matches/<string:match_id>/events/ticket")
class Ticket(MethodView):
    BODYLESS = True  # no body needed (one sent must be JSON)

    @tables_blp.response(200, TicketSchema)
    @_problems(401, 403, 404, 501, 503)
    def post(self, match_id: str) -> Response:
        """A single-use ticket good for starting one stream within 30 s (for EventSource, which sends no
        Authorization header): `GET .../events?ticket=...`."""
        t = tables()
        return _json(t.ticket(t.context(match_id, _bearer())))


@tables_blp.route("/matches/<string:match_id>/events")
class Events(MethodView):
    @tables_blp.arguments(EventsArgsSchema(), location="query", as_kwargs=True)
    @tables_blp.response(200, content_type="text/event-stream", description=(
        "Server-Sent Events, each with `id: <seq>`: `view` first (without Last-Event-ID), then `update` per "
        "change as this viewer may see it, `end` once the match is over; `: keepalive` comments while idle; "
        "`closed` {reason} when the server stops the stream early (reconnect with Last-Event-ID)"))
    @_problems(401, 403, 404, 422, 429, 501, 503)
    def get(self, match_id: str, ticket: str | None = None, last_event_id: int | None = None,
            seat: int | None = None) -> Response:
        """A seat's stream (Bearer or `ticket`), or the public one (the host, or no credential: a spectator)."""
        t = tables()
        credential = _bearer()
        who: int | None = None
        if credential is not None:
            ctx = t.context(match_id, credential)
            who, viewers = ctx.seat, ctx.hosted.viewers
        else:
            viewers = t.hosted(match_id).viewers
            if ticket is not None:
                who = t.spend_ticket(match_id, ticket)
        if seat is not None and seat != who:
            raise SealedForbidden("a seat's stream opens with that seat's own credential (or its ticket) only",
                                  "seat")
        header = request.headers.get("Last-Event-ID")
        if header is not None:
            try:
                last_event_id = int(header.strip())
            except ValueError:
                last_event_id = None
        streams: SeatStreams = current_app.extensions[SEAT_STREAMS]
        sock = request.environ.get("gunicorn.socket")
        stream = streams.open(match_id, who, who if who is not None else viewers - 1, last_event_id,
                              request.remote_addr or "", sock)
        if sock is not None:
            # A reader that stops reading is dropped, not waited for: a write that the client's full
            # window holds back for three keepalive periods fails, and the stream's place is given back.
            # The kernel holds at most STREAM_SEND_BUFFER bytes of a stream's unread lines meanwhile (by
            # default it grows a send buffer to megabytes: a whole match of a reader that stopped).
            sock.settimeout(3 * streams.seats.limits.keepalive)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, STREAM_SEND_BUFFER)
        return current_app.response_class(stream, mimetype="text/event-stream", headers={
            "Cache-Control": "no-store", "X-Accel-Buffering": "no"})
