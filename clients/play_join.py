"""`domino play --join LINK [--name NAME]`: one seat of an online table, played in the terminal.

LINK is an invite link (`http://host:port/play?table=<id>&invite=<code>`, docs/tables.md); the gateway is
the link's. The game takes the seat the invite is for, waits until every open seat is taken, then follows
the seat's stream of events (`Seat.events()`, resumed by itself after a drop): the other seats' moves are
written as they arrive, the table is drawn as `domino play` draws it and a move is asked for on this seat's
turn. When a round ends it shows the hands and deals the next round once the person presses Enter (if
another seat dealt it first, the gateway's 409 says so and the game goes on); the match's end is shown and
the game exits. `q` (or Ctrl-C) leaves the seat, so that the table's host can invite someone else to it.

The exits of a match (docs/tables.md): at its move the person may type `resign` (asked to confirm: the match is
lost), `abort` (asked to confirm; only before every person has made a move, else the gateway's `abort-closed`
is said) or `claim`. While the game waits for another person's move it looks at the table whenever the stream
is quiet for a few seconds: a person who went away is said (`Seat 1 (Boris) is away: 0:40`), and once they have
been gone the table's `claim_after` the game offers to claim victory (type `claim`, or Enter to wait on).
Another seat's resign, abort or claim arrives on the stream and the match's end says how it ended.

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

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
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
from clients.sdk.errors import (
    AbortClosed,
    ClaimRefused,
    IllegalAction,
    InvalidCredential,
    InvalidInvite,
    NotSeated,
)
from clients.sdk.rest import _Held
from clients.sdk.seat_book import SavedSeat, SeatBook
from clients.sdk.tables import EventStream, StreamEvent
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
#: Seconds of a quiet stream, while another person is to move, after which the table is looked at (presence).
QUIET = 5.0
#: What the person types at the move prompt for the exits of a match (and their Russian words).
EXIT_WORDS = {"resign": "resign", "abort": "abort", "claim": "claim",
              "сдаюсь": "resign", "сдаться": "resign", "отмена": "abort", "отменить": "abort", "победа": "claim"}
YES = frozenset({"y", "yes", "д", "да"})
#: The events that end a match by an exit.
EXITS = ("resigned", "aborted", "gone")


class MatchEnded(Exception):
    """The match ended while this seat was to move (a turn clock ran out): no move to make any more."""


class Exited(Exception):
    """This seat resigned, aborted or claimed victory at its move: the match is over, no move to make."""


def with_quiet(stream: EventStream, quiet: float) -> Iterator[StreamEvent]:
    """The stream's events as they come, and a `quiet` event (no id, no data) after each `quiet` seconds
    without one: the stream is read by a thread of its own, so that the game may look at the table (who went
    away) while it waits. The stream's own failure is raised here; closing the stream ends the thread."""
    found: queue.Queue[StreamEvent | BaseException | None] = queue.Queue()

    def pump() -> None:
        try:
            for event in stream:
                found.put(event)
        except BaseException as err:  # noqa: BLE001 - handed to the game's thread, raised there
            found.put(err)
        found.put(None)

    threading.Thread(target=pump, name="seat-stream", daemon=True).start()
    while True:
        try:
            item = found.get(timeout=quiet)
        except queue.Empty:
            yield StreamEvent("quiet", None, None)
            continue
        if item is None:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


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
        # a private table shows itself to an unused invite's holder and to its seats (docs/tables.md); a seat's
        # credential given up (the seat left, from here or another device) is said by `run`
        self.seat_gone = False
        try:
            self.table = api.table(self.table_id, invite=invite, auth=credential)
        except (InvalidCredential, NotSeated):
            if credential is None:
                raise
            self.seat_gone = True
            self.table = Table.from_json({"table_id": table_id, "variant": "", "players": 0})
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
        self.exit: Json | None = None                    # the exit event that ended the match, if one did
        self.told_away: dict[int, int | None] = {}       # seat -> the away_since said (presence)
        self.offered: set[tuple[int, int]] = set()       # (seat, away_since) a claim was offered for

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
        if self.seat_gone:
            self.book.forget(self.table_id)
            self.say(t("seat.given-up"))
            return 1
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
        playing = self.screen is not None and not self.screen.match_over and self.table.rated
        try:
            self.seat.leave()
            self.book.forget(self.table_id)
            self.write(t("left", seat_number(self.seat.seat or 0)))
            if playing:
                self.write(t("left.rated"))
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
            # the host app's signed-in user, when its login left the player assertion in DOMINO_PLAYER (the
            # terminal's like the page's localStorage "domino-player"): the seat is the user's and it rates
            seat = self.api.join_table(self.table_id, invite=self.invite, name=self.person,
                                       player=os.environ.get("DOMINO_PLAYER") or None)
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
        self.names = seat_names(seat.table(), seat.seat)
        if seat.match_id is None:
            self.say(t("waiting.seats"))
            seat.wait_for_match(timeout=self.wait)
        self.table = seat.table()
        self.names = seat_names(self.table, seat.seat)
        self.say(t("at-table", ", ".join(self.names)))
        self.show_ratings()
        if self.table.raw.get("clock"):
            self.say(t("clock", clock_setting_text(self.table.raw["clock"])))
        screen = self.screen = SeatScreen(seat)
        screen.note = self.say
        self.say(t("exits.help"))
        with seat.events(reconnects=PATIENCE_RETRIES, max_backoff=MAX_BACKOFF) as stream:
            for event in with_quiet(stream, QUIET):
                if event.event == "quiet":
                    if self.look_around(seat, screen):
                        return 0          # victory claimed: the match's end is shown
                    continue
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
                        if self.exit is None and any(e.get("type") in EXITS for e in data.get("events", [])):
                            self.show_events(data["events"])   # an exit the screen took without its events
                                                               # (a move refused: the match was over)
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

    # ------------------------------------------------------------ the exits of a match

    def show_events(self, events: list[Json]) -> None:
        for event in events:
            if event.get("type") in EXITS:
                self.exit = event
        super().show_events(events)

    def choose(self, text: str, legal: list[str]) -> str | None:
        """A move, or (at this seat's move) an exit: `resign`, `abort`, `claim`."""
        kind = EXIT_WORDS.get(text.lower())
        if kind is None:
            return super().choose(text, legal)
        if self.exit_match(kind):
            raise Exited()
        return None

    def exit_match(self, kind: str) -> bool:
        """Resign, abort or claim victory (resign and abort asked to confirm); True once the match is over.
        A refusal is said (the abort closed, nobody gone long enough) and nothing changed."""
        seat, screen = self.seat, self.screen
        assert seat is not None and screen is not None
        if kind != "claim":
            try:
                answer = self.read(t(f"exit.confirm-{kind}")).strip().lower()
            except EOFError:
                answer = ""
            if answer not in YES:
                self.say(t("exit.not-done"))
                return False
        call = {"resign": seat.resign, "abort": seat.abort, "claim": seat.claim}[kind]
        try:
            done = call()
        except AbortClosed:
            self.say(t("exit.abort-closed"))
            return False
        except ClaimRefused:
            self.say(t("exit.claim-refused"))
            return False
        except IllegalAction:                  # over already (a clock, another seat's exit): the stream says how
            screen.take(seat.view())
            return screen.match_over
        self.show_events(screen.take(done))
        return True

    def look_around(self, seat: Seat, screen: SeatScreen) -> bool:
        """The stream is quiet while another seat is to act: who went away (said once), and a claim of
        victory offered over a person gone the table's `claim_after`. True: victory claimed, the end shown."""
        if screen.match_over or self.my_turn:
            return False
        try:
            table = seat.table()
        except (ProblemError, TransportError):
            return False                       # the stream's own troubles are said by the stream
        for s in table.seats:
            if s.seat == seat.seat or s.kind == "bot" or s.here is None:
                continue
            away = s.away_for()
            if away is None:
                if self.told_away.pop(s.seat, None) is not None:
                    self.say(t("presence.back", self.names[s.seat]))
                continue
            if self.told_away.get(s.seat) != s.away_since:
                self.told_away[s.seat] = s.away_since
                self.say(t("presence.away", self.names[s.seat], clock_text(away)))
        for gone in table.claimable():
            away_since = table.seats[gone].away_since or 0
            if gone == seat.seat or (gone, away_since) in self.offered:
                continue
            self.offered.add((gone, away_since))
            answer = self.ask(t("claim.ask", self.names[gone], clock_text(table.seats[gone].away_for() or 0)),
                              allow_empty=True)
            if EXIT_WORDS.get(answer.lower()) == "claim" or answer.lower() in YES:
                if self.exit_match("claim"):
                    self.show_end(screen)
                    return True
        return False

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
        show), one a seat resigned, aborted or claimed says so; then the ratings before and after."""
        if self.exit is not None and not self.kingdomino:
            self.write(RULE)
            if match.view.get("round_over") and match.view.get("ending"):
                self.show_round_end(match)
            self.say(t("exit.over", self.exit_text(), points_text(match.scores, self.names)))
        elif not isinstance(match, SeatScreen) or match.round_over or self.kingdomino:
            super().show_end(match)
        elif not match.clocks:         # over mid-round, how not seen (an exit before this seat's stream began)
            self.write(RULE)
            self.say(t("match.over", points_text(match.scores, self.names)))
        else:
            out = [s for s, left in enumerate(match.clocks.get("remaining", [])) if left <= 0]
            who = t("time-out.seat", self.names[out[0]]) if out else t("time-out.a-clock")
            self.write(RULE)
            who = t("time-out.yours") if out and out[0] == (self.seat.seat if self.seat else None) else who
            self.say(t("time-out.over", who, points_text(match.scores, self.names)))
        self.show_rating_change()

    def unexplained(self, screen: SeatScreen) -> bool:
        """A match over mid-round with no clock run out (and no exit event seen): another seat's exit."""
        return not self.kingdomino and not screen.round_over and not screen.clocks

    def exit_text(self) -> str:
        """How the match ended by an exit: "Seat 1 (Boris) resigned", "you resigned", "aborted by you" ..."""
        assert self.exit is not None
        who = self.exit.get("seat", self.exit.get("player"))
        mine = who is not None and self.seat is not None and who == self.seat.seat
        name = t("exit.you") if mine else self.names[who] if isinstance(who, int) and who < len(self.names) else "?"
        kind = self.exit["type"]
        if kind == "resigned":
            return t("exit.you-resigned") if mine else t("exit.resigned", name)
        return t("exit.aborted", name) if kind == "aborted" else t("exit.gone", name)

    def turn(self, match: Playable, seat: int) -> None:
        """A move of this seat (a gateway that fails meanwhile: `SeatScreen.send`), or an exit."""
        self.my_turn = True
        try:
            super().turn(match, seat)
        except MatchEnded:
            self.say(t("too-late"))
        except Exited:
            pass                  # the screen took the exit's answer: the match is over
        finally:
            self.my_turn = False

    def settle(self, seat: Seat, screen: SeatScreen) -> bool:
        """Act on the screen's state: this seat's moves while it is its turn, the round's end (deal the next),
        the match's end (True: shown, the game is over). False: the other seats are to act."""
        mine = seat.seat
        while True:
            if screen.match_over:
                if self.exit is None and self.unexplained(screen):
                    return False          # ended by an exit whose event is still on its way: its end comes next
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
