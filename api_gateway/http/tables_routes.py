# mypy: allow-untyped-decorators
"""The online tables' REST face (issue 24; the contract: docs/tables.md): flask-smorest views over
`api_gateway.hosting` (tables, matchmaking), and the seat streams (`api_gateway.streams.seats`).

Credentials travel only in ``Authorization: Bearer <value>``; a browser's EventSource, which
sends no header, starts its stream with a single-use ticket instead.
"""
from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import Schema

from api_gateway.config import GatewayConfig
from api_gateway.hosting.tables import SeatContext, Tables
from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import BODY, ENGINE, SEAT_STREAM, operation
from api_gateway.http.problems import SealedForbidden, TableRefused
from api_gateway.http.routes import answer
from api_gateway.http.schemas import LegalAnswerSchema, MatchAnswerSchema
from api_gateway.http.table_schemas import (
    EmptySchema,
    EventsArgsSchema,
    InvitesSchema,
    JoinAnswerSchema,
    JoinSchema,
    LobbyArgsSchema,
    LobbySchema,
    NewTableAnswerSchema,
    NewTableSchema,
    SeatAnswerSchema,
    SeatApplySchema,
    SeekAnswerSchema,
    SeekSchema,
    TableAnswerSchema,
    TableArgsSchema,
    TableSchema,
    TicketSchema,
)
from api_gateway.streams import body_framing
from api_gateway.streams.seats import SeatStreams

Json = dict[str, Any]
TABLES = "domino_tables"
MATCHMAKING = "domino_matchmaking"
SEAT_STREAMS = "domino_seat_streams"
#: Bytes of a seat stream's unsent lines the kernel keeps (SO_SNDBUF; Linux doubles it for its books).
STREAM_SEND_BUFFER = 32 * 1024
#: Listening addresses that name no one address a person could type.
WILDCARD_HOSTS = ("", "0.0.0.0", "::")

tables_blp = Blueprint("tables", __name__, url_prefix="/v1",
                       description="Online tables (docs/tables.md): open a table, invite people, each plays its "
                                   "seat from its own device with a credential; the seat's match by credentials "
                                   "alone, and its events as they happen (Server-Sent Events).")

#: The problem types of the table calls, by what they touch.
_HOSTING = ("sealed-mode-disabled", "store-unavailable")          # tables host sealed matches in the store
_SEAT = ("invalid-credential", "wrong-table", "unknown-table", *_HOSTING)  # a credential of a table
_MATCH = ("invalid-credential", "wrong-table", "sealed-forbidden", "unknown-match", "match-expired", *_HOSTING)
_OPENING = (*BODY, "malformed", "unknown-variant", "invalid-player", "rate-limited", *_HOSTING, *ENGINE)


#: The OpenAPI security scheme of the calls that take a credential (registered by the app factory).
BEARER = {"type": "http", "scheme": "bearer",
          "description": "a seat's credential (answered by join), the table's host key, or a player's assertion "
                         "(GET /v1/inbox, /v1/inbox/notifications)"}


# ---------------------------------------------------------------- helpers


@tables_blp.after_request
def no_store(response: Response) -> Response:
    """Answers about tables, seats and credentials are never kept by a cache."""
    response.headers["Cache-Control"] = "no-store"
    return response


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


# ---------------------------------------------------------------- tables


@tables_blp.route("/tables")
class TableList(MethodView):
    @tables_blp.arguments(NewTableSchema(), examples={"kozel": {"summary": "Kozel: two people, two bots", "value": {
        "variant": "kozel", "players": 4, "seats": [{"kind": "open"}, {"kind": "open"},
                                                     {"kind": "bot", "level": "greedy"},
                                                     {"kind": "bot", "level": "expert"}],
        "public": False, "on_leave": "wait", "name": "Anna's table"}}})
    @tables_blp.response(201, NewTableAnswerSchema)
    @operation(tables_blp, "createTable", *_OPENING)
    def post(self, body: Json) -> tuple[Json, int]:
        """Open a table: answers its id, the host key (once) and one invite per open seat."""
        return tables().create(body, link_base()), 201

    @tables_blp.arguments(LobbyArgsSchema(), location="query", as_kwargs=True)
    @tables_blp.response(200, LobbySchema)
    @operation(tables_blp, "listTables", "bad-cursor", "validation-error", *_HOSTING)
    def get(self, limit: int, variant: str | None = None, cursor: str | None = None) -> Json:
        """The lobby: public tables with a seat still free, newest first (cursor-paginated)."""
        return tables().lobby(variant, limit, cursor)


