"""`domino play` through a pseudo-terminal against real services: whole rounds by keys and by notation,
a message for every refused input, every variant's screen (Kingdomino's grid too)."""
from __future__ import annotations

import os
import re
import sys

import pexpect
import pytest

from .conftest import REPO, Gateway

pytestmark = pytest.mark.service

MOVE = re.compile(r"your move \((?:1 plays it|1 to \d+), or type a move")
PROMPTS = [MOVE, "Press Enter to deal the next round", "Match over", "Game over", pexpect.EOF]


def spawn(gateway: Gateway, *args: str, columns: int = 120) -> pexpect.spawn:
    """`domino play` in a terminal `columns` wide. Its environment is os.environ as Python sees it:
    under pytest the process's C-level environment holds a COLUMNS=80, which would win over the
    terminal's own size."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    child = pexpect.spawn(sys.executable, ["-m", "clients.cli", "play", "--url", gateway.url, *args],
                          cwd=str(REPO), encoding="utf-8", timeout=60, dimensions=(50, columns), env=env)
    child.str_last_chars = 3000  # a failure shows what the game printed last, not only its last line
    return child


def play_round(child: pexpect.spawn, by_notation: bool = False, max_turns: int = 400) -> str:
    """Answer every move prompt (the first legal move, by number or by its notation) until the round ends."""
    screen = ""
    for _ in range(max_turns):
        index = child.expect(PROMPTS)
        screen += child.before + (child.after if isinstance(child.after, str) else "")
        if index != 0:
            return screen + ["", "round-end", "match-over", "game-over", "eof"][index]
        if by_notation:
            first = re.findall(r"  1\) (\S+(?: \S+ \S+)?)", child.before)[-1].strip()
            child.sendline(first)
        else:
            child.sendline("1")
    raise AssertionError("the round did not end")


def test_a_whole_kozel_round_hot_seat_with_every_refusal_explained(gateway: Gateway) -> None:
    child = spawn(gateway, "--variant", "kozel", "--players", "4", "--bots", "human,human,human")
    child.expect(MOVE)
    screen = child.before
    assert "Your hand:" in screen and "round 1" in screen and "score" in screen
    hand = re.search(r"Your hand: (.*)", screen)
    assert hand is not None
    tiles = hand.group(1).split()
    assert tiles == sorted(tiles, key=lambda t: tuple(sorted(map(int, t.split("-"))))) and len(tiles) == 7
    child.sendline("99")
    child.expect("There is no move 99: choose 1 to")
    child.sendline("6-6@Q")
    child.expect("Not played: ")
    child.sendline("")
    child.expect("Type a move number or a move")
    child.sendline("?")
    child.expect("Type the number of a move")
    child.sendline("1")
    screen = play_round(child)
    assert screen.endswith("round-end"), screen[-2000:]
    assert re.search(r"Round 1 over: (out|fish)", screen) and "round points" in screen
    assert "played" in screen
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


ALL_TILES = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]


def test_the_first_hour_at_a_narrow_terminal(gateway: Gateway) -> None:
    """What a newcomer met (issue 28): the prompt for a single move read "(1-1 or notation", like the
    tile 1-1; a tile that fits no end was answered "name an arm"; "seat 0 does not hold" meant "you";
    the layout ran past the terminal's width; round points printed as a Python list."""
    columns = 64
    child = spawn(gateway, "--variant", "kozel", "--players", "4", "--bots", "human,human,human", columns=columns)
    child.expect(MOVE)
    prompt = child.after + child.buffer
    assert "1 plays it" in child.after and "(1-1" not in prompt    # the holder of 1-1 has one move: the lead
    child.sendline("1")
    child.expect(MOVE)
    screen = child.before
    hand = re.findall(r"Your hand: (.*)", screen)[-1].split()
    ends = re.findall(r"open ends: (.*?)   count", screen)[-1]
    shown = {int(v) for v in re.findall(r"[NESW]\d* (\d)", ends)}
    stuck = next(t for t in hand if not shown & {int(n) for n in t.split("-")})
    child.sendline(stuck)
    child.expect(f"Not played: '{stuck}': {stuck} fits no open end")
    absent = next(t for t in ALL_TILES if t not in hand and t != "1-1")
    child.sendline(absent)
    child.expect(f"Not played: '{absent}': you do not hold {absent}")
    child.sendline("1")
    screen += play_round(child)
    assert screen.endswith("round-end"), screen[-2000:]
    continued = re.compile(r"\n     \*?\[\d[|:]\d\]")
    for _ in range(3):        # a short round (an early fish) may never fill a line: the next ones are played
        if continued.search(screen.replace("\r", "")) or screen.endswith("match-over"):
            break
        child.sendline("")
        screen += play_round(child)
        assert screen.endswith(("round-end", "match-over")), screen[-2000:]
    drawn = [line for line in screen.replace("\r", "").split("\n") if "your move (" not in line]
    assert max(map(len, drawn)) <= columns, max(drawn, key=len)
    assert not [line for line in drawn if re.search(r"\bSeat$", line.rstrip())], "a name was cut from its number"
    assert continued.search(screen.replace("\r", "")), "the layout never continued on a second line"
    flat = re.sub(r"\s+", " ", screen)  # a long line continues on the next one
    assert re.search(r"Round points: You \d+, Seat 1 \d+, Seat 2 \d+, Seat 3 \d+", flat), screen[-1500:]
    assert "round points: You " in flat and not re.search(r"points:? \[", flat)
    if not screen.endswith("match-over"):
        child.sendline("q")
    child.expect(pexpect.EOF)



