# mypy: allow-untyped-decorators
"""Web Push for the play page: a seat's browser subscription, registered with the seat's credential
(docs/notifications.md, Web Push)."""
from __future__ import annotations

from api_gateway.http.bodies import Blueprint

push_blp = Blueprint("push", __name__, url_prefix="/v1",
                     description="Web Push: a seat's browser subscription for \"your turn\" and the match's end "
                                 "while its tab is closed (docs/notifications.md).")
