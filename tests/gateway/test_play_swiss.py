"""A hosted Swiss (docs/tournaments.md, "Swiss") as people use it: three people, Kozel for two to 1 point (a
match is a round or two), three rounds, so each round someone has a bye and everyone has one. One is on the page
(/play in chromium, joining by the link), one in the terminal (`domino play --join LINK` in a pseudo-terminal),
one with the SDK; all play to the end against a real gunicorn gateway and engine. What the page and the terminal
showed their person (their table each round or their bye, the standings with points and Buchholz, the final
places and their own place) is checked against the tournament's own view at the end; at the page's round table
there is no abort (leaving the tournament is the exit) and no rating chip (a casual tournament's tables are not
rated: `table.rated`)."""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from clients.sdk import Participant, RestClient, Seat
from clients.sdk.errors import IllegalAction, MatchOver, ProblemError

from .conftest import Gateway
from .test_hosted_tournament import first_move, tour_gw  # noqa: F401
from .test_play_browser import PHONE, browser  # noqa: F401
from .test_play_friends_browser import Person
from .test_play_tournament import PagePerson
from .test_play_tournament_terminal import Terminal, spawn_terminal

pytestmark = pytest.mark.service

Json = dict[str, Any]
DEADLINE = 180.0


def play_match(seat: Seat) -> None:
    """A Swiss round's whole match as an SDK person plays it: the first legal move that is not a pass on this
    seat's turn, the next round dealt when one ends, until the seat's stream ends (the match is over)."""
    with seat.events(idle_timeout=30) as stream:
        for event in stream:
            if event.event == "end":
                return
            data = event.data if isinstance(event.data, dict) else {}
            view = data.get("view") or {}
            if view.get("match_over"):
                continue
            try:
                if view.get("round_over"):
                    seat.next_round()
                elif view.get("to_move") == seat.seat and (actions := seat.legal().actions):
                    seat.apply(first_move(actions))
            except (IllegalAction, MatchOver, ProblemError):
                continue        # another seat dealt it, or the match ended meanwhile: the stream says next


def swiss_person(participant: Participant, until: float, errors: list[BaseException]) -> Callable[[], None]:
    """A person's whole Swiss with the SDK: each round's match played, each bye waited out."""
    def run() -> None:
        try:
            after: int | None = None
            while True:
                you = participant.next_round(after, timeout=max(1.0, until - time.monotonic()), poll=0.1)
                if you.status in ("out", "over"):
                    return
                after = you.round
                if you.status == "playing":
                    seat = participant.seat(you)
                    assert seat is not None
                    play_match(seat)
        except BaseException as err:  # noqa: BLE001 - handed to the test's thread
            errors.append(err)
    return run


class SwissPage(PagePerson):
    """A person on the page at a Swiss: moves as `PagePerson`, and deals the match's next round when one ended."""

    def act(self) -> bool:
        deal = self.page.locator("#next-round")
        if self.screen() == "table" and deal.is_visible():
            try:
                deal.click(timeout=2000)
            except Exception:  # noqa: BLE001 - dealt meanwhile by the other seat
                return False
            return True
        return super().act()

    def swiss_rounds(self) -> dict[int, int | None]:
        """The page's rounds of this person: the seat played (from 0), or None: a bye."""
        found: list[list[str]] = self.page.eval_on_selector_all(
            "#tour-rounds li", "(els) => els.map((e) => [e.dataset.round, e.dataset.seat ?? '', e.dataset.bye ?? ''])")
        return {int(n): (None if bye else int(seat)) for n, seat, bye in found}

    def swiss_standings(self) -> list[tuple[int, int, float, float]]:
        """The page's standings: (participant index, place, points, Buchholz)."""
        rows: list[list[str]] = self.page.eval_on_selector_all(
            "#tour-standings tbody tr",
            "(els) => els.map((e) => [e.dataset.index, e.dataset.place, e.dataset.score, e.dataset.buchholz])")
        return [(int(i), int(p), float(s), float(b)) for i, p, s, b in rows]


def expected_rounds(final: Json, index: int) -> dict[int, int | None]:
    """A participant's rounds by the tournament's own view: their seat at their table, or None for a bye."""
    found: dict[int, int | None] = {}
    for played in final["rounds"]:
        if index in played["byes"]:
            found[played["number"]] = None
        for table in played["tables"]:
            if index in table["players"]:
                found[played["number"]] = table["players"].index(index)
    return found


def check_terminal(terminal: Terminal, index: int, final: Json) -> None:
    """What the terminal told its person, against the tournament's own view: each round's table or bye, each
    round's record, the final standings (points, Buchholz) and their place."""
    text = terminal.text
    for number, seat in expected_rounds(final, index).items():
        if seat is None:
            assert f"Round {number}: you have a bye this round (a bye is worth a match won: 1 point)." in text, text
        else:
            assert f"Round {number}: you play at seat {seat} (at the table: " in text, (number, seat, text[-3000:])
    for played in final["rounds"][:-1]:           # the last one's record comes with the final standings
        bye = final["participants"][played["byes"][0]]["name"]
        assert re.search(rf"Round {played['number']} recorded: .+? Bye: {bye}\.", text), text[-3000:]
        assert f"Standings after round {played['number']} of 3 (points, Buchholz):" in text
    lines = re.findall(r"\n\s*(\d)\. (\S+(?: \(you\))?) ([\d.]+) \(Buchholz ([\d.]+)\)",
                       terminal.screen.split("is over. Final places")[-1].replace("\r", ""))
    assert [(int(p), who.removesuffix(" (you)"), float(s), float(b)) for p, who, s, b in lines] == \
        [(s["place"], s["participant"], s["score"], s["buchholz"]) for s in final["standings"]]
    mine = next(s for s in final["standings"] if s["index"] == index)
    assert f"Your place: {mine['place']} of 3." in text


