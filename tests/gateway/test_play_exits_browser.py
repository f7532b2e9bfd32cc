"""The exits of a match on /play (issue 37), in Debian's chromium driven by Playwright against real services:
two browser contexts (two people on two devices) at a 2-player Kozel table opened from the page.

- rated (the form's default): one person resigns (a confirm dialog first) and the other's page says who
  resigned and that the match is over; each sees the other's presence dot; Abort shows until both moved;
  then leaving asks with the rated warning (dismissed: nothing happens; accepted: the other sees a resign);
- casual and private with spectators: the host's spectator link opens a third context's spectator view (no
  hand, no buttons to act), and an abort before anyone moved is told on all three pages;
- a person who closes their page is away, then gone for the table's claim time: Claim victory appears on the
  other's page and ends the match.

The gateway counts a seat as here for 2 s after its stream's last renewal or its last call
(`GATEWAY_PRESENCE_SECONDS`); a table's claim time is then its shortest (5 s), set by the test through the
API (the page's form offers the default).
"""
from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Dialog

from clients.sdk import RestClient

from .conftest import EngineProc, Gateway, gateway_env, launch_gateway
from .test_play_browser import PHONE, browser, check_no_horizontal_scroll  # noqa: F401
from .test_play_friends_browser import Person, play_one_turn

pytestmark = pytest.mark.service

CLAIM_AFTER = 5


@pytest.fixture(scope="module")
def exits_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("exits-page"), GATEWAY_PRESENCE_SECONDS="2"))
    yield gw
    gw.stop()


def open_two_seat_table(anna: Person, rated: bool = True, spectators: bool = False) -> str:
    """Anna opens a 2-player Kozel table from the page (the other seat a person's), rated or casual, with
    spectators or not (a private table); the invite link for seat 1."""
    page = anna.page
    page.click("#to-friends")
    page.select_option("#t-variant", "kozel")
    page.select_option("#t-players", "2")
    page.select_option("#seat-kind-1", "person")
    page.fill("#t-your-name", anna.name)
    page.fill("#t-name", "Exits")
    assert page.input_value("#t-rated") == "rated"          # rated unless chosen otherwise
    if not rated:
        page.select_option("#t-rated", "casual")
    assert page.locator("#t-spectators").is_visible()        # offered for a private table ...
    page.check("#t-public")
    assert not page.locator("#t-spectators").is_visible()    # ... not for a public one
    page.uncheck("#t-public")
    if spectators:
        page.check("#t-spectators")
    check_no_horizontal_scroll(page)
    page.click("#open-table")
    anna.wait_for(lambda: anna.screen() == "waiting" and page.locator("#invite-1").count() == 1, "the invite link")
    return page.input_value("#invite-1")


def sit(boris: Person) -> None:
    boris.wait_for(lambda: "Exits" in boris.page.inner_text("#join-title"), "the join screen")
    boris.page.fill("#join-name", boris.name)
    boris.page.click("#join-seat")


class Dialogs:
    """The person's answers to their page's dialogs (confirm): each accepted, or dismissed while `accept` is
    False; `said` keeps their messages."""

    def __init__(self, person: Person, accept: bool = True) -> None:
        self.accept = accept
        self.said: list[str] = []
        person.page.on("dialog", self.answer)

    def answer(self, dialog: Dialog) -> None:
        self.said.append(dialog.message)
        if self.accept:
            dialog.accept()
        else:
            dialog.dismiss()


def shown(person: Person, selector: str) -> bool:
    return person.page.locator(selector).is_visible()


def test_a_resign_is_confirmed_and_the_other_device_sees_who_resigned(browser: Browser,  # noqa: F811
                                                                      exits_gw: Gateway) -> None:
    contexts = [browser.new_context(viewport=PHONE) for _ in range(2)]
    try:
        anna = Person(contexts[0], exits_gw.url + "/play", "Anna")
        link = open_two_seat_table(anna)
        assert "rated" in anna.page.inner_text("#waiting-about")
        boris = Person(contexts[1], link, "Boris")
        boris.wait_for(lambda: "Exits" in boris.page.inner_text("#join-title"), "the join screen")
        assert ", rated" in boris.page.inner_text("#join-about")
        sit(boris)
        anna.wait_playing()
        boris.wait_playing()
        for person in (anna, boris):   # nobody has moved: every exit but the claim is offered
            assert shown(person, "#resign") and shown(person, "#abort") and not shown(person, "#claim")
        # each sees the other's presence (the table, looked at every few seconds while a match is played)
        anna.wait_for(lambda: anna.texts("#opponents .seat-1 .presence", "data-presence") == ["here"], "Boris here")
        assert anna.page.locator("#opponents .seat-0 .presence").count() == 0   # not her own
        check_no_horizontal_scroll(anna.page)
        dialogs = Dialogs(boris)
        boris.page.click("#resign")
        boris.wait_for(lambda: "You resigned" in boris.page.inner_text("#status"), "the resign")
        assert dialogs.said and dialogs.said[0].startswith("Resign this match?"), dialogs.said
        anna.wait_for(lambda: "Boris resigned" in anna.page.inner_text("#status"), "the resign on Anna's stream")
        assert anna.page.inner_text("#status").startswith("The match is over.")
        assert "Boris resigned" in anna.page.inner_text("#log")
        for person in (anna, boris):
            assert not shown(person, "#resign") and not shown(person, "#abort") and shown(person, "#play-again")
        assert anna.errors == [] and boris.errors == [], (anna.errors, boris.errors)
    finally:
        for context in contexts:
            context.close()


