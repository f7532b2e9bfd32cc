"""Clocks and ratings in the terminal (`domino play --join`) and `domino leaderboard`, through a
pseudo-terminal against a real engine and gateway (docs/tables.md, Clocks and Players and ratings).

Tess plays in the terminal and Boris through the SDK at a Kozel table with two bots and a clock of 10 s a
move (the variant's rule when it runs out). The terminal writes the ratings when the match starts (both new),
every seat's clock after each change and above the table on Tess's turn, her time left in her prompt; Tess
lets her clock run out, the service ends the match with nobody calling, and the terminal writes whose time
ran out and each player's rating before and after, as the archive holds them. Then `domino leaderboard`
lists the two players a page at a time, in the archive's order.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pexpect
import pytest

from clients.sdk import RestClient

from .conftest import PLAYER_KEYS, REPO, EngineProc, Gateway, gateway_env, launch_gateway, player_assertion
from .test_play_join import play_seat, spawn_join

pytestmark = pytest.mark.service

PROMPT = re.compile(r"\[0:(\d\d) left\] You, your move")


@pytest.fixture(scope="module")
def rated_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway of this module's own: its archive holds only the matches played here."""
    gw = launch_gateway(engine_proc.address, "--workers", "1", env=gateway_env(
        tmp_path_factory.mktemp("join-clocks"), GATEWAY_PLAYER_KEYS=PLAYER_KEYS))
    yield gw
    gw.stop()


def get(gw: Gateway, path: str) -> Any:
    with urllib.request.urlopen(gw.url + path, timeout=10) as reply:
        return json.loads(reply.read())


def test_the_terminal_shows_the_clocks_a_timeout_and_the_ratings_then_the_leaderboard(rated_gw: Gateway) -> None:
    api = RestClient(rated_gw.url)
    opened = api.create_table("kozel", 4, seats=["open", "open", "greedy", "greedy"], name="Clocked",
                              clock={"move": 10, "on_timeout": "rule"})
    boris = api.join_table(opened.table_id, invite=opened.invites[1].code, name="Boris", player=player_assertion("boris"))
    child = spawn_join(opened.invites[0].link, "--name", "Tess", env_extra={"DOMINO_PLAYER": player_assertion("tess")})
    child.expect(r"At the table: You, Seat 1 \(Boris\), Seat 2 \(greedy bot\), Seat 3 \(greedy bot\)\.")
    child.expect(r"Ratings: You rating: new, Seat 1 \(Boris\) rating: new\.")
    child.expect(r"Clock: 10 s a move; when it runs out: the variant's timeout rule\.")
    errors: list[BaseException] = []
    other = threading.Thread(target=play_seat, args=(boris, errors), daemon=True)
    other.start()

    # Tess's first turn: the clocks above the table (hers running), her time left in the prompt.
    child.expect(PROMPT)
    screen = child.before
    first_left = int(child.match.group(1))
    assert 0 < first_left <= 10
    clocks = re.findall(r"clocks: (.*)", screen)[-1]
    assert re.fullmatch(r"You 0:\d\d \(running\), Seat 1 \(Boris\) 0:10, Seat 2 \(greedy bot\) 0:10, "
                        r"Seat 3 \(greedy bot\) 0:10\s*", clocks), clocks
    child.sendline("1")
    # Her next turn comes after Boris's move and the bots': each change wrote the clocks again, the seat
    # to move running. This time she lets her clock run out: the service ends the match with nobody calling.
    child.expect(PROMPT)
    between = child.before
    assert re.search(r"Seat 1 \(Boris\) (played \d-\d|knocked)", between), between
    # her clock stopped at what it had left when she moved (a move under load may take her over a second)
    assert re.search(r"clocks: You 0:(10|0\d), Seat 1 \(Boris\) 0:\d\d \(running\)", re.sub(r"\s+", " ", between)), between
    table = api.table(opened.table_id, auth=opened.host_key)
    deadline = time.monotonic() + 30
    while not api.request("GET", f"/v1/matches/{table.match_id}/seat", auth=boris.credential)["over"]:
        assert time.monotonic() < deadline, "the clock did not run out"
        time.sleep(0.2)
    child.sendline("1")                                      # too late
    child.expect(r"Too late: the match is over\.")
    child.expect(r"Match over: your time ran out \(the variant's timeout rule\)\. Final score: ")
    child.expect(r"Ratings after the match:")
    child.expect(pexpect.EOF)
    ending = re.sub(r"\s+", " ", child.before)
    child.close()
    assert child.exitstatus == 0, ending
    other.join(30)
    assert not errors, errors
    archived = get(rated_gw, f"/v1/matches/{table.match_id}/record")
    assert archived["rated"] and archived["timed_out"] == 0
    for seat in archived["seats"]:
        if not seat["player"]:
            continue
        name = "You" if seat["seat"] == 0 else "Seat 1 (Boris)"
        before, after = seat["skill_before"]["ordinal"], seat["skill_after"]["ordinal"]
        sign = "+" if after >= before else "-"
        line = (f"{name}: {before:.1f} -> {after:.1f} ({sign}{abs(after - before):.1f}), "
                f"+{seat['points']} rating points, place {seat['place']}")
        assert line in ending, (line, ending)
    places = {s["seat"]: s["place"] for s in archived["seats"] if s["player"]}
    assert places[1] < places[0]                                # Tess ran out: she placed below Boris

    # The leaderboard, one player a page: Enter shows the next; the order is the archive's.
    board = get(rated_gw, "/v1/leaderboard?variant=kozel&provisional=true")["items"]
    assert [e["player"] for e in board] == [archived["seats"][1]["player"], archived["seats"][0]["player"]]
    child = pexpect.spawn(sys.executable,
                          ["-m", "clients.cli", "leaderboard", "--variant", "kozel", "--limit", "1", "--url", rated_gw.url],
                          cwd=str(REPO), encoding="utf-8", timeout=30, dimensions=(40, 120))
    child.expect(r"Leaderboard: kozel \(family K\), by skill")
    child.expect(r"\s+1\. (\S+)\s+rating\s+(-?\d+\.\d)")   # the names the seats were taken with
    assert child.match.group(1) == board[0]["name"] and board[0]["name"] in ("Tess", "Boris")
    assert child.match.group(2) == f"{board[0]['skill']['ordinal']:.1f}"
    child.expect("Enter: the next page, q: stop")
    child.sendline("")
    child.expect(r"\s+2\. (\S+)\s+rating\s+(-?\d+\.\d)")
    assert child.match.group(1) == board[1]["name"]
    child.expect(pexpect.EOF)                                   # the last page: no prompt
    child.close()
    assert child.exitstatus == 0
    # Read from a pipe, it prints the first page and the cursor of the next, which shows the second.
    command = [sys.executable, "-m", "clients.cli", "leaderboard", "--variant", "kozel", "--limit", "1", "--url",
               rated_gw.url]
    piped = subprocess.run(command, cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0, piped.stderr
    cursor = re.search(r"More: --cursor (\S+)", piped.stdout)
    assert cursor and "   1. " + board[0]["name"] in piped.stdout and "   2." not in piped.stdout, piped.stdout
    second = subprocess.run([*command, "--cursor", cursor.group(1)], cwd=REPO, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == 0 and "   2. " + board[1]["name"] in second.stdout, second.stdout
    assert "More:" not in second.stdout
