"""`domino play --join LINK` through a pseudo-terminal against real services: a person in the terminal and
a person played through the SDK (as a browser would play it) share a Kozel table with two bots for a whole
round; the terminal shows the other person's moves as its stream brings them, deals the next round, and
leaves its seat when the person quits."""
from __future__ import annotations

import os
import re
import sys
import threading

import pexpect
import pytest

from clients.sdk import ClientProblem, RestClient, Seat

from .conftest import REPO, Gateway

pytestmark = pytest.mark.service

MOVE = re.compile(r"your move \((?:1 plays it|1 to \d+), or type a move")


def spawn_join(link: str, *args: str, columns: int = 120) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    child = pexpect.spawn(sys.executable, ["-m", "clients.cli", "play", "--join", link, *args], cwd=str(REPO),
                          encoding="utf-8", timeout=60, dimensions=(50, columns), env=env)
    child.str_last_chars = 3000
    return child


def play_seat(seat: Seat, errors: list[BaseException], whole_match: bool = False) -> None:
    """The other person: plays the first legal move on each of its turns, read from its own stream, until the
    first round is over (`whole_match`: dealing each next round at once, until the match's end)."""
    try:
        with seat.events() as stream:
            for event in stream:
                view = event.data.get("view") if isinstance(event.data, dict) else None
                if not view or view["match_over"]:
                    continue
                try:
                    if view["round_over"]:
                        if not whole_match:
                            return
                        seat.next_round()          # the terminal may have dealt it first: a 409
                    elif view["to_move"] == seat.seat:
                        seat.apply(seat.legal().actions[0])
                except ClientProblem as err:
                    if err.status != 409:
                        raise
    except BaseException as err:  # noqa: BLE001 - reported by the test
        errors.append(err)


def test_a_terminal_and_an_sdk_seat_play_a_whole_round_at_one_table(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    opened = api.create_table("kozel", 4, seats=["open", "open", "greedy", "random"], name="Terminal test")
    child = spawn_join(opened.invites[0].link, "--name", "Tess")
    child.expect("You took seat 0 at table 'Terminal test': kozel, 4 players")
    child.expect("Waiting for the other seats to be taken")
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    assert api.table(opened.table_id).seats[0].name == "Tess"
    errors: list[BaseException] = []
    other = threading.Thread(target=play_seat, args=(boris, errors), daemon=True)
    other.start()
    child.expect(r"At the table: You, Seat 1 \(Boris\), Seat 2 \(greedy bot\), Seat 3 \(random bot\)")
    screen = ""
    for _ in range(60):
        index = child.expect([MOVE, "Press Enter to deal the next round", pexpect.EOF])
        screen += child.before + (child.after if isinstance(child.after, str) else "")
        if index != 0:
            break
        assert "Your hand:" in child.before
        child.sendline("1")
    else:
        raise AssertionError("the round did not end")
    assert index == 1, screen[-3000:]
    other.join(30)
    assert not errors, errors
    flat = re.sub(r"\s+", " ", screen)
    assert re.search(r"Seat 1 \(Boris\) (played \d-\d|knocked)", flat), screen[-3000:]
    assert re.search(r"You (played \d-\d|knocked)", flat) and re.search(r"Round 1 over: (out|fish)", flat)
    assert "Boris) held:" in flat and "You held:" in flat            # the hands revealed at the round's end
    child.sendline("")                                               # deal round 2
    child.expect("round 2 dealt")
    index = child.expect([MOVE, "Waiting for Seat 1 \\(Boris\\)"])
    if index == 0:
        child.sendline("q")
    else:
        child.sendintr()                                             # Ctrl-C while waiting for Boris
    child.expect("You left seat 0")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert not api.table(opened.table_id).seats[0].taken            # the seat is free for a fresh invite


def test_a_whole_match_to_its_end_with_the_other_seat_dealing_first(gateway: Gateway) -> None:
    """A short match (Kozel to a target of 1 point: a round or two). The SDK seat deals each next round as soon
    as it can, so the terminal's own deal is refused (409) and the game goes on; the match's end is shown and
    the game exits by itself."""
    api = RestClient(gateway.url)
    opened = api.create_table("kozel", 4, seats=["open", "open", "greedy", "greedy"], options={"target": 1})
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    errors: list[BaseException] = []
    other = threading.Thread(target=play_seat, args=(boris, errors, True), daemon=True)
    child = spawn_join(opened.invites[0].link, "--name", "Tess", columns=80)
    child.expect(r"At the table: You, Seat 1 \(Boris\)")
    other.start()
    screen = ""
    for _ in range(200):
        index = child.expect([MOVE, "Press Enter to deal the next round", r"Match over\. Final score: .*\.",
                              pexpect.EOF])
        screen += child.before + (child.after if isinstance(child.after, str) else "")
        if index >= 2:
            break
        child.sendline("1" if index == 0 else "")
    assert index == 2, screen[-3000:]
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, screen[-3000:]
    other.join(30)
    assert not errors, errors
    flat = re.sub(r"\s+", " ", screen)
    assert re.search(r"The goat: (You|Seat \d \([^)]*\))", flat), screen[-3000:]
    assert api.table(opened.table_id).status == "over"


def test_a_bad_or_spent_link_is_refused_with_a_message(gateway: Gateway) -> None:
    api = RestClient(gateway.url)
    opened = api.create_table("kozel", 4, seats=["open", "greedy", "greedy", "greedy"])
    api.join_table(opened.table_id, invite=opened.invites[0].code, name="First")
    child = spawn_join(opened.invites[0].link)
    child.expect("domino play: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    child = spawn_join("http://127.0.0.1:8080/play?table=abc")
    child.expect("not an invite link")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
