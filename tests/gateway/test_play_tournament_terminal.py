"""`domino play --tournaments` in a pseudo-terminal (clients/play_tournament.py): a person joins a public Bykovo
tournament from the lobby, closes the terminal and comes back by the tournament's link (the place kept), and plays
its rounds to its end beside four people with the SDK, against a real
gateway and engine. What the terminal said (the rounds it played, at which seat, those it sat out, the standings
between rounds, being out, the final places) is checked against the independent reading of RULES.md B
(test_hosted_tournament's `Sheet`, through test_sdk_tournaments' `follow_and_check`)."""
from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pexpect
import pytest

from clients.sdk import RestClient
from clients.sdk.tournaments import Participant

from .conftest import REPO, Gateway
from .test_hosted_tournament import Person, Sheet, tour_gw  # noqa: F401
from .test_sdk_tournaments import Told, follow_and_check, sdk_person

pytestmark = pytest.mark.service

MOVE = re.compile(r"your move \((?:1 plays it|1 to \d+), or type a move")
OVER = re.compile(r"Your place: \d+ of \d+\.")
NEXT = re.compile(r"Press Enter to deal the next round")   # a Swiss's match: its rounds dealt at the table


@dataclass
class Terminal:
    """`domino play` in a pseudo-terminal, answered by a thread of its own: every move prompt gets `1` (the first
    legal move), the prompt to deal a match's next round Enter; everything written is kept in `screen`."""

    child: pexpect.spawn
    screen: str = ""
    error: BaseException | None = None
    thread: threading.Thread | None = field(default=None, repr=False)

    def expect(self, pattern: str | re.Pattern[str], timeout: float = 60) -> None:
        self.child.expect(pattern, timeout=timeout)
        self.screen += self.child.before + (self.child.after if isinstance(self.child.after, str) else "")

    def answer_moves(self, until: float) -> None:
        def run() -> None:
            try:
                while time.monotonic() < until:
                    index = self.child.expect([MOVE, NEXT, OVER, pexpect.EOF],
                                              timeout=max(1.0, until - time.monotonic()))
                    self.screen += self.child.before + (self.child.after if isinstance(self.child.after, str) else "")
                    if index > 1:
                        return
                    self.child.sendline("1" if index == 0 else "")
            except BaseException as err:  # noqa: BLE001 - handed to the test's thread
                self.error = err
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    @property
    def text(self) -> str:
        return re.sub(r"\s+", " ", self.screen.replace("\r", ""))


def spawn_terminal(gateway: Gateway, tmp: Path, *args: str, columns: int = 120) -> Terminal:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "LANG", "LC_ALL", "LC_MESSAGES")}
    env["XDG_STATE_HOME"] = str(tmp)     # the seats it keeps stay the test's
    child = pexpect.spawn(sys.executable, ["-m", "clients.cli", "play", "--url", gateway.url, *args],
                          cwd=str(REPO), encoding="utf-8", timeout=60, dimensions=(50, columns), env=env)
    child.str_last_chars = 3000
    return Terminal(child)


def check_terminal(terminal: Terminal, index: int, final: dict[str, object], sheet: Sheet) -> None:
    """What the terminal's person was told, against the rules' reading of each round and the final places."""
    text = terminal.text
    rounds = final["rounds"]
    assert isinstance(rounds, list)
    out_after = next((n for n, g in enumerate(sheet.gone, 1) if index in g), None)
    for played in rounds:
        number = played["number"]
        if out_after is not None and number > out_after:
            assert f"Round {number}: you" not in text
            continue
        if index in played["players"]:
            seat = played["players"].index(index)
            assert f"Round {number}: you play at seat {seat} " in text, (number, seat, text[-3000:])
        else:
            assert f"Round {number}: you sit out this round" in text, (number, text[-3000:])
        assert f"Round {number} recorded: " in text
    # the standings between rounds (after the latest round recorded whenever the terminal looked)
    shown = [int(n) for n in re.findall(rf"Standings after round (\d+) \(out at {sheet.limit}\):", text)]
    assert shown and shown == sorted(set(shown)) and shown[-1] < len(rounds), shown
    if out_after is not None and out_after < len(rounds):     # out in the last round: it is over at once
        assert f"You are out: your total {sheet.history[out_after][index]} reached {sheet.limit}." in text
    standings = final["standings"]
    assert isinstance(standings, list)
    lines = re.findall(r"\n\s*(\d)\. (\S+(?: \(you\))?) (\d+)", terminal.screen.split("is over. Final places")[-1]
                       .replace("\r", ""))
    assert [(int(p), who.removesuffix(" (you)"), int(total)) for p, who, total in lines] == \
        [(s["place"], s["participant"], s["total"]) for s in standings]
    mine = next(s for s in standings if s["index"] == index)
    assert f"Your place: {mine['place']} of {len(standings)}." in text


