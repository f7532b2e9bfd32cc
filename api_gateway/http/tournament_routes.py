# mypy: allow-untyped-decorators
"""Hosted tournaments' routes (issue 41, docs/tournaments.md): flask-smorest views over
`api_gateway.hosting.tournament_host`, their request and answer schemas. Credentials travel only in
``Authorization: Bearer`` (a participant's tournament credential, or the host key)."""
from __future__ import annotations

from typing import Any

from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import RAISE, Schema, fields, validate

from api_gateway.hosting.tournament_host import HOSTED, STREAMS, HostedTournaments
from api_gateway.hosting.tournament_stream import TournamentStreams
from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import BODY, ENGINE, operation
from api_gateway.http.schemas import OneOf, OptionValue, StrictBoolean, StrictInteger, StrictSchema
from api_gateway.http.tables_routes import link_base

Json = dict[str, Any]

hosted_blp = Blueprint("hosted-tournaments", __name__, url_prefix="/v1",
                       description="Hosted tournaments: the service seats every round's tables (the Bykovo "
                                   "micro-tournament for 4-7 people, Swiss) (docs/tournaments.md).")

#: The problem types every hosted tournament call may answer: the rounds are hosted tables (sealed matches in
#: the live store), the tournament's state is in the archive database.
_HOSTING = ("sealed-mode-disabled", "store-unavailable", "archive-unavailable")
_CREDENTIAL = ("invalid-credential", "wrong-table", "unknown-tournament", *_HOSTING, *ENGINE)


@hosted_blp.after_request
def no_store(response: Response) -> Response:
    """Answers about tournaments and credentials are never kept by a cache."""
    response.headers["Cache-Control"] = "no-store"
    return response


def _bearer() -> str | None:
    """The credential of the ``Authorization: Bearer`` header (None: none sent)."""
    scheme, _, value = request.headers.get("Authorization", "").strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def hosted() -> HostedTournaments:
    found: HostedTournaments = current_app.extensions[HOSTED]
    return found


# ---------------------------------------------------------------- schemas


class HostedNewTournamentSchema(StrictSchema):
    format = fields.String(validate=OneOf(["bykovo", "swiss"]), metadata={
        "description": "bykovo (the default): the micro-tournament of RULES.md B, four play each round; swiss: "
                       "a set number of rounds of matches at tables of `players` (2: paired by score without "
                       "repeats; 4: tables grouped by standing)"})
    variant = fields.String(validate=validate.Length(1, 200), metadata={
        "description": "the variant every match plays (bykovo: bykovo, the default; swiss: any that `players` "
                       "can play)"})
    players = StrictInteger(validate=validate.Range(2, 4), metadata={
        "description": "a Swiss's players at each table: 2 (the default) or 4 (Bykovo: 4)", "example": 4})
    options = fields.Dict(keys=fields.String(), values=OptionValue(), metadata={
        "description": "every match's options, as a table's (a Swiss of Kozel to 25: {\"target\": 25})"})
    size = StrictInteger(required=True, validate=validate.Range(1, 64), metadata={
        "description": "places: 4 to 7 for Bykovo (it starts with 4 or more of them taken), 2 to 64 for a Swiss "
                       "(at tables of four: 4 to 64)",
        "example": 6})
    rounds = StrictInteger(validate=validate.Range(1, 20), metadata={
        "description": "a Swiss's rounds (required there; a Bykovo tournament plays until 3 or fewer remain)"})
    name = fields.String(validate=validate.Length(1, 60))
    public = StrictBoolean(metadata={"description": "listed in the lobby (GET /v1/tournaments/hosted) and joined "
                                                    "without an invite; default false: by invite"})
    rated = StrictBoolean(metadata={"description": "true (the default): the official places are the players' "
                                                   "(their Bykovo places); false: casual, archived as nobody's"})
    clock = fields.Dict(metadata={
        "description": 'every round\'s turn clock, as a table\'s (docs/tables.md, "Clocks"); Bykovo has no '
                       'timeout rule, so "on_timeout": "autopilot"', "example": {"move": 30, "on_timeout": "autopilot"}})


class HostedJoinTournamentSchema(StrictSchema):
    invite = fields.String(validate=validate.Length(1, 64), metadata={"description": "an invite's code"})
    name = fields.String(validate=validate.Length(1, 40), metadata={"description": "the name standings show"})
    player = fields.String(validate=validate.Length(1, 1000), metadata={
        "description": "a player assertion signed by the host app (docs/tables.md, Player ids); none: a guest"})


