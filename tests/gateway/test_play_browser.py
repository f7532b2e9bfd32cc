"""The browser table at /play, in Debian's chromium driven by Playwright, against real services:
a whole Kozel round and a whole Kingdomino game on a phone-sized screen, a whole All Fives hand on
a wide one, and an Osel round's choices of an end, by clicking; what the screen shows is checked at
each step (the hand, the moves and the legal places on the first screen, nothing sideways, the last
moves marked on the board with their seats), an illegal click gets a clear message and changes
nothing, and screenshots are saved (DOMINO_UPDATE_SCREENSHOTS=1 writes them to docs/play/, which
docs/play.md shows; otherwise to the test's temporary folder).

The opponents' levels come from the page's own selects: `human` seats are hot-seat (the page
shows whichever human seat is to move), bot levels are played by the service.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route, sync_playwright

from .conftest import REPO, Gateway

pytestmark = pytest.mark.service

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1200, "height": 900}
STEP_TIMEOUT = 20_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium")
    assert chromium is not None, "Debian's chromium is a test tool: bash scripts/ci-system-deps.sh installs it"
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    if os.environ.get("DOMINO_UPDATE_SCREENSHOTS") == "1":
        folder = REPO / "docs" / "play"
        folder.mkdir(exist_ok=True)
        return folder
    return tmp_path


class Table:
    """The page, read and clicked the way a person would."""

    def __init__(self, page: Page, gateway: Gateway) -> None:
        self.page = page
        self.errors: list[str] = []
        # Errors in the console, but not the 409 of an illegal move the test makes on purpose.
        page.on("console", lambda m: self.errors.append(m.text)
                if m.type == "error" and "(CONFLICT)" not in m.text else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.set_default_timeout(STEP_TIMEOUT)
        page.goto(gateway.url + "/play")
        page.wait_for_selector("#variant option[value=kingdomino]", state="attached")

    def renders(self) -> int:
        return int(self.page.evaluate("Number(document.body.dataset.renders || 0)"))

    def warnings(self) -> int:
        return int(self.page.evaluate("Number(document.body.dataset.warnings || 0)"))

    def wait_render(self, before: int) -> None:
        self.wait_for(lambda: self.renders() > before)

    def wait_warning(self, before: int) -> None:
        self.wait_for(lambda: self.warnings() > before)

    def wait_for(self, done: Callable[[], bool]) -> None:
        """Poll from here: the page's CSP forbids the eval that Playwright's wait_for_function uses."""
        deadline = time.monotonic() + STEP_TIMEOUT / 1000
        while not done():
            assert time.monotonic() < deadline, "the page did not answer in time"
            self.page.wait_for_timeout(20)

    def new_match(self, variant: str, players: int, levels: list[str], seed: int | None = None) -> None:
        """Fill the setup form and press New match; with a seed, the page's request carries it (a known deal)."""
        if seed is not None:
            def with_seed(route: Route) -> None:
                body = json.loads(route.request.post_data or "{}")
                route.continue_(post_data=json.dumps({**body, "seed": seed}))
            self.page.route("**/v1/matches", with_seed)
        self.page.select_option("#variant", variant)
        self.page.select_option("#players", str(players))
        for seat, level in enumerate(levels, 1):
            self.page.select_option(f"#level-{seat}", level)
        before, warned = self.renders(), self.warnings()
        self.page.click("#new-match")
        self.wait_for(lambda: self.renders() > before or self.warnings() > warned)
        assert self.warnings() == warned, self.page.inner_text("#message")
        self.page.unroute("**/v1/matches")

    def status(self) -> str:
        return self.page.inner_text("#status")

    def count(self, selector: str) -> int:
        return self.page.locator(selector).count()

    def state(self) -> Any:
        return self.page.evaluate("JSON.parse(sessionStorage.getItem('domino-play'))")

    def round_over(self) -> bool:
        return self.page.locator("#round-end").is_visible()

    def texts(self, selector: str, attribute: str) -> list[str]:
        """The attribute of every element the selector matches, in one call."""
        found: list[str] = self.page.eval_on_selector_all(
            selector, "(elements, name) => elements.map((e) => e.getAttribute(name) || '')", attribute)
        return found


