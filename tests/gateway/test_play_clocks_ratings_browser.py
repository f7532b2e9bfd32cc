"""Clocks, ratings and the leaderboard on /play, in Debian's chromium driven by Playwright, against a real
engine and gateway (docs/tables.md, Clocks and Players and ratings; docs/play.md).

Anna opens a Kozel table from the page with a clock of 10 s a move (the variant's rule when it runs out)
and Boris takes his seat from the invite link. Each page shows every seat's clock; the seat to move has the
running one, marked, counting down on the page between two stream lines with no request for it; each
person's rating is beside their name ("new": nobody has played yet). Nobody moves: the gateway's clock
keeper times the seat out with nobody calling, the match ends, both pages show each player's rating before
and after as the archive holds them, and the chips the new ratings. Then the leaderboard screen lists the
players in the archive's order, and, once eleven more matches are archived, a page of 20 and the next one by
the board's cursor. Screenshots as in test_play_browser.py (DOMINO_UPDATE_SCREENSHOTS=1 writes
them to docs/play/, which docs/play.md shows).
"""
from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext

from .conftest import PLAYER_KEYS, EngineProc, Gateway, gateway_env, launch_gateway, player_assertion
from .test_play_browser import PHONE, browser, check_no_horizontal_scroll, shots  # noqa: F401
from .test_play_friends_browser import Person
from .test_tables import call, ok

pytestmark = pytest.mark.service


@pytest.fixture(scope="module")
def clocks_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway of this module's own: its archive (SQLite) holds only the matches played here. Its streams
    are not closed for being quiet while a test waits for a clock: a page reopening its stream asks for a
    ticket with its credential, which takes a seat back from autopilot."""
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("clocks"), GATEWAY_SPECTATE_IDLE="120",
                                        GATEWAY_PLAYER_KEYS=PLAYER_KEYS))
    yield gw
    gw.stop()


def signed_in(context: BrowserContext, user: str) -> BrowserContext:
    """The page as a host app's signed-in user sees it: its login left the user's player assertion where the
    page reads it (localStorage "domino-player"), so the seats it takes are the user's and its matches rate."""
    context.add_init_script(f"localStorage.setItem('domino-player', {json.dumps(player_assertion(user))})")
    return context


def get(gw: Gateway, path: str) -> Any:
    with urllib.request.urlopen(gw.url + path, timeout=10) as reply:
        return json.loads(reply.read())


def clocks(person: Person) -> list[dict[str, Any]]:
    """Each seat's clock as the page shows it: its text, seconds left, and whether it is marked running."""
    found: list[dict[str, Any]] = person.page.eval_on_selector_all(
        "#opponents .seat", "(chips) => chips.map((c) => { const k = c.querySelector('.clock');"
        " return {seat: Number(c.dataset.seat), text: k ? k.textContent : null, left: k ? Number(k.dataset.left) : null,"
        " running: !!k && k.classList.contains('running'), chip: c.classList.contains('clock-running')}; })")
    return found


def ratings(person: Person) -> dict[int, str]:
    """The rating shown on each seat's chip, by seat (the seats without one left out)."""
    found: list[list[Any]] = person.page.eval_on_selector_all(
        "#opponents .seat", "(chips) => chips.map((c) => [Number(c.dataset.seat), c.querySelector('.rating')?.textContent ?? null])")
    return {seat: text for seat, text in found if text is not None}


def board_rows(person: Person) -> list[tuple[str, int]]:
    """The leaderboard screen's rows: (player id, rank)."""
    rows: list[list[Any]] = person.page.eval_on_selector_all(
        "#board-list li[data-player]", "(ls) => ls.map((l) => [l.dataset.player, Number(l.dataset.rank)])")
    return [(str(p), int(r)) for p, r in rows]


