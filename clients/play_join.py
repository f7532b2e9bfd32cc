"""`domino play --join LINK [--name NAME]`: one seat of an online table, played in the terminal.

LINK is an invite link (`http://host:port/play?table=<id>&invite=<code>`, docs/tables.md); the gateway is
the link's. The game takes the seat the invite is for, waits until every open seat is taken, then follows
the seat's stream of events (`Seat.events()`, resumed by itself after a drop): the other seats' moves are
written as they arrive, the table is drawn as `domino play` draws it and a move is asked for on this seat's
turn. When a round ends it shows the hands and deals the next round once the person presses Enter (if
another seat dealt it first, the gateway's 409 says so and the game goes on); the match's end is shown and
the game exits. `q` (or Ctrl-C) leaves the seat, so that the table's host can invite someone else to it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clients.play import Playable, Quit, TerminalGame, _viewer
from clients.sdk import ProblemError, RestClient, Seat, Table, TransportError
from clients.sdk.rest import _Held
from clients.sdk.tables import parse_invite_link

Json = dict[str, Any]


class SeatScreen(_Held):
    """The seat's latest view and scores as the drawing of `TerminalGame` reads them; moves go through the
    seat's credential. `seq` is the match's version the screen shows."""

    def __init__(self, seat: Seat) -> None:
        self.client = seat.client
        self.seat = seat
        self.answer = {}
        self.view = {}
        self.events = []
        self.scores = []
        self.seq = -1

    def take(self, data: Json) -> list[Json]:
        """An answer or a stream event's data: its view, scores and events become the screen's."""
        events = self._take(data)
        if isinstance(data.get("seq"), int):
            self.seq = data["seq"]
        return events

    def legal_actions(self, seat: int | None = None) -> list[str]:
        return self.seat.legal().actions

    def apply(self, action: str, seat: int | None = None) -> list[Json]:
        return self.take(self.seat.apply(action))


def seat_names(table: Table, mine: int) -> list[str]:
    """How the screen names each seat: "You", then "Seat 1 (Boris)", "Seat 2 (greedy bot)" ..."""
    names = []
    for seat in table.seats:
        if seat.seat == mine:
            names.append("You")
        else:
            label = seat.name or (f"{seat.level} bot" if seat.kind == "bot" else "free")
            names.append(f"Seat {seat.seat} ({label})")
    return names


class JoinedGame(TerminalGame):
    """A seat of an online table taken by an invite link, played in the terminal."""

    def __init__(self, link: str, name: str, *, read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print, width: int | None = None, wait: float = 3600.0) -> None:
        url, self.table_id, self.invite = parse_invite_link(link)
        api = RestClient(url)
        self.table = api.table(self.table_id)
        super().__init__(api, self.table.variant, self.table.players, [], self.table.options or None, read=read,
                         write=write, width=width)
        self.person = name
        self.wait = wait
        self.seat: Seat | None = None
        self.waiting_for: int | None = None
        self.round_shown: int | None = None

    def run(self) -> int:
        try:
            return self.play()
        except (Quit, KeyboardInterrupt):
            self.leave()
            return 0
        except TimeoutError as err:       # nobody came to the other seats
            self.say(f"{err}.")
            self.leave()
            return 1

    def leave(self) -> None:
        if self.seat is None:
            self.write("Bye.")
            return
        try:
            self.seat.leave()
            self.write(f"Bye. You left seat {self.seat.seat}; the table's host can invite someone else to it.")
        except (ProblemError, TransportError):
            self.write("Bye.")

    def play(self) -> int:
        seat = self.seat = self.api.join_table(self.table_id, invite=self.invite, name=self.person)
        assert seat.seat is not None
        self.humans = [seat.seat]
        self.names = seat_names(self.api.table(self.table_id), seat.seat)
        title = f' "{self.table.name}"' if self.table.name else ""
        self.say(f"You took seat {seat.seat} at table{title}: {self.variant}, {self.players} players.")
        if seat.match_id is None:
            self.say("Waiting for the other seats to be taken ...")
            seat.wait_for_match(timeout=self.wait)
        self.table = self.api.table(self.table_id)
        self.names = seat_names(self.table, seat.seat)
        self.say("At the table: " + ", ".join(self.names) + ".")
        screen = SeatScreen(seat)
        with seat.events() as stream:
            for event in stream:
                if event.event == "view":
                    screen.take(event.data)
                    to_move = screen.view.get("to_move")
                    if to_move is not None and to_move != seat.seat and not screen.round_over:
                        self.show_table(screen)   # the table as it stands (on this seat's turn: drawn by turn())
                elif event.event == "update":
                    data = event.data
                    if not isinstance(data, dict) or data.get("seq", 0) <= screen.seq:
                        continue      # already shown: the answer to this seat's own move carried it
                    self.show_events(data.get("events", []))
                    screen.take(data)
                elif event.event == "end":
                    break
                else:
                    continue
                if self.settle(seat, screen):
                    return 0
        if not screen.match_over:
            screen.take(seat.view())
        self.show_end(screen)
        return 0

    def turn(self, match: Playable, seat: int) -> None:
        """A move of this seat; when the gateway does not answer (restarting, the network down), the person is
        told and asked again once the latest state has been fetched (the move may have counted)."""
        try:
            super().turn(match, seat)
        except TransportError as err:
            self.say(f"The gateway did not answer ({err}); try again.")
            if isinstance(match, SeatScreen):
                try:
                    latest = match.seat.view()
                except (ProblemError, TransportError):
                    return
                if latest.get("seq") != match.seq:
                    match.take(latest)

    def settle(self, seat: Seat, screen: SeatScreen) -> bool:
        """Act on the screen's state: this seat's moves while it is its turn, the round's end (deal the next),
        the match's end (True: shown, the game is over). False: the other seats are to act."""
        mine = seat.seat
        while True:
            if screen.match_over:
                self.show_end(screen)
                return True
            if screen.round_over:
                number = screen.view.get("round_number")
                if self.round_shown == number:
                    return False          # dealt by another seat: its round_dealt comes on the stream
                self.round_shown = number
                self.show_round_end(screen)
                self.ask("Press Enter to deal the next round (q to quit): ", allow_empty=True)
                try:
                    self.show_events(screen.take(seat.next_round()))
                except ProblemError as err:
                    if err.status != 409:
                        raise
                    return False          # another seat dealt it first: fine
                except TransportError as err:
                    self.say(f"The gateway did not answer ({err}); try again.")
                    self.round_shown = None
                continue
            to_move = screen.view.get("to_move")
            if to_move is None:
                return False
            if to_move == mine and _viewer(screen.view) == mine:
                assert mine is not None
                self.turn(screen, mine)
                continue
            kind = self.table.seats[to_move].kind if to_move < len(self.table.seats) else "open"
            if kind == "open" and self.waiting_for != screen.seq:
                self.waiting_for = screen.seq      # once for each state that waits for another person
                self.say(f"Waiting for {self.names[to_move]} to move ...")
            return False