def check_no_horizontal_scroll(page: Page) -> None:
    """Nothing sticks out sideways; if something does, the message names what (tag#id.class and its right edge)."""
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth + 1"), page.evaluate(
        "[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)"
        ".map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.getAttribute('class') || ''}: "
        "${Math.round(e.getBoundingClientRect().right)}`).slice(0, 12)")


def check_on_screen(page: Page, selectors: str) -> None:
    """Every element the selectors match lies on the first screen (no scrolling, in either direction)."""
    outside = page.evaluate(
        "(selectors) => [...document.querySelectorAll(selectors)].map((e) => [e, e.getBoundingClientRect()])"
        ".filter(([, r]) => r.top + scrollY < 0 || r.left + scrollX < 0 || r.bottom + scrollY > innerHeight + 1"
        " || r.right + scrollX > innerWidth + 1)"
        ".map(([e, r]) => `${e.tagName.toLowerCase()}#${e.id}.${e.getAttribute('class') || ''}"
        "[${e.dataset.tile || e.dataset.arm || ''}]: ${Math.round(r.left + scrollX)},${Math.round(r.top + scrollY)}"
        "-${Math.round(r.right + scrollX)},${Math.round(r.bottom + scrollY)} of ${innerWidth}x${innerHeight}`)",
        selectors)
    assert outside == [], outside


#: What must be on a phone's first screen at every turn of a matching game.
MATCHING_ON_SCREEN = "#status, #opponents .seat, #layout, #hand .tile, #extra-actions button, #choices button"


def _tile(part: str) -> str:
    a, b = sorted(part.split("@")[0].split("-"))
    return f"{a}-{b}"


def _tiles(action: str) -> list[str]:
    return [_tile(part) for part in action.split("+") if part not in ("draw", "pass")]


class Round:
    """What the test has seen of a round: the layout's length after each seat's own last turn, a play or a
    knock (the marks on the board are the moves since), who played the entries it knows of, the moves made by
    tapping an end."""

    def __init__(self) -> None:
        self.after_own: dict[int, int] = {}
        self.played_by: dict[int, int] = {}
        self.taps: list[tuple[list[str], str]] = []
        self.marked = 0
        self.turns: list[tuple[int, str]] = []   # the turns the test made: (seat, "tile" or "pass")
        self.knocks = 0

    def check_chips(self, table: Table, view: Any, hot_seat: bool) -> None:
        """Each chip shows its side's score (the score table is below the board on a phone), and the
        seats that knocked since the mover's last turn say so on their chips (a knock leaves no mark on
        the board). Hot seat: the test made every turn and knows them; against bots, the log says."""
        scores = view["ledger"]["scores"]
        shown = table.page.eval_on_selector_all("#opponents .seat", "(chips) => chips.map((c) =>"
                                                " c.querySelector('.chip-score')?.textContent)")
        assert shown == [f"score {scores[seat % len(scores)]}" for seat in range(len(shown))] and shown, scores
        mover = view["seat"]
        if hot_seat:
            last = max((i for i, (seat, _) in enumerate(self.turns) if seat == mover), default=-1)
            knocked = {seat for seat, action in self.turns[last + 1:] if action == "pass"}
        else:   # the log's lines since the person's last move (or the deal)
            log = table.page.eval_on_selector_all("#log li", "(items) => items.map((i) => i.textContent)")
            start = max((i for i, line in enumerate(log) if re.match(r"You (played|knocked)|Round \d+ dealt", line)),
                        default=-1)
            # The log numbers seats from 1, as the screen does ("Seat 2 (expert) knocked" is seat 1).
            knocked = {int(found[1]) - 1 for line in log[start + 1:] if (found := re.match(r"Seat (\d) .*knocked$", line))}
        assert {int(s) for s in table.texts("#opponents .seat.knocked", "data-seat")} == knocked, knocked
        assert all(table.page.locator(f"#opponents .seat-{seat} .did").inner_text() == "knocked" for seat in knocked)
        self.knocks += len(knocked)

    def check_marks(self, table: Table, view: Any) -> None:
        """The moves since the mover's last one are marked, each with its seat's badge; nothing else is."""
        mover = view["seat"]
        since = range(self.after_own.get(mover, 0), len(view["layout"]))
        expected = sorted(t for i in since for t in _tiles(view["layout"][i]))
        assert sorted(table.texts("#layout g.domino.recent", "data-tile")) == expected, (view["layout"], since)
        self.marked += len(expected)
        seats = table.texts("#layout g.domino.recent", "data-by")
        assert table.count("#layout .badge") == len(seats) and mover not in {int(s) for s in seats}
        known = sorted(str(self.played_by[i]) for i in since for _ in _tiles(view["layout"][i]) if i in self.played_by)
        if len(known) == len(seats):   # every move since is one the test made: the badges name its seats
            assert sorted(seats) == known

    def moved(self, seat: int, layout_before: int, action: str) -> None:
        """The seat played (action "tile"), knocked ("pass") or drew ("draw": its turn goes on)."""
        if action == "tile":
            self.played_by[layout_before] = seat
        if action != "draw":
            self.after_own[seat] = layout_before + (action == "tile")
            self.turns.append((seat, action))


