"""`domino play --inbox`: your live games (docs/tables.md, "The inbox"), and back to one of them.

The games are the gateway's inbox of the seats this terminal keeps (`clients.sdk.seat_book`: every seat taken
with `--join`, by its credential) and, when the host app's signed-in user left their player assertion in
`DOMINO_PLAYER`, of that player (their seats taken on any device). Each game is one line, your turn first:

    1. "Anna v Boris": kozel, 2 players; seat 0; your turn; 2 new moves; 0:40 left

A number resumes that game in the terminal (`domino play --resume` of its kept seat); Enter leaves. A game
joined on another device (found by the assertion, no credential kept here) is said to be played there. The
kept seats that hold no seat any more (the table expired, the seat was given up) are forgotten.

The seats are asked for at their own gateways (each kept seat's addresses), or at `--url` when given. With
`DOMINO_PLAYER`, what the player was told since the last `--inbox` (`GET /v1/inbox/notifications`: the deal,
your turn, the end ...) is said first, the newest few; the feed's cursor is kept beside the seats.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from clients.i18n import seat_number, t
from clients.sdk import InboxGame, ProblemError, RestClient, TransportError
from clients.sdk.seat_book import SavedSeat, SeatBook

__all__ = ["InboxList", "clock_text"]

#: The most credentials one inbox call takes (the gateway's bound).
CREDENTIALS_PER_CALL = 50

#: The most notifications shown (the newest).
TOLD_SHOWN = 5


def clock_text(seconds: float) -> str:
    """0:40, 12:05, or 2d 3:00:00 for a correspondence clock."""
    whole = max(0, int(seconds))
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours}:{minutes:02d}:{secs:02d}" if hours or days else f"{minutes}:{secs:02d}"
    return f"{days}d {clock}" if days else clock


@dataclass(frozen=True, slots=True)
class Listed:
    """A game of the list, with the seat kept for it here (None: joined on another device)."""

    game: InboxGame
    saved: SavedSeat | None


class InboxList:
    """The terminal's inbox: asked at the kept seats' gateways (or `urls`), shown, one game picked."""

    def __init__(self, urls: list[str], *, book: SeatBook | None = None, player: str | None = None,
                 read: Callable[[str], str] = input, write: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.time) -> None:
        self.urls = urls
        self.book = book or SeatBook()
        self.player = player if player is not None else (os.environ.get("DOMINO_PLAYER") or None)
        self.read, self.write, self.clock = read, write, clock

    def games(self) -> list[Listed]:
        """Every live game of the kept seats and the player, each once, your turn first, then the latest active."""
        kept = self.book.all()
        groups: dict[tuple[str, ...], list[SavedSeat]] = {}
        if self.urls:
            groups[tuple(self.urls)] = kept
        else:
            for seat in kept:
                groups.setdefault(tuple(seat.gateways), []).append(seat)
            if self.player and not groups:
                groups[("http://127.0.0.1:8080",)] = []
        found: dict[tuple[str, int], Listed] = {}
        gone: list[SavedSeat] = []
        player = self.player
        for urls, seats in groups.items():
            api = RestClient(list(urls))
            chunks = [seats[i:i + CREDENTIALS_PER_CALL] for i in range(0, len(seats), CREDENTIALS_PER_CALL)] or [[]]
            for chunk in chunks:
                try:
                    inbox = api.inbox(player, [s.credential for s in chunk])
                except (ProblemError, TransportError) as err:
                    self.write(t("inbox.failed", ", ".join(urls), err))
                    continue
                by_credential = {s.credential: s for s in chunk}
                gone += [by_credential[c] for c in inbox.gone]
                for game in inbox.games:
                    key = (game.table_id, game.seat)
                    saved = by_credential.get(game.credential or "") or self._kept(kept, game)
                    if key not in found or found[key].saved is None:
                        found[key] = Listed(game, saved)
                if player and inbox.player_id:
                    self.told(api, player, inbox.player_id)
                player = None if inbox.player_id else player  # the player's games come once, from one gateway
        for seat in gone:
            self.book.forget(seat.table_id)
        if gone:
            self.write(t("inbox.forgot", len(gone)))
        return sorted(found.values(), key=lambda g: (not g.game.your_turn, -g.game.active, g.game.table_id))

    def told(self, api: RestClient, player: str, player_id: str) -> None:
        """What the player was told since this terminal last asked (the feed's cursor kept beside the seats):
        the newest few, each with its table."""
        path = self.book.path.parent / "notifications.json"
        try:
            cursors = json.loads(path.read_text())
        except (OSError, ValueError):
            cursors = {}
        try:
            page = api.notifications(player, cursors.get(player_id) if isinstance(cursors, dict) else None)
        except (ProblemError, TransportError):
            return  # a gateway without the feed: the games are listed all the same
        if page.items:
            self.write(t("inbox.told", len(page.items)))
            for item in page.items[-TOLD_SHOWN:]:
                self.write(t("inbox.told-item", item.type, item.table_id[:8]))
        if page.next:
            cursors = {**(cursors if isinstance(cursors, dict) else {}), player_id: page.next}
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            path.write_text(json.dumps(cursors))

    @staticmethod
    def _kept(kept: list[SavedSeat], game: InboxGame) -> SavedSeat | None:
        return next((s for s in kept if s.table_id == game.table_id and s.seat == game.seat), None)

    def line(self, number: int, listed: Listed) -> str:
        """One game: the table, the seat, whose turn, the moves unseen, the seat's time left."""
        game = listed.game
        name = f'"{game.name}"' if game.name else game.table_id[:8]
        parts = [t("inbox.line", number, name, game.variant, game.players, seat_number(game.seat))]
        if game.status == "waiting" and game.match_id is None:
            parts.append(t("inbox.waiting"))
        elif game.your_turn:
            parts.append(t("inbox.your-turn"))
        elif game.turn is not None:
            who = next((s.name for s in game.seats if s.seat == game.turn and s.name), None)
            parts.append(t("inbox.turn-of", who or t("inbox.seat", seat_number(game.turn))))
        if game.unread:
            parts.append(t("inbox.unread", game.unread, game.unread_more))
        left = self.time_left(game)
        if left is not None:
            parts.append(t("inbox.left", clock_text(left)))
        if listed.saved is None:
            parts.append(t("inbox.elsewhere"))
        return "; ".join(parts)

    def time_left(self, game: InboxGame) -> float | None:
        """The seat's time: counted down to the deadline when its clock runs, else as of the latest change."""
        if not game.clocks:
            return None
        if game.clocks.get("running") == game.seat and game.clocks.get("deadline"):
            return max(0.0, float(game.clocks["deadline"]) - self.clock())
        return game.time_left()

    def pick(self, listed: list[Listed]) -> SavedSeat | None:
        """Show the list and ask for a game: the kept seat to resume (None: leave)."""
        if not listed:
            self.write(t("inbox.none"))
            return None
        self.write(t("inbox.title", len(listed)))
        for i, entry in enumerate(listed, 1):
            self.write(self.line(i, entry))
        while True:
            try:
                answer = self.read(t("inbox.pick")).strip()
            except EOFError:
                return None
            if not answer:
                return None
            if not answer.isdigit() or not 1 <= int(answer) <= len(listed):
                self.write(t("inbox.no-such", answer))
                continue
            chosen = listed[int(answer) - 1]
            if chosen.saved is None:
                self.write(t("inbox.not-here"))
                continue
            return chosen.saved
