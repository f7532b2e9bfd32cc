"""marshmallow schemas of every request and answer: validation of the envelope and the OpenAPI document.

They describe the JSON of docs/FORMAT.md and of the engine's states and answers,
field for field. A request is checked for its envelope only (the variant, the
players, the action, the seat, the carrier, types, sizes and limits, unknown
keys); a carried state is documented in full (`MatchStateSchema`,
`TournamentStateSchema`) but forwarded unread (`Carried`): the engine reads it
with the rules' own decoder and refuses it naming the field, and whether an
action is legal is the engine's answer too. Loading leaves the data as it was
(no coercion: ``"3"`` is not 3, ``1`` is not ``true``), so what reaches the
engine is exactly what the client sent.

The state schemas name exactly the keys the engine writes (tests/gateway check
them against `to_dict` for states of every preset).
"""
from __future__ import annotations

import json
from typing import Any, ClassVar

from marshmallow import RAISE, Schema, ValidationError, fields, validate, validates_schema

TILE_PATTERN = r"^[0-6]-[0-6]$"
ENDINGS = ["out", "fish", "blocked", "sortir"]
MAX_ACTIONS = 1000
MAX_TEXT = 200
_MAX_TILES = 28
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


class OneOf(validate.OneOf):
    """marshmallow's OneOf whose refusal quotes the value and the choices as the JSON that would be
    accepted, as the engine's do (`"x" is not one of "transparent", "sealed"`, issue 28), where
    marshmallow says "Must be one of: transparent, sealed." (the OpenAPI enum is unchanged)."""

    def _format_error(self, value: Any) -> str:
        return f"{_json(value)} is not one of {', '.join(_json(choice) for choice in self.choices)}"


def _json(value: Any) -> str:
    """`value` as JSON, or its repr when it has no JSON form."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


class StrictInteger(fields.Integer):
    """An integer and nothing else: true is not 1, 3.0 is not 3, "3" is not 3."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _validated(self, value: Any) -> int:
        if isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return super()._validated(value)


