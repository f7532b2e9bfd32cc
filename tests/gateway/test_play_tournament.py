"""Issue 41's test as people use it: six people play a whole Bykovo micro-tournament online to its end against a
real gunicorn gateway and engine. Two are on the page (/play, Debian's chromium driven by Playwright, a browser
context each: one in English, one in Russian), each joining by their invite link and playing their rounds by
clicking their tiles at the page's own table (one joins by the link, the other from the page's lobby of public
tournaments); one is in the terminal (`domino play --join LINK` in a
pseudo-terminal, answering each move prompt with the first legal move); three use the SDK (a thread each,
test_sdk_tournaments). Each round's players, seats and sit-outs, what the SDK people were told, every round's
points and eliminations and the final places are checked against the independent reading of RULES.md B in
test_hosted_tournament (`Sheet`, through test_sdk_tournaments' `Checker`); then what each page and the terminal
showed their person: every round they played (at which seat) or sat out, the final standings, their place. One
page is reloaded mid-tournament and comes back to it (its kept credential).

A Swiss too (the last two tests, on the same gateway and browser: no process of their own): three people at
tables of two (one on the page, one in the terminal, one with the SDK) for three rounds, every bye, table and
standing checked against the tournament's view; five at tables of four, the page's bye worth 3 points."""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import APIResponse, Browser, Route

from clients.sdk import Participant, RestClient, Seat
from clients.sdk.errors import IllegalAction, MatchOver, ProblemError

from .conftest import Gateway
from .test_hosted_tournament import HOSTED, Sheet, call, first_move, ok, tour_gw  # noqa: F401
from .test_hosted_tournament import Person as Joined
from .test_play_browser import PHONE, browser, shots  # noqa: F401
from .test_play_friends_browser import Person, answered_late
from .test_play_tournament_terminal import Terminal, check_terminal, spawn_terminal
from .test_sdk_tournaments import Checker, Told, sdk_person

pytestmark = pytest.mark.service

Json = dict[str, Any]
DEADLINE = 300.0


class PagePerson:
    """A person on the page, clicking as they would: their first playable tile (its first end), else draw or
    knock, whenever the page shows their turn at the round's table."""

    def __init__(self, person: Person) -> None:
        self.person = person
        self.page = person.page
        self.clicks = 0

    def screen(self) -> str:
        return self.person.screen()

    def act(self) -> bool:
        """One move if it is this person's turn now (True), once the page has drawn its answer."""
        if self.screen() != "table":
            return False
        page = self.page
        tiles, extra = page.locator("#hand .tile.legal"), page.locator("#extra-actions button")
        if not tiles.count() and not extra.count():
            return False
        before = self.person.renders()
        try:
            if tiles.count():
                tiles.first.click(timeout=2000)
                if page.locator("#choices button").count():
                    page.locator("#choices button").first.click(timeout=2000)
            else:
                extra.first.click(timeout=2000)
        except Exception:  # noqa: BLE001 - the table changed under the click (the round ended): look again
            return False
        self.clicks += 1
        deadline = time.monotonic() + 10
        while self.person.renders() == before and time.monotonic() < deadline:
            page.wait_for_timeout(20)
        return True

    def rounds(self) -> dict[int, int | None]:
        """What the page lists as this person's rounds: the seat played (from 0), or None: sat out."""
        found: list[list[str]] = self.page.eval_on_selector_all(
            "#tour-rounds li", "(els) => els.map((e) => [e.dataset.round, e.dataset.seat ?? '', e.dataset.sitOut ?? ''])")
        return {int(n): (None if out else int(seat)) for n, seat, out in found}

    def standings(self) -> list[tuple[int, int, int]]:
        """The standings the page shows: (participant index, place, total)."""
        rows: list[list[str]] = self.page.eval_on_selector_all(
            "#tour-standings tbody tr", "(els) => els.map((e) => [e.dataset.index, e.dataset.place, e.dataset.total])")
        return [(int(i), int(p), int(t)) for i, p, t in rows]


def wait_for_the_join_screen(person: Person) -> None:
    """Until the join screen says what the tournament is. Its button is ready at once (an invite is enough to
    join), but what it says about the tournament comes with the tournament's look, a moment later."""
    person.wait_for(lambda: person.screen() == "tournament" and person.page.locator("#tour-join").is_enabled()
                    and person.page.inner_text("#tour-join-about") != "", "the tournament's join screen")