@tables_blp.route("/seek")
class Seek(MethodView):
    @tables_blp.arguments(SeekSchema(), examples={"kozel": {"summary": "quick play: Kozel for two", "value": {
        "variant": "kozel", "players": 2, "name": "Anna", "bots_after": 60}}})
    @tables_blp.response(200, SeekAnswerSchema)
    @operation(tables_blp, "seekTable", *_OPENING, "unknown-party", "party-full")
    def post(self, body: Json) -> Json:
        """Quick play: a seat at a waiting public table of the variant and player count whose opener's skill
        is nearest yours, or a new one (found by the next seekers; filled with bots after `bots_after`)."""
        found: Json = current_app.extensions[MATCHMAKING].seek(body, link_base())
        return found


@tables_blp.route("/tables/<string:table_id>/join")
class Join(MethodView):
    @tables_blp.arguments(JoinSchema(), examples={"invite": {"summary": "with an invite", "value": {
        "invite": "K7QM2XPD", "name": "Boris"}}})
    @tables_blp.response(200, JoinAnswerSchema)
    @operation(tables_blp, "joinTable", *BODY, "invalid-player", "invalid-invite", "invite-required", "unknown-table",
               "seat-taken", "seat-held", "table-full", "match-over", *_HOSTING, *ENGINE)
    def post(self, body: Json, table_id: str) -> Json:
        """Take a seat (an invite, or a seat number on a public table): answers the seat's credential.
        The match is dealt when the last open seat is taken."""
        return tables().join(table_id, body)


@dataclass(frozen=True)
class CredentialCall:
    """A call without a body on one table or one seat's match: a row of `CREDENTIAL_CALLS`, registered by
    `register_call` (as `api_gateway.http.routes.register` registers the carried-state operations).

    The view it makes (a MethodView named `name`, whose `method` is "get" or "post": a POST without a
    body, `BODYLESS`) calls `call` with the app's `Tables`, the id in `path` and the credential of the
    ``Authorization: Bearer`` header (None: none sent), documents `answer_schema`, the problem types
    `problems`, the stable `operation_id` and, with `credential`, the bearer credential it takes.
    A dict it answers is serialized by `answer_schema`; a `Response` (the engine's JSON) goes as it is.
    `doc` is the view's docstring: its first paragraph the OpenAPI summary, the rest the description.
    """

    path: str
    name: str
    method: str
    operation_id: str
    answer_schema: type[Schema]
    problems: tuple[str, ...]
    call: Callable[[Tables, str, str | None], Json | Response]
    doc: str
    credential: bool = True


def register_call(row: CredentialCall) -> type[MethodView]:
    """`row`'s view on the tables blueprint."""
    call = row.call

    def view(self: MethodView, **path: str) -> Json | Response:
        (found,) = path.values()  # the table's or the match's id
        return call(tables(), found, _bearer())

    view.__doc__ = row.doc
    documented = tables_blp.response(200, row.answer_schema)(
        operation(tables_blp, row.operation_id, *row.problems, credential=row.credential)(view))
    members: dict[str, Any] = {row.method: documented}
    if row.method == "post":
        members["BODYLESS"] = True  # no body needed (one sent must be JSON)
    made: type[MethodView] = tables_blp.route(row.path)(type(row.name, (MethodView,), members))
    return made


def _on_seat(ask: Callable[[Tables, SeatContext], bytes | Json]) -> Callable[[Tables, str, str | None], Response]:
    """A call on a seat's match: `ask` with the context of the credential's seat, the engine's answer as it is."""
    return lambda t, match_id, credential: answer(ask(t, t.context(match_id, credential)))