def test_leaving_a_rated_match_warns_and_is_a_resign_once_both_moved(browser: Browser,  # noqa: F811
                                                                     exits_gw: Gateway) -> None:
    contexts = [browser.new_context(viewport=PHONE) for _ in range(2)]
    try:
        anna = Person(contexts[0], exits_gw.url + "/play", "Anna")
        boris = Person(contexts[1], open_two_seat_table(anna), "Boris")
        sit(boris)
        anna.wait_playing()
        boris.wait_playing()
        people = {0: anna, 1: boris}
        moved: set[int] = set()
        while moved != {0, 1}:
            mover = anna.view()["to_move"]
            people[1 - mover].wait_for(lambda m=mover: people[1 - m].seq() == people[m].seq(), "the same position")
            play_one_turn(people[mover])
            moved.add(mover)
        for person in people.values():
            person.wait_for(lambda p=person: p.seq() == anna.seq() and not shown(p, "#abort"), "Abort gone")
            assert shown(person, "#resign")
        dialogs = Dialogs(boris, accept=False)
        boris.page.click("#leave-table")
        said = dialogs.said
        assert said and "rated match" in said[0] and "resigning" in said[0], said
        assert boris.screen() == "table" and boris.saved() is not None          # dismissed: still seated
        dialogs.accept = True
        boris.page.click("#leave-table")
        boris.wait_for(lambda: boris.screen() == "friends", "leaving")
        anna.wait_for(lambda: "Boris resigned" in anna.page.inner_text("#status"), "the resign by leaving")
        assert anna.errors == [] and boris.errors == [], (anna.errors, boris.errors)
    finally:
        for context in contexts:
            context.close()


def test_a_spectator_watches_a_casual_private_table_and_an_abort_is_told_everywhere(browser: Browser,  # noqa: F811
                                                                                     exits_gw: Gateway) -> None:
    contexts = [browser.new_context(viewport=PHONE) for _ in range(3)]
    try:
        anna = Person(contexts[0], exits_gw.url + "/play", "Anna")
        link = open_two_seat_table(anna, rated=False, spectators=True)
        assert "casual" in anna.page.inner_text("#waiting-about")
        watch = anna.page.input_value("#watch-link-text")
        found = re.search(r"/play\?table=([0-9a-f]{32})&watch=(\S+)$", watch)
        assert found is not None, watch
        boris = Person(contexts[1], link, "Boris")
        sit(boris)
        anna.wait_playing()
        boris.wait_playing()
        carol = Person(contexts[2], watch, "Carol")
        carol.wait_for(lambda: carol.screen() == "table" and carol.live(), "the spectator's view")
        assert "you are watching" in carol.page.inner_text("#table-name")
        assert not shown(carol, "#hand-area") and not shown(carol, "#resign") and not shown(carol, "#abort")
        chips = carol.page.eval_on_selector_all("#opponents .seat b", "(bs) => bs.map((b) => b.textContent)")
        assert chips == ["Anna", "Boris"], chips
        assert carol.saved() is None                       # a spectator keeps no seat
        # the plain table address without the link's code shows nothing of a private table
        nobody = Person(contexts[2], f"{exits_gw.url}/play?table={found.group(1)}", "Nobody")
        nobody.wait_for(lambda: nobody.page.locator("#message").is_visible(), "the refusal")
        nobody.page.close()
        dialogs = Dialogs(anna)
        anna.page.click("#abort")
        assert dialogs.said and dialogs.said[0].startswith("Abort this match?"), dialogs.said
        anna.wait_for(lambda: "You aborted it" in anna.page.inner_text("#status"), "the abort")
        for person in (boris, carol):
            person.wait_for(lambda p=person: "Aborted by Anna: no result, no rating." in p.page.inner_text("#status"),
                            "the abort on the stream")
        assert anna.errors == [] and boris.errors == [], (anna.errors, boris.errors)
    finally:
        for context in contexts:
            context.close()


def test_claim_victory_over_a_person_who_closed_their_page(browser: Browser, exits_gw: Gateway) -> None:  # noqa: F811
    """Boris closes his page: Anna's shows him away, then (the table's claim time on) Claim victory."""
    api = RestClient(exits_gw.url)
    opened = api.create_table("kozel", 2, seats=["open", "open"], name="Exits", claim_after=CLAIM_AFTER)
    contexts = [browser.new_context(viewport=PHONE) for _ in range(2)]
    try:
        boris = Person(contexts[1], opened.invites[1].link, "Boris")
        sit(boris)
        anna = Person(contexts[0], opened.invites[0].link, "Anna")
        sit(anna)
        anna.wait_playing()
        boris.wait_playing()
        assert not shown(anna, "#claim")
        contexts[1].close()                                # Boris is gone
        anna.wait_for(lambda: anna.texts("#opponents .seat-1 .presence", "data-presence") == ["away"], "Boris away")
        deadline_ms = (CLAIM_AFTER + 20) * 1000
        anna.page.wait_for_selector("#claim", state="visible", timeout=deadline_ms)
        assert anna.texts("#opponents .seat-1 .presence", "data-presence") == ["gone"]
        anna.page.click("#claim")
        anna.wait_for(lambda: "Boris was gone: victory claimed." in anna.page.inner_text("#status"), "the claim")
        assert not shown(anna, "#claim") and shown(anna, "#play-again")
        assert anna.errors == [], anna.errors
    finally:
        for context in contexts:
            context.close()