def check_page(who: PagePerson, index: int, final: Json, sheet: Sheet, over_text: str) -> None:
    """What the page showed its person, against the rules' reading of each round and the final places."""
    out_after = next((n for n, g in enumerate(sheet.gone, 1) if index in g), None)
    expected: dict[int, int | None] = {}
    for played in final["rounds"]:
        if out_after is not None and played["number"] > out_after:
            continue
        expected[played["number"]] = played["players"].index(index) if index in played["players"] else None
    assert who.rounds() == expected, (who.person.name, who.rounds(), expected)
    assert who.standings() == [(s["index"], s["place"], s["total"]) for s in final["standings"]]
    mine = next(s for s in final["standings"] if s["index"] == index)
    status = who.page.inner_text("#tour-status")
    assert over_text.format(place=mine["place"], n=len(final["standings"])) in status, status
    assert who.page.locator("#tour-standings tr.me").get_attribute("data-index") == str(index)


def test_six_people_on_the_page_the_terminal_and_the_sdk_play_a_bykovo_tournament(
        browser: Browser, tour_gw: Gateway, tmp_path: Path, shots: Path) -> None:  # noqa: F811
    gw = tour_gw
    api = RestClient(gw.url)
    opened = api.open_tournament(6, name="Friday online", rated=False, public=True)
    tid = opened.tournament_id
    links = [i.link for i in opened.invites]
    contexts = [browser.new_context(viewport=PHONE), browser.new_context(viewport=PHONE, locale="ru-RU")]
    terminal = None
    try:
        # two people on the page: Anna by her link, Boris (in Russian) from the page's lobby of tournaments; each
        # on the join screen gives a name and presses the button
        pages = []
        for context, link, name in zip(contexts, [links[0], gw.url + "/play"], ["Anna", "Boris"], strict=True):
            person = Person(context, link, name)
            if name == "Boris":
                person.page.click("#to-tournaments")
                person.page.click(f"#tour-lobby li[data-tournament='{tid}'] button")
            wait_for_the_join_screen(person)
            person.page.fill("#tour-name", name)
            person.page.click("#tour-join")
            person.wait_for(lambda p=person: p.page.locator("#tour-box").get_attribute("data-status") == "waiting",
                            "the tournament's standings")
            assert "invite" not in person.page.url and person.page.url.endswith(f"/play?tournament={tid}")
            pages.append(PagePerson(person))
        assert "Ждём, когда хозяин его начнёт" in pages[1].page.inner_text("#tour-status")
        # one in the terminal, by their link
        terminal = spawn_terminal(gw, tmp_path, "--join", links[2], "--name", "Cyril")
        terminal.expect(r"place 3 of 6 \(3 joined\)\. Waiting for the host to start it")
        # three with the SDK
        participants = [api.join_tournament_link(link, name=name) for link, name in zip(links[3:], ["Dasha", "Egor", "Fedya"],
                                                                                         strict=True)]
        opened.start()
        began = time.monotonic()
        terminal.answer_moves(began + DEADLINE)
        told = Told()
        threads = [threading.Thread(target=sdk_person(p, told, began + DEADLINE), daemon=True) for p in participants]
        for thread in threads:
            thread.start()
        view = api.tournament(tid)
        assert [p.name for p in view.participants] == ["Anna", "Boris", "Cyril", "Dasha", "Egor", "Fedya"]
        held = {p.index: p.credential for p in participants}
        checker = Checker(gw, tid, [Joined(p.name, held.get(p.index, ""), p.index, p.player) for p in view.participants],
                          told)
        final = None
        reloaded = shot = False
        while final is None:
            assert time.monotonic() < began + DEADLINE, f"the tournament did not end within {DEADLINE} s"
            assert terminal.error is None, (terminal.error, terminal.screen[-3000:])
            moved = [who.act() for who in pages]
            final = checker.step()
            if not shot and pages[1].screen() == "table":
                shot = True
                pages[1].page.screenshot(path=str(shots / "tournament-round.png"))
            if not reloaded and checker.play.sheet is not None and len(checker.play.sheet.played) >= 1:
                # Anna reloads the page mid-tournament: the kept credential brings her back to it, and to her
                # round's table when she plays one
                reloaded = True
                pages[0].page.reload()
                pages[0].page.wait_for_selector("#variant option[value=kozel]", state="attached")
                pages[0].person.wait_for(lambda: pages[0].page.locator("#tour-box").get_attribute("data-status")
                                         not in (None, ""), "the tournament again after a reload")
            if not any(moved):
                time.sleep(0.05)
        elapsed = time.monotonic() - began
        sheet = checker.play.sheet
        assert sheet is not None and sheet.over
        order = [s["index"] for s in final["standings"]]
        sheet.check_standings(order)
        assert [s["official"] for s in final["standings"]] == [True] * 3 + [False] * 3
        for thread in threads:
            thread.join(30)
        assert not told.errors, told.errors
        # what each person was shown: the page's rounds, standings and place; the terminal's lines
        for who in pages:
            who.person.wait_for(lambda w=who: w.page.locator("#tour-box").get_attribute("data-status") == "over",
                                "the tournament's end")
        pages[0].page.screenshot(path=str(shots / "tournament-over.png"))
        check_page(pages[0], 0, final, sheet, "The tournament is over. Your place: {place} of {n}.")
        check_page(pages[1], 1, final, sheet, "Турнир окончен. Ваше место: {place} из {n}.")
        assert sum(p.clicks for p in pages) > 0
        for who in pages:
            assert not who.person.errors, who.person.errors
        assert terminal.thread is not None
        terminal.thread.join(60)
        assert terminal.error is None, terminal.error
        check_terminal(terminal, 2, final, sheet)
        print(f"six people (two pages, a terminal, three SDK), {len(final['rounds'])} rounds in {elapsed:.1f} s")
    finally:
        for context in contexts:
            context.close()
        if terminal is not None:
            terminal.child.close(force=True)


