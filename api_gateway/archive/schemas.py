"""marshmallow schemas of the archive's routes: the query arguments they accept and the answers they give.

The answers are built by `Repository` as dicts and sent as they are; these
schemas document them field for field (tests/archive load every answer with
them, unknown keys refused, so the two cannot drift apart).
"""
from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from api_gateway.archive.repository import ORDERS
from api_gateway.http.schemas import MAX_TEXT, OneOf, StrictInteger, StrictSchema

MAX_PAGE = 100
DEFAULT_PAGE = 20


class PageArgsSchema(StrictSchema):
    cursor = fields.String(validate=validate.Length(1, 512), metadata={
        "description": "the `next` of the previous page; omitted: the first page"})
    limit = fields.Integer(validate=validate.Range(1, MAX_PAGE), load_default=DEFAULT_PAGE,
                           metadata={"description": f"items per page, 1-{MAX_PAGE}"})


class LeaderboardArgsSchema(PageArgsSchema):
    variant = fields.String(required=True, validate=validate.Length(1, MAX_TEXT), metadata={
        "description": "a variant; the board is its family's (kozel and kozel-classic share one)", "example": "kozel"})
    by = fields.String(load_default="skill", validate=OneOf(sorted(ORDERS)), metadata={
        "description": "skill (the conservative skill rating, mu - 3 sigma), points (the source's rating "
                       "points: Kozel) or places (tournaments' official places, 1st first: Bykovo's, and a hosted "
                       "Swiss's first three in its variant's family)"})
    provisional = fields.Boolean(load_default=False, metadata={
        "description": "true: every rated player, the provisional ones (fewer than 5 rated matches in the family) "
                       "marked; false (the default): established players only"})


class AnswerSchema(Schema):
    class Meta:
        unknown = RAISE


class SkillSchema(AnswerSchema):
    mu = fields.Float(metadata={"description": "estimated skill (a newcomer: 25)"})
    sigma = fields.Float(metadata={"description": "its uncertainty (a newcomer: 8.33; shrinks with every rated match)"})
    ordinal = fields.Float(metadata={"description": "mu - 3 sigma: the conservative figure boards sort by"})


class PlacesSchema(AnswerSchema):
    first = StrictInteger()
    second = StrictInteger()
    third = StrictInteger()


class RatingSchema(AnswerSchema):
    family = fields.String(metadata={"description": "the variants' family (GET /v1/variants)", "example": "K"})
    skill = fields.Nested(SkillSchema)
    points = StrictInteger(metadata={"description": "the source's rating points summed (Kozel; else 0)"})
    matches = StrictInteger(metadata={"description": "matches of this family archived"})
    rated = StrictInteger(metadata={"description": "of which rated (two sides or more held by players)"})
    wins = StrictInteger(metadata={"description": "rated matches finished in first place"})
    provisional = fields.Boolean(metadata={"description": "fewer than 5 rated matches in the family (the "
                                                          "skill boards list established players only)"})
    places = fields.Nested(PlacesSchema, metadata={"description": "tournaments' official places in this "
                                                                    "family (Bykovo's; a hosted Swiss's first three)"})


class ArchivedSeatSchema(AnswerSchema):
    seat = StrictInteger()
    player = fields.String(allow_none=True, metadata={"description": "null: no player held it (a bot)"})
    name = fields.String(allow_none=True)
    side = StrictInteger(metadata={"description": "the seat's side (partners share one)"})
    place = StrictInteger(metadata={"description": "1 is best; shared places as in sports (1, 2, 2, 4)"})
    points = StrictInteger(metadata={"description": "the source's rating points it gained"})
    skill_before = fields.Nested(SkillSchema, allow_none=True)
    skill_after = fields.Nested(SkillSchema, allow_none=True)


class MatchSummarySchema(AnswerSchema):
    match_id = fields.String()
    variant = fields.String()
    family = fields.String()
    finished_at = fields.String(metadata={"description": "ISO 8601, UTC"})
    rated = fields.Boolean()
    timed_out = StrictInteger(allow_none=True, metadata={"description": "the seat that timed out, if one did"})
    seat = StrictInteger(metadata={"description": "the player's seat"})
    seats = fields.List(fields.Nested(ArchivedSeatSchema))


class PlayerSchema(AnswerSchema):
    id = fields.String(metadata={"example": "app:alice"})
    name = fields.String(allow_none=True)
    created_at = fields.String(allow_none=True, metadata={"description": "null for a newcomer"})
    matches = StrictInteger(metadata={"description": "matches archived, every family"})
    newcomer = fields.Boolean(metadata={"description": "no match of this player is archived yet (a valid id "
                                                       "the archive has never seen: no ratings yet)"})
    ratings = fields.List(fields.Nested(RatingSchema), metadata={"description": "one per family played"})
    recent = fields.List(fields.Nested(MatchSummarySchema), metadata={"description": "the last 10 matches"})


class PlayerMatchesSchema(AnswerSchema):
    items = fields.List(fields.Nested(MatchSummarySchema))
    next = fields.String(allow_none=True, metadata={"description": "the cursor of the next page; null: none"})


class LeaderEntrySchema(AnswerSchema):
    rank = StrictInteger()
    player = fields.String()
    name = fields.String(allow_none=True)
    skill = fields.Nested(SkillSchema)
    points = StrictInteger()
    matches = StrictInteger()
    rated = StrictInteger()
    wins = StrictInteger()
    provisional = fields.Boolean(metadata={"description": "fewer than 5 rated matches in the family: the rating "
                                                          "says little yet"})
    places = fields.Nested(PlacesSchema)


class LeaderboardSchema(AnswerSchema):
    variant = fields.String()
    family = fields.String()
    by = fields.String()
    items = fields.List(fields.Nested(LeaderEntrySchema))
    next = fields.String(allow_none=True)


class ArchivedMatchSchema(AnswerSchema):
    match_id = fields.String()
    variant = fields.String()
    family = fields.String()
    finished_at = fields.String()
    rated = fields.Boolean()
    timed_out = StrictInteger(allow_none=True)
    result = fields.Dict(metadata={"description": "the record's result as the engine wrote it"})
    seats = fields.List(fields.Nested(ArchivedSeatSchema))
    record = fields.Dict(metadata={"description": "the whole record, JSON form (domino-record 1, docs/records.md)"})
    text = fields.String(allow_none=True, metadata={"description": "the same record, text form"})
