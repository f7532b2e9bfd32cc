"""The schemas of the streams' items (documentation only: the streams write their lines themselves).

A seat stream (`GET /v1/matches/{id}/events`, Server-Sent Events) sends `view`, `update`, `end` and
`closed` events, each with one line of JSON as its data; the spectator stream
(`GET /v1/matches/{id}/spectate`, NDJSON) sends a description, the match's events (the `Event`
components) and control lines. `api_gateway.http.openapi` names them in the streams' answers.
"""
from __future__ import annotations

from marshmallow import Schema, fields

from api_gateway.http.schemas import OneOf, event_field, view_field

CLOSED_REASONS = ["idle", "max-duration", "expired", "store-unavailable", "shutdown", "error"]

_CLOCKS = {"description": "a table with a turn clock: each seat's seconds `remaining`, the `running` seat, its "
                          "`deadline` (unix seconds), the seats on `autopilot`, the `setting`; null without a clock"}


class SeatStreamViewSchema(Schema):
    """`event: view`: the viewer's view when the stream starts (not sent when resuming with Last-Event-ID)."""

    match_id = fields.String()
    seat = fields.Integer(allow_none=True, metadata={"description": "null: the public view (host, spectator)"})
    seq = fields.Integer(metadata={"description": "the match's version: the event's id"})
    view = view_field()
    scores = fields.List(fields.Integer())
    turn = fields.Integer(allow_none=True, metadata={"description": "the seat to act now (null between rounds "
                                                                    "and once over)"})
    over = fields.Boolean()
    clocks = fields.Dict(allow_none=True, metadata=_CLOCKS)


class SeatStreamUpdateSchema(Schema):
    """`event: update`: one change of the match as this viewer may see it."""

    seq = fields.Integer(metadata={"description": "the match's version after the change: the event's id"})
    events = fields.List(event_field())
    view = view_field()
    scores = fields.List(fields.Integer())
    turn = fields.Integer(allow_none=True)
    clocks = fields.Dict(allow_none=True, metadata=_CLOCKS)


class SeatStreamPresenceSchema(Schema):
    """`event: presence` (no id: not a version of the match): the seats whose person is here now (an open
    stream, or a call lately), sent when that changes and to each stream when it starts. It comes up to
    0.4 x GATEWAY_PRESENCE_SECONDS after the change (the workers' renewal): a person who closed the app is
    away after GATEWAY_PRESENCE_SECONDS."""

    here = fields.List(fields.Integer(), required=True,
                       metadata={"description": "the seats here, in order; every other seat of a person is away"})


class StreamClosedSchema(Schema):
    """`event: closed` (seat stream) or a `closed` line (spectator stream): the gateway stopped the stream
    before the match's end; open it again (a seat stream with Last-Event-ID)."""

    type = fields.String(validate=OneOf(["closed"]), metadata={"description": "the spectator stream's lines only"})
    reason = fields.String(validate=OneOf(CLOSED_REASONS))


class SpectatorDescriptionSchema(Schema):
    """The spectator stream's first line: what match this is (docs/records.md, "The spectator stream")."""

    type = fields.String(validate=OneOf(["description"]))
    record = fields.String(metadata={"example": "domino-record"})
    version = fields.Integer()
    variant = fields.String()
    players = fields.Integer()
    options = fields.Dict()
    view = fields.String(metadata={"example": "spectator"})


class SpectatorControlSchema(Schema):
    """`keepalive` (skip it) after a few seconds without a line; `end` when the match is over."""

    type = fields.String(validate=OneOf(["keepalive", "end"]))