#: Every call without a body on one table or one seat's match, in the order they are registered.
CREDENTIAL_CALLS: tuple[CredentialCall, ...] = (
    CredentialCall("/tables/<string:table_id>/leave", "Leave", "post", "leaveTable", TableAnswerSchema,
                   (*_SEAT, "not-seated", *ENGINE), Tables.leave,
                   """Give up your seat (seat credential): a bot plays it, or the match waits, as the table says.

                   Leaving a rated match once every person has moved is a resign: the match ends, your side
                   losing."""),
    CredentialCall("/tables/<string:table_id>/invites", "Invites", "get", "renewInvites", InvitesSchema,
                   (*_SEAT, "sealed-forbidden"), lambda t, table_id, credential: t.invites(table_id, credential,
                                                                                           link_base()),
                   """Fresh invites for every open seat not taken (host key); earlier unused ones stop working."""),
    CredentialCall("/tables/<string:table_id>/again", "Again", "post", "playTableAgain", TableAnswerSchema,
                   (*_SEAT, "match-not-over", *ENGINE), Tables.again,
                   "Play again: a new match for the same seats once the current one is over (host key or a seat)."),
    CredentialCall("/matches/<string:match_id>/seat", "SeatLatest", "get", "getTableSeat", SeatAnswerSchema,
                   _MATCH, _on_seat(Tables.latest),
                   "Your seat's latest view, token and key, from any device (Bearer: seat credential or host key)."),
    CredentialCall("/matches/<string:match_id>/legal", "SeatLegal", "get", "getTableLegalActions",
                   LegalAnswerSchema, (*_MATCH, *ENGINE), _on_seat(Tables.legal),
                   """The seat to move, and your legal actions when it is you."""),
    CredentialCall("/matches/<string:match_id>/resign", "SeatResign", "post", "resignTableMatch", MatchAnswerSchema,
                   (*_MATCH, "illegal-action", *ENGINE), _on_seat(Tables.resign),
                   """Resign (seat credential): your side loses and the match ends.

                   Where the variant has a timeout rule (Kozel's formula, Kingdomino's forfeit) it is scored as
                   your seat's timeout; elsewhere your side is placed last. Events: `resigned`, then the end."""),
    CredentialCall("/matches/<string:match_id>/abort", "SeatAbort", "post", "abortTableMatch", MatchAnswerSchema,
                   (*_MATCH, "abort-closed", "illegal-action", *ENGINE), _on_seat(Tables.abort),
                   """Abort (seat credential): the match ends with no result and no rating.

                   Only before every person at the table has made a move (409 abort-closed after). Events:
                   `aborted`, then the end; archived as aborted."""),
    CredentialCall("/matches/<string:match_id>/claim", "SeatClaim", "post", "claimTableVictory", MatchAnswerSchema,
                   (*_MATCH, "claim-refused", "illegal-action", *ENGINE), _on_seat(Tables.claim),
                   """Claim victory (seat credential) when another person's seat has gone.

                   A seat is gone when its person has had no stream open and made no call for the table's
                   `claim_after` seconds (the table's seats say `here` and `away_since`). Scored as that seat's
                   timeout where the variant has the rule, else its side placed last. Events: `gone`, then the
                   end; 409 claim-refused when no seat has gone."""),
    CredentialCall("/matches/<string:match_id>/events/ticket", "Ticket", "post", "createStreamTicket", TicketSchema,
                   (*_MATCH, "rate-limited"), lambda t, match_id, credential: t.ticket(t.context(match_id, credential)),
                   """A single-use ticket good for starting one stream within 30 s (for EventSource, which sends no
                   Authorization header): `GET .../events?ticket=...`."""),
)

for _call in CREDENTIAL_CALLS:
    register_call(_call)