class HostedEventsArgsSchema(Schema):
    class Meta:
        unknown = RAISE

    last_event_id = fields.Integer(validate=validate.Range(0, 2**31), metadata={
        "description": "resume after this version (as the Last-Event-ID header)"})


#: `GET /v1/tournaments/hosted/{id}/events`: Server-Sent Events; `x-events` names each event's `data` schema.
TOURNAMENT_STREAM: Json = {
    "description": "Server-Sent Events: `tournament` (the tournament, as GET answers it without `you`) with "
                   "`id: <version>` first and at each change; `end` (`data: {}`) once it is over; `: keepalive` "
                   "comments while nothing changes; `closed` {reason} when the server stops the stream before "
                   "(idle, max-duration, archive-unavailable, shutdown: reconnect with Last-Event-ID).",
    "content": {"text/event-stream": {
        "schema": {"type": "object", "description": "one event (OpenAPI 3.0: the schema of each): its name, its id "
                                                    "(a tournament event's version) and its data, one line of JSON "
                                                    "(`x-events` gives each name's schema)",
                   "properties": {"event": {"type": "string", "enum": ["tournament", "end", "closed"]},
                                  "id": {"type": "string"}, "data": {"type": "string"}},
                   "required": ["event", "data"]},
        "x-events": {"tournament": {"$ref": "#/components/schemas/HostedTournament"},
                     "end": {"type": "object", "additionalProperties": False},
                     "closed": {"$ref": "#/components/schemas/StreamClosed"}},
    }},
}


class HostedLobbyArgsSchema(Schema):
    class Meta:
        unknown = RAISE

    limit = fields.Integer(load_default=20, validate=validate.Range(1, 100))


class HostedParticipantSchema(Schema):
    index = fields.Integer(metadata={"description": "the place in the tournament's order (seats follow it)"})
    name = fields.String()
    player = fields.String(metadata={"description": "the player id (app:... vouched for, or guest:...)"})
    out = fields.Boolean(metadata={"description": "eliminated (the total reached the limit)"})
    left = fields.Boolean(metadata={"description": "left the tournament (forfeits)"})


class HostedTableNowSchema(Schema):
    table_id = fields.String()
    match_id = fields.String(allow_none=True)
    players = fields.List(fields.Integer(), metadata={"description": "participants by seat"})
    result = fields.List(fields.Float(), metadata={"description": "a Swiss match played: each seat's points"})


class HostedRoundNowSchema(Schema):
    number = fields.Integer()
    table_id = fields.String(allow_none=True, metadata={"description": "a Bykovo round's table (a Swiss: null)"})
    tables = fields.List(fields.Nested(HostedTableNowSchema), metadata={"description": "the round's tables"})
    bye = fields.Integer(allow_none=True, metadata={"description": "a Swiss round's first bye, or null"})
    byes = fields.List(fields.Integer(), allow_none=True, metadata={
        "description": "a Swiss round's byes (each worth a match won; Bykovo: null)"})
    match_id = fields.String(allow_none=True, metadata={"description": "null until its seats are taken and dealt"})
    players = fields.List(fields.Integer(), metadata={"description": "participants at seats 0-3, in order"})
    sitting_out = fields.List(fields.Integer())


class HostedRoundPlayedSchema(Schema):
    number = fields.Integer()
    tables = fields.List(fields.Nested(HostedTableNowSchema), metadata={
        "description": "a Swiss round: each match, with its `result`"})
    bye = fields.Integer(allow_none=True)
    byes = fields.List(fields.Integer(), allow_none=True, metadata={"description": "a Swiss round's byes"})
    table_id = fields.String()
    match_id = fields.String()
    players = fields.List(fields.Integer())
    points = fields.List(fields.Integer(), metadata={"description": "the round's points, seat order"})
    winner = fields.Integer(metadata={"description": "the winning seat"})
    places = fields.List(fields.Integer())
    eliminated = fields.List(fields.Integer())
    forfeit = fields.Integer(allow_none=True, metadata={"description": "the participant who forfeited it, or null"})


class HostedStandingSchema(Schema):
    participant = fields.String()
    index = fields.Integer()
    place = fields.Integer()
    total = fields.Integer(metadata={"description": "Bykovo: the total (lower is better)"})
    out = fields.Boolean()
    score = fields.Float(metadata={"description": "Swiss: points (1 for each side placed behind, 1/2 for each "
                                                  "level; a bye: a match won)"})
    buchholz = fields.Float(metadata={"description": "Swiss: the sum of the tablemates' points (the tie-break)"})
    official = fields.Boolean()