@pytest.mark.parametrize("width", range(24, 90))
def test_a_long_line_breaks_between_seats_never_inside_a_name(width: int) -> None:
    """Round points at any terminal width: each seat's name stays with its number (a line once
    ended in "Seat" and the next began "2 3"), no line is wider than the terminal, nothing is lost."""
    from clients.play import TerminalGame
    from clients.sdk import RestClient

    lines: list[str] = []
    game = TerminalGame(RestClient("http://127.0.0.1:9"), "kozel", 4, ["expert", "human", "random"],
                        write=lines.append, width=width)
    text = "round 1 over: a player went out; round points: You 0, Seat 1 (expert) 14, Seat 2 3, Seat 3 (random) 4"
    game.say(text, "  ")
    assert all(len(line) < width for line in lines), lines
    assert not [line for line in lines if re.search(r"\bSeat$", line)], lines
    assert re.sub(r"\s+", " ", " ".join(lines)).strip() == text, lines

def test_a_whole_all_fives_hand_by_notation_with_the_spinner_drawn(gateway: Gateway) -> None:
    child = spawn(gateway, "--variant", "all-fives", "--players", "2", "--bots", "human")
    screen = play_round(child, by_notation=True)
    assert screen.endswith("round-end"), screen[-2000:]
    assert "W  " in screen and "open ends" in screen and "boneyard" in screen
    child.sendline("q")
    child.expect(pexpect.EOF)


def test_a_whole_kingdomino_game_with_the_kingdoms_as_grids(gateway: Gateway) -> None:
    child = spawn(gateway, "--variant", "kingdomino", "--players", "2", "--bots", "human")
    child.expect(MOVE)
    assert "##" in child.before and "row to place" in child.before and "next row" in child.before
    child.sendline("pick 99")
    child.expect("Not played: ")
    child.sendline("1")
    screen = play_round(child)
    assert screen.endswith("game-over"), screen[-2000:]
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.parametrize(("variant", "players", "bots"), [("kozel", "4", "expert,greedy,random"),
                                                          ("kingdomino", "3", "greedy,random")])
def test_a_person_against_bots(gateway: Gateway, variant: str, players: str, bots: str) -> None:
    child = spawn(gateway, "--variant", variant, "--players", players, "--bots", bots)
    screen = play_round(child)
    assert screen.endswith(("round-end", "game-over")), screen[-2000:]
    assert "(expert)" in screen or "(greedy)" in screen
    if not child.closed and child.isalive():
        child.sendline("q")
    child.expect(pexpect.EOF)