def choose_end(table: Table, phone: bool, shot: Path | None) -> tuple[list[str], str]:
    """The clicked tile fits several ends: each is marked on the board where the tile would lie, named
    after its arm. Tap the end of the first move offered (and, for an Osel double that may close its arm
    or not, close it); returns the ends marked and the move made, once the page shows it."""
    if phone:
        check_on_screen(table.page, MATCHING_ON_SCREEN + ", #layout .end-target")
    if shot:
        table.page.screenshot(path=str(shot))
    choices = table.texts("#choices button", "data-action")
    ends = sorted({a.split("@")[1].rstrip("!") for a in choices if "+" not in a and "@" in a})
    assert sorted(table.texts("#layout .end-target", "data-arm")) == ends, choices
    arm = choices[0].split("@")[1].rstrip("!")
    target = table.page.locator(f"#layout .end-target[data-arm='{arm}']")
    offered = (target.get_attribute("data-action") or "").split()
    assert offered and all(a in choices and a.split("@")[1].rstrip("!") == arm for a in offered), (offered, arm)
    assert target.text_content() == arm   # the end is named where it lies
    before = table.renders()
    target.click()
    move = offered[0]
    if len(offered) > 1:   # that end's own moves (drawn at once: no request yet)
        assert sorted(table.texts("#choices button", "data-action")) == sorted(offered)
        move = next((a for a in offered if a.endswith("!")), offered[0])
        before = table.renders()
        table.page.click(f"#choices button[data-action='{move}']")
    table.wait_render(before)
    return ends, move


def play_matching_round(table: Table, max_turns: int = 300, phone: bool = False,
                        on_turn: Callable[[int], object] | None = None, max_taps: int | None = None,
                        choice_shot: Path | None = None) -> Round:
    """Click the first playable tile (and the first end offered for it, tapped on the board), or draw/pass,
    until the round ends (or `max_taps` ends were tapped), checking the marks of the last moves at each turn.

    On a phone, at every turn (the layout grows as tiles are played) nothing may scroll sideways and the
    seats, the board, the hand and the moves are all on the first screen."""
    turns = 0
    round_ = Round()
    hot_seat = all(level == "human" for level in table.state()["levels"][1:])
    while not table.round_over() and len(round_.taps) != max_taps:
        turns += 1
        assert turns < max_turns
        state = table.state()
        view = state["view"]
        assert "your turn" in table.status().lower(), table.status()
        mover = view.get("seat")
        assert view["to_move"] == mover
        assert table.texts("#opponents .seat.to-move", "data-seat") == [str(mover)]
        # Only the acting seat's hand is on the screen: tile buttons are exactly its hand.
        assert table.count("#hand .tile") == len(view["hand"])
        assert table.count("#layout g.domino") == sum(len(m.split("+")) for m in view["layout"])
        assert table.count("#hand .tile.legal") == len({t for a in view["legal"] for t in _tiles(a)}) or \
            table.count("#extra-actions button") > 0
        assert sorted(table.texts("#layout .end-label", "data-arm")) == sorted(view["ends"]) or not view["layout"]
        round_.check_marks(table, view)
        round_.check_chips(table, view, hot_seat)
        laid = len(view["layout"])
        if phone:
            check_no_horizontal_scroll(table.page)
            check_on_screen(table.page, MATCHING_ON_SCREEN)
        if on_turn:
            on_turn(turns)
        before = table.renders()
        if table.count("#hand .tile.legal"):
            table.page.locator("#hand .tile.legal").first.click()
            # A tile that fits several ends asks at once (no request); one that fits one end is played.
            move = None
            if table.count("#choices button"):
                ends, move = choose_end(table, phone, None if round_.taps else choice_shot)
                round_.taps.append((ends, move))
            else:
                table.wait_render(before)
            after = table.state()["view"]
            assert len(after["layout"]) > laid or after["round_over"] or after["round_number"] > view["round_number"]
            if move and after["round_number"] == view["round_number"]:
                assert after["layout"][laid] == move   # played where tapped
            round_.moved(mover, laid, "tile")
        else:
            button = table.page.locator("#extra-actions button").first
            action = button.get_attribute("data-action") or ""
            button.click()
            table.wait_render(before)
            round_.moved(mover, laid, action)
    assert table.count("#opponents .seat.to-move") == (0 if table.round_over() else 1)   # none once it is over
    return round_


