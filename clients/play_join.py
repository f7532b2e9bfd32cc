"""`domino play --join LINK [--name NAME]`: one seat of an online table, played in the terminal.

LINK is an invite link (`http://host:port/play?table=<id>&invite=<code>`, docs/tables.md); the gateway is
the link's. The game takes the seat the invite is for, waits until every open seat is taken, then follows
the seat's stream of events (`Seat.events()`, resumed by itself after a drop): the other seats' moves are
written as they arrive, the table is drawn as `domino play` draws it and a move is asked for on this seat's
turn. When a round ends it shows the hands and deals the next round once the person presses Enter (if
another seat dealt it first, the gateway's 409 says so and the game goes on); the match's end is shown and
the game exits. `q` (or Ctrl-C) leaves the seat, so that the table's host can invite someone else to it.

At a table with a turn clock every seat's time left is written after each change the stream brings, above
the table when it is this seat's turn, and in the move's prompt (`[0:08 left]`); the service applies a
clock that runs out (docs/tables.md, Clocks). Each person's rating (the skill rating of the variant's
family, `GET /v1/players/{id}`) is written when the match starts, and each player's rating before and after
once the archive holds the finished match.

The terminal keeps playing through its gateway's troubles. More gateway addresses of the same store (`--url`,
repeated) are tried in turn when one cannot be reached: a move whose answer was lost is looked up (it counted,
or it is sent again), the stream resumes by `Last-Event-ID` on whichever gateway answers, and when none does
the terminal says so and waits. The seat's credential is shown once taken and kept in the user's state
directory (`clients.sdk.seat_book`, 0600): `domino play --resume` comes back to the seat from another run,
even when the terminal was closed or gave up waiting.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from clients.i18n import seat_number, t
from clients.play import RULE, Playable, Quit, TerminalGame, _viewer
from clients.sdk import (
    AnswerTimeout,
    ConnectionLost,
    ProblemError,
    RestClient,
    Retrying,
    Seat,
    Table,
    TransportError,
    Unreachable,
)
from clients.sdk.errors import InvalidCredential, InvalidInvite, NotSeated
from clients.sdk.rest import _Held
from clients.sdk.seat_book import SavedSeat, SeatBook
from clients.table import (
    clock_setting_text,
    clock_text,
    clocks_line,
    points_text,
    rating_change_lines,
    rating_of,
    seconds_left,
)

Json = dict[str, Any]
#: How long the terminal waits for a gateway, every address failing, before it gives up (keeping the seat):
#: the retries of a call and the reconnections of the stream, each backing off to `MAX_BACKOFF` seconds.
PATIENCE_RETRIES = 60
MAX_BACKOFF = 5.0
#: How many times a move (or a deal) that did not get through is sent again before the failure is given up on.
RESENDS = 5


class MatchEnded(Exception):
    """The match ended while this seat was to move (a turn clock ran out): no move to make any more."""


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
        self.clocks: Json | None = None
        self.clocks_at = 0.0
        #: Says something to the person (`JoinedGame` sets it).
        self.note: Callable[[str], None] = lambda text: None

    def take(self, data: Json) -> list[Json]:
        """An answer or a stream event's data: its view, scores, events and clocks become the screen's."""
        events = self._take(data)
        if isinstance(data.get("seq"), int):
            self.seq = data["seq"]
        if isinstance(data.get("clocks"), dict):
            self.clocks, self.clocks_at = data["clocks"], time.monotonic()
        return events

    def clocks_line(self, names: list[str]) -> str | None:
        """Every seat's time left now (None: the table has no clock)."""
        if not self.clocks:
            return None
        return clocks_line(self.clocks, names, time.monotonic() - self.clocks_at, time.time(), self.match_over)

    def left(self, seat: int) -> float | None:
        """`seat`'s time left now (None: no clock)."""
        if not self.clocks:
            return None
        return seconds_left(self.clocks, seat, time.monotonic() - self.clocks_at, time.time())

    def legal_actions(self, seat: int | None = None) -> list[str]:
        return self.seat.legal().actions

    def apply(self, action: str, seat: int | None = None) -> list[Json]:
        """This seat's move; refused because the match ended meanwhile (its clock ran out while the person
        thought), `MatchEnded` with the latest view taken. An answer lost on the way (see `send`): no events,
        and the screen unchanged until the stream brings the move."""
        try:
            answer = self.send(lambda: self.seat.apply(action), "move")
        except ProblemError as err:
            if err.status != 409:
                raise
            latest = self.seat.view()
            if not latest.get("over"):
                raise
            self.take(latest)
            raise MatchEnded() from err
        return [] if answer is None else self.take(answer)

    def send(self, call: Callable[[], Json], what: str) -> Json | None:
        """`call`'s answer; when the connection broke after it was sent (a gateway killed mid-move), the seat's
        latest is asked (from any gateway): changed since the screen's, the call counted and None is answered
        (the stream brings what changed, with its events); unchanged, it is sent again."""
        for _ in range(RESENDS):
            try:
                return call()
            except ConnectionLost as err:
                latest = self.seat.view()
                if latest.get("seq") != self.seq:
                    self.note(t(f"lost.{what}", reason(err)))
                    return None
                self.note(t(f"resent.{what}", reason(err)))
        return call()                       # a connection that keeps breaking: its error ends the game