def play_rated_matches(gw: Gateway, count: int) -> None:
    """`count` real Kozel matches, each between two players the host app vouches for (new users each) and two
    bots, through the gateway, at tables whose
    5-second move clock (the shortest) ends each match by the variant's rule when a person's turn comes and
    nobody moves: archived and rated like any other. (The host may time out only a seat whose clock has run
    out, so the clock does it.) Played side by side; waits until the archive holds them all."""
    matches = []
    for _ in range(count):
        opened = ok(call(gw, "POST", "/v1/tables", {
            "variant": "kozel", "players": 4, "clock": {"move": 5, "on_timeout": "rule"}, "seats": [
                {"kind": "open"}, {"kind": "open"}, {"kind": "bot", "level": "random"}, {"kind": "bot", "level": "random"}]}),
            201)
        for invite in opened["invites"]:
            joined = ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join", {
                "invite": invite["code"], "name": "G", "player": player_assertion(f"p{len(matches)}-{invite['seat']}")}))
        matches.append(joined["match_id"])
    deadline = time.monotonic() + 60
    for match_id in matches:
        while call(gw, "GET", f"/v1/matches/{match_id}/record").status == 404:
            assert time.monotonic() < deadline, "the match was not archived"
            time.sleep(0.1)


def test_a_clocked_table_counts_down_times_out_and_shows_the_ratings_and_the_leaderboard(
        browser: Browser, clocks_gw: Gateway, shots: Path) -> None:  # noqa: F811
    contexts = [signed_in(browser.new_context(viewport=PHONE), user) for user in ("anna", "boris")]
    try:
        anna = Person(contexts[0], clocks_gw.url + "/play", "Anna")
        anna_404: list[str] = []
        anna.page.on("response", lambda r: anna_404.append(r.url) if r.status == 404 else None)
        anna.page.click("#to-friends")
        anna.page.select_option("#t-variant", "block")
        anna.page.select_option("#t-clock", "move:10")
        rule = anna.page.locator('#t-on-timeout option[value="rule"]')
        assert rule.is_disabled() and anna.page.input_value("#t-on-timeout") == "autopilot:greedy"  # block: none
        anna.page.select_option("#t-clock", "")
        anna.page.select_option("#t-variant", "kozel")
        assert rule.is_enabled()
        anna.page.select_option("#t-players", "4")
        for seat, kind in ((1, "person"), (2, "greedy"), (3, "greedy")):
            anna.page.select_option(f"#seat-kind-{seat}", kind)
        anna.page.fill("#t-your-name", "Anna")
        anna.page.fill("#t-name", "Clocked")
        assert anna.page.locator("#t-on-timeout").is_hidden()   # no clock: no rule to choose
        anna.page.select_option("#t-clock", "move:10")
        anna.page.select_option("#t-on-timeout", "rule")
        check_no_horizontal_scroll(anna.page)
        anna.page.screenshot(path=str(shots / "clocks-open.png"), full_page=True)
        anna.page.click("#open-table")
        anna.wait_for(lambda: anna.page.locator("#invite-1").count() == 1, "the invite link")
        table_id = anna.saved()["table"]["table_id"]
        assert ok(call(clocks_gw, "GET", f"/v1/tables/{table_id}", credential=anna.saved()["credential"]))["clock"] \
            == {"move": 10.0, "on_timeout": "rule"}
        boris = Person(contexts[1], anna.page.input_value("#invite-1"), "Boris")
        boris_404: list[str] = []
        boris.page.on("response", lambda r: boris_404.append(r.url) if r.status == 404 else None)
        boris.wait_for(lambda: "Clocked" in boris.page.inner_text("#join-title"), "the join screen")
        boris.page.fill("#join-name", "Boris")
        boris.page.click("#join-seat")
        boris.wait_playing()
        anna.wait_playing()
        people = {0: anna, 1: boris}

        # Every seat has a clock; the seat to move (a person: the bots move at once) has the running one,
        # marked on its chip, on both pages.
        mover = anna.view()["to_move"]
        assert mover in people
        watcher = people[1 - mover]
        watcher.wait_for(lambda: watcher.seq() == people[mover].seq(), "the same position on both devices")
        for person in people.values():
            shown = clocks(person)
            assert [c["seat"] for c in shown] == [0, 1, 2, 3] and all(c["text"] for c in shown), shown
            assert [c["seat"] for c in shown if c["running"]] == [mover], shown
            assert [c["seat"] for c in shown if c["chip"]] == [mover], shown
            assert all(c["left"] == 10.0 for c in shown if not c["running"]), shown   # a move's limit: stopped
        # The running clock counts down on the page between two stream lines, with no request for it.
        seq = watcher.seq()
        asked: list[str] = []
        watcher.page.on("request", lambda r: asked.append(r.url) if "/v1/matches/" in r.url else None)
        first = next(c for c in clocks(watcher) if c["running"])
        assert 0 < first["left"] <= 10.0 and re.fullmatch(r"0:(10|0\d)", first["text"]), first
        watcher.wait_for(lambda: next(c for c in clocks(watcher) if c["running"])["left"] <= first["left"] - 1.5,
                         "the running clock counting down")
        later = next(c for c in clocks(watcher) if c["running"])
        assert later["text"] != first["text"] and watcher.seq() == seq, (first, later)
        assert asked == [], asked
        check_no_horizontal_scroll(watcher.page)
        watcher.page.screenshot(path=str(shots / "clocks-running.png"))

        # Each person's rating beside their name: both are new here; the bots have none.
        for person in people.values():
            person.wait_for(lambda p=person: len(ratings(p)) == 2, "the ratings beside the names")
            assert ratings(person) == {0: "rating: new", 1: "rating: new"}

        # Nobody moves: the service times the seat out (the variant's rule: the match ends), with nobody calling.
        for person in people.values():
            person.wait_for(lambda p=person: p.view().get("match_over") is True, "the match over by the clock")
        match_id = anna.saved()["matchId"]
        # Once the archive holds the match, each page shows every player's rating before and after.
        for person in people.values():
            person.wait_for(lambda p=person: p.page.locator("#rating-change li").count() == 2, "the rating change")
        archived = get(clocks_gw, f"/v1/matches/{match_id}/record")
        assert archived["rated"] is True and archived["timed_out"] == mover
        seats = {s["seat"]: s for s in archived["seats"] if s["player"]}
        assert set(seats) == {0, 1}
        # Those figures are the archive's; the seat that ran out lost ground.
        for person in people.values():
            lines = person.page.eval_on_selector_all(
                "#rating-change li", "(ls) => ls.map((l) => [Number(l.dataset.seat), Number(l.dataset.delta), l.textContent])")
            for seat, delta, text in lines:
                before, after = seats[seat]["skill_before"]["ordinal"], seats[seat]["skill_after"]["ordinal"]
                assert abs(delta - (after - before)) < 1e-9, (seat, delta, before, after)
                assert f"{before:.1f} → {after:.1f}" in text and f"place {seats[seat]['place']}" in text, text
            deltas = {seat: delta for seat, delta, _ in lines}
            assert deltas[mover] < 0 < deltas[1 - mover], deltas
            # ... and the chips the ratings after the match, as GET /v1/players/{id} has them.
            person.wait_for(lambda p=person: all(r != "rating: new" for r in ratings(p).values()), "the new ratings")
            for seat, text in ratings(person).items():
                player = get(clocks_gw, f"/v1/players/{seats[seat]['player']}")
                ordinal = next(r for r in player["ratings"] if r["family"] == "K")["skill"]["ordinal"]
                assert abs(ordinal - seats[seat]["skill_after"]["ordinal"]) < 1e-9
                assert text == f"rating {ordinal:.1f}", (seat, text, ordinal)
        assert people[1 - mover].page.inner_text("#rating-change").count("→") == 2
        # the status says why the match ended; nobody is marked to move any more
        for person in people.values():
            said = person.page.inner_text("#status")
            assert said.startswith("The match is over.") and "time ran out" in said, said
            assert person.page.locator("#opponents .seat.to-move, #opponents .clock.running").count() == 0
        people[1 - mover].page.screenshot(path=str(shots / "ratings-after.png"), full_page=True)

        # The leaderboard screen: the players in the archive's order, the winner of that match first.
        anna.page.click("#setup-toggle")   # the header's menu, folded while a match is shown
        anna.page.click("#to-leaderboard")
        anna.wait_for(lambda: anna.screen() == "leaderboard" and anna.page.locator("#board-list li[data-player]").count() == 2,
                      "the leaderboard")
        board = get(clocks_gw, "/v1/leaderboard?variant=kozel&provisional=true")
        rows = anna.page.eval_on_selector_all(
            "#board-list li", "(ls) => ls.map((l) => [l.dataset.player, Number(l.dataset.rank), l.querySelector('.who').textContent])")
        assert [(p, r) for p, r, _ in rows] == [(e["player"], e["rank"]) for e in board["items"]] == \
            [(seats[1 - mover]["player"], 1), (seats[mover]["player"], 2)]
        assert sorted(s["player"] for s in seats.values()) == ["app:anna", "app:boris"]  # vouched: rated
        # the archive keeps the names the players took their seats with: the board shows them, and marks
        # Anna's own
        names = [e["name"] for e in board["items"]]
        assert sorted(names) == ["Anna", "Boris"], board["items"]
        mine = [e["player"] == seats[0]["player"] for e in board["items"]]
        assert [who for _, _, who in rows] == [s + (" (you)" if m else "") for s, m in zip(names, mine, strict=True)]
        assert anna.page.locator("#board-more").is_hidden()   # one page holds them all
        check_no_horizontal_scroll(anna.page)
        anna.page.screenshot(path=str(shots / "leaderboard.png"))

        # More players than a page (20): eleven more rated matches, played through the gateway.
        play_rated_matches(clocks_gw, 11)
        first = get(clocks_gw, "/v1/leaderboard?variant=kozel&limit=20&provisional=true")
        second = get(clocks_gw, f"/v1/leaderboard?variant=kozel&limit=20&provisional=true&cursor={first['next']}")
        assert len(first["items"]) == 20 and len(second["items"]) == 4 and second["next"] is None
        anna.page.click("#board-refresh")
        anna.wait_for(lambda: anna.page.locator("#board-list li[data-player]").count() == 20, "the first page")
        assert board_rows(anna) == [(e["player"], e["rank"]) for e in first["items"]]
        assert anna.page.locator("#board-more").is_visible()
        anna.page.click("#board-more")                            # the next page, by the board's cursor
        anna.wait_for(lambda: anna.page.locator("#board-list li[data-player]").count() == 24, "the second page")
        assert board_rows(anna) == [(e["player"], e["rank"]) for e in first["items"] + second["items"]]
        assert [r for _, r in board_rows(anna)] == list(range(1, 25))
        anna.wait_for(lambda: anna.page.locator("#board-more").is_hidden(), "no page after the last")
        # The only refusals were the archive's 404s for the match's record asked for a moment before the
        # archive held it (asked again; Person leaves them out of its errors). Two newcomers were shown
        # "rating: new" without asking the archive about them: no 404 for a player, none in the console.
        for person, missing in ((anna, anna_404), (boris, boris_404)):
            assert all(re.search(rf"/v1/matches/{match_id}/record$", url) for url in missing), missing
            assert person.errors == [], person.errors
    finally:
        for context in contexts:
            context.close()