def check_score_legend(table: Table, animal: str, eggs: bool) -> None:
    """The score table's words are explained under it and on its labels, high is bad, and the side closest
    to losing is named (RULES.md K: the goat; O: the donkey); eggs only where a fish can lay them."""
    legend = table.page.inner_text("#score-legend")
    for term in ("Written", "Remembered", "fish", "High is bad", f"is the {animal}"):
        assert term in legend, (term, legend)
    assert ("eggs" in legend) == eggs, legend
    assert "remembered, not written" in (table.page.get_attribute("#scores td[title]:text-is('Remembered')", "title") or "")
    scores = table.state()["scores"]
    closest = table.page.inner_text("#closest")
    if max(scores) == 0:
        assert closest == f"Closest to the {animal}: nobody has written points yet."
    else:
        names = [table.page.locator("#scores th").nth(i + 1).inner_text().split("\n")[0]
                 for i, score in enumerate(scores) if score == max(scores)]
        assert closest.startswith(f"Closest to the {animal}: ") and all(n in closest for n in names), (closest, names)
        assert f"({max(scores)} of 101)" in closest


def try_illegal_tile(table: Table) -> None:
    """Click a tile that cannot be played: a message naming it, and nothing changes."""
    illegal = table.page.locator("#hand .tile:not(.legal)")
    assert illegal.count() > 0
    tile = illegal.first.get_attribute("data-tile")
    token, warnings = table.state()["token"], table.warnings()
    hand = table.page.inner_text("#hand")
    illegal.first.click()
    table.wait_warning(warnings)
    message = table.page.inner_text("#message")
    assert message.startswith("Not allowed: ") and tile in message, message
    assert table.state()["token"] == token and table.page.inner_text("#hand") == hand


@pytest.mark.parametrize("levels", [["human", "human", "human"], ["expert", "greedy", "random"]],
                         ids=["hot-seat", "bots"])
def test_a_whole_kozel_round_on_a_phone(browser: Browser, gateway: Gateway, shots: Path, tmp_path: Path,
                                        levels: list[str]) -> None:
    page = browser.new_page(viewport=PHONE)
    table = Table(page, gateway)
    table.new_match("kozel", 4, levels)
    prefix = "kozel" if levels[0] == "human" else "kozel-bots"
    bots = levels[0] != "human"
    assert "your turn" in table.status().lower() and table.count("#hand .tile") == 7
    assert table.count("#opponents .seat") == 4 and table.count("#scores table.scores") == 1
    # The setup form is folded into one line while the match runs; the header opens it again.
    bar = page.locator("#setup-box > summary").bounding_box()
    assert not page.locator("#setup").is_visible() and bar is not None and bar["height"] <= 48
    try_illegal_tile(table)
    page.screenshot(path=str((tmp_path if bots else shots) / f"{prefix}-illegal.png"))   # docs show the hot-seat one
    check_no_horizontal_scroll(page)
    # The docs show the marks of the bots' moves on a phone, a few turns in.
    round_ = play_matching_round(table, phone=True, on_turn=lambda turn: turn == 4 and bots and page.screenshot(
        path=str(shots / "kozel-bots-marks.png")))
    assert round_.marked > 0   # the moves of the others since each turn were marked
    # ... and their knocks on their chips: checked at every turn (the chips marked "knocked" are exactly
    # the seats that knocked since), not counted here: a round can end before anyone knocks.
    view = table.state()["view"]
    assert view["round_over"] and view["ending"] in ("out", "fish")
    result = page.inner_text("#round-result")
    assert f"Round 1: {view['ending']}" in result
    # The hand on the screen is the last mover's: one that went out is said to be empty, not left blank.
    assert page.inner_text("#hand-title").endswith("hand is empty") == (not view["hand"]), view["hand"]
    scores = page.inner_text("#scores")
    assert "Written" in scores and "Remembered" in scores and "Round 1" in scores
    if view["ending"] == "fish":
        assert table.count("#scores .marker.fish") == 1 and page.get_attribute("#scores .marker.fish", "title")
    check_score_legend(table, "goat", eggs=False)   # Kozel's default fish scores each hand: no pot
    check_no_horizontal_scroll(page)
    if bots:   # the score table names each bot's level
        assert "expert" in scores and "random" in scores
    # "You lead", never "You leads": the person's own seat takes the second person everywhere.
    assert not re.search(r"\bYou (leads|wins|is)\b|by You\b", page.inner_text("body"))
    page.screenshot(path=str(shots / f"{prefix}-round-over.png"), full_page=True)
    before = table.renders()
    page.click("#next-round")
    table.wait_render(before)
    assert table.state()["view"]["round_number"] == 2 and not table.round_over()
    assert table.count("#hand .tile") == 7
    assert table.errors == []


