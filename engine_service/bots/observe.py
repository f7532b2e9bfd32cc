"""Views with a history: the round's events as one seat saw them, for bots to infer voids.

`Match.view(seat)` shows the table but not who passed or drew when. A library
caller that plays a match keeps the events `Match.apply` returns and passes them
along as ``history``; `SeatLog` does exactly that, redacting other seats' drawn
tiles as `views.redact_events` does for sealed callers. (Over the wire the engine
rebuilds the same history from the state's action log: `calls.seat_view`.)
"""
from __future__ import annotations

from typing import Any

from ..rules.events import Event
from ..rules.match import Match
from ..rules.views import redact_events


class SeatLog:
    """The events of the round in play, kept once and shown redacted per seat."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[Event] = []

    def record(self, events: list[Event]) -> None:
        """Add what a call returned; a new deal starts the log afresh."""
        for e in events:
            if e.get("type") == "round_dealt":
                self.events = []
            self.events.append(e)

    def view(self, match: Match, seat: int) -> dict[str, Any]:
        """`match.view(seat)` plus ``history``: this round's events as `seat` saw them."""
        view = match.view(seat)
        view["history"] = redact_events(self.events, seat)
        return view
