"""`domino play --join LINK` through a pseudo-terminal against real services: a person in the terminal and
a person played through the SDK (as a browser would play it) share a Kozel table with two bots for a whole
round; the terminal shows the other person's moves as its stream brings them, deals the next round, and
leaves its seat when the person quits."""
from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest

from clients.sdk import ClientProblem, RestClient, Seat, TransportError

from .conftest import REPO, TOKEN_KEYS, EngineProc, Gateway, free_port

pytestmark = pytest.mark.service

MOVE = re.compile(r"your move \((?:1 plays it|1 to \d+), or type a move")


def spawn_play(*args: str, state: Path | None = None, columns: int = 120,
               env_extra: dict[str, str] | None = None) -> pexpect.spawn:
    """`domino play ARGS` in a pseudo-terminal; `state`: its state directory (XDG_STATE_HOME, where the seats it
    takes are kept), a fresh one unless given; `env_extra`: more of its environment (DOMINO_PLAYER, say)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["XDG_STATE_HOME"] = str(state or tempfile.mkdtemp(prefix="domino-state-"))
    env.update(env_extra or {})
    child = pexpect.spawn(sys.executable, ["-m", "clients.cli", "play", *args], cwd=str(REPO),
                          encoding="utf-8", timeout=60, dimensions=(50, columns), env=env)
    child.str_last_chars = 3000
    return child


def spawn_join(link: str, *args: str, state: Path | None = None, columns: int = 120,
               env_extra: dict[str, str] | None = None) -> pexpect.spawn:
    return spawn_play("--join", link, *args, state=state, columns=columns, env_extra=env_extra)


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
    child.expect('You took seat 0 at table "Terminal test": kozel, 4 players')
    child.expect("Waiting for the other seats to be taken")
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    assert api.table(opened.table_id, auth=opened.host_key).seats[0].name == "Tess"
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
    assert not api.table(opened.table_id, auth=opened.host_key).seats[0].taken            # the seat is free for a fresh invite


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
    assert api.table(opened.table_id, auth=opened.host_key).status == "over"


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


def test_the_terminal_rides_out_a_gateway_restart_without_missing_a_move(
        engine_proc: EngineProc, start_gateway: Callable[..., Gateway], tmp_path: Path) -> None:
    """The gateway is stopped while the terminal waits for Boris, and started again (same port, same store):
    the terminal's stream comes back by itself with Last-Event-ID, and every move Boris makes is written once,
    in order."""
    port = free_port()
    env = {"STATE_TOKEN_KEYS": TOKEN_KEYS, "GATEWAY_TOKEN_STORE": f"sqlite:///{tmp_path}/store.sqlite3",
           "GATEWAY_DATABASE": f"sqlite:///{tmp_path}/archive.sqlite3"}
    gw = start_gateway(engine_proc.address, "--port", str(port), env=env)
    api = RestClient(gw.url, retries=8, backoff=0.25)
    opened = api.create_table("kozel", 4, seats=["open", "open", "greedy", "greedy"], name="Restart")
    child = spawn_join(opened.invites[0].link, "--name", "Tess")
    child.expect("Waiting for the other seats")
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris")
    go = threading.Event()      # Boris moves once the terminal shows its first state (the moves before, it
    #                             shows as the board, not one by one)
    moves: list[str] = []
    errors: list[BaseException] = []

    def play() -> None:       # Boris, who holds his move while `go` is clear and rides out the restart
        try:
            with boris.events(reconnects=20) as stream:
                for event in stream:
                    view = event.data.get("view") if isinstance(event.data, dict) else None
                    if not view or view["round_over"]:
                        if view:
                            return
                        continue
                    if view["to_move"] != boris.seat:
                        continue
                    go.wait(60)
                    deadline = time.monotonic() + 60
                    while True:
                        try:
                            action = boris.legal().actions[0]
                            boris.apply(action)
                            moves.append(action)
                            break
                        except ClientProblem as err:       # the first try counted, its answer lost
                            assert err.status == 409
                            break
                        except TransportError:
                            assert time.monotonic() < deadline
                            time.sleep(0.5)
        except BaseException as err:  # noqa: BLE001 - reported by the test
            errors.append(err)

    other = threading.Thread(target=play, daemon=True)
    other.start()
    first = child.expect([MOVE, r"Waiting for Seat 1 \(Boris\) to move"])
    screen, restarted = child.before + child.after, False
    go.set()
    if first == 0:
        child.sendline("1")
    for _ in range(60):
        index = child.expect([MOVE, "Press Enter to deal the next round", pexpect.EOF])
        screen += child.before + (child.after if isinstance(child.after, str) else "")
        if index != 0:
            break
        if not restarted and screen.count("You played") + screen.count("You knocked") >= 1:
            go.clear()                                   # Boris will wait with his next move
            child.sendline("1")
            child.expect(r"Waiting for Seat 1 \(Boris\) to move")
            screen += child.before + child.after
            gw.stop()                                    # the terminal is reading its stream now
            time.sleep(1)
            gw = start_gateway(engine_proc.address, "--port", str(port), env=env)
            restarted = True
            go.set()
            continue
        child.sendline("1")
    assert index == 1 and restarted, screen[-3000:]
    other.join(30)
    assert not errors, errors
    flat = re.sub(r"\s+", " ", screen)
    shown = re.findall(r"Seat 1 \(Boris\) (?:played (\S+)|(knocked))", flat)
    assert [played or "pass" for played, knocked in shown] == moves, (moves, screen[-3000:])
    assert "Traceback" not in screen and "did not answer" not in screen
    child.sendline("q")
    child.expect(pexpect.EOF)
