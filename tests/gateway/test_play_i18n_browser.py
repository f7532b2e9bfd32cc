"""The page in Russian and English, in Debian's chromium driven by Playwright, against real services: a
whole Kozel match played in Russian against bots (the browser's language is Russian; every visible word
is Russian, the game's terms the seeds' ones: козёл, рыба, базар, запомненные), the header's switch that
changes the language at once and is remembered, and the score table of a table with four long names that
keeps within a 1280x800 screen and adds no sideways scroll on a 390x844 phone. Screenshots as in
test_play_browser.py (DOMINO_UPDATE_SCREENSHOTS=1 writes them to docs/play/, which docs/play.md shows).
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from .conftest import REPO, Gateway
from .test_play_browser import PHONE, Table, browser, check_no_horizontal_scroll, shots  # noqa: F401
from .test_tables import call, ok

pytestmark = pytest.mark.service

WIDE = {"width": 1280, "height": 800}
MATCH_SECONDS = 600   # a bound for a whole match, not a timing goal
# Latin words the Russian page may show: the language switch's own names.
LATIN_ALLOWED = {"EN", "RU"}
# Words of the page in Russian, each checked where it belongs.
RUSSIAN_LABELS = ["Ваш ход", "Ваши кости", "Счёт", "Что было", "Записано", "Запомнено", "Раунд 1"]
# As long as a seat's name may be (40 characters, docs/tables.md).
LONG_NAMES = ["Anastasia Konstantinovna Rimskaya-Korsak", "Bartholomew Maximilian Featherstonehaugh",
              "Cordelia Evangeline Montgomery-Whitfield", "Dmitri Aleksandrovich Voskresensky-Orlov"]


def latin_words(page: Page) -> set[str]:
    """The words in Latin letters on the screen (two letters or more: a board's ends are named W, E, N, S)."""
    return set(re.findall(r"[A-Za-z]{2,}", page.inner_text("body"))) - LATIN_ALLOWED


def make_move(table: Table) -> None:
    """The person's turn: the first playable tile (its first end, when it fits several), else draw or
    knock; returns once the page holds the match's next state."""
    page = table.page
    token = table.state()["token"]
    legal = page.locator("#hand .tile.legal")
    if legal.count():
        legal.first.click()
        if page.locator("#choices button").count():
            page.locator("#choices button").first.click()
    else:
        page.locator("#extra-actions button").first.click()
    table.wait_for(lambda: table.state()["token"] != token)


def test_a_whole_kozel_match_in_russian_against_bots(browser: Browser, gateway: Gateway, shots: Path) -> None:  # noqa: F811
    """The browser's language is Russian: the page speaks it from the first screen to the goat, with no
    English word on the screen at any turn."""
    page = browser.new_page(viewport=PHONE, locale="ru-RU")
    table = Table(page, gateway)
    assert page.evaluate("document.documentElement.lang") == "ru"
    assert page.inner_text("#new-match") == "Новая партия" and page.input_value("#lang") == "ru"
    assert page.text_content("#variant option[value=kozel]") == "Козёл"
    assert page.text_content("#level-1 option[value=greedy]") == "жадный"
    table.new_match("kozel", 4, ["greedy", "greedy", "greedy"])
    deadline = time.monotonic() + MATCH_SECONDS
    rounds = 0
    seen_labels: set[str] = set()
    while True:
        assert time.monotonic() < deadline, "the match did not end in time"
        view: Any = table.state()["view"]
        text = page.inner_text("body")
        seen_labels |= {label for label in RUSSIAN_LABELS if label in text}
        assert latin_words(page) == set(), latin_words(page)
        if view["match_over"]:
            break
        if view["round_over"]:
            rounds += 1
            result = page.inner_text("#round-result")
            assert result.startswith(f"Раунд {view['round_number']}: "), result
            assert ("рыба" in result) == (view["ending"] == "fish") and "Очки за раунд: Вы " in result, result
            assert table.count("#opponents .seat.knocked") == 0   # a knock is said while its round is played
            if rounds == 1:
                check_no_horizontal_scroll(page)
                page.screenshot(path=str(shots / "kozel-ru-round-over.png"))
            before = table.renders()
            page.click("#next-round")
            table.wait_render(before)
            continue
        assert page.inner_text("#status") == "Ваш ход"
        if page.locator("#extra-actions button").count():
            assert page.inner_text("#extra-actions button") in ("На базар: взять кость", "Пас (стучу)")
        make_move(table)
    assert seen_labels == set(RUSSIAN_LABELS), seen_labels
    # The end: the goat named in the score table's own row, a mark under each loser (not "козёл козёл").
    assert page.inner_text("#status").startswith("Партия окончена.")
    losers = page.locator("#losers td").all_inner_texts()
    assert losers[0] == "Козёл" and [i for i, c in enumerate(losers[1:]) if c == "✗"] == view["losers"], losers
    assert "козёл" not in " ".join(losers[1:]).lower()
    log = page.inner_text("#log")
    assert "Партия окончена" in log and "Раунд" in log
    assert page.inner_text("#score-legend").count("«козёл»") == 1
    check_no_horizontal_scroll(page)
    page.screenshot(path=str(shots / "kozel-ru-match-over.png"))
    assert table.errors == []
    page.close()


def test_the_language_switch_changes_the_page_at_once_and_is_remembered(browser: Browser, gateway: Gateway) -> None:  # noqa: F811
    """An English browser gets English; the header's switch turns the whole page (the match on it, its log
    included) Russian at once, a reload keeps the choice, and the switch turns it back."""
    context = browser.new_context(viewport=PHONE, locale="en-US")
    page = context.new_page()
    table = Table(page, gateway)
    assert page.evaluate("document.documentElement.lang") == "en" and page.input_value("#lang") == "en"
    assert page.inner_text("#new-match") == "New match"
    table.new_match("kozel", 2, ["greedy"])
    make_move(table)
    assert page.inner_text("#status") in ("Your turn", "The round is over.")
    english_log = page.locator("#log li").all_inner_texts()
    assert any(line.startswith("Round 1 dealt") for line in english_log), english_log

    before = table.renders()
    page.select_option("#lang", "ru")
    table.wait_render(before)
    assert page.evaluate("document.documentElement.lang") == "ru"
    assert page.inner_text("#status") in ("Ваш ход", "Раунд окончен.")
    assert page.inner_text("#side h2") == "Счёт" and page.inner_text("#setup-toggle") == "Новая партия"
    assert page.locator("#log li").count() == len(english_log)   # the same log, retold
    assert any(line.startswith("Раунд 1: кости розданы") for line in page.locator("#log li").all_inner_texts())
    assert latin_words(page) == set(), latin_words(page)
    assert page.evaluate("localStorage.getItem('domino-lang')") == "ru"

    # The other screens speak it too: the form to open a table for friends.
    page.click("#setup-toggle")
    page.click("#to-friends")
    assert page.inner_text("#status").startswith("Откройте стол")
    assert page.inner_text("#friends > h2") == "Открыть стол"
    labels = page.locator("#table-form label > span").all_inner_texts()
    assert {"Ваше имя", "Часы", "Если кто-то уйдёт"} <= set(labels) and not any(re.search("[A-Za-z]", x) for x in labels), labels
    assert page.locator("#seat-kind-1 option[value=person]").text_content() == "человек (приглашение)"
    page.goto(gateway.url + "/play")   # the match against the computer is kept in the tab: back to it
    page.wait_for_selector("#scores table.scores")
    assert page.inner_text("#side h2") == "Счёт"

    page.reload()
    page.wait_for_selector("#scores table.scores")
    assert page.input_value("#lang") == "ru" and page.inner_text("#side h2") == "Счёт"
    assert "Записано" in page.inner_text("#scores")

    before = table.renders()
    page.select_option("#lang", "en")
    table.wait_render(before)
    assert page.inner_text("#side h2") == "Scores" and "Written" in page.inner_text("#scores")
    assert table.errors == []
    context.close()


def test_the_score_table_of_four_long_names_fits_a_laptop_and_a_phone(browser: Browser, tables_gw: Gateway,  # noqa: F811
                                                                      shots: Path) -> None:  # noqa: F811
    """Four people with long names at a table: at 1280x800 the score table lies within the screen, at
    390x844 nothing scrolls sideways; each name is whole in its column's title."""
    opened = ok(call(tables_gw, "POST", "/v1/tables", {"variant": "kozel", "players": 4, "seats": [{"kind": "open"}] * 4,
                                                       "name": "Long names"}), 201)
    invites = {i["seat"]: i["code"] for i in opened["invites"]}
    for seat in (1, 2, 3):
        ok(call(tables_gw, "POST", f"/v1/tables/{opened['table_id']}/join",
                {"invite": invites[seat], "name": LONG_NAMES[seat]}))
    context = browser.new_context(viewport=WIDE, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{tables_gw.url}/play?table={opened['table_id']}&invite={invites[0]}")
    page.fill("#join-name", LONG_NAMES[0])
    page.click("#join-seat")
    page.wait_for_selector("#scores table.scores th[title]")
    titles = page.eval_on_selector_all("#scores th[title]", "(ths) => ths.map((th) => th.title)")
    assert titles == ["You", *LONG_NAMES[1:]], titles
    for language, viewport in (("en", WIDE), ("ru", WIDE), ("ru", PHONE), ("en", PHONE)):
        page.set_viewport_size(viewport)
        if page.input_value("#lang") != language:
            page.select_option("#lang", language)
        box = page.locator("#scores table.scores").bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], (language, viewport, box)
        check_no_horizontal_scroll(page)
        if viewport == WIDE:
            page.screenshot(path=str(shots / f"four-names-{language}.png"))
    # Everybody here is a newcomer: their ratings say so without a lookup the archive would answer 404.
    page.wait_for_selector("#opponents .rating")
    assert set(page.locator("#opponents .rating").all_inner_texts()) == {"rating: new"}
    assert errors == [], errors
    context.close()


def test_every_word_the_page_asks_for_is_in_both_languages() -> None:
    """Each key the page's HTML marks (data-i18n...) and each tr("key") of play.js is in i18n.js's English
    table and in its Russian one: a missing key would show the key itself (English) or English (Russian)."""
    play = REPO / "api_gateway" / "play"
    source = (play / "i18n.js").read_text()
    tables = {name: source[source.index(f"const {name} = {{"):] for name in ("EN", "RU")}
    tables = {name: text[:text.index("\n};")] for name, text in tables.items()}
    wanted = set(re.findall(r'data-i18n(?:-[a-z]+)?="([^"]+)"', (play / "index.html").read_text()))
    wanted |= set(re.findall(r'\btr\("([^"]+)"', (play / "play.js").read_text()))
    assert len(wanted) > 100, wanted
    for name, table in tables.items():
        missing = {key for key in wanted if not re.search(rf'(^|[\s{{,])("{re.escape(key)}"|{re.escape(key)}):', table, re.M)}
        assert missing == set(), (name, missing)