def test_the_ends_a_tile_fits_are_tapped_on_the_board_on_a_phone(browser: Browser, gateway: Gateway,
                                                                  shots: Path) -> None:
    """Osel's cross (RULES.md O): the second tile fits the four arms of a double lead, two of them still
    empty; each is marked where the tile would lie and a tap plays there. Then a double that may close
    its arm or not: a tap on its end offers just those two, and the closed arm is drawn closed.
    A fixed seed (hot seat: no bot) gives both in the first three turns."""
    page = browser.new_page(viewport=PHONE)
    table = Table(page, gateway)
    table.new_match("osel", 2, ["human"], seed=0)
    page.click("#setup-box > summary")   # the folded header opens the setup form again, and folds it
    assert page.locator("#setup").is_visible() and page.locator("#variant").input_value() == "osel"
    page.click("#setup-box > summary")
    assert not page.locator("#setup").is_visible()
    round_ = play_matching_round(table, max_turns=4, phone=True, max_taps=2, choice_shot=shots / "osel-ends.png")
    (cross, first), (closing, second) = round_.taps
    assert cross == ["E", "N", "S", "W"] and first.split("@")[1] in ("N", "S"), round_.taps
    assert len(closing) == 1 and second.endswith("!"), round_.taps
    view = table.state()["view"]
    assert view["layout"][1:3] == [first, second] and closing[0] not in view["ends"]
    assert table.count("#layout g.domino.closed") == 1 and table.count("#layout .end-label") == len(view["ends"])
    check_score_legend(table, "donkey", eggs=True)   # Osel's default fish goes to the highest hand: ties lay eggs
    assert table.errors == []


@pytest.mark.parametrize("level", ["human", "expert"], ids=["hot-seat", "bots"])
def test_a_whole_all_fives_hand(browser: Browser, gateway: Gateway, shots: Path, tmp_path: Path, level: str) -> None:
    page = browser.new_page(viewport=DESKTOP)
    table = Table(page, gateway)
    table.new_match("all-fives", 2, [level])
    play_matching_round(table)
    view = table.state()["view"]
    assert view["round_over"]
    assert [int(c) for c in page.locator("#scores tr.total td").all_inner_texts()[1:]] == view["ledger"]["scores"]
    # Each score in play says why: the open ends' count that made it ("You scored 15 (the open ends add up to 15)").
    scored = [line for line in page.locator("#log li").all_inner_texts() if " scored " in line]
    assert all(re.search(r" scored (\d+) \(the open ends add up to \1\)$", line) for line in scored), scored
    # The round's points name their seats: "Round points: You 0 · Seat 2 (expert) 9." (not "0 / 9").
    assert re.search(r"Round points: You \d+ · Seat 2 \d+\.", page.inner_text("#round-result")), page.inner_text("#round-result")
    if any(move.split("@")[-1].startswith(("N", "S")) for move in view["layout"]):
        assert table.count("#layout g.domino.spinner") >= 1
    if level != "human":
        assert table.state()["keys"][1] is None   # sealed: the page never holds the bot's key
    page.screenshot(path=str(shots / "all-fives.png" if level == "human" else tmp_path / "all-fives-bots.png"))
    assert table.errors == []


