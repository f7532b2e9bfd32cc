"""What a viewer may see of a game: a seat's view, the public view, events as seen (RULES.md C, KD).

A matching game hides the hands and the boneyard's order. A seat sees its own
hand and everything on the table (`Match.view`); the public view (a host, a
spectator) is any seat's view without that seat's hand and legal actions; and in
the events of a call, a tile drawn by another seat is hidden; a spectator's
stream shows the hands once a round is over. Kingdomino hides only the pile's
order and the seed that fixes it. The engine shows sealed-mode callers nothing
else, so this module is the whole of that policy; each game kind binds its part
of it to the `Game` protocol (`Game.view_for`, `Game.redact`, `Game.spectated`),
through which the engine reads it.

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
from .game import Game, Viewer

__all__ = ["Viewer", "kingdomino_public_view", "public_view", "redact_events",
           "redact_kingdomino_events", "scores_of", "shown_hands", "view_for"]


def view_for(game: Game, viewer: Viewer) -> dict[str, Any]:
    """`viewer`'s view of any game: a seat's own (`view`), or the public one for None."""
    return game.view_for(viewer)


def public_view(match: Game) -> dict[str, Any]:
    """A matching game as someone who holds no seat sees it: no hand, no legal actions, `seat` null."""
    view = match.view(0)
    view.update(seat=None, hand=[], legal=[])
    return view


def redact_events(events: Iterable[Event], viewer: Viewer) -> list[Event]:
    """A matching game's events as `viewer` may see them: a tile drawn by another seat becomes null."""
    out = []
    for event in events:
        if event.get("type") == "drew" and event.get("seat") != viewer:
            event = {**event, "tile": None}
        out.append(event)
    return out


def shown_hands(seen: list[Event], hands: list[list[str]]) -> list[Event]:
    """A spectator's events of a call that ended a matching round: the hands left (`hands`, by seat)
    shown at once after the ``round_ended`` event (unchanged when the call ended no round)."""
    at = next((i for i, e in enumerate(seen) if e["type"] == "round_ended"), None)
    if at is not None:
        seen.insert(at + 1, {"type": "revealed", "hands": hands})
    return seen


def kingdomino_public_view(game: Game) -> dict[str, Any]:
    """A Kingdomino game as someone who holds no seat sees it: a player's view (nothing in
    Kingdomino is hidden from one player but shown to another, except the legal actions of the
    player to move) with `player` null and no legal actions."""
    view = game.view(0)
    view.update(player=None, legal=[])
    return view


def redact_kingdomino_events(events: Iterable[Event]) -> list[Event]:
    """Kingdomino events as a player sees them: the seed (which fixes the pile's order) hidden."""
    return [{**e, "seed": None} if e.get("type") == "game_started" else e for e in events]


def scores_of(game: Game) -> list[int]:
    """The score as players say it, per seat (or team), in every variant (`Game.match_scores`): what
    every answer of the services carries as `scores`, so an app draws a score table with no
    per-variant code."""
    return game.match_scores()
