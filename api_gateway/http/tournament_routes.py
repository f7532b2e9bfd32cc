# mypy: allow-untyped-decorators
"""Hosted tournaments' routes (issue 41, docs/tournaments.md)."""
from __future__ import annotations

from api_gateway.http.bodies import Blueprint

hosted_blp = Blueprint("hosted-tournaments", __name__, url_prefix="/v1",
                       description="Hosted tournaments: the service seats every round's tables (the Bykovo "
                                   "micro-tournament for 4-7 people, Swiss) (docs/tournaments.md).")