#: What must be on a phone's first screen at every Kingdomino turn: the instructions and every legal place.
KINGDOMINO_ON_SCREEN = ("#status, #prompt, #prompt button, .rows .slot, .ktile.pickable, "
                        ".kingdom:not(.small) .cell.first-ok, .kingdom:not(.small) .cell.second-ok")
TERRAINS = ("wheat", "forest", "lake", "grassland", "swamp", "mine")


def check_kingdomino_screen(page: Page) -> None:
    """On a phone: nothing sideways, the instructions and the legal places on the first screen, the
    instructions above the kingdoms, the two rows apart and each king's label inside its own row."""
    check_no_horizontal_scroll(page)
    check_on_screen(page, KINGDOMINO_ON_SCREEN)
    boxes = page.evaluate(
        "() => { const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };"
        " return { prompt: box(document.getElementById('prompt')), kingdoms: box(document.querySelector('.kingdoms')),"
        " rows: [...document.querySelectorAll('.rows .row')].map((row) => ({ row: box(row),"
        " kings: [...row.querySelectorAll('.king')].map(box) })) }; }")
    assert boxes["prompt"][3] <= boxes["kingdoms"][1], boxes
    rows = [r["row"] for r in boxes["rows"]]
    assert len(rows) == 2 and not _overlap(rows[0], rows[1]), rows
    for r in boxes["rows"]:
        for king in r["kings"]:
            assert r["row"][0] <= king[0] and king[2] <= r["row"][2] + 0.5 and r["row"][1] <= king[1] \
                and king[3] <= r["row"][3] + 0.5, (king, r["row"])


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def check_terrain_legend(page: Page) -> None:
    """A legend names every terrain beside its colour, the crown and the castle; no terrain's colour is
    near the board's (the forest was green on the green felt)."""
    legend = page.inner_text("#terrain-legend")
    for word in (*TERRAINS, "crown", "castle"):
        assert word in legend, (word, legend)
    colours = page.evaluate(
        "(terrains) => [getComputedStyle(document.getElementById('board')).backgroundColor,"
        " ...terrains.map((t) => getComputedStyle(document.querySelector(`#terrain-legend .swatch.${t}`)).backgroundColor)]",
        list(TERRAINS))
    board, *squares = [[int(c) for c in re.findall(r"\d+", colour)[:3]] for colour in colours]
    for terrain, rgb in zip(TERRAINS, squares, strict=True):
        assert sum((a - b) ** 2 for a, b in zip(rgb, board, strict=True)) ** 0.5 >= 50, (terrain, rgb, board)