class HostedTournamentSchema(Schema):
    tournament_id = fields.String()
    name = fields.String(allow_none=True)
    format = fields.String()
    variant = fields.String()
    options = fields.Dict()
    size = fields.Integer()
    rounds_to_play = fields.Integer(allow_none=True, metadata={"description": "a Swiss's rounds (Bykovo: null)"})
    players = fields.Integer(metadata={"description": "players at each table (Bykovo: 4; a Swiss: 2 or 4)"})
    public = fields.Boolean()
    rated = fields.Boolean()
    clock = fields.Dict(allow_none=True)
    status = fields.String(metadata={"description": "open (joining), playing or over"})
    archived = fields.Boolean(metadata={"description": "over, and its places are in the archive"})
    version = fields.Integer(allow_none=True, metadata={
        "description": "one more at every change: poll and compare (null in the lobby)"})
    created = fields.Integer()
    participants = fields.List(fields.Nested(HostedParticipantSchema))
    limit = fields.Integer(allow_none=True, metadata={"description": "the total that puts a participant out"})
    first_sitters = fields.List(fields.Integer(), allow_none=True)
    round = fields.Nested(HostedRoundNowSchema, allow_none=True, metadata={"description": "the round being played"})
    rounds = fields.List(fields.Nested(HostedRoundPlayedSchema))
    standings = fields.List(fields.Nested(HostedStandingSchema))
    next_players = fields.List(fields.Integer(), allow_none=True)


class HostedYouSchema(Schema):
    index = fields.Integer()
    name = fields.String()
    player = fields.String()
    left = fields.Boolean()
    status = fields.String(metadata={"description": "playing, sitting-out, waiting (before the start, the "
                                                    "tournament `open`; or while the next round is being "
                                                    "seated), out or over"})
    round = fields.Integer(allow_none=True, metadata={"description": "the round being played (null: none now)"})
    table_id = fields.String(allow_none=True)
    match_id = fields.String(allow_none=True)
    seat = fields.Integer(allow_none=True)
    credential = fields.String(allow_none=True, metadata={
        "description": "playing: your seat's credential at the round's table (every table call takes it)"})


class HostedTournamentViewSchema(HostedTournamentSchema):
    you = fields.Nested(HostedYouSchema, metadata={"description": "with a participant's credential: where they are now"})


class HostedNewTournamentAnswerSchema(Schema):
    tournament_id = fields.String()
    host_key = fields.String(metadata={"description": "starts the tournament; answered once"})
    invites = fields.List(fields.Dict(), metadata={"description": "one per place: {code, link}"})
    tournament = fields.Nested(HostedTournamentSchema)


class HostedJoinTournamentAnswerSchema(Schema):
    tournament_id = fields.String()
    index = fields.Integer()
    credential = fields.String(metadata={"description": "your tournament credential: Authorization: Bearer"})
    player_id = fields.String()
    tournament = fields.Nested(HostedTournamentSchema)


class HostedTournamentAnswerSchema(Schema):
    tournament = fields.Nested(HostedTournamentSchema)


class HostedTournamentLobbySchema(Schema):
    tournaments = fields.List(fields.Nested(HostedTournamentSchema))


# ---------------------------------------------------------------- routes


@hosted_blp.route("/tournaments/hosted")
class HostedList(MethodView):
    @hosted_blp.arguments(HostedNewTournamentSchema(), examples={"bykovo": {"summary": "Bykovo for six", "value": {
        "format": "bykovo", "size": 6, "name": "Friday", "public": False}}, "swiss4": {
        "summary": "a Swiss of Kozel for four", "value": {"format": "swiss", "variant": "kozel", "players": 4,
                                                          "size": 12, "rounds": 3, "options": {"target": 51}}}})
    @hosted_blp.response(201, HostedNewTournamentAnswerSchema)
    @operation(hosted_blp, "createHostedTournament", *BODY, "malformed", "unknown-variant", *_HOSTING, *ENGINE)
    def post(self, body: Json) -> tuple[Json, int]:
        """Open a hosted tournament: its id, the host key (once) and one invite per place.

        400 malformed: a size outside 4-7, a format or variant not hosted, a clock out of range."""
        return hosted().open(body, link_base()), 201

    @hosted_blp.arguments(HostedLobbyArgsSchema(), location="query", as_kwargs=True)
    @hosted_blp.response(200, HostedTournamentLobbySchema)
    @operation(hosted_blp, "listHostedTournaments", "validation-error", *_HOSTING)
    def get(self, limit: int) -> Json:
        """The lobby: public tournaments still open for joining, newest first."""
        return hosted().lobby(limit)