def test_the_page_frees_a_place_before_the_start_and_says_why_it_cannot_join(
        browser: Browser, tour_gw: Gateway) -> None:  # noqa: F811
    """Anna joins a public tournament by its link and leaves it before the start (confirmed): the place is freed
    and the page forgets it. Once four others filled it, the page says it is full; once started, that it has."""
    api = RestClient(tour_gw.url)
    opened = api.open_tournament(4, name="Small", public=True, rated=False)
    tid = opened.tournament_id
    context = browser.new_context(viewport=PHONE)
    try:
        anna = Person(context, f"{tour_gw.url}/play?tournament={tid}", "Anna")
        anna.page.on("dialog", lambda dialog: dialog.accept())
        wait_for_the_join_screen(anna)
        assert "0 of 4 places taken" in anna.page.inner_text("#tour-join-about")
        anna.page.fill("#tour-name", "Anna")
        anna.page.click("#tour-join")
        anna.wait_for(lambda: "1 of 4 joined" in anna.page.inner_text("#tour-status"), "her place")
        assert [p.name for p in api.tournament(tid).participants] == ["Anna"]
        # The leave's answer comes late, so the stream tells of the leave first (as it may on any network):
        # the page asks nothing with the credential it is giving up (a 401 in its console otherwise).
        anna.page.route("**/leave", answered_late)
        anna.page.click("#tour-leave")
        anna.wait_for(lambda: "You left the tournament." in anna.page.inner_text("#status"), "the place freed")
        assert api.tournament(tid).participants == []
        assert anna.evaluate(f"localStorage.getItem('domino-tournament:{tid}')") is None
        people = [api.join_tournament(tid, name=f"P{i}") for i in range(4)]
        anna.page.goto(f"{tour_gw.url}/play?tournament={tid}")
        wait_for_the_join_screen(anna)
        anna.page.click("#tour-join")
        anna.wait_for(lambda: "Every place of this tournament is taken." in anna.page.inner_text("#message"), "full")
        opened.start()
        anna.page.reload()
        anna.wait_for(lambda: "This tournament has started" in anna.page.inner_text("#message"), "started")
        assert anna.page.locator("#tour-join").is_disabled()
        assert len(people) == 4 and not anna.errors, anna.errors
    finally:
        context.close()


# ---------------------------------------------------------------- a Swiss


SWISS_DEADLINE = 180.0


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


def check_swiss_terminal(terminal: Terminal, index: int, final: Json) -> None:
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
    """A hosted Swiss (docs/tournaments.md, "Swiss") as people use it: three people, Kozel for two to 1 point (a
    match is a round or two), three rounds, so each round someone has a bye and everyone has one. One is on the page
    (/play in chromium, joining by the link), one in the terminal (`domino play --join LINK` in a pseudo-terminal),
    one with the SDK; all play to the end against a real gunicorn gateway and engine. What the page and the terminal
    showed their person (their table each round or their bye, the standings with points and Buchholz, the final
    places and their own place) is checked against the tournament's own view at the end; at the page's round table
    there is no abort (leaving the tournament is the exit) and no rating chip (a casual tournament's tables are not
    rated: `table.rated`)."""
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
        wait_for_the_join_screen(person)
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
        terminal.answer_moves(began + SWISS_DEADLINE)
        errors: list[BaseException] = []
        threads = [threading.Thread(target=swiss_person(p, began + SWISS_DEADLINE, errors), daemon=True)
                   for p in participants]
        for thread in threads:
            thread.start()
        saw_table = False  # the page's bye is checked in its rounds (a bye's status may pass between two looks)
        while api.tournament(tid).status != "over":
            assert time.monotonic() < began + SWISS_DEADLINE, f"the Swiss did not end within {SWISS_DEADLINE} s"
            assert not errors, errors
            assert terminal.error is None, (terminal.error, terminal.screen[-3000:])
            moved = page.act()
            status = page.page.inner_text("#tour-status")
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
        assert saw_table
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
        check_swiss_terminal(terminal, 1, final)
        print(f"a Swiss of three (a page, a terminal, the SDK), three rounds in {elapsed:.1f} s")
    finally:
        context.close()
        if terminal is not None:
            terminal.child.close(force=True)


