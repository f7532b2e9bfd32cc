"""`domino play --join LINK` with a tournament's link, or `domino play --tournaments`: a hosted tournament
(docs/tournaments.md) played in the terminal, its rounds one after another.

LINK is a tournament's invite link (`http://host:port/play?tournament=<id>&invite=<code>`; the gateway is the
link's); `--tournaments` lists the lobby's public tournaments still open and joins the one picked. Once joined
the terminal waits for the host to start it, then for each round:

- you play: `Round 2: you play at seat 1.`, then the round is played as `domino play --join` plays a table's
  seat (clients/play_join.py: the seat's stream, the table, your move, the round's end), until the tournament
  closes the round's match;
- you sit out: `Round 2: you sit out (playing: Anna, Boris, Cyril, Dasha).`;

and after every round the standings (`Standings after round 2 (out at 60): 1. Anna 12 ...`) and who is out.
Your being out is said, and the final places when it is over (the first three official).

A Swiss (docs/tournaments.md, "Swiss"): each round is a whole match at your table (`Round 2: you play at seat 1
(at the table: Anna, Boris).`, its rounds dealt as `--join` deals a table's), or your bye (`Round 2: you have a bye
this round (a bye is worth a match won: 1 point).`); after each round every table's points and the byes, then the
standings by points and Buchholz (`1. Anna 2 (Buchholz 1)`), and the final standings and your place at the end. The place's
tournament credential is kept in the user's state directory (`tournaments.json`, 0600, as `--join` keeps a
table's seat): the same link again (or `.../play?tournament=<id>`) comes back to the place after the terminal
was closed. `q` at a prompt, or
at the end of a round, leaves the tournament once confirmed (you forfeit: docs/tournaments.md, "Dropping
out"); Ctrl-C only stops the terminal (the tournament goes on: a clock's autopilot plays your seats).
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from clients.i18n import seat_number, t
from clients.play import RULE, Playable, Quit
from clients.play_join import MAX_BACKOFF, PATIENCE_RETRIES, YES, JoinedGame, SeatScreen
from clients.sdk import HostedTournament, Participant, RestClient, Seat, You
from clients.sdk.errors import InvalidCredential, ProblemError
from clients.sdk.seat_book import SavedSeat, SeatBook, state_dir

__all__ = ["TournamentGame", "TournamentLobby", "TournamentRound"]

Json = dict[str, Any]
#: Seconds between two looks at the tournament while waiting for a round (docs: every few seconds is plenty).
POLL = 1.0
#: How long the terminal waits for the next thing (the host's start, the next round) before it gives up.
PATIENCE = 3600.0


class TournamentRound(JoinedGame):
    """One round's seat, played as a table's seat (`JoinedGame`). A Bykovo round is ended by the round's end: the
    tournament closes the table's match then and deals the next round elsewhere (no "next round" here, no
    ratings: a round is archived unrated). A Swiss round (`swiss`) is a whole match, its rounds dealt here as
    at any table, ended by the match's end."""

    def __init__(self, api: RestClient, you: You, name: str, *, read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print, width: int | None = None, swiss: bool = False) -> None:
        assert you.table_id is not None and you.credential is not None
        super().__init__(api.urls, you.table_id, name, credential=you.credential, seat=you.seat,
                         book=_NoBook(), read=read, write=write, width=width)
        self.you = you
        self.swiss = swiss
        self.quit_asked = False

    def take_seat(self) -> Seat:
        return Seat(self.api, self.table_id, self.you.seat, self.you.credential or "", None, self.you.match_id)

    def show_ratings(self) -> None:
        """A round's table is archived unrated: the tournament's places are what counts."""

    def show_rating_change(self, tries: int = 10) -> None:
        """No rating changes at a tournament's round."""

    def leave(self) -> None:
        """`q` at the round: the tournament decides (`TournamentGame` asks to leave it)."""
        self.quit_asked = True

    def turn(self, match: Playable, seat: int) -> None:
        """This seat's move; one that ends the round ends the round's play here (no next round to deal)."""
        super().turn(match, seat)
        if not self.swiss and isinstance(match, SeatScreen) and match.round_over:
            raise _RoundOver()

    def settle(self, seat: Seat, screen: SeatScreen) -> bool:
        """Bykovo: the round's end is the table's end here: shown once, then this round is over (True). A Swiss:
        as at any table (the match's next rounds dealt, its end is the round's)."""
        if self.swiss:
            return super().settle(seat, screen)
        try:
            if not screen.round_over:
                return super().settle(seat, screen)
        except _RoundOver:
            pass
        self.show_round_end(screen)
        return True


