"""Play with friends at /play, in Debian's chromium driven by Playwright, against real services: two
browser contexts (two people on two devices) play a whole Kozel round with two bots through an invite
link, each seeing only its own hand and the other's moves arriving live on its seat's event stream,
marked on the board; one reloads mid-round and goes on from the same seat and position; a third
context with a made-up invite is refused with a clear message; the lobby lists a public table and
seats a person from it. Screenshots as in test_play_browser.py (DOMINO_UPDATE_SCREENSHOTS=1 writes
them to docs/play/, which docs/play.md shows).

The REST contract the page follows is docs/tables.md. The gateway (`friends_gw`) is set up as the tables'
tests set theirs up (two gunicorn workers on one SQLite store: a seat's stream and the call that changes
its match are often served by different workers), and a stream with nothing new for 2 s is closed by the
server (`closed`, reason idle), so the page reopens its streams many times in a round, as a phone on a
flaky network would.
"""
from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Route

from .conftest import EngineProc, Gateway, gateway_env, launch_gateway
from .test_play_browser import (  # noqa: F401
    MATCHING_ON_SCREEN,
    PHONE,
    STEP_TIMEOUT,
    browser,
    check_no_horizontal_scroll,
    check_on_screen,
    shots,
)

pytestmark = pytest.mark.service


@pytest.fixture(scope="module")
def friends_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("friends"), GATEWAY_SPECTATE_IDLE="2"))
    yield gw
    gw.stop()


def expected_404(text: str, url: str) -> bool:
    """The console's line for an archive 404 the page expects (docs/play.md, Clocks, ratings and the
    leaderboard): a record not archived yet. (A newcomer's rating is not looked up: no 404 for it.)"""
    return "404" in text and re.search(r"/v1/matches/[0-9a-f]+/record$", url) is not None


