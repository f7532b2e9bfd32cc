"""What every game the engine plays offers, whichever kind it is: the `Game` protocol (issue 26).

Two kinds of game share it: `Match` (the matching games: Kozel, Osel, Bykovo, the
counting games, block) and `Kingdomino`. The engine's calls, its faces, the
records and the bots read a game through this shape only, so each of them has
one path; which class plays a variant is `games.game_class` (the one registry,
as python-chess finds a `Board` subclass with `find_variant`). What only one
kind has stays on its class: a matching game's rounds (`Match.start_round`,
`Match.settle`); Kingdomino's dynasty.

Two words need care, because the kinds say them differently:

- `turn` is the seat to act now, or None when nobody is: between a matching
  game's rounds (or before the first one is dealt), and once a match or a game is
  over. `to_move` is the seat a state names as to move, as the services report it:
  a `Match` keeps its last round's (0 before any round), a `Kingdomino` says None
  once the game is over.
- `finished` is the whole match over (Kingdomino: the game, a dynasty's last
  game): nothing can be played any more. A matching game's round over while the
  match goes on is `turn is None and not finished`.

Seats are numbered from 0 in both kinds; Kingdomino calls them players
(`seat_name`). A viewer is a seat, or None for the public (a host, a spectator).

The Bykovo micro-tournament (`Tournament`) is not a `Game` and should not be made
one: nobody moves in it and it hides nothing. It is a score sheet over Bykovo
matches played elsewhere: it names the four participants of the next match
(`next_players`), takes that match's result (`record_round(points, winner)`) and
ranks the standings. It has no seat to move, no legal actions, no views and no
events to redact. It shares only the state's forms (`to_dict`/`from_dict`), and
it keeps its own three calls.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from .events import Event

Viewer = int | None  # a seat, or None for the public (host, spectator)


class Game(Protocol):
    """A game as the engine plays it: who is to move, what they may do, what a viewer sees.

    Seat and viewer arguments are positional: the kinds name them differently (a
    matching game's ``seat``, Kingdomino's ``player``). Arguments typed `object`
    are caller input, refused with `MalformedError` (`IllegalActionError` for an
    action the rules forbid now), and a refused call changes nothing.
    """

    #: The match's seed (None: dealt explicitly), which the bots' choices derive from.
    seed: int | None
    #: Seats the computer plays, and at what level (the engine plays them).
    bots: dict[int, str]

    @property
    def log(self) -> list[str]:
        """The match's log (`history`), from which records are written; empty when not known. A matching
        game keeps its current round's entries only (issue 27)."""

    @property
    def shed(self) -> list[str]:
        """The log entries that left the state since this object was made (a call's ``record_lines``)."""

    @property
    def log_count(self) -> int:
        """How many entries left the log as rounds ended (0 for a game whose log stays whole)."""

    @property
    def log_digest(self) -> bytes:
        """The digest chaining the entries that left the log (`history.chain`), b"" when none has."""

    @property
    def variant(self) -> str:
        """The preset's name (``kozel``, ``kingdomino`` ...)."""

    @property
    def players(self) -> int:
        """How many seats."""

    @property
    def options(self) -> dict[str, Any]:
        """The options that differ from the preset's defaults."""

    @property
    def to_move(self) -> int | None:
        """The seat the state names as to move (see the module's note; `turn` is who may act)."""

    @property
    def turn(self) -> int | None:
        """The seat to act now, or None: between rounds, before the first, once over."""

    @property
    def finished(self) -> bool:
        """The match (Kingdomino: the game, a dynasty's last) is over: nothing more can be played."""

    @property
    def unit(self) -> str:
        """What is played out between deals, as refusals name it: ``round`` or ``game``."""

    @property
    def seat_name(self) -> str:
        """What the game calls a seat in its messages: ``seat`` or ``player``."""

    def legal_actions(self) -> list[str]:
        """The legal actions of the seat to move, in notation (empty when nothing can be played)."""

    def apply(self, action: object, seat: object = None, /) -> list[Event]:
        """Play one action of the seat to move (`seat`, when given, must be that seat); its events."""

    def apply_move(self, move: object, text: str | None = None, seat: object = None, /) -> list[Event]:
        """`apply` for a move already parsed (the kind's typed move: `notation.Move`,
        `KingdominoMove`); `text` is the action as written, for messages. Another kind's move is
        refused (`IllegalActionError`)."""

    def timeout(self, seat: object, /) -> list[Event]:
        """`seat` timed out: the match ends by the variant's rule; its events."""

    def end(self, how: object, seat: object, /) -> list[Event]:
        """An exit of the match (`exits`, issue 37): `seat` resigns (``"resign"``), was gone (``"gone"``:
        the others claimed the win) or aborts (``"abort"``: no result). Resigning and being gone are
        scored as the seat's timeout where the variant has a timeout rule, else its side is last. Its
        events: the exit's (``resigned``, ``gone``, ``aborted``), then the match's end."""

    def view(self, seat: object, /) -> dict[str, Any]:
        """What `seat` may see (its own legal actions included when it is to move)."""

    def view_for(self, viewer: Viewer, /) -> dict[str, Any]:
        """`viewer`'s view: a seat's own, or the public one for None (`views`)."""

    def redact(self, events: Iterable[Event], viewer: Viewer, /) -> list[Event]:
        """A call's events as `viewer` may see them (`views`)."""

    def spectated(self, events: list[Event], /) -> list[Event]:
        """A call's events as a spectator's stream shows them: the public's, and whatever the
        rules show everyone once it is over (a matching round's hands)."""

    def seen_by(self, events: list[Event], viewer: Viewer, /) -> list[Event]:
        """A call's events as `viewer`'s stream shows them (an online table's seat, issue 24): what
        `redact` leaves it, and whatever the rules show everyone once it is over (`spectated` is
        this for the public)."""

    def match_scores(self) -> list[int]:
        """The score as players say it, per seat (or team): what every answer carries as ``scores``."""

    def result(self) -> dict[str, Any] | None:
        """The match's result as a record keeps it once it is over (None before)."""

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON (hidden tiles and seed included: see `view_for` for viewers)."""