class _RoundOver(Exception):
    """This seat's move ended the round."""


class _NoBook(SeatBook):
    """A round's seat is not kept between runs (the tournament's credential is what comes back to it)."""

    def __init__(self) -> None:
        super().__init__()

    def forget(self, table_id: str) -> None:
        return None


class TournamentGame:
    """A person's whole hosted tournament in the terminal: join (an invite, or none for a public one), wait for
    the start, play or sit out each round, see the standings between rounds and the final places."""

    def __init__(self, urls: list[str], tournament_id: str, name: str, *, invite: str | None = None,
                 read: Callable[[str], str] = input, write: Callable[[str], None] = print, width: int | None = None,
                 poll: float = POLL, patience: float = PATIENCE, book: SeatBook | None = None) -> None:
        self.api = RestClient(urls, retries=PATIENCE_RETRIES, max_backoff=MAX_BACKOFF)
        #: The places kept between runs (a `SavedSeat` per tournament: its id, index and credential).
        self.book = book or SeatBook(state_dir() / "tournaments.json")
        self.tournament_id, self.invite, self.person = tournament_id, invite, name
        self.read, self.write, self.width = read, write, width
        self.poll, self.patience = poll, patience
        self.participant: Participant | None = None
        self.standings_shown = 0          # the rounds recorded whose result has been shown
        self.rounds_told: set[int] = set()  # the rounds the person was told they play or sit out

    def say(self, text: str) -> None:
        self.write(text)

    def run(self) -> int:
        try:
            return self.play()
        except (Quit, KeyboardInterrupt):
            self.say(t("bye"))
            return 0
        except InvalidCredential:
            self.book.forget(self.tournament_id)
            self.say(t("tour.gone"))
            return 1

    def join(self) -> Participant:
        """The place kept for this tournament (come back to), else a new one taken (and kept)."""
        kept = self.book.find(self.tournament_id)
        if kept is not None:
            try:
                back = self.api.participant(self.tournament_id, kept.credential)
            except InvalidCredential:
                self.book.forget(self.tournament_id)      # given up (left): a new place, when the link has one
            else:
                now = back.tournament()
                self.say(t("tour.back", now.name or now.tournament_id[:8], _place(back.index), now.size))
                return back
        joined = self.api.join_tournament(self.tournament_id, self.invite, name=self.person,
                                          player=os.environ.get("DOMINO_PLAYER") or None)
        tour = joined.joined
        assert tour is not None
        self.book.save(SavedSeat(self.tournament_id, joined.index, joined.credential, self.api.urls, self.person,
                                 "tournament"))
        self.say(t("tour.joined", tour.name or tour.tournament_id[:8], _place(joined.index), tour.size,
                   len(tour.participants)))
        return joined

    def play(self) -> int:
        me = self.participant = self.join()
        after: int | None = None
        said_waiting = False
        while True:
            try:
                you = me.next_round(after, timeout=self.patience, poll=self.poll)
            except TimeoutError:
                self.say(t("tour.no-news"))
                return 1
            tour = me.tournament()
            self.show_results(tour)
            if you.status == "over":
                self.show_final(tour)
                self.book.forget(self.tournament_id)
                return 0
            if you.status == "out":
                if not said_waiting:
                    self.say(t("tour.left-swiss", _num(_score(tour, me.index))) if _swiss(tour)
                             else t("tour.out", _total(tour, me.index), tour.limit))
                    said_waiting = True
                after = max(after or 0, len(tour.rounds))
                time.sleep(self.poll)
                continue
            after = you.round
            if you.status == "sitting-out":
                self.say_sitting_out(tour, you.round, tour.round.players if tour.round else [])
                continue
            self.play_round(tour, you)

    def play_round(self, tour: HostedTournament, you: You) -> None:
        """A round at its table: said, then played as a table's seat; `q` there leaves the tournament once
        confirmed."""
        assert you.seat is not None and you.round is not None
        self.rounds_told.add(you.round)
        swiss = _swiss(tour)
        at_table = (_table_of(tour.round.tables, self.participant.index if self.participant else -1) if swiss
                    else tour.round.players) if tour.round else []
        others = ", ".join(tour.name_of(p) for p in at_table)
        self.say(RULE)
        self.say(t("tour.play", you.round, seat_number(you.seat), others))
        game = TournamentRound(self.api, you, self.person, read=self.read, write=self.write, width=self.width,
                               swiss=swiss)
        game.run()
        if game.quit_asked:
            self.leave()

    def say_sitting_out(self, tour: HostedTournament, number: int | None, playing: list[int]) -> None:
        if number is None or number in self.rounds_told:
            return
        self.rounds_told.add(number)
        if _swiss(tour):
            self.say(t("tour.bye", number, _bye_points(tour)))
            return
        self.say(t("tour.sit-out", number, ", ".join(tour.name_of(p) for p in playing)))

    def leave(self) -> None:
        """Leave the tournament, once confirmed (you forfeit); not confirmed: the terminal stops, the tournament
        goes on."""
        assert self.participant is not None
        try:
            answer = self.read(t("tour.confirm-leave")).strip().lower()
        except EOFError:
            answer = ""
        if answer in YES:
            try:
                self.participant.leave()
                self.book.forget(self.tournament_id)
                self.say(t("tour.left"))
            except ProblemError as err:
                self.say(t("cli.problem", err.detail))
        raise Quit()

    # ------------------------------------------------------------ the standings

    def show_results(self, tour: HostedTournament) -> None:
        """Each round recorded since the last look: its points and who it put out, then the standings."""
        if len(tour.rounds) <= self.standings_shown:
            return
        mine = self.participant.index if self.participant else -1
        if _swiss(tour):
            self.show_swiss_results(tour, mine)
            return
        for played in tour.rounds[self.standings_shown:]:
            if mine not in played.players and not _out_before(tour, mine, played.number):
                self.say_sitting_out(tour, played.number, played.players)   # a round played while we looked away
            points = ", ".join(f"{tour.name_of(p)} {pts}" for p, pts in zip(played.players, played.points, strict=False))
            self.say(t("tour.round-result", played.number, points))
            if played.forfeit is not None:
                self.say(t("tour.forfeit", tour.name_of(played.forfeit)))
            if played.eliminated:
                self.say(t("tour.eliminated", ", ".join(tour.name_of(p) for p in played.eliminated)))
        self.standings_shown = len(tour.rounds)
        if not tour.over:
            self.say(t("tour.standings", len(tour.rounds), tour.limit))
            for line in self.standing_lines(tour):
                self.say(line)

    def show_swiss_results(self, tour: HostedTournament, mine: int) -> None:
        """A Swiss's rounds recorded since the last look: each table's points and the byes (yours said, if it
        passed while we looked away), then the standings by points and Buchholz."""
        for played in tour.rounds[self.standings_shown:]:
            if mine in played.byes:
                self.say_sitting_out(tour, played.number, [])
            tables = "; ".join(" – ".join(f"{tour.name_of(p)} {_num(pts)}" for p, pts in zip(
                table["players"], table.get("result") or [], strict=False)) for table in played.tables)
            byes = ", ".join(tour.name_of(p) for p in played.byes)
            self.say(t("tour.round-result", played.number, tables) + (" " + t("tour.byes", byes) if byes else ""))
        self.standings_shown = len(tour.rounds)
        if not tour.over:
            self.say(t("tour.standings-swiss", len(tour.rounds), tour.raw.get("rounds_to_play")))
            for line in self.standing_lines(tour):
                self.say(line)

    def standing_lines(self, tour: HostedTournament) -> list[str]:
        mine = self.participant.index if self.participant else None
        if _swiss(tour):
            left = {p.index for p in tour.participants if p.left}
            return ["  " + t("tour.line-swiss", s.place, s.participant + (t("tour.you") if s.index == mine else ""),
                             _num(s.score), _num(s.buchholz), s.index in left, s.official) for s in tour.standings]
        return ["  " + t("tour.line", s.place, s.participant + (t("tour.you") if s.index == mine else ""), s.total,
                         s.out, s.official) for s in tour.standings]

    def show_final(self, tour: HostedTournament) -> None:
        self.say(RULE)
        self.say(t("tour.over", tour.name or tour.tournament_id[:8]))
        for line in self.standing_lines(tour):
            self.say(line)
        mine = next((s for s in tour.standings if self.participant and s.index == self.participant.index), None)
        if mine is not None:
            self.say(t("tour.your-place", mine.place, len(tour.standings)))


