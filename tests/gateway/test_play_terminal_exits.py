"""`domino play --join LINK` and the exits of a match (issue 37), through a pseudo-terminal against real
services: the person resigns at the move prompt (asked to confirm; "no" changes nothing), is told the abort is
closed once everyone has moved and that leaving a rated match then is a resign, sees another seat's abort in
Russian, and claims victory over a person who went away (told first that they are away).

The gateway counts a seat as here for 2 s after its stream's last renewal or its last call
(`GATEWAY_PRESENCE_SECONDS`), so that the claim time of 5 s (a table's shortest) is met within a test.
"""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator

import pexpect
import pytest

from clients.sdk import RestClient, Seat

from .conftest import EngineProc, Gateway, gateway_env, launch_gateway
from .test_play_join import MOVE, spawn_join

pytestmark = pytest.mark.service

CLAIM_AFTER = 5
RU_MOVE = re.compile(r"Ваш ход \((?:1 — сыграть его|от 1 до \d+) или запись хода")


@pytest.fixture(scope="module")
def exits_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("terminal-exits"), GATEWAY_PRESENCE_SECONDS="2"))
    yield gw
    gw.stop()


def mover(seat: Seat, errors: list[BaseException]) -> threading.Thread:
    """The other person, from the SDK: the first legal action on each of their turns, until the match ends."""
    def play() -> None:
        try:
            with seat.events() as stream:
                for event in stream:
                    view = event.data.get("view") if isinstance(event.data, dict) else None
                    if not view or view["match_over"] or view["round_over"]:
                        continue
                    if view["to_move"] == seat.seat:
                        seat.apply(seat.legal().actions[0])
        except BaseException as err:  # noqa: BLE001 - reported by the test
            errors.append(err)

    thread = threading.Thread(target=play, daemon=True)
    thread.start()
    return thread


def test_resign_at_the_prompt_asked_to_confirm(exits_gw: Gateway) -> None:
    api = RestClient(exits_gw.url)
    opened = api.create_table("kozel", 2, seats=["open", "open"])
    child = spawn_join(opened.invites[0].link, "--name", "Tess")
    child.expect("Waiting for the other seats")
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    errors: list[BaseException] = []
    other = mover(boris, errors)
    child.expect("you may also type resign")
    child.expect(MOVE)
    child.sendline("resign")
    child.expect(r"Resign the match\? You lose it\. Type yes to resign: ")
    child.sendline("no")
    child.expect("Not done.")
    child.expect(MOVE)                                  # nothing changed: the move is asked again
    child.sendline("resign")
    child.expect("Type yes to resign: ")
    child.sendline("yes")
    child.expect("You resigned")
    child.expect(r"Match over: you resigned\. Final score: You \d+, Seat 1 \(Boris\) \d+\.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    other.join(30)
    assert not errors, errors
    assert boris.view()["over"] and boris.table().status == "over"


def test_abort_closed_once_both_moved_and_leaving_a_rated_match_then_is_a_resign(exits_gw: Gateway) -> None:
    api = RestClient(exits_gw.url)
    opened = api.create_table("kozel", 2, seats=["open", "open"])
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    child = spawn_join(opened.invites[0].link, "--name", "Tess")
    child.expect(r"At the table: You, Seat 1 \(Boris\)")         # dealt as Tess took her seat
    errors: list[BaseException] = []
    other = mover(boris, errors)
    for turn in range(2):                               # at the second move of Tess, Boris has moved too
        child.expect(MOVE)
        if turn == 0:
            child.sendline("1")
    child.sendline("abort")
    child.expect("Type yes to abort: ")
    child.sendline("yes")
    child.expect("The match can no longer be aborted: everyone has made a move. Type resign to resign.")
    child.expect(MOVE)
    child.sendline("q")
    child.expect("You left seat 0")
    child.expect(r"A rated match left once everyone has moved counts as resigned")
    child.expect(pexpect.EOF)
    other.join(30)
    assert not errors, errors
    latest = boris.view()
    assert latest["over"], latest["view"]


def test_another_seats_abort_is_told_in_russian(exits_gw: Gateway) -> None:
    api = RestClient(exits_gw.url)
    opened = api.create_table("kozel", 2, seats=["open", "open"])
    child = spawn_join(opened.invites[0].link, "--name", "Tess", "--lang", "ru")
    child.expect("Ждём, когда займут остальные места")
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    child.expect("В свой ход можно также ввести resign")
    deadline = time.monotonic() + 30
    while not boris.table().seats[0].here:              # Tess's stream is open: the abort comes on it
        assert time.monotonic() < deadline, "the terminal's stream did not open"
        time.sleep(0.2)
    boris.abort()                                       # nobody has moved
    if child.expect([r"Место 2 \(Boris\): партия отменена", RU_MOVE]) == 1:
        child.sendline("1")                             # Tess was at her move: too late, the match is over
        child.expect("Поздно: партия окончена.")
        child.expect(r"Место 2 \(Boris\): партия отменена")
    child.expect(r"Партия окончена: отменена \(Место 2 \(Boris\)\), без результата и рейтинга\.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_victory_claimed_over_a_person_gone_for_the_claim_time(exits_gw: Gateway) -> None:
    api = RestClient(exits_gw.url)
    opened = api.create_table("kozel", 2, seats=["open", "open"], claim_after=CLAIM_AFTER)
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    child = spawn_join(opened.invites[0].link, "--name", "Tess")      # Boris never calls again: gone
    index = child.expect([MOVE, r"Waiting for Seat 1 \(Boris\) to move"])
    if index == 0:                                      # Tess leads: her move, then Boris is to move
        child.sendline("1")
        child.expect(r"Waiting for Seat 1 \(Boris\) to move")
    child.expect(r"\(Seat 1 \(Boris\) is away: \d+:\d\d\.\)", timeout=CLAIM_AFTER + 30)
    child.expect(r"Seat 1 \(Boris\) has been gone \d+:\d\d: type claim to claim victory", timeout=CLAIM_AFTER + 30)
    child.sendline("claim")
    child.expect(r"Seat 1 \(Boris\) was gone: victory claimed")
    screen = child.before
    child.expect(r"Match over: Seat 1 \(Boris\) was gone, victory claimed\. Final score:")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, screen
    assert boris.view()["over"] and not re.search(r"Traceback", screen)
