# mypy: allow-untyped-decorators
"""The player's inbox: a player's live matches and what they missed while away (docs/tables.md, Inbox).

`GET /v1/inbox` lists the games of the player the host app vouches for, proven by their player assertion
in ``Authorization: Bearer <assertion>`` (checked as a join checks it). A guest has no id to prove: it
sends its seats' credentials in the body of `POST /v1/inbox` (the one call that takes credentials in a
body: a list of them does not fit a header; a body is in no access log or browser history either).
"""
from __future__ import annotations

from typing import Any

from flask import Response, request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api_gateway.archive.players import PlayerIdError
from api_gateway.hosting.inbox import CREDENTIAL, MOST, MOST_CREDENTIALS, Inbox, Seat
from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import BODY, operation
from api_gateway.http.problems import TableRefused
from api_gateway.http.schemas import StrictSchema
from api_gateway.http.table_schemas import TableSeatSchema
from api_gateway.http.tables_routes import tables

Json = dict[str, Any]

inbox_blp = Blueprint("inbox", __name__, url_prefix="/v1",
                      description="A player's inbox: their live matches (whose turn, clocks, unread events) and "
                                  "the notifications they missed while away (docs/tables.md).")

_HOSTING = ("sealed-mode-disabled", "store-unavailable")


class InboxCredentialsSchema(StrictSchema):
    credentials = fields.List(
        fields.String(validate=validate.Regexp(CREDENTIAL, error="not a seat's credential (<table id>.<seat>.<secret>, "
                                                                 "as join answered it)")),
        required=True, validate=validate.Length(1, MOST_CREDENTIALS),
        metadata={"description": f"a guest's seat credentials (1 to {MOST_CREDENTIALS}), as join answered them"})


class InboxGameSchema(Schema):
    table_id = fields.String()
    name = fields.String(allow_none=True)
    variant = fields.String()
    players = fields.Integer()
    seat = fields.Integer(metadata={"description": "the seat you hold"})
    status = fields.String(metadata={"description": "waiting (for people: open seats not all taken) or playing"})
    match_id = fields.String(allow_none=True, metadata={"description": "the match being played (null: not dealt yet)"})
    seq = fields.Integer(allow_none=True, metadata={"description": "the match's version (its latest change)"})
    turn = fields.Integer(allow_none=True, metadata={"description": "the seat to act (null between rounds or before "
                                                                    "the deal)"})
    your_turn = fields.Boolean()
    clocks = fields.Dict(allow_none=True, metadata={
        "description": "as your seat's view shows them (GET /v1/matches/{id}/seat): `remaining` as of the latest "
                       "change, the `running` seat and its `deadline` (unix seconds); null without a clock"})
    unread = fields.Integer(metadata={"description": "the other seats' moves since your own last move"})
    unread_more = fields.Boolean(metadata={"description": "true: counted over the match's last 64 changes only "
                                                          "(there may be more)"})
    active = fields.Float(metadata={"description": "unix seconds: the latest activity the store knows (the clock's "
                                                   "last move, else the deal or the table's opening)"})
    seats = fields.List(fields.Nested(TableSeatSchema), metadata={"description": "each seat: its name, player id, "
                                                                                 "and whether its person is here"})


class InboxSchema(Schema):
    player_id = fields.String(allow_none=True, metadata={"description": "the player the assertion proves (null: "
                                                                        "credentials only)"})
    games = fields.List(fields.Nested(InboxGameSchema), metadata={
        "description": f"your live games, your turn first, then the latest active; at most {MOST}. A match over "
                      "leaves the inbox (GET /v1/players/{id}/matches has it)"})
    gone = fields.List(fields.Integer(), metadata={
        "description": "the indexes of the sent credentials that hold no seat any more (the table expired, the "
                       "seat was given up): forget them"})


@inbox_blp.after_request
def no_store(response: Response) -> Response:
    """An inbox is one person's: never kept by a cache."""
    response.headers["Cache-Control"] = "no-store"
    return response


def _assertion() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.strip().partition(" ")
    if not header.strip():
        return None
    if scheme.lower() != "bearer" or not value.strip():
        raise PlayerIdError("Authorization: send the player assertion as Bearer <assertion>")
    return value.strip()


def _player(inbox: Inbox, assertion: str | None) -> tuple[str | None, list[Seat]]:
    if assertion is None:
        return None, []
    archive = tables().archive
    if archive is None:
        raise PlayerIdError("player: this service keeps no players (no archive): list a guest's games by its "
                            "credentials")
    player: str = archive.player_for(assertion)  # 400 invalid-player: forged, expired, another app's
    return player, inbox.player_seats(player)


@inbox_blp.route("/inbox")
class InboxView(MethodView):
    @inbox_blp.response(200, InboxSchema)
    @operation(inbox_blp, "getInbox", "player-required", "invalid-player", "rate-limited", *_HOSTING, credential=True)
    def get(self) -> Json:
        """Your live games (Bearer: your player assertion): whose turn, the clocks, the moves since yours.

        The player the host app vouches for (docs/tables.md, "Player ids") lists the tables where they hold a
        seat, from any device: each game with the seat, the match's version, whose turn it is, the clocks as
        the seat sees them, who is here, and `unread`: the other seats' moves since the seat's own last one.
        A guest sends its credentials instead (POST)."""
        assertion = _assertion()
        if assertion is None:
            raise TableRefused("player-required", "send your player assertion as Authorization: Bearer <assertion> "
                                                  "(a guest: POST its seats' credentials)", "Authorization")
        inbox = Inbox(tables())
        player, seats = _player(inbox, assertion)
        return {"player_id": player, "games": inbox.games(seats), "gone": []}

    @inbox_blp.arguments(InboxCredentialsSchema(), examples={"guest": {"summary": "a guest's two seats", "value": {
        "credentials": ["4f0c2a9e8d1b7c6a5e3f2d1c0b9a8e7d.1.3q2Z0xS5nYtJd9aH4kLm8pQw7rVb1cXe",
                        "9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d.0.Xy7Q1wE3rT5yU7iO9pA2sD4fG6hJ8kLz"]}}})
    @inbox_blp.response(200, InboxSchema)
    @operation(inbox_blp, "listInboxByCredentials", *BODY, "invalid-player", "rate-limited", *_HOSTING,
               credential="optional")
    def post(self, body: Json) -> Json:
        """A guest's live games, by its seats' credentials (and a player assertion's, if Bearer sends one).

        The same games as GET, of the seats the credentials hold (1 to 50, as join answered them); `gone`
        names the credentials that hold no seat any more, which a client forgets."""
        inbox = Inbox(tables())
        player, seats = _player(inbox, _assertion())
        held, gone = inbox.credential_seats(body["credentials"])
        return {"player_id": player, "games": inbox.games([*seats, *held]), "gone": gone}