def _place(index: int) -> int:
    """A participant's place in the order as the person reads it (from 1)."""
    return index + 1


def _out_before(tour: HostedTournament, index: int, number: int) -> bool:
    """`index` was put out by a round before round `number`."""
    return any(index in r.eliminated or index == r.forfeit for r in tour.rounds if r.number < number)


def _total(tour: HostedTournament, index: int) -> int | None:
    return next((s.total for s in tour.standings if s.index == index), None)


def _swiss(tour: HostedTournament) -> bool:
    return tour.format == "swiss"


def _score(tour: HostedTournament, index: int) -> float | None:
    """A Swiss participant's points."""
    return next((s.score for s in tour.standings if s.index == index), None)


def _num(points: float | None) -> str:
    """A Swiss's points as a person reads them: 2, 1.5."""
    return "" if points is None else f"{points:g}"


def _table_of(tables: list[Json], index: int) -> list[int]:
    """The players (by seat) of the Swiss table `index` sits at this round."""
    return next((list(table["players"]) for table in tables if index in table["players"]), [])


def _bye_points(tour: HostedTournament) -> int:
    """A Swiss's bye is worth a match won: 1 at tables of two and in a pair game, 3 at four alone."""
    return 3 if tour.raw.get("players") == 4 and not (tour.raw.get("options") or {}).get("teams") else 1


class TournamentLobby:
    """`domino play --tournaments`: the public tournaments still open, numbered; the one picked is joined."""

    def __init__(self, urls: list[str], *, read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print) -> None:
        self.api = RestClient(urls)
        self.urls, self.read, self.write = urls, read, write

    def pick(self) -> HostedTournament | None:
        found = self.api.list_tournaments(50)
        if not found:
            self.write(t("tour.lobby-none"))
            return None
        self.write(t("tour.lobby-title", len(found)))
        for i, tour in enumerate(found, 1):
            self.write(t("tour.lobby-line", i, tour.name or tour.tournament_id[:8], t("variant", tour.variant),
                         len(tour.participants), tour.size))
        while True:
            try:
                text = self.read(t("tour.lobby-pick")).strip()
            except EOFError:
                return None
            if not text or text.lower() in ("q", "й"):
                return None
            if text.isdigit() and 1 <= int(text) <= len(found):
                return found[int(text) - 1]
            self.write(t("inbox.no-such", text))