@hosted_blp.route("/tournaments/hosted/<string:tournament_id>")
class HostedOne(MethodView):
    @hosted_blp.response(200, HostedTournamentViewSchema)
    @operation(hosted_blp, "getHostedTournament", *_CREDENTIAL, credential="optional")
    def get(self, tournament_id: str) -> Json:
        """A tournament: its standings, its round (table, players, who sits out) and the rounds played; with
        your credential, `you`: your table, seat and seat credential now, or that you sit out."""
        return hosted().get(tournament_id, _bearer())


@hosted_blp.route("/tournaments/hosted/<string:tournament_id>/join")
class HostedJoin(MethodView):
    @hosted_blp.arguments(HostedJoinTournamentSchema(), examples={"invite": {"summary": "with an invite", "value": {
        "invite": "K7QM2XPD", "name": "Boris"}}})
    @hosted_blp.response(200, HostedJoinTournamentAnswerSchema)
    @operation(hosted_blp, "joinHostedTournament", *BODY, "invalid-player", "invalid-invite", "invite-required",
               "unknown-tournament", "tournament-full", "tournament-started", "seat-held", *_HOSTING)
    def post(self, body: Json, tournament_id: str) -> Json:
        """Take a place (an invite, or none on a public tournament): your tournament credential.

        409 tournament-started: nobody joins once it has started; 409 tournament-full: every place is taken."""
        return hosted().join(tournament_id, body)


@hosted_blp.route("/tournaments/hosted/<string:tournament_id>/start")
class HostedStart(MethodView):
    BODYLESS = True

    @hosted_blp.response(200, HostedTournamentAnswerSchema)
    @operation(hosted_blp, "dealHostedTournament", *_CREDENTIAL, "sealed-forbidden", "tournament-started",
               "too-few-participants", "illegal-action", credential=True)
    def post(self, tournament_id: str) -> Json:
        """The host starts it (no body): the first round is seated and dealt.

        409 tournament-started: started already; 409 too-few-participants: fewer than 4 joined (Bykovo), or
        fewer than a Swiss's smallest; 409 illegal-action: someone joined or left meanwhile; 403
        sealed-forbidden: not the host key."""
        return hosted().start(tournament_id, _bearer())


@hosted_blp.route("/tournaments/hosted/<string:tournament_id>/leave")
class HostedLeave(MethodView):
    BODYLESS = True

    @hosted_blp.response(200, HostedTournamentAnswerSchema)
    @operation(hosted_blp, "leaveHostedTournament", *_CREDENTIAL, "not-seated", "illegal-action", credential=True)
    def post(self, tournament_id: str) -> Json:
        """Leave (no body): before the start your place is freed; after it you forfeit (your round's seat
        resigns now, or at your next round), and the tournament goes on; 409 once it is over."""
        return hosted().leave(tournament_id, _bearer())


@hosted_blp.route("/tournaments/hosted/<string:tournament_id>/events")
class HostedEvents(MethodView):
    @hosted_blp.arguments(HostedEventsArgsSchema(), location="query", as_kwargs=True)
    @hosted_blp.response(200, content_type="text/event-stream", description=TOURNAMENT_STREAM["description"])
    @operation(hosted_blp, "streamHostedTournament", "validation-error", "unknown-tournament", "too-many-streams",
               *_HOSTING, answer=TOURNAMENT_STREAM)
    def get(self, tournament_id: str, last_event_id: int | None = None) -> Response:
        """The tournament's stream of standings: its view at each change (no polling), until it is over."""
        service = hosted()
        service.row(tournament_id)  # 404 before the stream starts
        header = request.headers.get("Last-Event-ID")
        if header is not None and header.strip().isdigit():
            last_event_id = int(header.strip())
        streams: TournamentStreams = current_app.extensions[STREAMS]
        lines = streams.open(lambda: service.row(tournament_id), last_event_id)
        return current_app.response_class(lines, mimetype="text/event-stream", headers={
            "Cache-Control": "no-store", "X-Accel-Buffering": "no"})
