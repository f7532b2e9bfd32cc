"""The online tables' request and answer schemas (docs/tables.md): what `api_gateway.http.tables_routes`
validates and documents, and what its answers are serialized by."""
from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate

from api_gateway.http.schemas import (
    OneOf,
    OptionValue,
    StrictBoolean,
    StrictInteger,
    StrictSchema,
    view_field,
)

#: The levels of a table's bots.
LEVELS = ["random", "greedy", "expert"]


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
    rated = StrictBoolean(metadata={"description": "true (the default): the match changes its players' ratings "
                                                   "(with two people or more) and no seat may ask the engine for "
                                                   "help (suggest, hints); false: casual, help allowed, no rating"})
    on_leave = fields.String(validate=OneOf(["wait", "bot"]), metadata={
        "description": "wait (default): the match waits for someone to take a freed seat; bot: a greedy bot "
                       "plays it. Leaving a rated match once every person has moved is a resign"})
    spectators = StrictBoolean(metadata={
        "description": "a private table: true gives a spectator link (the answer's `spectator_link`) that lets "
                       "anyone holding it watch; false (the default): its seats and host only. A public table "
                       "is watched by anyone"})
    claim_after = StrictInteger(validate=validate.Range(5, 14 * 24 * 3600), metadata={
        "description": "seconds a person's seat must be gone (no open stream, no call) before the others may "
                       "claim victory (POST .../claim); default 120, or a clock's longest wait for one move if longer"})
    name = fields.String(validate=validate.Length(1, 60))
    clock = fields.Dict(metadata={
        "description": 'a turn clock the service applies itself (docs/tables.md, "Clocks"): {"move": seconds} '
                       '(5 s to 14 days, each move) or {"bank": seconds, "increment": seconds} (30 s to 30 days '
                       'a match, up to a day more after each move), with "on_timeout": "rule" (the variant\'s timeout rule: the '
                       'match ends; the default) or "autopilot" (a bot of "autopilot_level", greedy by '
                       'default, plays the seat on until its person is back), and "remind": the share of a seat\'s time left '
                       'when its person, away, is reminded (0 < share < 1, null: never; by default 0.25 for a clock of '
                       'an hour or more a seat, none below)',
        "example": {"move": 30}})


#: The longest party code a seek takes (a table id, a dot and an invite's 8 characters: 41).
PARTY_CODE_CHARS = 100


class PartyField(fields.Field[bool | str]):
    """A seek's `party`: true (make a party: the seat opposite is kept for a partner) or a party's code
    (be that partner); false: seek alone, as without it."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("metadata", {})["oneOf"] = [
            {"type": "boolean"}, {"type": "string", "minLength": 1, "maxLength": PARTY_CODE_CHARS}]
        super().__init__(**kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool | str:
        if isinstance(value, bool) or (isinstance(value, str) and 0 < len(value) <= PARTY_CODE_CHARS):
            return value
        raise ValidationError(f"expected true, false or a party code (a string of 1 to {PARTY_CODE_CHARS} "
                              "characters)")


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
    rated = StrictBoolean(metadata={"description": "rated (the default) or casual tables only (as POST /v1/tables)"})
    party = PartyField(metadata={
        "description": 'seeking as a pair (docs/tables.md, "Seeking as a pair"; 4 players of a variant with '
                       'partnerships: osel, threes-fives, fives-and-threes, all-fives; played with `teams`): true '
                       "seats you and keeps the seat opposite (seat + 2) for your partner, and the answer's `party` "
                       "is the code to give them; the partner seeks with that code (and the same variant, players, "
                       "clock and rated) and is seated opposite you. The two others are seekers too",
        "example": True})
    partner = fields.String(validate=OneOf(["bot"]), metadata={
        "description": 'seeking as a pair with a bot partner: "bot" seats a bot (of `bots_level`) opposite you '
                       "at once (4 players of a variant with partnerships, as `party`)"})


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
    here = fields.Boolean(allow_none=True, metadata={
        "description": "a person's seat while its match is played: true while its person has the seat's stream "
                       "open or made a call lately (GET /v1/tables/{id} only; null elsewhere, and for free seats "
                       "and bots)"})
    away_since = fields.Integer(allow_none=True, metadata={
        "description": "unix seconds since which an away seat's person counts as gone (null: here, or not known)"})


class TableSchema(Schema):
    table_id = fields.String()
    name = fields.String(allow_none=True)
    variant = fields.String()
    players = fields.Integer()
    options = fields.Dict()
    public = fields.Boolean()
    rated = fields.Boolean(metadata={"description": "rated (no engine help for a seat) or casual"})
    spectators = fields.Boolean(metadata={"description": "a private table anyone with its spectator link may watch"})
    claim_after = fields.Integer(metadata={"description": "seconds a seat must be gone before the others may claim"})
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
    spectator_link = fields.String(allow_none=True, metadata={
        "description": "a private table with spectators: the page's link that watches it (answered once); null "
                       "otherwise"})
    table = fields.Nested(TableSchema)


class TableArgsSchema(Schema):
    class Meta:
        unknown = RAISE

    invite = fields.String(validate=validate.Length(1, 64), metadata={
        "description": "a private table: an unused invite of it shows the table to whoever will take the seat"})
    watch = fields.String(validate=validate.Length(1, 64), metadata={
        "description": "a private table: its spectator code (from the spectator link)"})


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
                                                     "in the lobby; a party's: private) and took its first seat"})
    party = fields.String(allow_none=True, metadata={
        "description": "a seek with `party: true`: the party's code (answered once), for your partner's seek "
                       "(`party: <code>`): it seats them opposite you; null otherwise"})


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
    watch = fields.String(validate=validate.Length(1, 64), metadata={
        "description": "a private table's spectator code: its public stream without a credential"})


class TicketSchema(Schema):
    ticket = fields.String()
    expires_in = fields.Integer(metadata={"description": "seconds"})