def seat_names(table: Table, mine: int) -> list[str]:
    """How the screen names each seat: "You", then "Seat 1 (Boris)", "Seat 2 (greedy bot)" ..."""
    names = []
    for seat in table.seats:
        if seat.seat == mine:
            names.append(t("you"))
        else:
            # a bot is named by its level in the screen's language (the gateway names it "greedy bot")
            label = t("seat.bot", seat.level) if seat.kind == "bot" else seat.name or t("seat.free")
            names.append(f"{t('seat', seat_number(seat.seat))} ({label})")
    return names


def reason(err: Exception) -> str:
    """A failure as the person reads it: "cannot be reached", "the connection broke", "503 Engine unavailable"."""
    if isinstance(err, Unreachable):
        return t("why.unreachable")
    if isinstance(err, AnswerTimeout):
        return t("why.timeout")
    if isinstance(err, ConnectionLost):
        return t("why.broke")
    if isinstance(err, ProblemError):
        return f"{err.status} {err.title or err.detail}"
    return str(err)


class JoinedGame(TerminalGame):
    """A seat of an online table played in the terminal: taken by an invite code, or come back to by its
    `credential` (`domino play --resume`). `urls`: the gateway addresses, in the order they are tried."""

    def __init__(self, urls: list[str], table_id: str, name: str, *, invite: str | None = None,
                 credential: str | None = None, seat: int | None = None, book: SeatBook | None = None,
                 read: Callable[[str], str] = input, write: Callable[[str], None] = print, width: int | None = None,
                 wait: float = 3600.0) -> None:
        if (invite is None) == (credential is None):
            raise ValueError("an invite code or a seat's credential: one of them")
        self.table_id, self.invite, self.credential, self.seat_number = table_id, invite, credential, seat
        self.book = book or SeatBook()
        api = RestClient(urls, retries=PATIENCE_RETRIES, max_backoff=MAX_BACKOFF)
        self.table = api.table(self.table_id)
        super().__init__(api, self.table.variant, self.table.players, [], self.table.options or None, read=read,
                         write=write, width=width)
        api.gateways.on_retry = self.retrying
        self.person = name
        self.wait = wait
        self.seat: Seat | None = None
        self.waiting_for: int | None = None
        self.round_shown: int | None = None
        self.screen: SeatScreen | None = None
        self.my_turn = False

    @classmethod
    def resuming(cls, saved: SavedSeat, more: list[str], **settings: Any) -> JoinedGame:
        """Back to a saved seat, through its gateways and then the addresses in `more`."""
        return cls([*saved.gateways, *more], saved.table_id, saved.name or "Terminal", credential=saved.credential,
                   seat=saved.seat, **settings)

    def retrying(self, retrying: Retrying) -> None:
        """What the client does after a failure, said to the person: another address, or a wait."""
        if retrying.wait >= 1:            # a shorter wait (a stream connecting again) is not worth a line
            self.say(t("retry.wait", retrying.failed, reason(retrying.error), retrying.address, f"{retrying.wait:.0f}"))
        elif retrying.address != retrying.failed:
            self.say(t("retry.other", retrying.failed, reason(retrying.error), retrying.address))

    def run(self) -> int:
        try:
            return self.play()
        except (Quit, KeyboardInterrupt):
            self.leave()
            return 0
        except TimeoutError as err:       # nobody came to the other seats
            self.say(t("no-match-dealt", err))
            self.leave()
            return 1
        except (InvalidCredential, NotSeated):
            self.book.forget(self.table_id)
            self.say(t("seat.given-up"))
            return 1
        except TransportError as err:     # every gateway failed for the whole patience: the seat is kept
            self.say(t("no-gateway.all", ", ".join(self.api.urls), err))
            if self.seat is not None:
                self.say(t("seat.kept", self.table_id))
            return 1

    def leave(self) -> None:
        if self.seat is None:
            self.write(t("bye"))
            return
        try:
            self.seat.leave()
            self.book.forget(self.table_id)
            self.write(t("left", seat_number(self.seat.seat or 0)))
        except (ProblemError, TransportError):
            self.write(t("bye"))

    def take_seat(self) -> Seat:
        """The seat: taken by the invite (its credential shown and saved), or the saved one come back to."""
        title = f' "{self.table.name}"' if self.table.name else ""
        if self.credential is not None:
            seat = Seat(self.api, self.table_id, self.seat_number, self.credential, None, self.table.match_id)
            if seat.match_id is not None:     # the credential still works (else InvalidCredential: given up)
                seat.seat = seat.view().get("seat", seat.seat)
            self.say(t("back", seat_number(seat.seat or 0), title, t("variant", self.variant), t("players", self.players)))
            return seat
        assert self.invite is not None
        try:
            seat = self.api.join_table(self.table_id, invite=self.invite, name=self.person)
        except InvalidInvite:
            saved = self.book.find(self.table_id)
            if saved is not None:
                self.say(t("invite.spent", seat_number(saved.seat), self.table_id))
            raise
        kept = self.book.save(SavedSeat(self.table_id, int(seat.seat or 0), seat.credential, self.api.urls,
                                        self.person, self.variant))
        self.say(t("took", seat_number(seat.seat or 0), title, t("variant", self.variant), t("players", self.players)))
        self.say(t("credential", seat.credential, self.book.path, kept.table_id))
        return seat

    def play(self) -> int:
        seat = self.seat = self.take_seat()
        assert seat.seat is not None
        self.humans = [seat.seat]
        self.names = seat_names(self.api.table(self.table_id), seat.seat)
        if seat.match_id is None:
            self.say(t("waiting.seats"))
            seat.wait_for_match(timeout=self.wait)
        self.table = self.api.table(self.table_id)
        self.names = seat_names(self.table, seat.seat)
        self.say(t("at-table", ", ".join(self.names)))
        self.show_ratings()
        if self.table.raw.get("clock"):
            self.say(t("clock", clock_setting_text(self.table.raw["clock"])))
        screen = self.screen = SeatScreen(seat)
        screen.note = self.say
        with seat.events(reconnects=PATIENCE_RETRIES, max_backoff=MAX_BACKOFF) as stream:
            for event in stream:
                if event.event == "view":
                    screen.take(event.data)
                    to_move = screen.view.get("to_move")
                    if to_move is not None and to_move != seat.seat and not screen.round_over:
                        self.show_table(screen)   # the table as it stands (on this seat's turn: drawn by turn())
                elif event.event == "update":
                    data = event.data
                    if not isinstance(data, dict):
                        continue
                    if data.get("seq", 0) <= screen.seq:
                        # already shown: the answer to this seat's own move carried it; its clocks (the
                        # next seat's running now) come with the stream's line
                        if data.get("seq") == screen.seq and isinstance(data.get("clocks"), dict):
                            screen.clocks, screen.clocks_at = data["clocks"], time.monotonic()
                            self.show_clocks(screen)
                        continue
                    self.show_events(data.get("events", []))
                    screen.take(data)
                    self.show_clocks(screen)
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

    # ------------------------------------------------------------ clocks and ratings

    def show_clocks(self, screen: SeatScreen) -> None:
        line = screen.clocks_line(self.names)
        if line:
            self.say(line, "  ")

    def show_table(self, match: Playable) -> None:
        super().show_table(match)
        if isinstance(match, SeatScreen):
            self.show_clocks(match)

    def ask(self, prompt: str, allow_empty: bool = False) -> str:
        """On this seat's turn at a clocked table the prompt says the time left: `[0:08 left] You, your move`."""
        screen, seat = self.screen, self.seat
        if self.my_turn and screen is not None and seat is not None and seat.seat is not None:
            left = screen.left(seat.seat)
            if left is not None:
                prompt = t("clock.left", clock_text(left)) + prompt
        return super().ask(prompt, allow_empty)

    def family(self) -> str:
        """The variant's family (GET /v1/variants): the ratings are kept per family."""
        for v in self.api.request("GET", "/v1/variants").get("variants", []):
            if v.get("name") == self.variant:
                return str(v.get("family", ""))
        return ""

    def show_ratings(self) -> None:
        """`Ratings: You rating: new, Seat 1 (Boris) rating 3.4.`: each person's, from the archive."""
        try:
            family = self.family()
            shown = []
            for s in self.table.seats:
                if not s.player:
                    continue
                try:
                    player = self.api.request("GET", f"/v1/players/{quote(s.player, safe='')}")
                except ProblemError as err:
                    if err.status != 404:
                        raise
                    player = None                     # no match archived yet
                shown.append(f"{self.names[s.seat]} {rating_of(player, family)}")
        except (ProblemError, TransportError) as err:
            self.say(t("ratings.none", err))
            return
        if shown:
            self.say(t("ratings", ", ".join(shown)))

    def show_rating_change(self, tries: int = 10) -> None:
        """Each player's rating before and after the match, once the archive holds it (asked again a few
        times: the gateway archives the match as it ends, later when the archive's database is down)."""
        match_id = self.seat.match_id if self.seat is not None else None
        if match_id is None:
            return
        for attempt in range(tries):
            try:
                archived = self.api.request("GET", f"/v1/matches/{match_id}/record")
                break
            except ProblemError as err:
                if err.status not in (404, 503):
                    self.say(t("ratings.none", err))
                    return
            except TransportError as err:
                self.say(t("ratings.none", err))
                return
            time.sleep(0.5 * (attempt + 1))
        else:
            self.say(t("ratings.not-archived"))
            return
        lines = rating_change_lines(archived, self.names, str(archived.get("family", "")))
        if not archived.get("rated") or not lines:
            self.say(t("ratings.not-rated"))
            return
        self.say(t("ratings.after"))
        for line in lines:
            self.say(line, "  ")

    def show_end(self, match: Playable) -> None:
        """The match's end; one a clock ended mid-round says whose time ran out (the round has no end to
        show); then the ratings before and after."""
        if not isinstance(match, SeatScreen) or match.round_over or not match.clocks:
            super().show_end(match)
        else:
            out = [s for s, left in enumerate(match.clocks.get("remaining", [])) if left <= 0]
            who = t("time-out.seat", self.names[out[0]]) if out else t("time-out.a-clock")
            self.write(RULE)
            who = t("time-out.yours") if out and out[0] == (self.seat.seat if self.seat else None) else who
            self.say(t("time-out.over", who, points_text(match.scores, self.names)))
        self.show_rating_change()

    def turn(self, match: Playable, seat: int) -> None:
        """A move of this seat (a gateway that fails meanwhile: `SeatScreen.send`)."""
        self.my_turn = True
        try:
            super().turn(match, seat)
        except MatchEnded:
            self.say(t("too-late"))
        finally:
            self.my_turn = False

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
                self.ask(t("next-round"), allow_empty=True)
                try:
                    dealt = screen.send(seat.next_round, "deal")
                except ProblemError as err:
                    if err.status != 409:
                        raise
                    return False          # another seat dealt it first: fine
                if dealt is None:
                    return False          # dealt, its answer lost: the stream brings the round
                self.show_events(screen.take(dealt))
                continue
            to_move = screen.view.get("to_move")
            if to_move is None:
                return False
            if to_move == mine and _viewer(screen.view) == mine:
                assert mine is not None
                before = screen.seq
                self.turn(screen, mine)
                if screen.seq == before:
                    return False          # the move counted, its answer lost: the stream brings it
                continue
            kind = self.table.seats[to_move].kind if to_move < len(self.table.seats) else "open"
            if kind == "open" and self.waiting_for != screen.seq:
                self.waiting_for = screen.seq      # once for each state that waits for another person
                self.say(t("waiting.move", self.names[to_move]))
            return False
