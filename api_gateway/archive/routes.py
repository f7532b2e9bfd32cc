# mypy: allow-untyped-decorators
"""The archive's REST resources: players, the leaderboard, a player's matches, an archived match's record.

Reads only: matches reach the archive through `Archive.finish` when they end,
never through a request. Errors are problem+json like the rest of the API:
an unknown player or match 404, a bad cursor 400, the database down 503 with
Retry-After.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import Response, current_app, jsonify
from flask.views import MethodView
from marshmallow import RAISE

from api_gateway import problems
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
from api_gateway.bodies import Blueprint
from api_gateway.schemas import ProblemSchema

F = TypeVar("F", bound=Callable[..., Any])
Json = dict[str, Any]
ARCHIVE = "domino_archive"

archive_blp = Blueprint("archive", __name__, url_prefix="/v1",
                        description="Players, their ratings and the leaderboard; finished matches kept with "
                                    "their records (docs/tables.md, Ratings).")

_DESCRIPTIONS = {
    400: "The cursor is not one of this list's",
    404: "No such player, variant or archived match",
    422: "A query argument is missing, unknown or out of range",
    503: "The archive database is unavailable (see Retry-After)",
    502: "The engine failed (the variant list)",
    504: "The engine did not answer in time (the variant list)",
}
_RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before trying again", "schema": {"type": "integer"}}}


def _problems(*codes: int) -> Callable[[F], F]:
    def decorate(func: F) -> F:
        documented: Any = func
        for code in codes:
            documented = archive_blp.alt_response(code, schema=ProblemSchema, content_type=problems.MEDIA_TYPE,
                                                  description=_DESCRIPTIONS[code],
                                                  headers=_RETRY_AFTER if code == 503 else None)(documented)
        func.__dict__["_apidoc"] = documented._apidoc
        return func
    return decorate


def archive() -> Archive:
    found: Archive = current_app.extensions[ARCHIVE]
    return found


def _player_id(player_id: str) -> str:
    if not PLAYER_ID.match(player_id):
        raise UnknownPlayer(player_id)  # no such id can exist: the same 404 as an unknown one
    return player_id


def _page(page: Page, scope: list[Any], extra: Json | None = None) -> Response:
    return jsonify({**(extra or {}), "items": page.items,
                    "next": None if page.last is None else cursors.encode(scope, page.last)})


@archive_blp.route("/players/<string:player_id>")
class PlayerOne(MethodView):
    @archive_blp.response(200, PlayerSchema)
    @_problems(404, 503)
    def get(self, player_id: str) -> Json:
        """A player: ratings per variant family (skill with its uncertainty, the source's rating points,
        matches played, tournament places) and the last results."""
        return archive().player(_player_id(player_id))


@archive_blp.route("/players/<string:player_id>/matches")
class PlayerMatches(MethodView):
    @archive_blp.arguments(PageArgsSchema(), location="query", as_kwargs=True, unknown=RAISE)
    @archive_blp.response(200, PlayerMatchesSchema)
    @_problems(400, 404, 422, 503)
    def get(self, player_id: str, limit: int, cursor: str | None = None) -> Response:
        """A player's archived matches, newest first (cursor-paginated)."""
        pid = _player_id(player_id)
        scope = ["matches", pid]
        after = None if cursor is None else cursors.decode(cursor, scope, [int])[0]
        return _page(archive().player_matches(pid, after, limit), scope)


@archive_blp.route("/leaderboard")
class Leaderboard(MethodView):
    @archive_blp.arguments(LeaderboardArgsSchema(), location="query", as_kwargs=True, unknown=RAISE)
    @archive_blp.response(200, LeaderboardSchema)
    @_problems(400, 404, 422, 503, 502, 504)
    def get(self, variant: str, by: str, limit: int, cursor: str | None = None) -> Response:
        """The best players of a variant's family: by skill (default), the source's points, or Bykovo
        tournament places; cursor-paginated, ranks counted across pages."""
        found = archive()
        family = found.family(variant)
        scope = ["leaderboard", family, by]
        rank, after = 0, None
        if cursor is not None:
            rank, *key = cursors.decode(cursor, scope, [int, *KEY_TYPES[by]])
            after = tuple(key)
        page = found.leaderboard(family, by, after, rank, limit)
        last = page.items[-1]["rank"] if page.items else rank
        return _page(Page(page.items, None if page.last is None else (last, *page.last)), scope,
                     {"variant": variant, "family": family, "by": by})


@archive_blp.route("/matches/<string:match_id>/record")
class ArchivedRecord(MethodView):
    @archive_blp.response(200, ArchivedMatchSchema)
    @_problems(404, 503)
    def get(self, match_id: str) -> Json:
        """An archived match: its result, who sat where with their ratings before and after, and its whole
        record (domino-record 1, JSON and text forms), long after the live match expired."""
        return archive().archived(match_id)
