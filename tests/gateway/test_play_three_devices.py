"""Issue 24's whole promise at once: two browsers and a terminal play one match against each other
through invites. Anna opens a Kozel table on the page (two more people and a greedy bot), Boris takes
his seat from the link in another browser context, Tess takes hers with `domino play --join LINK` in a
pseudo-terminal; they play a whole round, each on its own device, every move reaching the others live.
Boris reloads his page mid-round and goes on from the same seat without losing a move. Real services:
the tables' gateway of the friends test (two gunicorn workers on one SQLite store), a real engine,
Debian's chromium.
"""
from __future__ import annotations

import re
import threading
from pathlib import Path

import pexpect
import pytest
from playwright.sync_api import Browser

from .conftest import Gateway
from .test_play_browser import PHONE, browser  # noqa: F401
from .test_play_friends_browser import Person, check_own_hand_only, friends_gw, open_table, play_one_turn  # noqa: F401
from .test_play_join import MOVE, spawn_join

pytestmark = pytest.mark.service


class Terminal:
    """Tess in her terminal, on a thread of her own: she plays the first move offered at each of her
    turns, until the round is over (the game then asks to deal the next one)."""

    def __init__(self, link: str) -> None:
        self.child = spawn_join(link, "--name", "Tess")
        self.screen = ""
        self.moves = 0
        self.error: BaseException | None = None
        self.over = threading.Event()
        self.thread = threading.Thread(target=self._play, daemon=True)

    def _play(self) -> None:
        try:
            for _ in range(200):
                index = self.child.expect([MOVE, "Press Enter to deal the next round", pexpect.EOF], timeout=120)
                self.screen += self.child.before + (self.child.after if isinstance(self.child.after, str) else "")
                if index != 0:
                    break
                self.child.sendline("1")
                self.moves += 1
        except BaseException as err:  # noqa: BLE001 - reported by the test
            self.error = err
        finally:
            self.over.set()

    def flat(self) -> str:
        return re.sub(r"\s+", " ", self.screen)


def test_two_browsers_and_a_terminal_play_one_match_through_invites(
        browser: Browser, friends_gw: Gateway, tmp_path: Path) -> None:  # noqa: F811
    contexts = [browser.new_context(viewport=PHONE) for _ in range(2)]
    terminal: Terminal | None = None
    try:
        anna = Person(contexts[0], friends_gw.url + "/play", "Anna")
        open_table(anna, ["person", "person", "greedy"], name="Three devices")
        anna.wait_for(lambda: anna.page.locator("#invite-2").count() == 1, "the invite links")
        boris_link, tess_link = anna.page.input_value("#invite-1"), anna.page.input_value("#invite-2")

        boris = Person(contexts[1], boris_link, "Boris")
        boris.wait_for(lambda: "Three devices" in boris.page.inner_text("#join-title"), "the join screen")
        boris.page.fill("#join-name", "Boris")
        boris.page.click("#join-seat")
        terminal = Terminal(tess_link)
        terminal.child.expect('You took seat 2 at table "Three devices"')
        terminal.thread.start()
        for person in (anna, boris):
            person.wait_playing()
        people = {0: anna, 1: boris}
        for seat, person in people.items():
            check_own_hand_only(person, seat)

        turns, reloaded, by_browser = 0, False, 0
        while True:
            turns += 1
            assert turns < 300, "the round did not end"
            view = anna.view()
            if view["round_over"]:
                break
            mover = view["to_move"]
            if mover == 2:  # Tess's turn: her terminal answers; Anna's page sees her move on its stream
                # until Anna's page no longer shows Tess to move (a seq read after the view could already
                # hold Tess's move and the bot's answer, and nothing more comes until Anna plays)
                anna.wait_for(lambda: anna.view()["to_move"] != 2 or anna.view()["round_over"]
                              or terminal.over.is_set(), "Tess's move")  # type: ignore[union-attr]
                assert terminal.error is None, terminal.error
                continue
            assert mover in people, view  # the bot moves at once, in the answer to the person before it
            person, others = people[mover], [p for s, p in people.items() if s != mover]
            for other in others:
                other.wait_for(lambda o=other, p=person: o.seq() == p.seq(), "the same position on both pages")
            if not reloaded and turns >= 3 and mover == 0:
                # Boris reloads mid-round while it is Anna's turn (nobody else can move until the test
                # plays for her; Tess's terminal plays on its own): the same seat, hand and board
                reloaded = True
                hand, layout = sorted(boris.hand()), boris.view()["layout"]
                boris.page.reload()
                boris.wait_playing()
                assert boris.saved()["me"] == 1 and sorted(boris.hand()) == hand
                assert boris.view()["layout"] == layout
            play_one_turn(person)
            by_browser += 1
            for other in others:
                other.wait_for(lambda o=other, p=person: o.seq() >= p.seq(), "the move on the other page's stream")
        boris.wait_for(boris.round_over, "the round's end on Boris's page")
        assert terminal.over.wait(60), "the terminal never saw the round's end"
        assert terminal.error is None, terminal.error
        assert reloaded and by_browser > 0
        # the three devices saw the same round: the pages' boards agree, the terminal saw both people play
        assert anna.view()["layout"] == boris.view()["layout"]
        flat = terminal.flat()
        assert re.search(r"Round 1 over: (out|fish)", flat), flat[-3000:]
        for seat, name in ((0, "Anna"), (1, "Boris")):
            assert re.search(rf"Seat {seat} \({name}\) (played \d-\d|knocked|drew)", flat), flat[-3000:]
        if terminal.moves:
            tess_moves = [line for line in boris.saved()["log"] if line.startswith("Tess ")]
            assert tess_moves, boris.saved()["log"]
        assert anna.errors == [] and boris.errors == [], (anna.errors, boris.errors)
    finally:
        if terminal is not None:
            terminal.child.close(force=True)
        for context in contexts:
            context.close()
