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
from typing import Any, Final

from .events import Event
from .game import Game, Viewer
from .kingdomino_board import DIRECTIONS
from .kingdomino_notation import KingdominoMove
from .layout import Layout
from .notation import ARM_NAMES, CENTER, DRAW, LEAD, PASS, E, Move, N, S, W, format_placement
from .tiles import HIGH, IS_DOUBLE, LOW, NAMES, OTHER

__all__ = ["Viewer", "kingdomino_legal_view", "kingdomino_public_view", "legal_view", "public_view",
           "redact_events", "redact_kingdomino_events", "scores_of", "shown_hands", "table_view", "view_for"]


def view_for(game: Game, viewer: Viewer) -> dict[str, Any]:
    """`viewer`'s view of any game: a seat's own (`view`), or the public one for None."""
    return game.view_for(viewer)


def public_view(match: Game) -> dict[str, Any]:
    """A matching game as someone who holds no seat sees it: no hand, no legal actions, `seat` null."""
    view = match.view(0)
    view.update(seat=None, hand=[], legal=[], legal_moves=[])
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
    view.update(player=None, legal=[], legal_moves=[])
    return view


def redact_kingdomino_events(events: Iterable[Event]) -> list[Event]:
    """Kingdomino events as a player sees them: the seed (which fixes the pile's order) hidden."""
    return [{**e, "seed": None} if e.get("type") == "game_started" else e for e in events]


# ---------------------------------------------------------------- what a client draws, structured


def table_view(layout: Layout | None) -> dict[str, Any]:
    """A matching round's table as the tiles lie (a view's ``table``), so that no client re-reads the
    notation of ``layout`` to draw it: ``lead`` the first tile ``[W, E]`` (the number facing W
    first; null before the lead), and ``arms``, by name, every arm that holds a tile or is open
    (W and E from the lead on), each with

    - ``tiles``: its tiles outward from the lead, each ``[near, far]`` (``near`` touches the tile
      before it, ``far`` is the end it leaves; a double is ``[v, v]``, laid crosswise);
    - ``order``: each tile's index in ``layout`` (the order they were played; the lead is 0);
    - ``closed``: its last tile, a double, closed it (O);
    - ``from``: where a spinner's side grows from, ``{"arm", "index"}`` of that double (``arm``
      null for the lead), null for W and E. The k-th spinner's sides (N/S, then Nk/Sk) grow from
      the k-th double played.
    """
    if layout is None or not layout.placements:
        return {"lead": None, "arms": {}}
    placements = layout.placements
    tile, _, flipped = placements[0]
    west, east = (HIGH[tile], LOW[tile]) if flipped else (LOW[tile], HIGH[tile])
    ends = {W: west, E: east}
    arms: dict[int, dict[str, Any]] = {W: _arm(None), E: _arm(None)}
    doubles: list[tuple[int, int, int]] = [(CENTER, 0, west)] if IS_DOUBLE[tile] else []  # the k-th double: where, its number
    for i in range(1, len(placements)):
        tile, arm, closes = placements[i]
        if arm not in ends:   # a spinner's side opens: N/S from the first double, Nk/Sk from the k-th
            base, ends[arm] = _spinner_of(arm, doubles, west)
            arms[arm] = _arm(base)
        near = ends[arm]
        far = OTHER[tile][near]
        line = arms[arm]
        line["tiles"].append([near, far])
        line["order"].append(i)
        line["closed"] = closes
        ends[arm] = far
        if near == far:
            doubles.append((arm, len(line["tiles"]) - 1, far))
    for arm in layout.arms:   # an open side that holds no tile yet
        if arm not in arms:
            arms[arm] = _arm(_spinner_of(arm, doubles, west)[0])
    return {"lead": [west, east], "arms": {ARM_NAMES[a]: arms[a] for a in sorted(arms)}}


def _arm(base: dict[str, Any] | None) -> dict[str, Any]:
    return {"tiles": [], "order": [], "closed": False, "from": base}


def _spinner_of(arm: int, doubles: list[tuple[int, int, int]], lead: int) -> tuple[dict[str, Any], int]:
    """``from`` of a spinner's side, the k-th double played (the lead when there is none yet), and the
    number it shows that side."""
    k = 1 if arm in (N, S) else (arm - 4) // 2 + 2
    host, index, value = doubles[k - 1] if k - 1 < len(doubles) else (CENTER, 0, lead)
    return {"arm": None if host == CENTER else ARM_NAMES[host], "index": index}, value


_KIND_NAMES: Final = {LEAD: "lead", DRAW: "draw", PASS: "pass"}


def legal_view(actions: list[str]) -> list[dict[str, Any]]:
    """A view's ``legal_moves``: each of ``legal`` (same order) as a structured move, so that a client
    shows and sorts them without reading the notation: ``kind`` (lead, play, draw, pass) and
    ``placements``, each ``{"tile", "arm", "closes"}`` (``tile`` as a hand names it, ``arm`` null for a
    lead, ``closes``: the double closes its arm)."""
    out = []
    for kind, placements in map(Move.parse, actions):
        out.append({"kind": _KIND_NAMES.get(kind, "play"), "placements": [
            {"tile": format_placement(p) if p[1] == CENTER else NAMES[p[0]],
             "arm": None if p[1] == CENTER else ARM_NAMES[p[1]],
             "closes": p[2] and p[1] != CENTER} for p in placements]})
    return out


def kingdomino_legal_view(actions: list[str]) -> list[dict[str, Any]]:
    """A Kingdomino view's ``legal_moves``: each of ``legal`` (same order) as ``{"verb", "tile"}``, a
    placement with its first ``square`` ``[x, y]`` and the ``direction`` of its second (as the
    ``tile_placed`` event says them)."""
    out: list[dict[str, Any]] = []
    for text in actions:
        verb, tile, x, y, d = KingdominoMove.parse(text)
        out.append({"verb": verb, "tile": tile, "square": [x, y], "direction": DIRECTIONS[d]}
                   if verb == "place" else {"verb": verb, "tile": tile})
    return out


def scores_of(game: Game) -> list[int]:
    """The score as players say it, per seat (or team), in every variant (`Game.match_scores`): what
    every answer of the services carries as `scores`, so an app draws a score table with no
    per-variant code."""
    return game.match_scores()
