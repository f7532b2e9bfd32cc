"""`domino play`: a person against computer opponents in the terminal, through the REST API, sealed mode.

    domino play --variant kozel --players 4 --bots expert,greedy,random [--url URL]
    domino play --join LINK [--name NAME] [--url URL ...]   # a seat of an online table (clients/play_join.py)
    domino play --resume [TABLE_ID]             # back to a seat taken earlier (its credential kept)
    domino play --join TOURNAMENT_LINK | --tournaments   # a hosted tournament (clients/play_tournament.py)

The person is seat 0 and holds only its own seat key; the other seats are bots of the
levels given, one per seat in order (`human` makes a seat another person at the same
keyboard, hot-seat: the screen then shows the hand of whoever is to move). Each turn
the screen shows the table (the layout as the tiles lie, or every kingdom as a grid),
the sorted hand, the scores and what happened since the last turn; a move is the number
of a legal move or its notation (`3-6@E`, `draw`, `pick 17`, `place 17 1,0 E`). Every
refused input gets a message saying why and changes nothing. The table is drawn to the
terminal's width (a long line of tiles continues on the next line, between tiles).

Every text is in English or Russian (clients/i18n.py): `--lang ru|en`, else the terminal's locale
(LC_ALL, LC_MESSAGES, LANG starting with `ru`).
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from clients.i18n import LANGUAGES, seat_number, t, use
from clients.sdk import Bot, ProblemError, RestClient, SealedMatch, TransportError
from clients.sdk.rest import LEVELS
from clients.table import (
    event_line,
    keep_rounds,
    kingdom_lines,
    kingdomino_tile_text,
    layout_lines,
    ledger_lines,
    points_text,
    sorted_hand,
)

Json = dict[str, Any]
HUMAN = "human"
RULE = "-" * 60


#: "Seat 2", "team 1", "Место 2": a name that is kept whole on a line.
_SIDE = re.compile(r"\b(Seat|team|Team|Место|команда) (\d)")


class Quit(Exception):
    """The person asked to leave."""


class Playable(Protocol):
    """What the screen is drawn from and a move is made on: a `SealedMatch`, or a seat of an online table
    (clients/play_join.py)."""

    view: Json
    scores: list[int]

    def legal_actions(self, seat: int | None = None) -> list[str]: ...

    def apply(self, action: str, seat: int | None = None) -> list[Json]: ...


class TerminalGame:
    def __init__(self, api: RestClient, variant: str, players: int, levels: list[str],
                 options: Json | None = None, *, read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print, width: int | None = None) -> None:
        self.api = api
        self.variant = variant
        self.players = players
        self.levels = levels
        self.options = options
        self.read = read
        self.write = write
        self.humans = [0] + [seat for seat, level in enumerate(levels, 1) if level == HUMAN]
        self.names = [t("you")] + [t("seat.level", seat_number(seat), level) if level != HUMAN
                                   else t("seat", seat_number(seat)) for seat, level in enumerate(levels, 1)]
        self.kingdomino = variant == "kingdomino"
        self.rounds: dict[int, Json] = {}  # the score table's rows seen (clients.table.keep_rounds)
        self._width = width

    @property
    def width(self) -> int:
        """Columns to draw in: the given width, else the terminal's now (it may have been resized)."""
        return self._width or shutil.get_terminal_size((80, 24)).columns

    def say(self, text: str, indent: str = "") -> None:
        """Write `text` in lines that fit the width, broken between words (tiles, names), never inside
        one; a continued line is indented further. A seat's or a team's name and its number stay on
        one line ("Seat 2 3", not "Seat" at the end of a line and "2 3" on the next)."""
        kept = _SIDE.sub("\\1\u00a0\\2", text)   # textwrap breaks at ASCII whitespace only
        for line in textwrap.wrap(kept, max(20, self.width - 1), initial_indent=indent,
                                  subsequent_indent=indent + "   ", break_long_words=False,
                                  break_on_hyphens=False) or [indent]:
            self.write(line.replace("\u00a0", " "))

    # ------------------------------------------------------------ the match

    def start(self) -> SealedMatch:
        bots = [Bot(seat, level) for seat, level in enumerate(self.levels, 1) if level != HUMAN]  # type: ignore[arg-type]
        match = self.api.create_sealed(self.variant, self.players, options=self.options, bots=bots)
        if bots:
            match.seat_keys = [k if i in self.humans else None for i, k in enumerate(match.seat_keys)]
        self.show_events(match.events)
        return match

    def run(self) -> int:
        match = self.start()
        try:
            while True:
                if match.match_over or (self.kingdomino and match.view.get("game_over")):
                    self.refresh(match, self.humans[0])
                    self.show_end(match)
                    return 0
                if match.round_over:
                    viewer = _viewer(match.view)
                    self.refresh(match, viewer if viewer is not None else 0)
                    self.show_round_end(match)
                    self.ask(t("next-round"), allow_empty=True)
                    match.next_round(seat=0)
                    self.show_events(match.events)
                    continue
                seat = match.to_move
                if seat is None:
                    self.refresh(match, 0)
                    continue
                if seat not in self.humans:   # the service plays bots; a human's view says who is next
                    raise RuntimeError(f"seat {seat} is a bot but the service left it to move")
                if _viewer(match.view) != seat:
                    if len(self.humans) > 1:
                        self.write(t("hot-seat", self.names[seat]))
                    self.refresh(match, seat)
                self.turn(match, seat)
        except (Quit, KeyboardInterrupt):
            self.write(t("bye"))
            return 0

    def refresh(self, match: SealedMatch, seat: int) -> None:
        match.refresh(seat)

    def turn(self, match: Playable, seat: int) -> None:
        self.show_table(match)
        legal = match.view.get("legal") or match.legal_actions(seat)
        self.show_moves(legal)
        # "1-1" would read like the tile 1-1: a single move is "1"
        numbers = t("numbers.one") if len(legal) == 1 else t("numbers.many", len(legal))
        while True:
            text = self.ask(t("your-move", self.names[seat], self.names[seat] == t("you"), numbers))
            action = self.choose(text, legal)
            if action is None:
                continue
            try:
                events = match.apply(action, seat=seat)
            except ProblemError as err:
                self.say(t("not-played", in_words(err.detail or "", seat)))
                continue
            self.show_events(events)
            return

    def choose(self, text: str, legal: list[str]) -> str | None:
        if text == "?":
            self.write(t("help"))
            return None
        if text.isdigit():
            number = int(text)
            if not 1 <= number <= len(legal):
                self.write(t("no-such-move", number, len(legal)))
                return None
            return legal[number - 1]
        if not text:
            self.write(t("type-a-move"))
            return None
        return text

    def ask(self, prompt: str, allow_empty: bool = False) -> str:
        try:
            text = self.read(prompt).strip()
        except EOFError:
            raise Quit() from None
        if text.lower() in ("q", "quit", "exit", "й"):   # й: the q key on a Russian keyboard
            raise Quit()
        return text

    # ------------------------------------------------------------ drawing

    def show_events(self, events: list[Json]) -> None:
        for event in events:
            line = event_line(event, self.names)
            if line:
                self.say(line, "  ")

    def show_table(self, match: Playable) -> None:
        view = match.view
        self.write(RULE)
        if self.kingdomino:
            self.show_kingdoms(view)
            return
        self.write(t("table.header", t("variant", self.variant), view["round_number"], self.names[view["to_move"]]))
        for line in layout_lines(view["table"]):
            self.say(line, "  ")
        ends = ", ".join(f"{arm} {value}" for arm, value in view.get("ends", {}).items())
        self.say(t("table.ends", ends or "-", view.get("count", 0), view["boneyard_size"]), "  ")
        others = ", ".join(f"{self.names[s]} {n}" for s, n in enumerate(view["hand_sizes"]) if s != view["seat"])
        self.say(t("table.in-hand", others), "  ")
        for line in ledger_lines(view, self.names, keep_rounds(self.rounds, view)):
            self.write("  " + line)
        self.say(t("table.your-hand") + " ".join(sorted_hand(view["hand"])))

    def show_kingdoms(self, view: Json) -> None:
        to_move = view.get("to_move")
        self.write(t("kd.header", self.names[to_move] if to_move is not None else "-", view["pile_size"]))
        for player, grid in enumerate(view["grids"]):
            self.write(t("kd.kingdom", self.names[player], view["scores"][player], view["crowns"][player]))
            for line in kingdom_lines(grid):
                self.write("    " + line)
        def row(tiles: list[Json]) -> str:
            return "  ".join(kingdomino_tile_text(t["tile"]) + (f" ({self.names[self.king_owner(view, t['king'])]})"
                                                                 if t.get("king") is not None else "")
                             for t in tiles)
        titles = (t("kd.row-to-place"), t("kd.next-row"))
        width = max(map(len, titles))
        for title, tiles in ((titles[0].ljust(width), view["current"]), (titles[1].ljust(width), view["next"])):
            line = f"{title} {row(tiles) or '-'}"
            if len(line) < self.width or len(tiles) < 2:
                self.write(line)
            else:  # a tile's text has spaces in it: a row too wide for one line lists a tile per line
                self.write(title.rstrip())
                for tile in tiles:
                    self.write("  " + row([tile]))
        self.say(t("kd.terrains"))

    @staticmethod
    def king_owner(view: Json, king: int) -> int:
        owner: int = view["kings"][king]
        return owner

    def show_moves(self, legal: list[str]) -> None:
        width = max(len(a) for a in legal) + 6
        per_line = max(1, (self.width - 3) // width)
        for start in range(0, len(legal), per_line):
            self.write("  " + "".join(f"{i + 1:>3}) {a:<{width - 5}}" for i, a in
                                      enumerate(legal[start:start + per_line], start)))

    def show_round_end(self, match: Playable) -> None:
        view = match.view
        self.write(RULE)
        self.say(t("round.over", view["round_number"], t("ending", view["ending"]),
                   points_text(view["round_points"], self.names)))
        for seat, hand in enumerate(view.get("revealed_hands", [])):
            self.say(t("round.held", self.names[seat], " ".join(sorted_hand(hand)) or "-"), "  ")
        for line in ledger_lines(view, self.names, keep_rounds(self.rounds, view)):
            self.write("  " + line)

    def show_end(self, match: Playable) -> None:
        view = match.view
        self.write(RULE)
        if self.kingdomino:
            self.show_kingdoms(view)
            winners = ", ".join(self.names[w] for w in view.get("winners", []))
            self.say(t("kd.over", points_text(view["scores"], self.names), winners, view["decided_by"]))
            return
        self.show_round_end(match)
        losers = ", ".join(self.names[s] for s in view.get("losers", []) if s < len(self.names))
        animal = {"kozel": "goat", "kozel-classic": "goat", "osel": "donkey"}.get(self.variant)
        self.say(t("match.over", points_text(match.scores, self.names)) + (
            t("match.animal", animal, losers) if animal and losers else t("match.losing", losers) if losers else ""))


def in_words(detail: str, seat: int) -> str:
    """A refusal as the person at the keyboard reads it: the engine names the seat ("'6-6': seat 0
    does not hold 6-6"), the person is "you" ("'6-6': you do not hold 6-6")."""
    return t("refusal", detail.replace(f"seat {seat} does not hold", "you do not hold")
             .replace(f"seat {seat} holds", "you hold"))


def _viewer(view: Json) -> int | None:
    """Whose view this is (the matching games say `seat`, Kingdomino `player`; None: the host's)."""
    seat: int | None = view.get("seat", view.get("player"))
    return seat


def _levels(text: str, players: int) -> list[str]:
    levels = [level.strip() for level in text.split(",")] if text else []
    if len(levels) == 1 and players > 2:
        levels *= players - 1
    if len(levels) != players - 1:
        raise argparse.ArgumentTypeError(t("cli.bots-count", players - 1, len(levels)))
    for level in levels:
        if level not in (*LEVELS, HUMAN):
            raise argparse.ArgumentTypeError(t("cli.bots-level", level, ", ".join((*LEVELS, HUMAN))))
    return levels


def language_flag(argv: Sequence[str]) -> str | None:
    """`--lang` of the command line, read before the rest (the help and the errors are in that language);
    None: not given."""
    pre = argparse.ArgumentParser(prog="domino play", add_help=False)
    pre.add_argument("--lang", choices=LANGUAGES)
    known, _ = pre.parse_known_args(argv)
    lang: str | None = known.lang
    return lang


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        use(language_flag(argv))
    except SystemExit as stop:        # `--lang xx`: argparse said why
        return int(stop.code or 0)
    parser = argparse.ArgumentParser(prog="domino play", description=t("cli.description"))
    parser.add_argument("--variant", default="kozel", help=t("cli.variant"))
    parser.add_argument("--players", type=int, default=4, help=t("cli.players"))
    parser.add_argument("--bots", default="expert", help=t("cli.bots"))
    parser.add_argument("--url", action="append", default=[], metavar="URL", help=t("cli.url"))
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help=t("cli.option"))
    parser.add_argument("--join", metavar="LINK", help=t("cli.join"))
    parser.add_argument("--name", default="Terminal", help=t("cli.name"))
    parser.add_argument("--resume", nargs="?", const="", metavar="TABLE_ID", help=t("cli.resume"))
    parser.add_argument("--credential", metavar="CREDENTIAL", help=t("cli.credential"))
    parser.add_argument("--inbox", action="store_true", help=t("inbox.cli"))
    parser.add_argument("--tournaments", action="store_true", help=t("tour.cli"))
    parser.add_argument("--lang", choices=LANGUAGES, help=t("cli.lang"))
    args = parser.parse_args(argv)
    if args.join and args.resume is not None:
        parser.error(t("cli.join-and-resume"))
    if args.inbox:
        return inbox(args.url)
    if args.tournaments:
        return tournaments(args.name, args.url)
    if args.join:
        return join(parser, args.join, args.name, args.url)
    if args.resume is not None:
        return resume(parser, args.resume or None, args.credential, args.url)
    if args.credential:
        parser.error(t("cli.credential-alone"))
    try:
        levels = _levels(args.bots, args.players)
    except argparse.ArgumentTypeError as err:
        parser.error(str(err))
    options: Json = {}
    for item in args.option:
        import json

        name, _, value = item.partition("=")
        try:
            options[name] = json.loads(value)
        except ValueError:
            options[name] = value
    api = RestClient(args.url or "http://127.0.0.1:8080")
    return _play_seat(lambda: TerminalGame(api, args.variant, args.players, levels, options or None),
                      unreachable="cli.no-gateway")