def test_a_person_in_the_terminal_joins_from_the_lobby_and_plays_the_tournament_to_its_end(
        tour_gw: Gateway, tmp_path: Path) -> None:  # noqa: F811
    gw = tour_gw
    api = RestClient(gw.url)
    opened = api.open_tournament(5, name="Terminal Friday", public=True, rated=False)
    tid = opened.tournament_id
    names = ["Anna", "Boris", "Cyril", "Dasha"]
    participants: list[Participant] = [api.join_tournament(tid, opened.invites[0].code, name=names[0])]
    terminal = spawn_terminal(gw, tmp_path, "--tournaments", "--name", "Term")
    terminal.expect(r"Public tournaments open for joining")
    terminal.expect(r"Join which tournament\? Its number, or Enter to leave: ")
    listed = re.findall(r"(\d+)\. Terminal Friday: bykovo, 1 of 5 joined", terminal.screen)
    assert listed, terminal.screen
    terminal.child.sendline(listed[0])
    terminal.expect(r"place 2 of 5 \(2 joined\)\. Waiting for the host to start it")
    # the terminal is closed (Ctrl-C) and opened again by the tournament's link: the place was kept
    terminal.child.sendintr()
    terminal.expect("Bye.")
    terminal.child.expect(pexpect.EOF)
    kept = (tmp_path / "domino" / "tournaments.json")
    assert kept.stat().st_mode & 0o777 == 0o600
    terminal = spawn_terminal(gw, tmp_path, "--join", f"{gw.url}/play?tournament={tid}", "--name", "Term")
    terminal.expect(r'You are back in the tournament "Terminal Friday": place 2 of 5\.')
    participants += [api.join_tournament(tid, opened.invites[i].code, name=n) for i, n in enumerate(names[1:], 1)]
    opened.start()
    began = time.monotonic()
    terminal.answer_moves(began + 60)
    told = Told()
    threads = [threading.Thread(target=sdk_person(p, told, began + 60), daemon=True) for p in participants]
    for thread in threads:
        thread.start()
    view = api.tournament(tid)
    held = {p.index: p.credential for p in participants}
    people = [Person(p.name, held.get(p.index, ""), p.index, p.player) for p in view.participants]
    terminal_index = next(p.index for p in view.participants if p.name == "Term")
    assert terminal_index == 1
    try:
        play, final = follow_and_check(gw, tid, people, told, 60, alive=lambda: terminal.error is None)
    except AssertionError as err:
        raise AssertionError(f"{err}; the terminal wrote:\n{terminal.screen[-2000:]}\n...and then:\n"
                             f"{terminal.child.buffer[-3000:]}") from err
    assert play.sheet is not None
    play.sheet.check_standings([s["index"] for s in final["standings"]])
    assert terminal.thread is not None
    terminal.thread.join(60)
    assert terminal.error is None, (terminal.error, terminal.screen[-3000:])
    check_terminal(terminal, terminal_index, final, play.sheet)
    terminal.child.expect(pexpect.EOF)
    terminal.child.close()
    assert terminal.child.exitstatus == 0
    assert json.loads(kept.read_text())["seats"] == [], "the place is forgotten once the tournament is over"
    print(f"a terminal and four SDK people, {len(final['rounds'])} rounds in {time.monotonic() - began:.1f} s")