@pytest.mark.parametrize("level", ["human", "greedy"], ids=["hot-seat", "bots"])
def test_a_whole_kingdomino_game(browser: Browser, gateway: Gateway, shots: Path, tmp_path: Path, level: str) -> None:
    """Hot seat on a phone (the docs' screenshots), against a bot on a wide screen."""
    phone = level == "human"
    page = browser.new_page(viewport=PHONE if phone else DESKTOP)
    table = Table(page, gateway)
    table.new_match("kingdomino", 2, [level])
    folder = shots if level == "human" else tmp_path   # docs show the hot-seat game
    assert table.count(".kingdom") == 2 and table.count(".row[data-row=next] .ktile") == 4
    check_terrain_legend(page)
    illegal_tried = False
    for _ in range(200):
        view = table.state()["view"]
        if view["game_over"]:
            break
        assert "your turn" in table.status().lower()
        assert page.inner_text("#prompt").startswith(("Pick a tile", "Place tile", "The tile fits nowhere"))
        if phone:
            check_kingdomino_screen(page)
        legal = view["legal"]
        before = table.renders()
        me = view.get("player", view.get("seat"))
        placed = len(view["grids"][me])   # the placer's kingdom only: bots place theirs in the same answer
        if legal[0].startswith("pick"):
            assert table.count(".row[data-row=next] .ktile.pickable") == len(legal)
            page.locator(".row[data-row=next] .ktile.pickable").first.click()
            table.wait_render(before)
        elif legal[0].startswith("place"):
            if not illegal_tried:
                illegal_tried = True
                token, warnings = table.state()["token"], table.warnings()
                page.click(".kingdom:not(.small) .cell[data-x='4'][data-y='-4']")
                table.wait_warning(warnings)
                assert page.inner_text("#message").startswith("Not allowed: place ")
                assert table.state()["token"] == token
                page.screenshot(path=str(folder / "kingdomino-illegal.png"))
                before = table.renders()
            page.locator(".kingdom:not(.small) .cell.first-ok").first.click()
            table.wait_render(before)
            if phone:
                check_kingdomino_screen(page)
            before = table.renders()
            page.locator(".kingdom:not(.small) .cell.second-ok").first.click()
            table.wait_render(before)
            assert len(table.state()["view"]["grids"][me]) == placed + 2
        else:   # the tile fits nowhere: the prompt offers to discard it
            page.click(f"#prompt button[data-action='{legal[0]}']")
            table.wait_render(before)
    view = table.state()["view"]
    assert view["game_over"] and illegal_tried
    assert re.match(r"Game over: (You win|Seat 2( \(greedy\))? wins|You and Seat 2( \(greedy\))? share the win) \(decided by ",
                    page.inner_text("#round-result")), page.inner_text("#round-result")
    assert "Points" in page.inner_text("#scores") and "Crowns" in page.inner_text("#scores")
    page.screenshot(path=str(folder / "kingdomino-over.png"), full_page=True)
    assert table.errors == []


def test_the_page_is_served_by_the_gateway_alone_and_is_not_in_the_api_document(gateway: Gateway) -> None:
    page = gateway.get("/play")
    assert page.status == 200 and page.content_type.startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    for asset in ("/play/play.js", "/play/play.css", "/play/kingdomino-tiles.js"):
        assert gateway.get(asset).status == 200, asset
    assert b"http" not in page.body.replace(b"http://www.w3.org", b"")
    paths = gateway.get("/openapi.json").json["paths"]
    assert not [p for p in paths if p.startswith("/play")]


def test_the_pages_kingdomino_tiles_are_the_engines() -> None:
    import csv
    import json
    import re

    text = (REPO / "api_gateway" / "play" / "kingdomino-tiles.js").read_text()
    found = re.search(r"KINGDOMINO_TILES = (\[.*\]);", text)
    assert found is not None
    rows = list(csv.DictReader((REPO / "engine_service" / "rules" / "data" / "kingdomino-tiles.csv").open()))
    assert json.loads(found.group(1)) == [[int(r["number"]), r["terrain_1"], int(r["crowns_1"]), r["terrain_2"],
                                           int(r["crowns_2"])] for r in rows]


def test_the_score_table_keeps_every_round_though_the_state_keeps_the_last(browser: Browser, gateway: Gateway) -> None:
    """A state keeps its last round's row of the score table only (issue 27: a call's cost does not grow
    with the match): the page keeps the rows it has seen, so after two rounds the table shows both, each
    as the view gave it when its round ended, and a reload keeps them."""
    page = browser.new_page(viewport=DESKTOP)
    table = Table(page, gateway)
    table.new_match("all-fives", 2, ["expert"], seed=3)
    rows = []
    for number in (1, 2):
        play_matching_round(table)
        view = table.state()["view"]
        if view["match_over"]:
            break
        assert [r["number"] for r in view["ledger"]["history"]] == [number]   # the state's one row
        rows.append(view["ledger"]["history"][-1])
        if number == 1:
            page.click("#next-round")
            table.wait_for(lambda: not table.round_over())
    assert len(rows) == 2, "the match ended in its first round: pick another seed"

    def shown() -> list[list[str]]:
        return [page.locator("#scores tr").nth(i).locator("td").all_inner_texts()
                for i in range(1, 3)]
    expected = [[str(s) for s in row["scores"]] for row in rows]
    assert [r[1:] for r in shown()] == expected
    assert [r[0].split()[:2] for r in shown()] == [["Round", "1"], ["Round", "2"]]
    page.reload()
    page.wait_for_selector("#scores tr.total")
    assert [r[1:] for r in shown()] == expected
    assert table.errors == []
