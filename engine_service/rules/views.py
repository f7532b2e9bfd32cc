"""What a viewer may see of a match: a seat's view, the public view, events as seen (RULES.md C).

A matching game hides the hands and the boneyard's order. A seat sees its own
hand and everything on the table (`Match.view`); the public view (a host, a
spectator) is any seat's view without that seat's hand and legal actions; and in
the events of a call, a tile drawn by another seat is hidden. The engine shows
sealed-mode callers nothing else, so this module is the whole of that policy.

>>> from engine_service.rules import Match
>>> match, events = Match.new("kozel", 2, seed=1)
>>> public_view(match)["hand"], public_view(match)["seat"]
([], None)
>>> redact_events([{"type": "drew", "seat": 1, "tile": "3-6"}], 0)
[{'type': 'drew', 'seat': 1, 'tile': None}]
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .events import Event
from .kingdomino import Kingdomino
from .match import Match

Viewer = int | None  # a seat, or None for the public (host, spectator)


def public_view(match: Match) -> dict[str, Any]:
    """The view of someone who holds no seat: no hand, no legal actions, `seat` null."""
    view = match.view(0)
    view.update(seat=None, hand=[], legal=[])
    return view


def view_for(match: Match, viewer: Viewer) -> dict[str, Any]:
    """`viewer`'s view: a seat's own (`Match.view`), or the public one for None."""
    return public_view(match) if viewer is None else match.view(viewer)


def redact_events(events: Iterable[Event], viewer: Viewer) -> list[Event]:
    """Events as `viewer` may see them: a tile drawn by another seat becomes null."""
    out = []
    for event in events:
        if event.get("type") == "drew" and event.get("seat") != viewer:
            event = {**event, "tile": None}
        out.append(event)
    return out


def kingdomino_public_view(game: Kingdomino) -> dict[str, Any]:
    """A Kingdomino game as someone who holds no seat sees it: a player's view (nothing in
    Kingdomino is hidden from one player but shown to another, except the legal actions of the
    player to move) with `player` null and no legal actions."""
    view = game.view(0)
    view.update(player=None, legal=[])
    return view


def kingdomino_view_for(game: Kingdomino, viewer: Viewer) -> dict[str, Any]:
    """`viewer`'s view of a Kingdomino game: a player's own, or the public one for None."""
    return kingdomino_public_view(game) if viewer is None else game.view(viewer)


def redact_kingdomino_events(events: Iterable[Event]) -> list[Event]:
    """Kingdomino events as a player sees them: the seed (which fixes the pile's order) hidden."""
    return [{**e, "seed": None} if e.get("type") == "game_started" else e for e in events]


def scores_of(game: Match | Kingdomino) -> list[int]:
    """The score as players say it, per seat (or team), in every variant: what every answer of the
    services carries as `scores`, so an app draws a score table with no per-variant code.

    The matching games: `ledger.scores` (in Kozel and Osel the written points, which it mirrors;
    the remembered points and the eggs pot stay in the ledger beside it). Kingdomino: each
    player's score so far, summed over a dynasty's games.
    """
    if isinstance(game, Kingdomino):
        return game.totals()["scores"]
    return game.ledger.scores.copy()