def join(parser: argparse.ArgumentParser, link: str, name: str, more: list[str]) -> int:
    """`domino play --join LINK`: the seat an invite is for, played from the terminal; a tournament's link
    (`...?tournament=<id>&invite=<code>`): that tournament's rounds, one after another."""
    from clients.play_join import JoinedGame
    from clients.play_tournament import TournamentGame
    from clients.sdk.tables import parse_invite_link
    from clients.sdk.tournaments import parse_tournament_link

    try:
        base, tournament_id, code = parse_tournament_link(link)
    except ValueError:
        pass
    else:
        return _play_seat(lambda: TournamentGame([base, *more], tournament_id, name, invite=code))
    try:
        url, table_id, invite = parse_invite_link(link)
    except ValueError as err:
        parser.error(str(err))
    return _play_seat(lambda: JoinedGame([url, *more], table_id, name, invite=invite))


def tournaments(name: str, more: list[str]) -> int:
    """`domino play --tournaments`: the lobby's public tournaments still open; the one picked is joined and
    played as `--join` plays a tournament's link."""
    from clients.play_tournament import TournamentGame, TournamentLobby

    urls = more or ["http://127.0.0.1:8080"]
    try:
        picked = TournamentLobby(urls).pick()
    except (TransportError, ProblemError) as err:
        print(t("cli.no-gateway-seat", err), file=sys.stderr)
        return 1
    if picked is None:
        return 0
    return _play_seat(lambda: TournamentGame(urls, picked.tournament_id, name))


