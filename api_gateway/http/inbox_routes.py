# mypy: allow-untyped-decorators
"""The player's inbox: a player's live matches and what they missed while away (docs/tables.md, Inbox)."""
from __future__ import annotations

from api_gateway.http.bodies import Blueprint

inbox_blp = Blueprint("inbox", __name__, url_prefix="/v1",
                      description="A player's inbox: their live matches (whose turn, clocks, unread events) and "
                                  "the notifications they missed while away (docs/tables.md).")