@tables_blp.route("/tables/<string:table_id>")
class TableOne(MethodView):
    @tables_blp.arguments(TableArgsSchema(), location="query", as_kwargs=True)
    @tables_blp.response(200, TableSchema)
    @operation(tables_blp, "getTable", "validation-error", "unknown-table", "invalid-credential", "wrong-table",
               "invalid-invite", "spectators-off", *_HOSTING, credential="optional")
    def get(self, table_id: str, invite: str | None = None, watch: str | None = None) -> Json:
        """A table: seats (each person's `here`), status, the current match.

        A public table: anyone holding its id. A private one: its seats and host (Bearer), whoever holds one
        of its unused invites (`invite`), or its spectator link's code (`watch`, when its host gave it
        spectators); else 403 spectators-off."""
        credential = _bearer()
        if credential is None and "Authorization" in request.headers:  # sent, but no bearer credential
            raise TableRefused("invalid-credential", "send a seat's credential or the host key as Authorization: "
                                                     "Bearer <value> (or no Authorization header)", "Authorization")
        return tables().get(table_id, credential, invite, watch)


@tables_blp.route("/matches/<string:match_id>/apply")
class SeatApply(MethodView):
    @tables_blp.arguments(SeatApplySchema(), examples={"play": {"summary": "play a tile", "value": {
        "action": "6-6"}}})
    @tables_blp.response(200, MatchAnswerSchema)
    @operation(tables_blp, "applyTableMove", *BODY, "malformed", "illegal-action", *_MATCH, *ENGINE, credential=True)
    def post(self, body: Json, match_id: str) -> Response:
        """Act for your seat without a token (Bearer: the seat's credential); out of turn: 409."""
        t = tables()
        return answer(t.apply(t.context(match_id, _bearer()), body["action"]))


@tables_blp.route("/matches/<string:match_id>/next-round")
class SeatNextRound(MethodView):
    @tables_blp.arguments(EmptySchema(), examples={"next": {"summary": "deal the next round", "value": {}}})
    @tables_blp.response(200, MatchAnswerSchema)
    @operation(tables_blp, "dealTableNextRound", *BODY, "illegal-action", *_MATCH, *ENGINE, credential=True)
    def post(self, body: Json, match_id: str) -> Response:
        """Deal the next round once the current one is over (any seat, or the host)."""
        t = tables()
        return answer(t.next_round(t.context(match_id, _bearer())))


@tables_blp.route("/matches/<string:match_id>/events")
class Events(MethodView):
    @tables_blp.arguments(EventsArgsSchema(), location="query", as_kwargs=True)
    @tables_blp.response(200, content_type="text/event-stream", description=SEAT_STREAM["description"])
    @operation(tables_blp, "streamTableEvents", "validation-error", "invalid-ticket", *_MATCH, "too-many-streams",
               "spectators-off",
               credential="optional", answer=SEAT_STREAM)
    def get(self, match_id: str, ticket: str | None = None, last_event_id: int | None = None,
            seat: int | None = None, watch: str | None = None) -> Response:
        """A seat's stream (Bearer or `ticket`), or the public one (the host, or no credential: a spectator)."""
        t = tables()
        credential = _bearer()
        who: int | None = None
        if credential is not None:
            ctx = t.context(match_id, credential)
            who, viewers = ctx.seat, ctx.hosted.viewers
        elif ticket is not None:
            viewers = t.hosted(match_id).viewers
            who = t.spend_ticket(match_id, ticket)
        else:  # a spectator: a public table's, or a private one's with its spectator code
            viewers = t.watchable(match_id, watch).viewers
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
                              request.remote_addr or "", sock, body_framing(request.environ))
        if sock is not None:
            # A reader that stops reading is dropped, not waited for: a write that the client's full
            # window holds back for three keepalive periods fails, and the stream's place is given back.
            # The kernel holds at most STREAM_SEND_BUFFER bytes of a stream's unread lines meanwhile (by
            # default it grows a send buffer to megabytes: a whole match of a reader that stopped).
            sock.settimeout(3 * streams.seats.limits.keepalive)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, STREAM_SEND_BUFFER)
        return current_app.response_class(stream, mimetype="text/event-stream", headers={
            "Cache-Control": "no-store", "X-Accel-Buffering": "no"})