def inbox(more: list[str]) -> int:
    """`domino play --inbox`: your live games (the seats kept here, and DOMINO_PLAYER's); the one picked is
    played as `--resume` plays it."""
    from clients.play_inbox import InboxList
    from clients.play_join import JoinedGame

    screen = InboxList(more)
    saved = screen.pick(screen.games())
    if saved is None:
        return 0
    return _play_seat(lambda: JoinedGame.resuming(saved, more))


def resume(parser: argparse.ArgumentParser, table_id: str | None, credential: str | None, more: list[str]) -> int:
    """`domino play --resume [TABLE_ID]`: back to a seat kept by an earlier `--join` (or, with `--credential`
    and `--url`, to a seat taken on another device)."""
    from clients.play_join import JoinedGame
    from clients.sdk.seat_book import SeatBook

    if credential is not None:
        if table_id is None or not more:
            parser.error(t("cli.credential-needs"))
        return _play_seat(lambda: JoinedGame(more, table_id, "Terminal", credential=credential))
    book = SeatBook()
    saved = book.find(table_id)
    if saved is None:
        which = t("cli.for-table", table_id) if table_id else t("cli.at-all")
        print(t("cli.no-seat-kept", which, book.path), file=sys.stderr)
        return 1
    return _play_seat(lambda: JoinedGame.resuming(saved, more))


def _play_seat(game: Callable[[], Any], unreachable: str = "cli.no-gateway-seat") -> int:
    """Run a game; what stops it is said in a line (never a traceback): no gateway (the catalogue's
    `unreachable` words it),
    a refusal, or an error of this program (its traceback kept in a file)."""
    try:
        code: int = game().run()
    except TransportError as err:
        print(t(unreachable, err), file=sys.stderr)
        return 1
    except ProblemError as err:
        print(t("cli.problem", err.detail), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(t("bye"))
        return 0
    except Exception as err:  # noqa: BLE001 - a bug of this program: said in a line, its traceback in a file
        import traceback

        from clients.sdk.seat_book import state_dir

        log = state_dir() / "play-errors.log"
        try:
            log.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with log.open("a") as out:
                out.write(traceback.format_exc())
            where = t("cli.bug-log", log)
        except OSError:
            where = ""
        print(t("cli.bug", f"{type(err).__name__}: {err}", where), file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