def test_a_seat_whose_clock_ran_out_is_shown_on_autopilot(browser: Browser, clocks_gw: Gateway) -> None:  # noqa: F811
    """`on_timeout: autopilot`: the seat that let its clock run out is played on by a bot, and both pages say
    so on its chip; the other person's clock runs then."""
    opened = ok(call(clocks_gw, "POST", "/v1/tables", {"variant": "kozel", "players": 4, "name": "Autopilot",
                                                       "clock": {"move": 5, "on_timeout": "autopilot"}, "seats": [
        {"kind": "open"}, {"kind": "open"}, {"kind": "bot", "level": "greedy"}, {"kind": "bot", "level": "greedy"}]}), 201)
    contexts = [browser.new_context(viewport=PHONE) for _ in range(2)]
    try:
        people = {}
        for seat, name in ((0, "Anna"), (1, "Boris")):
            person = people[seat] = Person(contexts[seat], opened["invites"][seat]["link"], name)
            person.wait_for(lambda p=person: "Autopilot" in p.page.inner_text("#join-title"), "the join screen")
            person.page.fill("#join-name", name)
            person.page.click("#join-seat")
        for person in people.values():
            person.wait_playing()
        mover = people[0].view()["to_move"]
        other = people[1 - mover]
        # Nobody moves: the mover's clock runs out, a greedy bot plays its seat on, and the other's clock runs.
        other.wait_for(lambda: any(c["running"] and c["seat"] == 1 - mover for c in clocks(other)),
                       "the other person's clock running after the autopilot's move")
        other.wait_for(lambda: other.page.locator(f"#opponents .seat-{mover} .autopilot").count() == 1, "the autopilot")
        assert other.page.inner_text(f"#opponents .seat-{mover} .autopilot") == "autopilot (greedy)"
        assert other.saved()["clocks"]["autopilot"] == [mover]
        own = people[mover]                                        # and on its own page
        own.wait_for(lambda: own.page.locator(f"#opponents .seat-{mover} .autopilot").count() == 1, "its autopilot")
        assert all(p.errors == [] for p in people.values()), [p.errors for p in people.values()]
    finally:
        for context in contexts:
            context.close()
