"""The page's "Your games" (docs/tables.md, "The inbox"), in Debian's chromium driven by Playwright, against
real services: a guest who took a seat in the browser sees its game with whose turn, the moves not seen yet
and its clock, and resumes it from the list; a signed-in user (the host app's assertion in localStorage
"domino-player") sees the seats taken on another device too, said to be played there; a kept seat whose
table is gone is forgotten. In English and in Russian.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from clients.sdk import RestClient, Seat

from .conftest import PLAYER_KEYS, EngineProc, Gateway, gateway_env, launch_gateway, player_assertion
from .test_play_browser import PHONE, browser  # noqa: F401
from .test_play_friends_browser import Person

pytestmark = pytest.mark.service


@pytest.fixture(scope="module")
def inbox_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, env=gateway_env(tmp_path_factory.mktemp("inbox-page"),
                                                             GATEWAY_PLAYER_KEYS=PLAYER_KEYS))
    yield gw
    gw.stop()


def until_turn_of(seat: Seat, other: Seat) -> int:
    """People's moves, each at its turn (a draw keeps the turn), until `other` moved and it is `seat`'s turn: how
    many moves `other` made since `seat`'s last."""
    since = 0
    for _ in range(40):
        turn = other.view()["turn"]
        mover = other if turn == other.seat else seat
        assert turn == mover.seat, f"no seat to move: {turn}"
        mover.apply(mover.legal().actions[0])
        since = since + 1 if mover is other else 0
        if mover is other and other.view()["turn"] == seat.seat:
            return since
    raise AssertionError("the turn never came")


def item(person: Person, table_id: str) -> str:
    return f"#my-tables li[data-table='{table_id}']"


def test_your_games_lists_the_turn_the_news_and_the_clock_and_resumes(browser: Browser,  # noqa: F811
                                                                      inbox_gw: Gateway) -> None:
    api = RestClient(inbox_gw.url)
    opened = api.create_table("kozel", 2, name="Correspondence", clock={"move": 86400})
    context = browser.new_context(viewport=PHONE)
    try:
        anna = Person(context, opened.invites[0].link, "Anna")
        anna.page.fill("#join-name", "Anna")
        anna.page.click("#join-seat")
        anna.wait_for(lambda: anna.screen() == "waiting", "the waiting screen")
        boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
        anna.wait_playing()
        kept = api.seat_for(opened.table_id, anna.saved()["credential"])
        unseen = until_turn_of(kept, boris)     # Boris moved last (a draw, then a play, say): Anna's turn
        # a kept seat whose table is gone (its credential holds no seat any more) is forgotten
        lone = api.create_table("kozel", 2)
        left = api.join_table(lone.table_id, invite=lone.invites[0].code, name="Anna")
        left.leave()
        anna.evaluate("([id, credential]) => localStorage.setItem(`domino-table:${id}`, JSON.stringify("
                      "{table: {table_id: id, name: null, variant: 'kozel'}, credential, me: 0}))",
                      [lone.table_id, left.credential])

        anna.page.click("#setup-box > summary")
        anna.page.click("#to-friends")
        games = item(anna, opened.table_id)
        anna.wait_for(lambda: "your turn" in anna.page.inner_text(f"{games} small"), "the inbox's answer")
        note = anna.page.inner_text(f"{games} small")
        assert f"{unseen} new move{'' if unseen == 1 else 's'}" in note and re.search(r"(24:00:00|23:59:\d\d) left", note), note  # a day a move
        assert "your-turn" in (anna.page.get_attribute(games, "class") or "")
        assert anna.page.locator("#my-tables li").count() == 1   # the gone seat: not listed, and forgotten
        assert anna.evaluate(f"localStorage.getItem('domino-table:{lone.table_id}')") is None
        anna.page.click(f"{games} a[href='/play?table={opened.table_id}']")
        anna.wait_playing()

        # Boris's turn now (Anna moves in the page's place, by her credential, until it is): the list says so
        until_turn_of(boris, kept)
        anna.page.click("#setup-box > summary")
        anna.page.click("#to-friends")
        anna.wait_for(lambda: "Boris to move" in anna.page.inner_text(f"{games} small"), "Boris's turn")
        assert "new move" not in anna.page.inner_text(f"{games} small")
        assert anna.errors == [], anna.errors
        # an assertion that no longer checks (a host app's login expired) leaves the kept seats' games listed
        anna.evaluate("localStorage.setItem('domino-player', 'expired.assertion.x')")
        anna.page.click("#setup-box > summary")
        anna.page.click("#to-friends")
        anna.wait_for(lambda: anna.page.locator(f"{games} small").count() == 1
                      and "Boris to move" in anna.page.inner_text(f"{games} small"), "the kept seats' games")
        assert all("400" in e for e in anna.errors), anna.errors   # the refused assertion's answer, logged
    finally:
        context.close()


def test_a_signed_in_user_sees_the_seats_taken_on_another_device_in_russian(browser: Browser,  # noqa: F811
                                                                            inbox_gw: Gateway) -> None:
    api = RestClient(inbox_gw.url)
    opened = api.create_table("kozel", 2, name="Стол Веры")
    api.join_table(opened.table_id, invite=opened.invites[0].code, name="Вера", player=player_assertion("vera"))
    context = browser.new_context(viewport=PHONE, locale="ru-RU")
    try:
        vera = Person(context, inbox_gw.url + "/play", "Вера")
        vera.evaluate("(a) => localStorage.setItem('domino-player', a)", player_assertion("vera"))
        vera.page.reload()
        vera.page.wait_for_selector("#variant option[value=kozel]", state="attached")
        vera.page.click("#to-friends")          # a fresh page: the header's choices are open
        games = item(vera, opened.table_id)
        vera.wait_for(lambda: vera.page.locator(games).count() == 1, "the inbox's answer")
        assert vera.page.inner_text("#my-tables h2") == "Ваши партии"
        note = vera.page.inner_text(f"{games} small")
        assert "ждём игроков" in note and "место занято на другом устройстве" in note, note
        assert vera.page.locator(f"{games} a").count() == 0   # no credential here: nothing to resume from
        assert vera.errors == [], vera.errors
    finally:
        context.close()
