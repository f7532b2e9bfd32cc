"""The browser table at /play, in Debian's chromium driven by Playwright, against real services:
a whole Kozel round (on a phone-sized screen), a whole All Fives hand and a whole Kingdomino
game, by clicking; what the screen shows is checked at each step, an illegal click gets a clear
message and changes nothing, and screenshots are saved (DOMINO_UPDATE_SCREENSHOTS=1 writes them
to docs/play/, which docs/play.md shows; otherwise to the test's temporary folder).

The opponents' levels come from the page's own selects: `human` seats are hot-seat (the page
shows whichever human seat is to move), bot levels are played by the service.
"""
from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

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

    def new_match(self, variant: str, players: int, levels: list[str]) -> None:
        self.page.select_option("#variant", variant)
        self.page.select_option("#players", str(players))
        for seat, level in enumerate(levels, 1):
            self.page.select_option(f"#level-{seat}", level)
        before, warned = self.renders(), self.warnings()
        self.page.click("#new-match")
        self.wait_for(lambda: self.renders() > before or self.warnings() > warned)
        assert self.warnings() == warned, self.page.inner_text("#message")

    def status(self) -> str:
        return self.page.inner_text("#status")

    def count(self, selector: str) -> int:
        return self.page.locator(selector).count()

    def state(self) -> Any:
        return self.page.evaluate("JSON.parse(sessionStorage.getItem('domino-play'))")

    def round_over(self) -> bool:
        return self.page.locator("#round-end").is_visible()


def check_no_horizontal_scroll(page: Page) -> None:
    """Nothing sticks out sideways; if something does, the message names what (tag#id.class and its right edge)."""
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth + 1"), page.evaluate(
        "[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)"
        ".map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.getAttribute('class') || ''}: "
        "${Math.round(e.getBoundingClientRect().right)}`).slice(0, 12)")


def play_matching_round(table: Table, max_turns: int = 300, phone: bool = False) -> int:
    """Click the first playable tile (and the first place offered for it), or draw/pass, until the round ends.

    On a phone, nothing may scroll sideways at any turn (the layout grows as tiles are played)."""
    turns = 0
    while not table.round_over():
        turns += 1
        assert turns < max_turns
        state = table.state()
        view = state["view"]
        assert "your turn" in table.status(), table.status()
        mover = view.get("seat")
        assert view["to_move"] == mover
        # Only the acting seat's hand is on the screen: tile buttons are exactly its hand.
        assert table.count("#hand .tile") == len(view["hand"])
        assert table.count("#layout g.domino") == sum(len(m.split("+")) for m in view["layout"])
        assert table.count("#hand .tile.legal") == len({t for a in view["legal"] for t in _tiles(a)}) or \
            table.count("#extra-actions button") > 0
        laid = table.count("#layout g.domino")
        if phone:
            check_no_horizontal_scroll(table.page)
        before = table.renders()
        if table.count("#hand .tile.legal"):
            table.page.locator("#hand .tile.legal").first.click()
            if table.count("#choices button"):
                table.page.locator("#choices button").first.click()
            table.wait_render(before)
            assert table.count("#layout g.domino") > laid or table.round_over() or table.state()["view"]["round_number"] > view["round_number"]
        else:
            table.page.locator("#extra-actions button").first.click()
            table.wait_render(before)
    return turns


def _tiles(action: str) -> list[str]:
    return [part.split("@")[0] for part in action.split("+") if part not in ("draw", "pass")]


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
    assert "your turn" in table.status() and table.count("#hand .tile") == 7
    assert table.count("#opponents .seat") == 4 and table.count("#scores table.scores") == 1
    try_illegal_tile(table)
    page.screenshot(path=str((tmp_path if bots else shots) / f"{prefix}-illegal.png"))   # docs show the hot-seat one
    check_no_horizontal_scroll(page)
    play_matching_round(table, phone=True)
    view = table.state()["view"]
    assert view["round_over"] and view["ending"] in ("out", "fish")
    result = page.inner_text("#round-result")
    assert f"Round 1: {view['ending']}" in result
    scores = page.inner_text("#scores")
    assert "Written" in scores and "Remembered" in scores and "Round 1" in scores
    if view["ending"] == "fish":
        assert table.count("#scores .marker.fish") == 1
    check_no_horizontal_scroll(page)
    if bots:   # the score table names each bot's level
        assert "expert" in scores and "random" in scores
    page.screenshot(path=str(shots / f"{prefix}-round-over.png"), full_page=True)
    before = table.renders()
    page.click("#next-round")
    table.wait_render(before)
    assert table.state()["view"]["round_number"] == 2 and not table.round_over()
    assert table.count("#hand .tile") == 7
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
    if any(move.split("@")[-1].startswith(("N", "S")) for move in view["layout"]):
        assert table.count("#layout g.domino.spinner") >= 1
    if level != "human":
        assert table.state()["keys"][1] is None   # sealed: the page never holds the bot's key
    page.screenshot(path=str(shots / "all-fives.png" if level == "human" else tmp_path / "all-fives-bots.png"))
    assert table.errors == []


@pytest.mark.parametrize("level", ["human", "greedy"], ids=["hot-seat", "bots"])
def test_a_whole_kingdomino_game(browser: Browser, gateway: Gateway, shots: Path, tmp_path: Path, level: str) -> None:
    page = browser.new_page(viewport=DESKTOP)
    table = Table(page, gateway)
    table.new_match("kingdomino", 2, [level])
    folder = shots if level == "human" else tmp_path   # docs show the hot-seat game
    assert table.count(".kingdom") == 2 and table.count(".row[data-row=next] .ktile") == 4
    illegal_tried = False
    for _ in range(200):
        view = table.state()["view"]
        if view["game_over"]:
            break
        assert "your turn" in table.status()
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
            before = table.renders()
            page.locator(".kingdom:not(.small) .cell.second-ok").first.click()
            table.wait_render(before)
            assert len(table.state()["view"]["grids"][me]) == placed + 2
        else:
            page.locator("#extra-actions button").first.click()
            table.wait_render(before)
    view = table.state()["view"]
    assert view["game_over"] and illegal_tried
    assert "Game over. Winner" in page.inner_text("#round-result")
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