def test_the_page_at_a_swiss_of_tables_of_four_has_a_bye_worth_three_points(
        browser: Browser, tour_gw: Gateway) -> None:  # noqa: F811
    """Five people, Kozel for four to 1 point, one round: the last to join (on the page) has the bye, worth a match
    won at four alone (3 points); the page says so, then the final standings (points, Buchholz) and its place as
    the tournament's view has them."""
    api = RestClient(tour_gw.url)
    sdk_opened = api.open_tournament(5, format="swiss", variant="kozel", players=4, options={"target": 1},
                                     rounds=1, rated=False)
    tid = sdk_opened.tournament_id
    opened = {"tournament_id": tid, "host_key": sdk_opened.host_key,
              "invites": [{"code": i.code, "link": i.link} for i in sdk_opened.invites]}
    participants = [api.join_tournament(tid, invite["code"], name=name)
                    for invite, name in zip(opened["invites"][:4], ["Anna", "Boris", "Cyril", "Dasha"], strict=True)]
    context = browser.new_context(viewport=PHONE)
    # the join screen's look at the tournament held back by the test: the button is ready before the screen says
    # what it joins (an invite is enough), and what it says comes with the look's answer
    held: list[tuple[Route, APIResponse]] = []
    context.route(f"**/v1/tournaments/hosted/{tid}", lambda route: held.append((route, route.fetch())), times=1)
    try:
        person = Person(context, opened["invites"][4]["link"], "Egor")
        person.wait_for(lambda: bool(held) and person.page.locator("#tour-join").is_enabled(), "the join button")
        assert person.page.inner_text("#tour-join-about") == ""
        route, answer = held[0]
        route.fulfill(response=answer)
        wait_for_the_join_screen(person)
        assert "Swiss of kozel at tables of 4, 1 round" in person.page.inner_text("#tour-join-about")
        person.page.fill("#tour-name", "Egor")
        person.page.click("#tour-join")
        person.wait_for(lambda: person.page.locator("#tour-box").get_attribute("data-status") == "waiting",
                        "the tournament's standings")
        ok(call(tour_gw, "POST", f"{HOSTED}/{tid}/start", credential=opened["host_key"]))
        began = time.monotonic()
        # the bye is said while the round is played: the others move only once the page has said it (a round of
        # Kozel to 1 point may end before the page looks again)
        person.wait_for(lambda: "Round 1 of 1: you have a bye this round (a bye is worth a match won: 3 points)."
                        in person.page.inner_text("#tour-status"), "the bye")
        errors: list[BaseException] = []
        threads = [threading.Thread(target=swiss_person(p, began + SWISS_DEADLINE, errors), daemon=True)
                   for p in participants]
        for thread in threads:
            thread.start()
        person.wait_for(lambda: person.page.locator("#tour-box").get_attribute("data-status") == "over",
                        "the tournament's end")
        for thread in threads:
            thread.join(30)
        assert not errors, errors
        final = api.tournament(tid).raw
        assert final["rounds"][0]["byes"] == [4] and len(final["rounds"][0]["tables"][0]["players"]) == 4
        played = api.tournament(tid).rounds[0]  # the SDK's view of the round: its table and its bye
        assert played.byes == [4] and [t["players"] for t in played.tables] == [final["rounds"][0]["tables"][0]["players"]]
        page = SwissPage(person)
        assert page.swiss_rounds() == {1: None}
        assert page.swiss_standings() == [(s["index"], s["place"], s["score"], s["buchholz"])
                                          for s in final["standings"]]
        mine = next(s for s in final["standings"] if s["index"] == 4)
        assert mine["score"] == 3
        assert f"The tournament is over. Your place: {mine['place']} of 5." in person.page.inner_text("#tour-status")
        assert not person.errors, person.errors
        print(f"a Swiss of five at tables of four, one round in {time.monotonic() - began:.1f} s")
    finally:
        context.close()
