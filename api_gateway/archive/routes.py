# mypy: allow-untyped-decorators
"""The archive's REST resources: players, the leaderboard, a player's matches, an archived match's record.

Reads only: matches reach the archive through `Archive.finish` when they end,
never through a request. Errors are problem+json like the rest of the API:
an unknown player or match 404, a bad cursor 400, the database down 503 with
Retry-After.
"""
from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView
from marshmallow import RAISE

from api_gateway.archive import cursor as cursors
from api_gateway.archive.players import PLAYER_ID
from api_gateway.archive.repository import KEY_TYPES, Page, UnknownPlayer
from api_gateway.archive.schemas import (
    ArchivedMatchSchema,
    LeaderboardArgsSchema,
    LeaderboardSchema,
    PageArgsSchema,
    PlayerMatchesSchema,
    PlayerSchema,
)
from api_gateway.archive.service import Archive
from api_gateway.http.bodies import Blueprint
from api_gateway.http.openapi import ENGINE, operation

Json = dict[str, Any]
ARCHIVE = "domino_archive"

archive_blp = Blueprint("archive", __name__, url_prefix="/v1",
                        description="Players, their ratings and the leaderboard; finished matches kept with "
                                    "their records (docs/tables.md, Ratings).")

_DATABASE = ("archive-unavailable",)
_QUERY = ("bad-cursor", "validation-error")


def archive() -> Archive:
    found: Archive = current_app.extensions[ARCHIVE]
    return found


def _player_id(player_id: str) -> str:
    if not PLAYER_ID.match(player_id):
        raise UnknownPlayer(player_id)  # no such id can exist: the same 404 as an unknown one
    return player_id


def _page(page: Page, scope: list[Any], extra: Json | None = None) -> Json:
    """One page of a list, serialized by the route's response schema."""
    return {**(extra or {}), "items": page.items,
            "next": None if page.last is None else cursors.encode(scope, page.last)}


@archive_blp.route("/players/<string:player_id>")
class PlayerOne(MethodView):
    @archive_blp.response(200, PlayerSchema)
    @operation(archive_blp, "getPlayer", "unknown-player", *_DATABASE)
    def get(self, player_id: str) -> Json:
        """A player: ratings per variant family (skill with its uncertainty, the source's rating points,
        matches played, tournament places) and the last results. A valid player id the archive has no
        match of yet is a newcomer: no ratings, no matches (`newcomer: true`), not a 404."""
        pid = _player_id(player_id)
        try:
            return {**archive().player(pid), "newcomer": False}
        except UnknownPlayer:
            return {"id": pid, "name": None, "created_at": None, "matches": 0, "ratings": [], "recent": [],
                    "newcomer": True}


@archive_blp.route("/players/<string:player_id>/matches")
class PlayerMatches(MethodView):
    @archive_blp.arguments(PageArgsSchema(), location="query", as_kwargs=True, unknown=RAISE)
    @archive_blp.response(200, PlayerMatchesSchema)
    @operation(archive_blp, "listPlayerMatches", *_QUERY, "unknown-player", *_DATABASE)
    def get(self, player_id: str, limit: int, cursor: str | None = None) -> Json:
        """A player's archived matches, newest first (cursor-paginated); none yet for a newcomer."""
        pid = _player_id(player_id)
        scope = ["matches", pid]
        after = None if cursor is None else cursors.decode(cursor, scope, [int])[0]
        try:
            return _page(archive().player_matches(pid, after, limit), scope)
        except UnknownPlayer:  # a newcomer: no match yet
            return _page(Page([], None), scope)


@archive_blp.route("/leaderboard")
class Leaderboard(MethodView):
    @archive_blp.arguments(LeaderboardArgsSchema(), location="query", as_kwargs=True, unknown=RAISE)
    @archive_blp.response(200, LeaderboardSchema)
    @operation(archive_blp, "getLeaderboard", *_QUERY, "unknown-variant", *_DATABASE, *ENGINE)
    def get(self, variant: str, by: str, limit: int, provisional: bool, cursor: str | None = None) -> Json:
        """The best players of a variant's family: by skill (default), the source's points, or Bykovo
        tournament places; cursor-paginated, ranks counted across pages."""
        found = archive()
        family = found.family(variant)
        scope = ["leaderboard", family, by, int(provisional)]
        rank, after = 0, None
        if cursor is not None:
            rank, *key = cursors.decode(cursor, scope, [int, *KEY_TYPES[by]])
            after = tuple(key)
        page = found.leaderboard(family, by, after, rank, limit, provisional)
        last = page.items[-1]["rank"] if page.items else rank
        return _page(Page(page.items, None if page.last is None else (last, *page.last)), scope,
                     {"variant": variant, "family": family, "by": by})


@archive_blp.route("/matches/<string:match_id>/record")
class ArchivedRecord(MethodView):
    @archive_blp.response(200, ArchivedMatchSchema)
    @operation(archive_blp, "getArchivedMatch", "not-archived", *_DATABASE)
    def get(self, match_id: str) -> Json:
        """An archived match: its result, who sat where with their ratings before and after, and its whole
        record (domino-record 1, JSON and text forms), long after the live match expired."""
        return archive().archived(match_id)