class Person:
    """One person's browser (a context of its own: its own localStorage), read and clicked as they would."""

    def __init__(self, context: BrowserContext, url: str, name: str) -> None:
        self.context = context
        self.name = name
        self.page = context.new_page()
        self.errors: list[str] = []
        # Errors in the console, but not the 409 of a move made at once by the other seat (next round), nor
        # the requests that fail while the test has the context offline, nor the archive's documented 404 the
        # page reads as such: a finished match's record asked for a moment before the archive holds it (asked
        # again). A player with no archived match yet is "rating: new" without a lookup: its 404 is an error.
        self.page.on("console", lambda m: self.errors.append(m.text)
                     if m.type == "error" and not re.search(r"409|CONFLICT|ERR_INTERNET_DISCONNECTED", m.text)
                     and not expected_404(m.text, m.location.get("url", "")) else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.streams: list[str] = []   # the addresses of the event streams the page opened
        self.page.on("request", lambda r: self.streams.append(r.url) if "/events?" in r.url else None)
        self.page.set_default_timeout(STEP_TIMEOUT)
        self.page.goto(url)
        self.page.wait_for_selector("#variant option[value=kozel]", state="attached")

    def evaluate(self, script: str, arg: Any = None) -> Any:
        return self.page.evaluate(script, arg)

    def renders(self) -> int:
        return int(self.evaluate("Number(document.body.dataset.renders || 0)"))

    def warnings(self) -> int:
        return int(self.evaluate("Number(document.body.dataset.warnings || 0)"))

    def screen(self) -> str:
        return str(self.evaluate("document.body.dataset.screen || ''"))

    def wait_for(self, done: Callable[[], bool], what: str = "the page") -> None:
        """Poll from here: the page's CSP forbids the eval that Playwright's wait_for_function uses."""
        deadline = time.monotonic() + STEP_TIMEOUT / 1000
        while not done():
            assert time.monotonic() < deadline, f"{self.name}: {what} did not come in time ({self.page.inner_text('#status')!r}," \
                f" {self.page.inner_text('#message')!r})"
            self.page.wait_for_timeout(25)

    def saved(self) -> Any:
        """What the page keeps in localStorage for its table (the seat's credential, the match it shows)."""
        return self.evaluate("(() => { const k = Object.keys(localStorage).find((k) => k.startsWith('domino-table:'));"
                             " return k ? JSON.parse(localStorage.getItem(k)) : null; })()")

    def view(self) -> Any:
        return self.saved()["view"]

    def seq(self) -> int:
        saved = self.saved()
        return -1 if saved is None else int(saved["seq"])

    def live(self) -> bool:
        return bool(self.evaluate("document.getElementById('live').dataset.state === 'live'"))

    def wait_playing(self) -> None:
        self.wait_for(lambda: self.screen() == "table" and self.live() and self.saved()["view"] is not None,
                      "the table and its live stream")

    def texts(self, selector: str, attribute: str) -> list[str]:
        found: list[str] = self.page.eval_on_selector_all(
            selector, "(elements, name) => elements.map((e) => e.getAttribute(name) || '')", attribute)
        return found

    def hand(self) -> list[str]:
        return self.texts("#hand .tile", "data-tile")

    def round_over(self) -> bool:
        return self.page.locator("#round-end").is_visible()


def _tile(part: str) -> str:
    a, b = sorted(part.split("@")[0].split("-"))
    return f"{a}-{b}"


def open_table(anna: Person, seats: list[str], public: bool = False, name: str = "Anna's table",
               shot: Path | None = None, target: int | None = None) -> None:
    """Anna opens a Kozel table from the page: seat 0 hers, each other seat a person or a bot level;
    `target`: the points that end the match, written in the form (else left blank: the preset's 101)."""
    anna.page.click("#to-friends")
    anna.page.select_option("#t-variant", "kozel")
    anna.page.select_option("#t-players", str(len(seats) + 1))
    for seat, kind in enumerate(seats, 1):
        anna.page.select_option(f"#seat-kind-{seat}", kind)
    anna.page.fill("#t-your-name", anna.name)
    anna.page.fill("#t-name", name)
    if target is not None:
        anna.page.fill("#t-target", str(target))
    if public:
        anna.page.check("#t-public")
    if shot:
        check_no_horizontal_scroll(anna.page)
        anna.page.screenshot(path=str(shot))
    anna.page.click("#open-table")


def check_own_hand_only(person: Person, seat: int) -> None:
    """The page shows its seat's hand and nothing of another's: its tile buttons are exactly the view's
    hand, the view is its seat's, and the other seats are counts on their chips."""
    view = person.view()
    assert view["seat"] == seat and person.saved()["me"] == seat
    assert sorted(person.hand()) == sorted(view["hand"])
    assert view["revealed_hands"] == [] or view["round_over"]


def play_one_turn(person: Person) -> tuple[str, str | None]:
    """The person to move clicks their first playable tile (and the first end offered), or draws or
    knocks; returns what was done ("tile", the tile) or ("draw"|"pass", None), once the page shows it."""
    before = person.seq()
    page = person.page
    if page.locator("#hand .tile.legal").count():
        tile = page.locator("#hand .tile.legal").first.get_attribute("data-tile")
        page.locator("#hand .tile.legal").first.click()
        if page.locator("#choices button").count():
            page.locator("#choices button").first.click()
        person.wait_for(lambda: person.seq() > before, "the answer to a move")
        return "tile", tile
    button = page.locator("#extra-actions button").first
    action = button.get_attribute("data-action")
    button.click()
    person.wait_for(lambda: person.seq() > before, "the answer to a draw or knock")
    return str(action), None


def test_two_people_and_two_bots_play_a_whole_kozel_round_through_an_invite(
        browser: Browser, friends_gw: Gateway, shots: Path) -> None:  # noqa: F811
    contexts = [browser.new_context(viewport=PHONE) for _ in range(3)]
    try:
        anna = Person(contexts[0], friends_gw.url + "/play", "Anna")
        open_table(anna, ["person", "expert", "greedy"], shot=shots / "friends-open.png")
        anna.wait_for(lambda: anna.screen() == "waiting" and anna.page.locator("#invite-1").count() == 1,
                      "the invite link")
        assert anna.page.locator("#invite-2, #invite-3").count() == 0   # bots need no invite
        link = anna.page.input_value("#invite-1")
        found = re.search(r"/play\?table=([0-9a-f]{32})&invite=([A-Za-z0-9]+)$", link)
        assert found is not None, link
        table_id = found.group(1)
        assert "Waiting for one more person" in anna.page.inner_text("#status")
        check_no_horizontal_scroll(anna.page)
        anna.page.screenshot(path=str(shots / "friends-invite.png"))
        # The credential is in localStorage, not in the address.
        saved = anna.saved()
        assert saved["credential"] and saved["me"] == 0 and saved["credential"] not in anna.page.url

        # A third device with a made-up invite for this table is refused, holds no seat, and learns nothing of
        # the table (a private table shows itself to its seats, its host and an unused invite only).
        mallory = Person(contexts[2], f"{friends_gw.url}/play?table={table_id}&invite=MADEUP42", "Mallory")
        mallory.wait_for(lambda: "invite link does not open a seat" in mallory.page.inner_text("#message"),
                         "the refusal")
        message = mallory.page.inner_text("#message")
        assert "new link" in message, message
        assert "Anna's table" not in mallory.page.inner_text("body")
        assert mallory.saved() is None and not mallory.page.locator("#hand .tile").count()
        mallory.page.screenshot(path=str(shots / "friends-refused.png"))

        # Boris opens the link on his device, gives his name and takes seat 1: the match is dealt.
        boris = Person(contexts[1], link, "Boris")
        boris.wait_for(lambda: "Anna's table" in boris.page.inner_text("#join-title"), "the join screen")
        assert "Seat 1: Anna" in boris.page.inner_text("#join-seats")   # seats counted from 1 on screen
        boris.page.fill("#join-name", "Boris")
        boris.page.click("#join-seat")
        boris.wait_playing()
        anna.wait_playing()   # her page was waiting: it sees the table full and the match dealt
        assert "invite=" not in boris.page.url and f"table={table_id}" in boris.page.url
        for person, seat in ((anna, 0), (boris, 1)):
            check_own_hand_only(person, seat)
            chips = person.page.eval_on_selector_all("#opponents .seat b", "(bs) => bs.map((b) => b.textContent)")
            assert chips == (["You", "Boris", "Seat 3", "Seat 4"] if seat == 0 else ["Anna", "You", "Seat 3", "Seat 4"])
        assert not set(anna.hand()) & set(boris.hand())
        # Neither page holds the other's hand anywhere it keeps the match.
        for person, other in ((anna, boris), (boris, anna)):
            kept = json.dumps(person.saved()["view"])
            assert not [t for t in other.hand() if f'"{t}"' in kept], (person.name, other.hand())

        people = {0: anna, 1: boris}
        turns, reloaded, shot, dropped_once = 0, False, False, False
        while not (anna.round_over() and boris.round_over()):
            turns += 1
            assert turns < 200
            view = anna.view()
            mover = view["to_move"]
            if view["round_over"]:   # Anna's page is there; Boris's is on its way
                boris.wait_for(boris.round_over, "the end of the round on the stream")
                break
            assert mover in people, view   # the bots move at once, in the answer to the person before them
            person, other = people[mover], people[1 - mover]
            other.wait_for(lambda o=other, p=person: o.seq() == p.seq(), "the same position on both devices")
            assert person.page.inner_text("#status") == "Your turn"
            assert other.page.inner_text("#status") == f"{person.name} to move"
            assert person.page.title() == "Your turn · Domino table" and other.page.title() == "Domino table"
            check_own_hand_only(person, mover)
            # On a phone the table line (its name, live, Leave) costs the hand nothing: all on the first screen.
            check_no_horizontal_scroll(person.page)
            check_on_screen(person.page, MATCHING_ON_SCREEN + ", #table-bar")
            # Once, Boris's network drops while Anna moves (the browser offline, its stream closed meanwhile):
            # when it is back his page reopens the stream with a fresh ticket from the last event it saw, and
            # gets the move it missed as an update (in its log), not as a new view.
            dropped = not dropped_once and reloaded and mover == 0
            if dropped:
                dropped_once = True
                boris.context.set_offline(True)
                boris.wait_for(lambda: not boris.live(), "the stream's drop noticed")
                log_before = boris.saved()["log"]
            kind, tile = play_one_turn(person)
            if dropped:
                missed = person.seq()
                boris.page.wait_for_timeout(500)
                assert boris.seq() < missed
                boris.context.set_offline(False)
            # The move reaches the other device on its stream, without a click there, and is marked on its
            # board with the mover's seat (the tiles the bots then played too, with theirs).
            other.wait_for(lambda o=other, p=person: o.seq() == p.seq(), "the other seat's move on the stream")
            if dropped:
                lines = boris.saved()["log"]   # the last 60 lines: what came after those seen before the drop
                new = lines[max(i for i in range(len(lines) + 1) if lines[:i] == log_before[len(log_before) - i:]):]
                assert any(line.startswith("Anna ") for line in new), (log_before, lines)
                boris.wait_for(boris.live, "the stream live again")
            after = other.view()
            if kind == "tile" and not after["round_over"] and after["round_number"] == view["round_number"]:
                marked = dict(zip(other.texts("#layout g.domino.recent", "data-tile"),
                                  other.texts("#layout g.domino.recent", "data-by"), strict=True))
                assert marked.get(tile) == str(mover), (tile, marked)
                assert str(1 - mover) not in marked.values()   # the viewer's own moves are never marked
                if not shot and mover == 0:
                    boris.page.screenshot(path=str(shots / "friends-playing.png"))
                    shot = True
            check_own_hand_only(other, 1 - mover)
            # Mid-round Boris reloads his page: the same seat, hand and table, then on with the round.
            if not reloaded and turns >= 4 and not after["round_over"]:
                reloaded = True
                hand, layout, log = boris.hand(), boris.view()["layout"], boris.page.inner_text("#log")
                boris.page.reload()
                boris.wait_playing()
                assert boris.saved()["me"] == 1 and sorted(boris.hand()) == sorted(hand)
                assert boris.view()["layout"] == layout and boris.page.inner_text("#log") == log
                assert "You" in boris.page.inner_text("#opponents .seat-1")
        assert reloaded, "the round ended before the reload"
        assert dropped_once, "Anna had no turn after the reload"
        # Every stream Boris's page opened had a ticket of its own, and the credential never went in a URL.
        streams = boris.streams
        tickets = [re.search(r"ticket=([^&]+)", url).group(1) for url in streams]  # type: ignore[union-attr]
        assert len(tickets) == len(set(tickets)) >= 3, streams   # the first, after the reload, after the drop
        assert any("last_event_id=" in url for url in streams[2:]), streams
        assert not [url for url in streams if boris.saved()["credential"] in url]
        for person in (anna, boris):
            view = person.view()
            assert view["round_over"] and view["ending"] in ("out", "fish")
            assert person.page.inner_text("#round-result").startswith(f"Round 1: {view['ending']}")
            assert len(view["revealed_hands"]) == 4   # every hand once the round is over
        assert anna.view()["layout"] == boris.view()["layout"]
        anna.page.screenshot(path=str(shots / "friends-round-over.png"), full_page=True)
        # Either of them deals the next round; the other sees it on the stream.
        anna.page.click("#next-round")
        boris.wait_for(lambda: boris.view()["round_number"] == 2 and not boris.round_over(), "the next round")
        assert len(boris.hand()) == 7 and not set(boris.hand()) & set(anna.hand())
        assert anna.errors == [] and boris.errors == [], (anna.errors, boris.errors)
    finally:
        for context in contexts:
            context.close()


def test_a_link_to_no_table_is_refused_at_once(browser: Browser, friends_gw: Gateway) -> None:  # noqa: F811
    context = browser.new_context(viewport=PHONE)
    try:
        person = Person(context, f"{friends_gw.url}/play?table={'0' * 32}&invite=NOPE1234", "Nobody")
        person.wait_for(lambda: person.page.locator("#message").is_visible(), "the refusal")
        assert "There is no such table" in person.page.inner_text("#message")
        assert person.page.locator("#join-seat").is_disabled() and person.saved() is None
    finally:
        context.close()


def test_the_lobby_seats_a_person_at_a_public_table(browser: Browser, friends_gw: Gateway, shots: Path) -> None:  # noqa: F811
    contexts = [browser.new_context(viewport=PHONE) for _ in range(3)]
    try:
        # Boris is looking at the lobby already: the table appears there without a click on Refresh.
        boris = Person(contexts[1], friends_gw.url + "/play", "Boris")
        boris.page.click("#to-lobby")
        boris.wait_for(lambda: boris.page.locator("#lobby-list li").count() > 0, "the lobby")
        anna = Person(contexts[0], friends_gw.url + "/play", "Anna")
        open_table(anna, ["person", "random", "random"], public=True, name="Open to all")
        anna.wait_for(lambda: anna.screen() == "waiting", "the waiting table")
        table_id = anna.saved()["table"]["table_id"]
        # The table's address without an invite: a public table offers its free seats there too.
        carol = Person(contexts[2], f"{friends_gw.url}/play?table={table_id}", "Carol")
        carol.wait_for(lambda: carol.page.locator("#join-seat-number option").count() == 1, "the free seat offered")
        assert carol.page.input_value("#join-seat-number") == "1" and carol.page.locator("#join-seat").is_enabled()
        item = f"#lobby-list li[data-table='{table_id}']"
        boris.wait_for(lambda: boris.page.locator(item).count() == 1, "the table in the lobby")
        assert boris.page.locator(f"{item} button[data-seat]").count() == 1   # seat 1, the one free
        assert "Anna" in boris.page.inner_text(item) and "random" in boris.page.inner_text(item)
        boris.page.fill("#lobby-name", "Boris")
        check_no_horizontal_scroll(boris.page)
        boris.page.screenshot(path=str(shots / "friends-lobby.png"))
        boris.page.click(f"{item} button[data-seat='1']")
        boris.wait_playing()
        anna.wait_playing()
        check_own_hand_only(boris, 1)
        check_own_hand_only(anna, 0)
        # The table is full: the lobby lists it no more.
        listed = [t["table_id"] for t in friends_gw.get("/v1/tables?limit=100").json["tables"]]
        assert table_id not in listed
        carol.page.reload()
        carol.wait_for(lambda: carol.page.locator("#message").is_visible(), "the full table refused")
        assert "The table is full" in carol.page.inner_text("#message") and carol.page.locator("#join-seat").is_disabled()
        # Away from the table (the header's Play with friends), Boris's page lists it among his and goes back.
        boris.page.click("#setup-box > summary")
        boris.page.click("#to-friends")
        assert boris.screen() == "friends" and boris.page.locator("#my-tables").is_visible()
        boris.page.click(f"#my-tables a[href='/play?table={table_id}']")
        boris.wait_playing()
        check_own_hand_only(boris, 1)
        assert anna.errors == [] and boris.errors == [], (anna.errors, boris.errors)
    finally:
        for context in contexts:
            context.close()


def test_a_seat_left_mid_match_is_taken_again_with_a_fresh_invite(browser: Browser, friends_gw: Gateway) -> None:  # noqa: F811
    """Boris leaves (the table waits, its default): his browser forgets the seat and his credential stops
    working; Anna's page shows the seat free and, as the one who opened the table, a fresh invite for it;
    Carol takes it with that link and goes on with the match where Boris left it."""
    contexts = [browser.new_context(viewport=PHONE) for _ in range(3)]
    try:
        anna = Person(contexts[0], friends_gw.url + "/play", "Anna")
        open_table(anna, ["person"])
        anna.wait_for(lambda: anna.page.locator("#invite-1").count() == 1, "the invite link")
        boris = Person(contexts[1], anna.page.input_value("#invite-1"), "Boris")
        boris.wait_for(lambda: boris.page.inner_text("#join-about") != "", "the join screen")
        boris.page.fill("#join-name", "Boris")
        boris.page.click("#join-seat")
        boris.wait_playing()
        anna.wait_playing()
        credential, match_id, hand = boris.saved()["credential"], boris.saved()["matchId"], boris.hand()
        boris.page.once("dialog", lambda dialog: dialog.accept())
        boris.page.click("#leave-table")
        boris.wait_for(lambda: boris.screen() == "friends", "the page after leaving")
        assert boris.saved() is None and "You left the table" in boris.page.inner_text("#status")
        assert boris.page.locator("#my-tables").is_hidden()
        gone = friends_gw.get(f"/v1/matches/{match_id}/seat", headers={"Authorization": f"Bearer {credential}"})
        assert gone.status == 401, gone.body
        anna.wait_for(lambda: anna.page.locator("#table-invites #invite-1").count() == 1, "a fresh invite for seat 1")
        assert anna.page.inner_text("#opponents .seat-1 small") == "seat free"
        if anna.view()["to_move"] == 1:
            assert anna.page.inner_text("#status") == "Waiting for someone to take seat 2"   # seat 1, counted from 1
        link = anna.page.input_value("#table-invites #invite-1")
        carol = Person(contexts[2], link, "Carol")
        carol.page.fill("#join-name", "Carol")
        carol.page.click("#join-seat")
        carol.wait_playing()
        assert carol.saved()["matchId"] == match_id and sorted(carol.hand()) == sorted(hand)   # where Boris left it
        anna.wait_for(lambda: anna.page.inner_text("#opponents .seat-1 b") == "Carol", "Carol's name on the chip")
        anna.wait_for(lambda: anna.page.locator("#table-invites").is_hidden(), "the invite withdrawn")
        assert anna.errors == [] and boris.errors == [] and carol.errors == []
    finally:
        for context in contexts:
            context.close()


def test_a_seat_left_while_waiting_is_freed_and_asked_for_no_more(browser: Browser, friends_gw: Gateway) -> None:  # noqa: F811
    """Boris takes a seat and leaves while the table waits for a third person, the leave's answer coming late (a
    slow network): his page asks nothing more with the credential it gives up (no 401 in its console), forgets the
    seat, and Anna's page shows the seat free again."""
    contexts = [browser.new_context(viewport=PHONE) for _ in range(2)]
    try:
        anna = Person(contexts[0], friends_gw.url + "/play", "Anna")
        open_table(anna, ["person", "person"])
        anna.wait_for(lambda: anna.page.locator("#invite-2").count() == 1, "the invite links")
        boris = Person(contexts[1], anna.page.input_value("#invite-1"), "Boris")
        boris.wait_for(lambda: boris.page.inner_text("#join-about") != "", "the join screen")
        boris.page.fill("#join-name", "Boris")
        boris.page.click("#join-seat")
        boris.wait_for(lambda: boris.screen() == "waiting", "the waiting screen")
        credential, table_id = boris.saved()["credential"], boris.saved()["table"]["table_id"]
        # A leave the gateway cannot answer (a 503): he is told, keeps his seat, and the page follows the table again.
        boris.page.route("**/leave", lambda route: route.fulfill(status=503, content_type="application/problem+json",
                                                                body=json.dumps({"title": "Service Unavailable"})))
        looks: list[str] = []
        boris.page.on("request", lambda r: looks.append(r.url) if r.url.endswith(f"/v1/tables/{table_id}") else None)
        boris.page.once("dialog", lambda dialog: dialog.accept())
        boris.page.click("#leave-waiting")
        boris.wait_for(lambda: "Could not leave the table" in boris.page.inner_text("#message"), "the leave refused")
        assert boris.screen() == "waiting" and boris.saved()["credential"] == credential
        boris.wait_for(lambda: len(looks) >= 2, "the table looked at again")
        assert [e for e in boris.errors if "503" in e] and not [e for e in boris.errors if "503" not in e], boris.errors
        boris.errors.clear()
        boris.page.unroute("**/leave")
        boris.page.route("**/leave", answered_late)   # longer than the waiting table's look (WATCH_MS)
        boris.page.once("dialog", lambda dialog: dialog.accept())
        boris.page.click("#leave-waiting")
        boris.wait_for(lambda: boris.screen() == "friends", "the page after leaving")
        assert boris.saved() is None and "You left the table" in boris.page.inner_text("#status")
        gone = friends_gw.get(f"/v1/tables/{table_id}", headers={"Authorization": f"Bearer {credential}"})
        assert gone.status == 401, gone.body
        anna.wait_for(lambda: "free" in anna.page.inner_text("#waiting-seats .seat-1"), "seat 2 free again")
        assert anna.errors == [] and boris.errors == [], (anna.errors, boris.errors)
    finally:
        for context in contexts:
            context.close()


def answered_late(route: Route) -> None:
    """A request sent on as it is, its answer handed to the page two seconds late (longer than a look's period)."""
    answer = route.fetch()
    time.sleep(2.0)
    route.fulfill(response=answer)


def kingdomino_turn(person: Person) -> None:
    """The person to move picks the first tile offered, places on the first legal squares, or discards."""
    before, page = person.seq(), person.page
    legal = person.view()["legal"]
    if legal[0].startswith("pick"):
        page.locator(".row[data-row=next] .ktile.pickable").first.click()
    elif legal[0].startswith("place"):
        page.locator(".kingdom:not(.small) .cell.first-ok").first.click()
        page.locator(".kingdom:not(.small) .cell.second-ok").first.click()
    else:
        page.click(f"#prompt button[data-action='{legal[0]}']")
    person.wait_for(lambda: person.seq() > before, "the answer to a Kingdomino move")


def test_a_whole_kingdomino_game_at_a_table_then_play_again(browser: Browser, friends_gw: Gateway) -> None:  # noqa: F811
    """The Kingdomino drawing is reused at a table: each device's own kingdom first and large ("You"),
    the other's small under the other person's name; a pick or a placement on one device shows on the
    other's rows and kingdoms without a click there. At the game's end both streams end; Play again on
    one device deals a new game that the other device follows by itself."""
    contexts = [browser.new_context(viewport=PHONE) for _ in range(2)]
    try:
        anna = Person(contexts[0], friends_gw.url + "/play", "Anna")
        anna.page.click("#to-friends")
        anna.page.select_option("#t-variant", "kingdomino")
        anna.page.select_option("#t-players", "2")
        anna.page.select_option("#seat-kind-1", "person")
        anna.page.fill("#t-your-name", "Anna")
        anna.page.click("#open-table")
        anna.wait_for(lambda: anna.page.locator("#invite-1").count() == 1, "the invite link")
        boris = Person(contexts[1], anna.page.input_value("#invite-1"), "Boris")
        boris.wait_for(lambda: boris.page.inner_text("#join-about") != "", "the join screen")
        boris.page.fill("#join-name", "Boris")
        boris.page.click("#join-seat")
        boris.wait_playing()
        anna.wait_playing()
        people = {0: anna, 1: boris}
        first_match = anna.saved()["matchId"]
        for _turn in range(200):
            if anna.view()["game_over"]:
                break
            for person, seat, other in ((anna, 0, "Boris"), (boris, 1, "Anna")):
                headings = person.page.eval_on_selector_all(".kingdom h3", "(hs) => hs.map((h) => h.textContent)")
                assert headings == ["You", other] and person.page.locator(".kingdom.small").count() == 1
                assert person.page.get_attribute(".kingdom:not(.small)", "data-player") == str(seat)
            mover = people[anna.view()["to_move"]]
            waiting = people[1 - anna.view()["to_move"]]
            waiting.wait_for(lambda w=waiting, m=mover: w.seq() == m.seq(), "the same position on both devices")
            assert mover.page.inner_text("#status") == "Your turn"
            kingdomino_turn(mover)
            waiting.wait_for(lambda w=waiting, m=mover: w.seq() == m.seq(), "the other's move on the stream")
            assert waiting.view()["grids"] == mover.view()["grids"] and waiting.view()["kings"] == mover.view()["kings"]
        assert anna.view()["game_over"] and boris.view()["game_over"]
        for person in (anna, boris):
            person.wait_for(lambda p=person: p.page.get_attribute("#live", "data-state") == "over", "the stream's end")
            assert person.page.inner_text("#round-result").startswith("Game over: ")
            assert person.page.locator("#play-again").is_visible()
        anna.page.click("#play-again")
        for person in (anna, boris):   # Boris's page, its stream ended, finds the new match on the table
            person.wait_for(lambda p=person: p.saved()["matchId"] not in (None, first_match) and p.live()
                            and not p.view()["game_over"], "the new game")
            assert person.page.locator("#play-again").is_hidden()
        assert anna.saved()["matchId"] == boris.saved()["matchId"]
        assert anna.errors == [] and boris.errors == []
    finally:
        for context in contexts:
            context.close()
