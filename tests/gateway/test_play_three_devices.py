"""Issue 24's whole promise at once: two browsers and a terminal play one match against each other
through invites. Anna opens a Kozel table on the page (two more people and a greedy bot) with a low
target, the points that end the match (the form refuses one below the preset's minimum first), Boris
takes his seat from the link in another browser context, Tess takes hers with `domino play --join LINK`
in a pseudo-terminal; they play every round to the match's end, each on its own device, every move
reaching the others live, the next round dealt by a page or by Tess's terminal in turn. Boris reloads
his page mid-round and goes on from the same seat without losing a move. At the end the three devices
agree on the final scores. Real services: the tables' gateway of the friends test (two gunicorn workers
on one SQLite store), a real engine, Debian's chromium.
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

#: The written points that make a seat the goat. With the preset's opening rule (a round below 13 points is
#: remembered, not written) a first-legal-move table with a greedy bot ends in one to three rounds 96 times
#: in 100 (two or more 78 times: a next round is dealt), 4 or 5 rounds otherwise (engine simulation, 300
#: seeds); the preset's 101 takes five to ten.
TARGET = 25
NEXT_ROUND = "Press Enter to deal the next round"
MATCH_OVER = r"Match over\. Final score: "


class Terminal:
    """Tess in her terminal, on a thread of her own: she plays the first move offered at each of her
    turns and answers the prompt to deal the next round, until the match's end is shown and the game
    exits.

    The rounds are dealt in turn (`deals`): after round 1, 3, ... a page deals, and Tess presses Enter
    only once the test has seen the new round on both pages (`page_dealt`): her deal is refused (409) and
    the game goes on; after round 2, 4, ... Tess deals and the pages follow on their streams. Nobody races
    for a deal, so a click never finds the page's Next round button hidden under it by the other deal.
    (Three rounds in ten reach round 3: the page's deal comes first, to be the one most runs make.)"""

    def __init__(self, link: str) -> None:
        self.child = spawn_join(link, "--name", "Tess")
        self.screen = ""
        self.moves = 0
        self.error: BaseException | None = None
        self.over = threading.Event()
        self.dealt = threading.Condition()
        self.dealt_by_page: set[int] = set()   # the rounds after which a page dealt the next one
        self.thread = threading.Thread(target=self._play, daemon=True)

    @staticmethod
    def deals(number: int) -> bool:
        """Whether Tess deals the round after round `number` (else a page does)."""
        return number % 2 == 0

    def page_dealt(self, number: int) -> None:
        """The test saw the round after `number`, dealt by a page, on both pages."""
        with self.dealt:
            self.dealt_by_page.add(number)
            self.dealt.notify_all()

    def _play(self) -> None:
        try:
            for _ in range(1000):
                index = self.child.expect([MOVE, NEXT_ROUND, MATCH_OVER, pexpect.EOF], timeout=120)
                self.screen += self.child.before + (self.child.after if isinstance(self.child.after, str) else "")
                if index == 0:
                    self.child.sendline("1")
                    self.moves += 1
                elif index == 1:
                    number = int(re.findall(r"Round (\d+) over", self.screen)[-1])
                    if not self.deals(number):
                        with self.dealt:
                            seen = self.dealt.wait_for(lambda n=number: n in self.dealt_by_page, timeout=120)
                        assert seen, f"no page dealt the round after round {number}"
                    self.child.sendline("")
                else:   # the match's end (the ratings follow, then the game exits), or an early exit
                    if index == 2:
                        self.child.expect(pexpect.EOF, timeout=60)
                        self.screen += self.child.before
                    break
        except BaseException as err:  # noqa: BLE001 - reported by the test
            self.error = err
        finally:
            self.over.set()

    def flat(self) -> str:
        return re.sub(r"\s+", " ", self.screen)


def deal_next_round(people: dict[int, Person], terminal: Terminal, number: int) -> None:
    """Round `number` is over: a page deals the next one with its Next round button (Boris's, reloaded
    in round 1, after round 1; Anna's after round 3, ...), or Tess's terminal does; both pages go on with
    it, from the click's answer or their streams. (Nobody else deals meanwhile, so the button stays there
    for the click.)"""
    if not terminal.deals(number):
        dealer = people[1] if number % 4 == 1 else people[0]
        dealer.wait_for(dealer.round_over, f"round {number}'s end on {dealer.name}'s page")
        dealer.page.click("#next-round")
    for person in people.values():
        person.wait_for(lambda p=person: p.view()["round_number"] == number + 1 and not p.view()["round_over"],
                        f"round {number + 1} dealt")
    if not terminal.deals(number):
        terminal.page_dealt(number)


def test_two_browsers_and_a_terminal_play_one_match_through_invites(
        browser: Browser, friends_gw: Gateway, tmp_path: Path) -> None:  # noqa: F811
    contexts = [browser.new_context(viewport=PHONE) for _ in range(2)]
    terminal: Terminal | None = None
    try:
        anna = Person(contexts[0], friends_gw.url + "/play", "Anna")
        # A target below the preset's minimum (1) is refused by the page, which sends nothing.
        open_table(anna, ["person", "person", "greedy"], name="Three devices", target=0)
        anna.wait_for(lambda: anna.page.locator("#message").is_visible(), "the target refused")
        assert "Points to end the match: a whole number from 1 to" in anna.page.inner_text("#message")
        assert anna.screen() == "friends" and anna.saved() is None
        anna.page.fill("#t-target", str(TARGET))
        anna.page.click("#open-table")
        anna.wait_for(lambda: anna.page.locator("#invite-2").count() == 1, "the invite links")
        assert f"the match ends at {TARGET} points" in anna.page.inner_text("#waiting-about")
        boris_link, tess_link = anna.page.input_value("#invite-1"), anna.page.input_value("#invite-2")

        boris = Person(contexts[1], boris_link, "Boris")
        boris.wait_for(lambda: "Three devices" in boris.page.inner_text("#join-title"), "the join screen")
        assert f"the match ends at {TARGET} points" in boris.page.inner_text("#join-about")
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
            assert person.view()["options"] == {"target": TARGET}
            assert f"the first to {TARGET} written points is the goat" in person.page.inner_text("#score-legend")

        turns, reloaded, by_browser = 0, False, 0
        while True:
            turns += 1
            assert turns < 1500, "the match did not end"
            view = anna.view()
            if view["match_over"]:
                break
            if view["round_over"]:
                deal_next_round(people, terminal, view["round_number"])
                continue
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
            if not reloaded and turns >= 3 and mover == 0 and view["round_number"] == 1:
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
        boris.wait_for(lambda: boris.view()["match_over"], "the match's end on Boris's page")
        assert terminal.over.wait(90), "the terminal never saw the match's end"
        assert terminal.error is None, terminal.error
        assert reloaded and by_browser > 0
        # The three devices saw the same match: the pages' boards, rounds and final scores agree, and the
        # terminal saw every round end, both people play, and the match end with the same scores.
        last, scores = anna.view()["round_number"], anna.view()["ledger"]["scores"]
        assert max(scores) >= TARGET, scores
        for person in (anna, boris):
            view = person.view()
            assert view["match_over"] and view["round_over"] and view["ledger"]["scores"] == scores
            assert sorted(int(n) for n in person.saved()["rounds"]) == list(range(1, last + 1))
            assert person.page.inner_text("#round-result").endswith("The match is over.")
            assert person.page.locator("#next-round").is_hidden() and person.page.locator("#losers").count() == 1
        assert anna.view()["layout"] == boris.view()["layout"]
        flat = terminal.flat()
        assert [int(n) for n in re.findall(r"Round (\d+) over: (?:out|fish)", flat)] == list(range(1, last + 1)), flat[-3000:]
        final = re.search(MATCH_OVER + r"([^.]*)\.", flat)
        assert final is not None, flat[-3000:]
        assert [int(side.rsplit(" ", 1)[1]) for side in final.group(1).split(", ")] == scores, final.group(0)
        assert re.search(r"The goat: (You|Seat \d \([^)]*\))", flat), flat[-3000:]
        assert terminal.child.wait() == 0, flat[-3000:]
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