class StrictBoolean(fields.Boolean):
    """true or false only (not 1, "yes" or "true")."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class OptionValue(fields.Field[Any]):
    """An option value: boolean, integer or enum name, as the variant declares it."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("metadata", {})["oneOf"] = [
            {"type": "boolean"}, {"type": "integer", "minimum": INT64[0], "maximum": INT64[1]},
            {"type": "string", "maxLength": MAX_TEXT}]
        super().__init__(**kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if (isinstance(value, bool) or (isinstance(value, int) and INT64[0] <= value <= INT64[1])
                or (isinstance(value, str) and len(value) <= MAX_TEXT)):
            return value
        raise ValidationError("expected a boolean, a 64-bit integer or a string of at most "
                              f"{MAX_TEXT} characters")


class Carried(fields.Nested):
    """A state the gateway forwards unread: documented by its schema, loaded as it came.

    The state of a match or a tournament belongs to the engine, which reads it with
    the rules' own decoder and refuses it naming the field
    (``state.round.hands[2]: ...``, a 400 problem); reading it here as well would be a
    second decoder that could disagree with the first. Only its being an object is
    checked (its size is bounded by the body's).
    """

    def _deserialize(self, value: Any, attr: str | None, data: Any, partial: Any = None, **kwargs: Any) -> Any:
        if type(value) is not dict:
            raise ValidationError("expected an object: the state of a previous answer")
        return value


class Either(fields.Field[Any]):
    """One of several schemas, chosen by the value itself (`pick`); documented as their ``oneOf``.

    Used where a matching game's object and a Kingdomino one share a member (a state, a
    view, an event, a deal). `pick(value)` returns the index of the schema the value is
    for. Loading (`carried`): an object forwarded unread, as `Carried` does; otherwise
    validated by the schema picked. Dumping goes through the schema picked, so a dump
    check still compares every key. The schemas are named components
    (`api_gateway.app` registers them under these names).
    """

    def __init__(self, schemas: list[tuple[str, type[Schema]]], pick: Any, carried: bool = False,
                 **kwargs: Any) -> None:
        metadata = kwargs.setdefault("metadata", {})
        metadata["oneOf"] = [{"$ref": f"#/components/schemas/{name}"} for name, _ in schemas]
        super().__init__(**kwargs)
        self.schemas = schemas
        self.pick = pick
        self.carried = carried

    def _schema(self, value: Any) -> Schema:
        schema: Schema = self.schemas[self.pick(value)][1]()
        return schema

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        if value is None:
            return None
        return self._schema(value).dump(value)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if type(value) is not dict:
            raise ValidationError("expected an object")
        if self.carried:
            return value
        return self._schema(value).load(value)


def _count(description: str, **kwargs: Any) -> StrictInteger:
    return StrictInteger(validate=validate.Range(0, UINT32_MAX), metadata={"description": description},
                         **kwargs)


def _seat(description: str = "seat, 0-based", **kwargs: Any) -> StrictInteger:
    return _count(description, **kwargs)


def _many(schema: type[Schema], most: int, description: str, **kwargs: Any) -> fields.List[Any]:
    """A list of `schema` objects, at most `most` of them."""
    return fields.List(fields.Nested(schema), validate=validate.Length(max=most), metadata={"description": description},
                       **kwargs)


def _seed(description: str, **kwargs: Any) -> StrictInteger:
    """A seed of the engine's lots (random deals, a bot's draws): any unsigned 64-bit integer."""
    return StrictInteger(validate=validate.Range(0, UINT64_MAX), metadata={"description": description}, **kwargs)


def _points(description: str, **kwargs: Any) -> StrictInteger:
    return StrictInteger(validate=validate.Range(*INT32), metadata={"description": description}, **kwargs)


def _tile(**kwargs: Any) -> fields.String:
    return fields.String(validate=validate.Regexp(TILE_PATTERN, error="not a tile: expected 'a-b', 0..6"),
                         metadata={"description": "a tile 'a-b'", "example": "3-6"}, **kwargs)


def _tiles(description: str, **kwargs: Any) -> fields.List[Any]:
    return fields.List(_tile(), validate=validate.Length(max=_MAX_TILES),
                       metadata={"description": description}, **kwargs)


def _hands(description: str, **kwargs: Any) -> fields.List[Any]:
    return fields.List(fields.List(_tile(), validate=validate.Length(max=_MAX_TILES)),
                       validate=validate.Length(max=16), metadata={"description": description}, **kwargs)


def _ints(description: str, bounds: tuple[int, int] = INT32, **kwargs: Any) -> fields.List[Any]:
    return fields.List(StrictInteger(validate=validate.Range(*bounds)),
                       validate=validate.Length(max=64), metadata={"description": description}, **kwargs)


def _ending(description: str = "how the round ended", **kwargs: Any) -> fields.String:
    return fields.String(validate=OneOf(ENDINGS), metadata={"description": description}, **kwargs)


def _action(**kwargs: Any) -> fields.String:
    return fields.String(
        validate=validate.Length(1, MAX_TEXT),
        metadata={"description": "an action in FORMAT.md notation: '3-6', '3-6@E', '4-4@E!', "
                                 "'2-2@E+5-5@W', 'draw', 'pass'", "example": "1-1"},
        **kwargs)


def _log() -> fields.List[Any]:
    return fields.List(fields.String(validate=validate.Length(1, 2000)), validate=validate.Length(max=4000),
                       metadata={"description": "what happened in the current round (since the match began "
                                                "while no round has ended), for its record (docs/records.md): "
                                                "'new', 'deal', each action, 'timeout N', each one line; empty "
                                                "when not known. Pass it back as it came"})


def _record_lines(description: str) -> fields.List[Any]:
    return fields.List(fields.String(validate=validate.Length(1, 2000)), validate=validate.Length(max=4000),
                       metadata={"description": description})


_SHED = ("when this call ended a round (transparent): the log entries that left the state with it. Keep them "
         "in order: a record is exported with them (`prior`, docs/records.md)")


class StrictSchema(Schema):
    """Unknown keys are refused (422 naming them), not silently dropped."""

    class Meta:
        unknown = RAISE


# ---------------------------------------------------------------- state (Match.to_dict)


class RoundRecordSchema(StrictSchema):
    """One finished round of the score table."""

    number = _count("1-based round number")
    ending = _ending(allow_none=True)
    winner = _points("seat (or team) that won the round; null for none", allow_none=True)
    last_placer = _seat("the fisherman, when known", allow_none=True)
    round_points = _ints("per seat, hand points as the variant counts them")
    written = _ints("K/O: written totals after the round")
    remembered = _ints("K/O: remembered points after the round")
    pot = _points("K/O: eggs pot after the round")
    scores = _ints("the score after the round, in every variant (K/O: the written points)")
    places = _ints("B: places of the round", (0, UINT32_MAX))
    out = _ints("seats that went out, in order", (0, UINT32_MAX))


class LedgerSchema(StrictSchema):
    """Match-wide bookkeeping."""

    written = _ints("K/O: written points per seat (or team)")
    remembered = _ints("K/O: remembered points per seat (or team)")
    pot = _points("K/O: eggs waiting for the next single highest seat")
    scores = _ints("THE score per seat (or team), in every variant: what players call the score and an app "
                   "shows in its score table (K/O: equal to the written points, with `remembered` and `pot` "
                   "beside them; TF/A3/A5/B/BL: the running score)")
    history = _many(RoundRecordSchema, 10000, "the last finished round (a state from before issue 27: every "
                                              "finished round, oldest first); the whole table is in the "
                                              "round_ended events and the record")


class RoundSchema(StrictSchema):
    """The round being played, or the last one once it is over."""

    leader = _seat("seat that led this round")
    hands = _hands("per seat, its tiles")
    boneyard = _tiles("undrawn tiles in draw order (next first)")
    reserve = _count("the last `reserve` boneyard tiles are never drawn")
    layout = fields.List(fields.String(validate=validate.Length(1, MAX_TEXT)),
                         validate=validate.Length(max=_MAX_TILES),
                         metadata={"description": "placements in play order: the lead 'a-b' (a faces W), "
                                                  "then 'a-b@ARM' or 'a-b@ARM!'"})
    to_move = _seat("seat whose turn it is")
    passes = _count("consecutive passes so far")
    out = _ints("seats that emptied their hand, in order", (0, UINT32_MAX))
    last_placer = _seat("seat that placed the last tile", allow_none=True)
    last_score = _points("points the last action scored in play (TF, A3, A5)")
    over = StrictBoolean()
    ending = _ending(allow_none=True)
    winner = _points("seat (or team) that won; null for none", allow_none=True)
    round_points = _ints("set once over", allow_none=True)
    places = _ints("B, set once over", (0, UINT32_MAX), allow_none=True)
    ends = fields.Dict(keys=fields.String(validate=validate.Length(1, 4)),
                       values=StrictInteger(validate=validate.Range(0, 6)),
                       metadata={"description": "derived (ignored on input): open arms and their numbers"})
    count = _points("derived (ignored on input): the open-end count T")


BOT_LEVELS = ["random", "greedy", "expert"]


class BotSeatSchema(StrictSchema):
    """A seat the computer plays (the engine moves for it whenever it is to move)."""

    seat = _seat("the bot's seat", required=True)
    level = fields.String(required=True, validate=OneOf(BOT_LEVELS),
                          metadata={"description": "random, greedy or expert (docs/bots.md)"})


def _bots(description: str, **kwargs: Any) -> fields.List[Any]:
    return fields.List(fields.Nested(BotSeatSchema), validate=validate.Length(max=3),
                       metadata={"description": description}, **kwargs)


class MatchStateSchema(StrictSchema):
    """The whole match (transparent mode): pass it back as it came."""

    variant = fields.String(required=True, validate=validate.Length(1, MAX_TEXT),
                            metadata={"example": "kozel"})
    players = StrictInteger(required=True, validate=validate.Range(0, UINT32_MAX))
    options = fields.Dict(keys=fields.String(validate=validate.Length(1, MAX_TEXT)), values=OptionValue(),
                          metadata={"description": "options that differ from the preset's defaults"})
    seed = _seed("seed of random deals; null when deals are explicit", allow_none=True)
    round_number = _count("rounds dealt so far")
    ledger = fields.Nested(LedgerSchema)
    round = fields.Nested(RoundSchema, allow_none=True, metadata={"description": "null before the first deal"})
    next_leader = _seat("who leads the next round, when the rules say", allow_none=True)
    match_over = StrictBoolean()
    losers = _ints("seats (or teams) that lost the match", (0, UINT32_MAX))
    winners = _ints("seats (or teams) that won the match", (0, UINT32_MAX))
    rating = _ints("K: rating gained per seat at the end of the match")
    timed_out = _seat("seat whose timeout ended the match", allow_none=True)
    bots = _bots("seats the engine plays, by seat (only when there are some)")
    log = _log()
    log_count = StrictInteger(validate=validate.Range(1, 4000), metadata={
        "description": "how many log entries left the state as rounds ended (absent: none, the log is whole)"})
    log_digest = fields.String(validate=validate.Regexp("^[0-9a-f]{32}$"), metadata={
        "description": "blake2b-16 chained over those entries, line by line (with log_count)"})


class SpinnerPlaceSchema(Schema):
    """Where a spinner lies: the arm and the index on it of the double a side grows from."""

    arm = fields.String(allow_none=True, metadata={"description": "null: the lead"})
    index = fields.Integer()


class TableLayoutArmSchema(Schema):
    """One arm of the table as its tiles lie, outward from the lead."""

    tiles = fields.List(fields.List(fields.Integer()), metadata={
        "description": "each tile [near, far]: near touches the tile before it, far is the end it leaves"})
    order = fields.List(fields.Integer(), metadata={"description": "each tile's index in layout (play order)"})
    closed = fields.Boolean(metadata={"description": "O: its last tile, a double, closed the arm"})
    from_ = fields.Nested(SpinnerPlaceSchema, allow_none=True, data_key="from", attribute="from", metadata={
        "description": "a spinner's side: the double it grows from (null for W and E)"})


class TableLayoutSchema(Schema):
    """The layout as the tiles lie (what `layout` says, structured for drawing: docs/rest.md). Not `TableSchema`:
    that name is an online table's (`tables_routes`), and OpenAPI names a component by its schema's name."""

    lead = fields.List(fields.Integer(), allow_none=True, metadata={
        "description": "the first tile [W, E] (the number facing W first); null before the lead"})
    arms = fields.Dict(keys=fields.String(), values=fields.Nested(TableLayoutArmSchema), metadata={
        "description": "by name: every arm that holds a tile or is open"})


class LegalPlacementSchema(Schema):
    tile = fields.String(metadata={"description": "as a hand names it (a lead: as it would lie)"})
    arm = fields.String(allow_none=True, metadata={"description": "null for a lead"})
    closes = fields.Boolean(metadata={"description": "O: the double closes its arm"})


class LegalMoveSchema(Schema):
    """One of `legal`, structured."""

    kind = fields.String(metadata={"enum": ["lead", "play", "draw", "pass"]})
    placements = fields.List(fields.Nested(LegalPlacementSchema))


class SeatViewSchema(Schema):
    """What one seat may see: its own hand, the others' sizes, never the boneyard order."""

    variant = fields.String()
    players = fields.Integer()
    options = fields.Dict(keys=fields.String(), values=OptionValue())
    seat = fields.Integer(metadata={"description": "the viewer (null for the host's public view)"},
                          allow_none=True)
    round_number = fields.Integer()
    ledger = fields.Nested(LedgerSchema)
    dealt = fields.Boolean(metadata={"description": "false before the first deal"})
    hand = fields.List(fields.String(), metadata={"description": "the viewer's own tiles"})
    hand_sizes = fields.List(fields.Integer(), metadata={"description": "every seat's tile count"})
    boneyard_size = fields.Integer(metadata={"description": "drawable tiles left"})
    layout = fields.List(fields.String())
    ends = fields.Dict(keys=fields.String(), values=fields.Integer())
    count = fields.Integer()
    to_move = fields.Integer()
    round_over = fields.Boolean()
    ending = fields.String(allow_none=True)
    winner = fields.Integer(allow_none=True)
    round_points = fields.List(fields.Integer(), metadata={"description": "set once the round is over"})
    revealed_hands = fields.List(fields.List(fields.String()),
                                 metadata={"description": "every hand, only once the round is over"})
    match_over = fields.Boolean()
    losers = fields.List(fields.Integer())
    rating = fields.List(fields.Integer())
    legal = fields.List(fields.String(), metadata={"description": "the viewer's legal actions when it is to move"})
    last_score = fields.Integer()
    table = fields.Nested(TableLayoutSchema, metadata={"description": "the layout as the tiles lie, for drawing"})
    legal_moves = fields.List(fields.Nested(LegalMoveSchema),
                              metadata={"description": "each of legal (same order), structured"})
    bots = fields.List(fields.Nested(BotSeatSchema), metadata={"description": "seats the engine plays, if any"})


#: The events of a match's exits (resign, a seat gone, abort: POST /v1/matches/{id}/resign, ...), in both kinds
#: of game: `seat` in a domino match's, `player` in Kingdomino's.
EXIT_EVENTS = ["resigned", "gone", "aborted"]


class EventSchema(Schema):
    """Something that happened during a call; which other fields are set depends on `type`."""

    type = fields.String(required=True, metadata={"enum": [
        "played", "drew", "passed", "points_scored", "round_ended", "match_ended", "next_leader",
        "round_dealt", *EXIT_EVENTS]})
    seat = fields.Integer()
    action = fields.String(metadata={"description": "played: canonical spelling"})
    tile = fields.String(allow_none=True,
                         metadata={"description": "drew: the tile, or null in sealed mode when another seat drew"})
    points = fields.Integer(metadata={"description": "points_scored"})
    count = fields.Integer(metadata={"description": "points_scored: the open-end count that scored"})
    record = fields.Nested(RoundRecordSchema, metadata={"description": "round_ended: the new score table row"})
    losers = fields.List(fields.Integer())
    winners = fields.List(fields.Integer())
    rating = fields.List(fields.Integer())
    number = fields.Integer(metadata={"description": "round_dealt: 1-based round number"})
    leader = fields.Integer(metadata={"description": "round_dealt: the seat that leads"})
    redealt = fields.Boolean(metadata={"description": "round_dealt: a random misdeal was dealt again"})


# ---------------------------------------------------------------- variants


class OptionSpecSchema(Schema):
    """An option of a variant: send it in `options` as a JSON value of its type (an int's words,
    such as threes-fives' boneyard_reserve "auto", as strings)."""

    name = fields.String()
    type = fields.String(metadata={"enum": ["bool", "int", "enum"]})
    allowed = fields.List(fields.String(), metadata={
        "description": "enum: its values; int: the words it takes beside its integers (e.g. \"auto\"); "
                       "empty for bool"})
    default = OptionValue(metadata={"description": "the preset's default"})
    description = fields.String()
    minimum = fields.Integer(metadata={"description": "int only: the smallest integer it takes"})
    maximum = fields.Integer(metadata={"description": "int only: the largest integer it takes"})


class VariantSchema(Schema):
    name = fields.String(metadata={"example": "kozel"})
    family = fields.String(metadata={"description": "rules family (RULES.md section)", "example": "K"})
    description = fields.String()
    min_players = fields.Integer()
    max_players = fields.Integer()
    timeout_rule = fields.Boolean(metadata={
        "description": "a seat whose time runs out ends the match by the variant's rule (Kozel's formula, "
                       "Kingdomino's forfeit): a table's clock may use `on_timeout: rule` only where true"})
    options = fields.List(fields.Nested(OptionSpecSchema))


class VariantListSchema(Schema):
    variants = fields.List(fields.Nested(VariantSchema))


# ---------------------------------------------------------------- requests


class DealSchema(StrictSchema):
    """An explicit deal (FORMAT.md `deal` step)."""

    hands = _hands("hands, seat 0 first", required=True)
    boneyard = _tiles("draw order, first drawn first; omitted: the remaining tiles ascending")
    leader = _seat("only where the rules decide the lead by lot")


class SetupSchema(StrictSchema):
    """Match state before the first round (FORMAT.md `setup` step), per seat or team."""

    written = _ints("K/O written points")
    remembered = _ints("K/O remembered points")
    pot = _points("K/O eggs pot")
    scores = _ints("running scores (K/O: leave out; the score there is `written`)")


# ---------------------------------------------------------------- Kingdomino (KD): Kingdomino.to_dict, view, events
#
# Kept in a section of their own: Kingdomino's state, view and events share the
# members of the matching games' answers (`state`, `view`, `events`, `deal`)
# through `Either` fields, which pick the schema by the value.

KINGDOMINO = "kingdomino"
KD_TILE = (1, 48)
KD_EVENT_TYPES = ["game_started", "row_laid", "tile_picked", "tile_placed", "tile_discarded", "game_over",
                  "dynasty_over", "timed_out", *EXIT_EVENTS]
KD_DECIDED_BY = ["score", "largest_region", "crowns", "shared", "timeout", "resign", "gone", "aborted"]


def _kd_tiles(description: str, **kwargs: Any) -> fields.List[Any]:
    return fields.List(StrictInteger(validate=validate.Range(*KD_TILE)), validate=validate.Length(max=48),
                       metadata={"description": description}, **kwargs)


def _kd_players(description: str, **kwargs: Any) -> fields.List[Any]:
    return fields.List(StrictInteger(validate=validate.Range(0, 3)), validate=validate.Length(max=4),
                       metadata={"description": description}, **kwargs)


def _kd_counts(description: str, **kwargs: Any) -> fields.List[Any]:
    return fields.List(StrictInteger(validate=validate.Range(0, 10000)), validate=validate.Length(max=4),
                       metadata={"description": description}, **kwargs)


def _kd_log(description: str) -> fields.List[Any]:
    return fields.List(fields.List(fields.String(validate=validate.Length(1, 40)), validate=validate.Length(max=48)),
                       validate=validate.Length(max=4), metadata={"description": description})


class KingdominoRowTileSchema(StrictSchema):
    """A tile of a row and the king on it."""

    tile = StrictInteger(validate=validate.Range(*KD_TILE), metadata={"description": "tile number 1..48"})
    king = StrictInteger(allow_none=True, validate=validate.Range(0, 3),
                         metadata={"description": "the king on it (first-pick order); null: not picked yet"})


class KingdominoDealSchema(StrictSchema):
    """An explicit Kingdomino deal (FORMAT.md "Kingdomino scenarios")."""

    tiles = _kd_tiles("the draw pile in order: 24 / 36 / 48 tiles for 2 / 3 / 4 players (48 in the mighty duel)",
                      required=True)
    kings = _kd_players("the players in the order their kings pick first (with 2 players each twice)",
                        required=True)


class KingdominoDynastyDealSchema(StrictSchema):
    """A dynasty's explicit deals (option dynasty): one per game."""

    games = _many(KingdominoDealSchema, 3, "3 deals, one per game", required=True)


class KingdominoResultSchema(StrictSchema):
    """A finished game of a dynasty."""

    kingdoms = _kd_log("per player, its place/discard actions")
    scores = _kd_counts("per player, bonuses included")
    largest_region = _kd_counts("per player")
    crowns = _kd_counts("per player")
    winners = _kd_players("after tie-breaks")
    decided_by = fields.String(validate=OneOf(KD_DECIDED_BY))


class KingdominoDynastySchema(StrictSchema):
    """Dynasty state: the finished games and the explicit deals still to come."""

    games = fields.List(fields.Nested(KingdominoResultSchema), validate=validate.Length(max=2))
    deals = _many(KingdominoDealSchema, 2, "explicit deals of the games not yet started (none with a seed)")


class KingdominoStateSchema(StrictSchema):
    """A whole Kingdomino game (transparent mode), docs/variants.md KD: pass it back as it came."""

    variant = fields.String(required=True, validate=OneOf([KINGDOMINO]))
    players = StrictInteger(required=True, validate=validate.Range(2, 4))
    options = fields.Dict(keys=fields.String(validate=validate.Length(1, MAX_TEXT)), values=OptionValue(),
                          metadata={"description": "options that differ from the defaults"})
    seed = _seed("null for an explicit deal", allow_none=True)
    kings = _kd_players("owner of each king, in first-pick order")
    pile = _kd_tiles("undrawn tiles in draw order")
    current = _many(KingdominoRowTileSchema, 4, "the current row's tiles still to place, each with its king")
    next = _many(KingdominoRowTileSchema, 4, "the next row; a king or null on each")
    picker = StrictInteger(allow_none=True, validate=validate.Range(0, 3),
                           metadata={"description": "the king that picks now, or null"})
    kingdoms = _kd_log("per player, its place/discard actions in order")
    dynasty = fields.Nested(KingdominoDynastySchema, metadata={"description": "option dynasty only"})
    timed_out = StrictInteger(validate=validate.Range(0, 3),
                              metadata={"description": "only once a player's timeout ended the game"})
    exit = fields.String(validate=OneOf(["resign", "gone", "abort"]),
                         metadata={"description": "only once an exit ended the game (resign, a player gone, abort)"})
    bots = _bots("players the engine plays (only when there are some)")
    log = _log()


class KingdominoSquareSchema(StrictSchema):
    x = StrictInteger()
    y = StrictInteger()
    terrain = fields.String(metadata={"enum": ["wheat", "forest", "lake", "grassland", "swamp", "mine"]})
    crowns = StrictInteger()


class KingdominoTotalsSchema(StrictSchema):
    scores = _kd_counts("per player, summed over the games so far")
    largest_region = _kd_counts("per player, summed")
    crowns = _kd_counts("per player, summed")


class KingdominoDynastyViewSchema(StrictSchema):
    games = fields.List(fields.Nested(KingdominoResultSchema))
    game = StrictInteger(metadata={"description": "1..3, the game being played"})
    of = StrictInteger(metadata={"description": "3"})
    game_scores = fields.List(fields.List(StrictInteger()), metadata={"description": "per game, per player"})
    totals = fields.Nested(KingdominoTotalsSchema)


class KingdominoLegalMoveSchema(Schema):
    """One of a Kingdomino view's `legal`, structured."""

    verb = fields.String(metadata={"enum": ["pick", "place", "discard"]})
    tile = fields.Integer()
    square = fields.List(fields.Integer(), metadata={"description": "place: the first square [x, y]"})
    direction = fields.String(metadata={"description": "place: where the second square lies", "enum": ["N", "E", "S", "W"]})


class KingdominoViewSchema(Schema):
    """What one player may see of a Kingdomino game: no pile order, no seed (only `pile_size`)."""

    variant = fields.String()
    players = fields.Integer()
    options = fields.Dict(keys=fields.String(), values=OptionValue())
    kings = fields.List(fields.Integer())
    current = fields.List(fields.Nested(KingdominoRowTileSchema))
    next = fields.List(fields.Nested(KingdominoRowTileSchema))
    picker = fields.Integer(allow_none=True)
    kingdoms = fields.List(fields.List(fields.String()))
    dynasty = fields.Nested(KingdominoDynastyViewSchema, metadata={"description": "option dynasty only"})
    timed_out = fields.Integer(allow_none=True)
    bots = fields.List(fields.Nested(BotSeatSchema), metadata={"description": "players the engine plays, if any"})
    player = fields.Integer(allow_none=True, metadata={"description": "the viewer (null for the host's view)"})
    pile_size = fields.Integer(metadata={"description": "undrawn tiles left (their order is hidden)"})
    grids = fields.List(fields.List(fields.Nested(KingdominoSquareSchema)),
                        metadata={"description": "per player, every placed square"})
    discarded = fields.List(fields.Integer(), metadata={"description": "per player, tiles discarded"})
    to_move = fields.Integer(allow_none=True, metadata={"description": "null once the game is over"})
    legal = fields.List(fields.String(), metadata={"description": "the viewer's legal actions when it is to move"})
    legal_moves = fields.List(fields.Nested(KingdominoLegalMoveSchema),
                              metadata={"description": "each of legal (same order), structured"})
    scores = fields.List(fields.Integer())
    largest_region = fields.List(fields.Integer())
    crowns = fields.List(fields.Integer())
    game_over = fields.Boolean()
    winners = fields.List(fields.Integer())
    decided_by = fields.String(allow_none=True, metadata={"enum": KD_DECIDED_BY})


class KingdominoEventSchema(Schema):
    """Something that happened in a Kingdomino call; which other fields are set depends on `type`."""

    type = fields.String(required=True, metadata={"enum": KD_EVENT_TYPES})
    players = fields.Integer(metadata={"description": "game_started"})
    kings = fields.List(fields.Integer(), metadata={"description": "game_started: owners in first-pick order"})
    seed = fields.Integer(allow_none=True, metadata={"description": "game_started: null in sealed mode"})
    game = fields.Integer(metadata={"description": "dynasty: the game (1..3)"})
    tiles = fields.List(fields.Integer(), metadata={"description": "row_laid"})
    player = fields.Integer()
    king = fields.Integer(metadata={"description": "tile_picked"})
    tile = fields.Integer()
    square = fields.List(fields.Integer(), metadata={"description": "tile_placed: [x, y] of the first square"})
    direction = fields.String(metadata={"enum": ["N", "E", "S", "W"]})
    scores = fields.List(fields.Integer())
    largest_region = fields.List(fields.Integer())
    crowns = fields.List(fields.Integer())
    winners = fields.List(fields.Integer())
    decided_by = fields.String(metadata={"enum": KD_DECIDED_BY})
    games = fields.List(fields.List(fields.Integer()), metadata={"description": "dynasty_over: per game scores"})


def _is_kd(value: Any) -> int:
    return int(type(value) is dict and value.get("variant") == KINGDOMINO)


def _is_kd_view(value: Any) -> int:
    return int(type(value) is dict and "kings" in value)


def _is_kd_event(value: Any) -> int:
    """Kingdomino's events by their type; an exit's (both kinds have them) by its `player`."""
    kind = value.get("type") if type(value) is dict else None
    return int(kind in KD_EVENT_TYPES and (kind not in EXIT_EVENTS or "player" in value))


def _deal_kind(value: Any) -> int:
    if type(value) is dict and "games" in value:
        return 2
    return int(type(value) is dict and ("tiles" in value or "kings" in value))


def state_field(**kwargs: Any) -> Either:
    """A match's or a Kingdomino game's state."""
    return Either([("MatchState", MatchStateSchema), ("KingdominoState", KingdominoStateSchema)], _is_kd, **kwargs)


def view_field(**kwargs: Any) -> Either:
    return Either([("SeatView", SeatViewSchema), ("KingdominoView", KingdominoViewSchema)], _is_kd_view, **kwargs)


def event_field(**kwargs: Any) -> Either:
    return Either([("Event", EventSchema), ("KingdominoEvent", KingdominoEventSchema)], _is_kd_event, **kwargs)


def deal_field(**kwargs: Any) -> Either:
    return Either([("Deal", DealSchema), ("KingdominoDeal", KingdominoDealSchema),
                   ("KingdominoDynastyDeal", KingdominoDynastyDealSchema)], _deal_kind, **kwargs)


#: Every schema an `Either` names, by its component name (registered by `api_gateway.app`).
EITHER_COMPONENTS: dict[str, type[Schema]] = {
    "Deal": DealSchema, "KingdominoDeal": KingdominoDealSchema, "KingdominoDynastyDeal": KingdominoDynastyDealSchema,
    "MatchState": MatchStateSchema, "KingdominoState": KingdominoStateSchema, "SeatView": SeatViewSchema,
    "KingdominoView": KingdominoViewSchema, "Event": EventSchema, "KingdominoEvent": KingdominoEventSchema,
}


MODES = ["transparent", "sealed"]


class NewMatchSchema(StrictSchema):
    variant = fields.String(required=True, validate=validate.Length(1, MAX_TEXT), metadata={"example": "kozel"})
    players = StrictInteger(required=True, validate=validate.Range(0, UINT32_MAX), metadata={"example": 4})
    options = fields.Dict(keys=fields.String(), values=OptionValue(),  # an unknown name is the engine's 400
                          metadata={"description": "overrides of the preset's defaults"})
    seed = _seed("deal from this seed; omitted or null: a random one (in sealed mode, omit it: "
                 "whoever knows the seed knows every deal)", allow_none=True)
    deal = deal_field(metadata={"description": "or an explicit first deal (kingdomino: {tiles, kings}, or "
                                              "{games: [...]} for a dynasty)"})
    setup = fields.Nested(SetupSchema)
    no_deal = StrictBoolean(metadata={"description": "create the match without dealing (to settle rounds only)"})
    bots = _bots("seats the computer plays: whenever one is to move, the engine moves for it, so create, apply and "
                 "next-round answer every event up to a human seat's turn (at least one seat stays human)")
    mode = fields.String(validate=OneOf(MODES), metadata={
        "description": "transparent (default): the answer carries the state; sealed: an opaque token and "
                       "one key per seat"})

    #: The same rules as `_one_source`, in the OpenAPI document (api_gateway/http/openapi.py). A null
    #: seed is the same as none.
    OPENAPI_RULES: ClassVar[dict[str, Any]] = {"allOf": [
        {"not": {"required": ["seed", "deal"], "properties": {"seed": {"type": "integer"}}}},
        {"not": {"required": ["no_deal", "seed"],
                 "properties": {"no_deal": {"enum": [True]}, "seed": {"type": "integer"}}}},
        {"not": {"required": ["no_deal", "deal"], "properties": {"no_deal": {"enum": [True]}}}},
    ]}

    @validates_schema
    def _one_source(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data.get("seed") is not None and "deal" in data:
            raise ValidationError("give seed or deal, not both", "deal")
        if data.get("no_deal") and ("deal" in data or data.get("seed") is not None):
            raise ValidationError("no_deal: no seed and no deal with it", "no_deal")


_SEALED_KEYS = {"anyOf": [{"required": ["token"]}, {"required": ["seat_key"]}]}


def carrier_rules(transparent: dict[str, Any] | None = None, sealed: dict[str, Any] | None = None) -> dict[str, Any]:
    """The carrier rule as JSON Schema: `state` without `token` or `seat_key`, or `token` and
    `seat_key` without `state`; each branch with the operation's own extra rules."""
    transparent_branch = {"required": ["state"], "not": _SEALED_KEYS, **(transparent or {})}
    sealed_branch = {"required": ["token", "seat_key"], "not": {"required": ["state"]}, **(sealed or {})}
    return {"oneOf": [transparent_branch, sealed_branch]}


class CarrierSchema(StrictSchema):
    """How a request carries the match: `state` (transparent) or `token` + `seat_key` (sealed)."""

    OPENAPI_RULES: ClassVar[dict[str, Any]] = carrier_rules()

    state = state_field(carried=True, metadata={"description": "transparent mode: the state of the last answer"})
    token = fields.String(validate=validate.Length(1, 65536),
                          metadata={"description": "sealed mode: the token of the last answer"})
    seat_key = fields.String(validate=validate.Length(1, 128),
                             metadata={"description": "sealed mode: this seat's key (or the host key)"})

    @validates_schema
    def _one_carrier(self, data: dict[str, Any], **kwargs: Any) -> None:
        if ("state" in data) == ("token" in data):
            raise ValidationError("give either state (transparent) or token and seat_key (sealed)", "state")
        if "token" in data and "seat_key" not in data:
            raise ValidationError("a token needs the seat_key of the seat acting", "seat_key")
        if "state" in data and "seat_key" in data:
            raise ValidationError("seat_key belongs to sealed mode (with token)", "seat_key")


class ApplySchema(CarrierSchema):
    action = _action(required=True)
    seat = _seat("if given, must be the seat to move (sealed: the key's seat)")


#: Sealed replay: at most this many actions per call (the engine's work per token use stays small).
MAX_SEALED_REPLAY = 32


class ReplaySchema(CarrierSchema):
    OPENAPI_RULES: ClassVar[dict[str, Any]] = carrier_rules(
        sealed={"properties": {"actions": {"maxItems": MAX_SEALED_REPLAY}}})

    actions = fields.List(_action(), required=True, validate=validate.Length(max=MAX_ACTIONS),
                          metadata={"description": f"applied in order, each by the seat to move then (sealed: "
                                                   f"at most {MAX_SEALED_REPLAY})"})

    @validates_schema
    def _sealed_bound(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "token" in data and len(data.get("actions", ())) > MAX_SEALED_REPLAY:
            raise ValidationError(f"at most {MAX_SEALED_REPLAY} in sealed mode", "actions")


class SettleSchema(CarrierSchema):
    """Transparent mode only: the caller declares the hands (a sealed caller is refused, 403)."""

    OPENAPI_RULES: ClassVar[dict[str, Any]] = {"required": ["state", "ending", "hands"], "not": _SEALED_KEYS}

    ending = fields.String(required=True, validate=OneOf(["out", "blocked"]))
    hands = _hands("the hands left, seat 0 first", required=True)
    last_placer = _seat("the fisherman, when known")


class NextRoundSchema(CarrierSchema):
    OPENAPI_RULES: ClassVar[dict[str, Any]] = carrier_rules(sealed={"not": {"anyOf": [
        {"required": ["state"]}, {"required": ["deal"]}]}})

    deal = fields.Nested(DealSchema, metadata={
        "description": "transparent mode only: an explicit deal; omitted: dealt from the match seed"})


class SeatArgumentSchema(CarrierSchema):
    """View and timeout: which seat. Transparent mode must say; a sealed seat key means its own seat
    (the host key names the seat it times out)."""

    OPENAPI_RULES: ClassVar[dict[str, Any]] = carrier_rules(transparent={"required": ["state", "seat"]})

    seat = _seat("the seat (required with state; sealed: defaults to the key's seat)")

    @validates_schema
    def _seat_given(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "state" in data and "seat" not in data:
            raise ValidationError("required in transparent mode", "seat")


class SuggestSchema(CarrierSchema):
    """A computer opponent's move for the seat to move (sealed: only your own seat, on your turn)."""

    level = fields.String(required=True, validate=OneOf(BOT_LEVELS),
                          metadata={"description": "random, greedy or expert (docs/bots.md)", "example": "expert"})
    budget_ms = StrictInteger(validate=validate.Range(1, 10_000), metadata={
        "description": "a wall-clock cap on the expert's search (default: none; the answer is then reproducible)"})
    seed = _seed("the bot's seed (default: the match's)")


class HintsSchema(SeatArgumentSchema):
    """The coach for one seat's view (transparent: `seat`; sealed: your own seat)."""

    budget_ms = StrictInteger(validate=validate.Range(1, 10_000),
                              metadata={"description": "a wall-clock cap on the expert's search"})
    seed = _seed("the coach's seed (default: the match's)")


# ---------------------------------------------------------------- answers


SCORES = ("the score as players say it, per seat (or team), in every variant and both modes: what an app shows in its score table (Kozel, Osel: the written points, with remembered points and the pot in the ledger beside them; the counting games and block: the running score; Kingdomino: the points so far, summed over a dynasty)")


class MatchAnswerSchema(Schema):
    """A changed match: the state (transparent) or a new token and the caller's view (sealed)."""

    state = state_field(metadata={"description": "transparent: the new state"})
    token = fields.String(metadata={"description": "sealed: the new token (pass it on the next call)"})
    match_id = fields.String(metadata={"description": "sealed: the match's id (hex)"})
    seq = fields.Integer(metadata={"description": "sealed: state version, +1 per change"})
    view = view_field(metadata={"description": "sealed: what the caller may see"})
    scores = fields.List(fields.Integer(), required=True, metadata={"description": SCORES})
    seat_keys = fields.List(fields.String(), metadata={
        "description": "sealed, new match only: one key per seat; give each seat only its own"})
    host_key = fields.String(metadata={
        "description": "sealed, new match only: the host's key (public view, timeouts, next round)"})
    events = fields.List(event_field(), metadata={"description": "what this call did, in order"})
    record_lines = _record_lines(_SHED)


class ReplayAnswerSchema(MatchAnswerSchema):
    applied = fields.Integer(metadata={"description": "how many actions applied"})
    ok = fields.Boolean(metadata={"description": "every action applied"})
    failed_index = fields.Integer(metadata={"description": "index of the refused action, -1 when ok"})
    reason = fields.String(metadata={"description": "why it was refused"})
    error_kind = fields.String(metadata={"description": "malformed or illegal ('' when ok)"})


class LegalAnswerSchema(Schema):
    seat = fields.Integer(allow_none=True, metadata={"description": "the seat to move (kingdomino: null once over)"})
    actions = fields.List(fields.String(), metadata={
        "description": "its legal actions (sealed: only when the caller is that seat)"})


class ViewAnswerSchema(Schema):
    """A seat's view (transparent: any seat; sealed: the caller's), under `view` as in every answer."""

    view = view_field(required=True)
    scores = fields.List(fields.Integer(), required=True, metadata={"description": SCORES})


class SuggestAnswerSchema(Schema):
    seat = fields.Integer(required=True, metadata={"description": "the seat to move"})
    action = fields.String(required=True, metadata={"description": "one of its legal actions"})


class HintsAnswerSchema(Schema):
    hints = fields.Dict(required=True, metadata={
        "description": "seat, worlds (positions sampled), proven_missing (per seat, the numbers it is proven not "
                       "to hold), whereabouts (per unseen tile, the chance it is in each hand and the boneyard), "
                       "values (when the seat is to move: each legal action's value to the expert); "
                       "Kingdomino: the unseen tiles and the value of each legal action (docs/bots.md)"})


class ProblemSchema(Schema):
    """RFC 9457 problem details (application/problem+json)."""

    type = fields.String(metadata={"description": "problem type: /v1/problems/<name> or about:blank"})
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    instance = fields.String(metadata={"description": "the request path"})
    field = fields.String(metadata={"description": "the offending field, when one is to blame"})
    action = fields.String(metadata={"description": "the offending action, when one is to blame"})
    errors = fields.Dict(metadata={"description": "422: validation messages by field"})
    latest = fields.Integer(metadata={"description": "stale-token: the `seq` of the match's latest answer"})
    limit = fields.Raw(metadata={"description": "too-many-streams: which cap (worker, match, seat, address); "
                                                "too-large: the limit in bytes"})
    what = fields.String(metadata={"description": "too-large: request or answer"})
    size = fields.Integer(metadata={"description": "too-large: its size in bytes"})


class ProblemTypeSchema(Schema):
    """What a problem type means (`GET /v1/problems/{name}`), from `api_gateway.http.problems.PROBLEM_TYPES`."""

    type = fields.String(metadata={"description": "the `type` member of its answers: /v1/problems/<name>"})
    title = fields.String()
    status = fields.Integer()
    description = fields.String()
    members = fields.List(fields.String(), metadata={"description": "its extension members (beyond type, title, "
                                                                    "status, detail, instance)"})
    retry_after = fields.Boolean(metadata={"description": "its answers carry Retry-After: try again then"})


# ---------------------------------------------------------------- Bykovo micro-tournament (B)

#: A shape bound of a carried state's lists (the engine checks a state's participants itself).
MAX_PARTICIPANTS = 16
#: A new micro-tournament has 4 to 7 participants (RULES.md B); distinct names are the engine's check (400).
MIN_PARTICIPANTS_NEW, MAX_PARTICIPANTS_NEW = 4, 7


def _participant(**kwargs: Any) -> fields.String:
    return fields.String(validate=validate.Length(1, MAX_TEXT), metadata={"example": "Ann"}, **kwargs)


def _indexes(description: str, **kwargs: Any) -> fields.List[Any]:
    return fields.List(StrictInteger(validate=validate.Range(0, UINT32_MAX)),
                       validate=validate.Length(max=MAX_PARTICIPANTS), metadata={"description": description},
                       **kwargs)


class TournamentRoundSchema(StrictSchema):
    """One recorded round of a micro-tournament (participants are indexes into `participants`)."""

    players = _indexes("the four participants who played, ascending = seat order")
    places = _ints("their places, seat order: the winner 1, then by ascending points, equal points sharing",
                   (0, UINT32_MAX))
    totals = _ints("every participant's total after the round, by index")
    eliminated = _indexes("derived (ignored on input): participants whose total reached the limit in this round")


class StandingSchema(StrictSchema):
    """One line of the standings, best first."""

    participant = fields.String(validate=validate.Length(max=MAX_TEXT), metadata={"description": "name"})
    index = _count("position in `participants`")
    place = _count("1-based and strict: ties broken by dynamics, then by lot from the seed")
    total = _points("points so far (lower is better)")
    out = StrictBoolean(metadata={"description": "reached the limit and left the tournament"})
    official = StrictBoolean(metadata={"description": "one of the first 3 places of a finished tournament"})


class TournamentStateSchema(StrictSchema):
    """The whole micro-tournament: pass it back as it came (the derived keys may be left out)."""

    participants = fields.List(_participant(), required=True, validate=validate.Length(max=MAX_PARTICIPANTS),
                               metadata={"description": "4-7 distinct names, in the fixed tournament order"})
    seed = _seed("the lots (who sits out round 1 without a rating, ties)", required=True)
    limit = _count("derived: 100, 75, 60, 50 for 4, 5, 6, 7 participants")
    first_sitters = _indexes("participants who sat out round 1, ascending")
    rounds = _many(TournamentRoundSchema, 10000, "every recorded round, oldest first")
    totals = _ints("derived: every participant's total now, by index")
    over = StrictBoolean(metadata={"description": "derived: 3 or fewer participants remain"})
    next_players = _indexes("derived: the four participants of the next round, seat order; empty once over")
    standings = _many(StandingSchema, MAX_PARTICIPANTS, "derived: everyone ranked, the eliminated last "
                                                        "(latest out first)")


class NewTournamentSchema(StrictSchema):
    participants = fields.List(_participant(), required=True,
                               validate=validate.Length(MIN_PARTICIPANTS_NEW, MAX_PARTICIPANTS_NEW),
                               metadata={"description": "4-7 distinct names, in the fixed tournament order "
                                                        "(seats of a round follow it)", "uniqueItems": True,
                                         "example": ["Ann", "Bob", "Cid", "Dan", "Eve"]})
    seed = _seed("lots from this seed; omitted or null: a random one, recorded in the state", allow_none=True)
    rating = fields.List(_participant(), validate=validate.Length(max=MAX_PARTICIPANTS), metadata={
        "description": "names, best first: with more than 4 participants the best sit out round 1 "
                       "(omitted: by lot)"})


class TournamentCarrierSchema(StrictSchema):
    state = Carried(TournamentStateSchema, required=True,
                    metadata={"description": "the tournament state of the last answer"})


class RecordRoundSchema(TournamentCarrierSchema):
    points = _ints("the round points of the four players of `next_players`, in that (seat) order: "
                   "0..200, the winner 0", required=True)
    winner = _seat("the seat (0..3, not a participant index) that won the round", required=True)


class TournamentEventSchema(Schema):
    """Something that happened during a tournament call; which other fields are set depends on `type`."""

    type = fields.String(required=True, metadata={"enum": ["tournament_round", "eliminated", "tournament_over"]})
    number = fields.Integer(metadata={"description": "tournament_round: 1-based round number"})
    players = fields.List(fields.Integer(), metadata={"description": "tournament_round: who played (indexes)"})
    places = fields.List(fields.Integer(), metadata={"description": "tournament_round: their places, seat order"})
    participants = fields.List(fields.String(), metadata={"description": "eliminated: the names now out"})
    standings = fields.List(fields.Nested(StandingSchema),
                            metadata={"description": "tournament_over: the 3 official places"})


class TournamentAnswerSchema(Schema):
    state = fields.Nested(TournamentStateSchema, metadata={"description": "the new state: pass it back next time"})
    events = fields.List(fields.Nested(TournamentEventSchema),
                         metadata={"description": "what this call did, in order (none on creation)"})


class StandingsAnswerSchema(Schema):
    standings = fields.List(fields.Nested(StandingSchema), metadata={"description": "everyone ranked, best first"})
    next_players = fields.List(fields.Integer(), metadata={
        "description": "the four participants (indexes) of the next round, seat order; empty once over"})
    over = fields.Boolean()


# ---------------------------------------------------------------- match records (docs/records.md)

RECORD_FORMAT = "domino-record"
#: A record's text form at most (the body limit, GATEWAY_MAX_BODY_BYTES, comes first).
MAX_RECORD_TEXT = 4_000_000
MAX_RECORD_MOVES = 4000
VIEW_PATTERN = r"^(full|spectator|seat (0|[1-9][0-9]?))$"


class RecordMoveSchema(StrictSchema):
    """One move of a record: its number, who made it, the step and what it gave."""

    n = StrictInteger(required=True, metadata={"description": "1, 2, 3 ... in order"})
    seat = StrictInteger(required=True, allow_none=True,
                         metadata={"description": "the seat (Kingdomino: the player); null for the table's steps"})
    step = fields.String(required=True, metadata={
        "description": "'new' (or 'new {json}'), 'deal' (or 'deal {json}'), an action, 'settle {json}', "
                       "'timeout N'", "example": "3-6@E"})
    events = fields.List(fields.Dict(), required=True, metadata={
        "description": "the events the move gave as the record's viewer sees them (empty: not given, "
                       "computed on import), plus `dealt` and `revealed`"})


class RecordSchema(StrictSchema):
    """A match record, JSON form (docs/records.md); the text form carries the same."""

    record = fields.String(required=True, validate=OneOf([RECORD_FORMAT]))
    version = StrictInteger(required=True, validate=OneOf([1]))
    variant = fields.String(required=True, metadata={"example": "block"})
    players = StrictInteger(required=True)
    options = fields.Dict(required=True)
    view = fields.String(required=True, validate=validate.Regexp(VIEW_PATTERN),
                         metadata={"description": "full, spectator or 'seat N'"})
    seed = StrictInteger(required=True, allow_none=True, metadata={"description": "full records only"})
    names = fields.List(fields.String(allow_none=True), required=True)
    result = fields.Dict(required=True, allow_none=True, metadata={"description": "the match's, once over"})
    moves = fields.List(fields.Nested(RecordMoveSchema), required=True)


class ExportRecordSchema(CarrierSchema):
    """Transparent: `view` (default full). Sealed: the key decides (a seat's own record, the host's
    spectator record, the full one once the match is over)."""

    OPENAPI_RULES: ClassVar[dict[str, Any]] = carrier_rules(sealed={"not": {"anyOf": [
        {"required": ["state"]}, {"required": ["view"]}, {"required": ["prior"]}]}})

    view = fields.String(validate=validate.Regexp(VIEW_PATTERN),
                         metadata={"description": "transparent mode only: full (default), spectator or 'seat N'",
                                   "example": "full"})
    names = fields.List(fields.String(allow_none=True, validate=validate.Length(max=80)),
                        validate=validate.Length(max=16),
                        metadata={"description": "the players' names, seat 0 first (as many as seats)"})
    prior = _record_lines("transparent: the log entries that left the state as its rounds ended (every "
                          "answer's record_lines, in order), required once a round has ended; checked "
                          "exactly against the state's log_count and log_digest. Sealed: the gateway's store "
                          "keeps them")

    @validates_schema
    def _view_transparent(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "token" in data and "view" in data:
            raise ValidationError("a sealed match's record is the one its key may see", "view")
        if "token" in data and "prior" in data:
            raise ValidationError("a sealed match's earlier lines are the gateway's (its store keeps them)", "prior")


class RecordInputSchema(StrictSchema):
    """A record in one of its forms: `record` (JSON) or `text`."""

    OPENAPI_RULES: ClassVar[dict[str, Any]] = {"oneOf": [
        {"required": ["record"], "not": {"required": ["text"]}},
        {"required": ["text"], "not": {"required": ["record"]}}]}

    record = Carried(RecordSchema, metadata={"description": "the JSON form (read by the engine)"})
    text = fields.String(validate=validate.Length(1, MAX_RECORD_TEXT),
                         metadata={"description": "the text form"})

    @validates_schema
    def _one_form(self, data: dict[str, Any], **kwargs: Any) -> None:
        if ("record" in data) == ("text" in data):
            raise ValidationError("give the record in one form: record (JSON) or text", "record")


class ReplayRecordSchema(RecordInputSchema):
    upto = StrictInteger(validate=validate.Range(1, MAX_RECORD_MOVES),
                         metadata={"description": "the move to stop after (default: the last)"})


class RecordAnswerSchema(Schema):
    record = fields.Nested(RecordSchema, required=True)
    text = fields.String(required=True, metadata={"description": "the same record, text form"})


class ImportRecordAnswerSchema(RecordAnswerSchema):
    moves = fields.Integer(required=True)
    state = state_field(allow_none=True, metadata={
        "description": "the match after its last move (a full record); null for a seat's or spectator's"})
    record_lines = _record_lines("the log entries that left that state as its rounds ended (export it with them)")


class ReplayRecordAnswerSchema(Schema):
    state = state_field(required=True, metadata={"description": "the match after move `move`"})
    move = fields.Integer(required=True)
    moves = fields.Integer(required=True)
    record_lines = _record_lines("the log entries that left that state as its rounds ended (export it with them)")