def test_a_swiss_on_the_page_in_the_terminal_and_with_the_sdk_played_to_its_end(
        browser: Browser, tour_gw: Gateway, tmp_path: Path) -> None:  # noqa: F811
    gw = tour_gw
    api = RestClient(gw.url)
    opened = api.open_tournament(3, name="Swiss online", format="swiss", variant="kozel", options={"target": 1},
                                 rounds=3, rated=False)
    tid = opened.tournament_id
    links = [i.link for i in opened.invites]
    context = browser.new_context(viewport=PHONE)
    terminal: Terminal | None = None
    try:
        person = Person(context, links[0], "Anna")
        person.wait_for(lambda: person.screen() == "tournament" and person.page.locator("#tour-join").is_enabled(),
                        "the tournament's join screen")
        assert "Swiss of kozel at tables of 2, 3 rounds" in person.page.inner_text("#tour-join-about")
        person.page.fill("#tour-name", "Anna")
        person.page.click("#tour-join")
        person.wait_for(lambda: person.page.locator("#tour-box").get_attribute("data-status") == "waiting",
                        "the tournament's standings")
        page = SwissPage(person)
        terminal = spawn_terminal(gw, tmp_path, "--join", links[1], "--name", "Boris")
        terminal.expect(r"place 2 of 3 \(2 joined\)\. Waiting for the host to start it")
        participants = [api.join_tournament_link(links[2], name="Cyril")]
        opened.start()
        began = time.monotonic()
        terminal.answer_moves(began + DEADLINE)
        errors: list[BaseException] = []
        threads = [threading.Thread(target=swiss_person(p, began + DEADLINE, errors), daemon=True)
                   for p in participants]
        for thread in threads:
            thread.start()
        saw_bye = saw_table = False
        while api.tournament(tid).status != "over":
            assert time.monotonic() < began + DEADLINE, f"the Swiss did not end within {DEADLINE} s"
            assert not errors, errors
            assert terminal.error is None, (terminal.error, terminal.screen[-3000:])
            moved = page.act()
            status = page.page.inner_text("#tour-status")
            if "you have a bye this round (a bye is worth a match won: 1 point)" in status:
                saw_bye = True
            if page.screen() == "table" and not saw_table:
                # a tournament's round: no abort (leaving the tournament is the exit), no rating (a casual table)
                saw_table = True
                assert page.page.locator("#abort").is_hidden()
                assert page.page.locator("#opponents .rating").count() == 0
                assert "your table: " in status and "Round " in status
            if not moved:
                time.sleep(0.05)
        elapsed = time.monotonic() - began
        for thread in threads:
            thread.join(30)
        assert not errors, errors
        final = api.tournament(tid).raw
        assert len(final["rounds"]) == 3 and all(len(r["byes"]) == 1 for r in final["rounds"])
        assert sorted(r["byes"][0] for r in final["rounds"]) == [0, 1, 2]   # everyone had a bye
        person.wait_for(lambda: page.page.locator("#tour-box").get_attribute("data-status") == "over",
                        "the tournament's end")
        assert saw_bye and saw_table
        assert page.swiss_rounds() == expected_rounds(final, 0)
        assert page.swiss_standings() == [(s["index"], s["place"], s["score"], s["buchholz"])
                                          for s in final["standings"]]
        mine = next(s for s in final["standings"] if s["index"] == 0)
        assert f"The tournament is over. Your place: {mine['place']} of 3." in page.page.inner_text("#tour-status")
        assert page.page.inner_text("#tour-standings thead").split() == ["Place", "Player", "Points", "Buchholz"]
        last_bye = final["participants"][final["rounds"][-1]["byes"][0]]["name"]
        assert page.page.inner_text("#tour-last").startswith("Round 3: ") and f"Bye: {last_bye}." in \
            page.page.inner_text("#tour-last")
        # the same screen in Russian: the language switch redraws it
        page.page.select_option("#lang", "ru")
        assert f"Турнир окончен. Ваше место: {mine['place']} из 3." in page.page.inner_text("#tour-status")
        assert page.page.inner_text("#tour-standings thead").split() == ["Место", "Игрок", "Очки", "Бухгольц"]
        assert "Свободный тур" in page.page.inner_text("#tour-last")
        assert page.clicks > 0 and not person.errors, person.errors
        assert terminal.thread is not None
        terminal.thread.join(60)
        assert terminal.error is None, (terminal.error, terminal.screen[-3000:])
        check_terminal(terminal, 1, final)
        print(f"a Swiss of three (a page, a terminal, the SDK), three rounds in {elapsed:.1f} s")
    finally:
        context.close()
        if terminal is not None:
            terminal.child.close(force=True)
