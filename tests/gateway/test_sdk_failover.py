"""The SDK and the terminal keep playing when their gateway dies: two real gateways on one store (a SQLite
file, or a Redis), each behind a port of this test's (`Front`) that stands for its listening socket, so that the
gateway can be killed (SIGKILL, every process of it) at an exact moment of a move: before the move reaches it, or after it answered
and before the answer gets back. Calls go on through the other address, the seat's stream resumes there by
Last-Event-ID, a move whose answer was lost is not played twice, and `domino play --join` prints no traceback,
five kills out of five."""
from __future__ import annotations

import os
import random
import re
import signal
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pexpect
import pytest

from bench.redis_server import RedisServer
from clients.sdk import ConnectionLost, RestClient, Retrying, Unreachable
from clients.sdk.seat_book import SeatBook

from .conftest import EngineProc, Gateway, gateway_env
from .test_play_join import MOVE, spawn_play

pytestmark = pytest.mark.service

#: Bounds of the waits below (each ends as soon as its condition holds).
KILLED_WITHIN = 60.0


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (a gateway's gunicorn workers), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(text.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_hard(gw: Gateway) -> None:
    """SIGKILL the gateway and every worker of it at once: nothing of it answers or cleans up."""
    for pid in [gw.proc.pid, *descendants(gw.proc.pid)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    gw.proc.wait(30)


def bind_below_ephemeral(listener: socket.socket) -> int:
    """Bind to a free port below the kernel's ephemeral range: a port a front gives up while its gateway is
    down is then never taken meanwhile by some process's outgoing connection, and binds again."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for port in random.sample(range(max(1024, low - 12000), low), 200):
        try:
            listener.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port below the ephemeral range")


@dataclass
class Front:
    """A TCP port in front of a gateway, standing for the gateway's own listening socket: `down()` refuses new
    connections and breaks the open ones (as a killed process's sockets), `up(gw)` serves again, in front of
    `gw`. `trap` (set by `Trap`) sees every request passing to the gateway."""

    gateway: Gateway
    port: int = 0
    trap: Trap | None = None
    _listener: socket.socket | None = None
    _open: list[socket.socket] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self, gateway: Gateway | None = None) -> None:
        self.gateway = gateway or self.gateway
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if self.port:
            listener.bind(("127.0.0.1", self.port))      # the same address again, as a restarted gateway's
        else:
            self.port = bind_below_ephemeral(listener)
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        with self._lock:
            listener, self._listener, sockets, self._open = self._listener, None, self._open, []
        for sock in ([listener] if listener else []) + sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return                                  # down()
            port = int(self.gateway.url.rsplit(":", 1)[1])
            try:
                upstream = socket.create_connection(("127.0.0.1", port))
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    upstream.close()
                    return
                self._open += [client, upstream]
            held = Held()                               # the move whose answer on this connection is held back
            threading.Thread(target=self._pump, args=(client, upstream, held, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, held, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, held: Held, request: bool) -> None:
        try:
            while data := source.recv(65536):
                trap = self.trap
                if request and trap is not None and trap.sees(self, data, held):
                    if trap.before:
                        return                          # never forwarded: the gateway is killed first
                elif not request and held.trap is not None:
                    held.trap.spring(self)              # the gateway answered the move: killed before it gets back
                    return
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@dataclass
class Held:
    """One connection's move caught by a trap (its answer is not let through)."""

    trap: Trap | None = None


class Trap:
    """Kills the gateway behind whichever front the next move (`POST /v1/matches/.../apply`) passes through:
    `before` it is forwarded (the move never counted), or else once the gateway has answered it (it counted;
    the answer never gets back). `killed` is that front, once done."""

    MOVE = re.compile(rb"^POST /v1/matches/[^/ ]+/apply ", re.MULTILINE)

    def __init__(self, fronts: list[Front], before: bool) -> None:
        self.fronts, self.before = fronts, before
        self.killed: Front | None = None
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._armed = True
        for front in fronts:
            front.trap = self

    def sees(self, front: Front, data: bytes, held: Held) -> bool:
        if not self.MOVE.search(data):
            return False
        with self._lock:
            if not self._armed:
                return False
            self._armed = False
        if self.before:
            self.spring(front)
        else:
            held.trap = self
        return True

    def spring(self, front: Front) -> None:
        if self.killed is not None:
            return
        kill_hard(front.gateway)
        front.down()
        self.killed = front
        for each in self.fronts:
            each.trap = None
        self.done.set()


@dataclass
class Pair:
    """Two gateways on one SQLite store, each behind a `Front`; `restart(front)` starts a new gateway on the
    same store behind a front whose gateway was killed."""

    fronts: list[Front]
    start: Callable[[], Gateway]

    def restart(self, front: Front) -> None:
        front.up(self.start())


@contextmanager
def two_gateways(engine: EngineProc, start_gateway: Callable[..., Gateway], tmp: Path,
                 redis: bool = False) -> Iterator[Pair]:
    """Two gateways on one store (a SQLite file, or a Redis of their own), each behind a `Front`."""
    server = RedisServer(tmp) if redis else None
    env = gateway_env(tmp, server.url if server else None)

    def start() -> Gateway:
        return start_gateway(engine.address, env=env)

    fronts: list[Front] = []
    try:
        fronts += [Front(start()), Front(start())]
        for front in fronts:
            front.up()
        yield Pair(fronts, start)
    finally:
        for front in fronts:
            front.down()
        if server is not None:
            for front in fronts:
                front.gateway.stop()
            server.stop()


@pytest.fixture
def pair(engine_proc: EngineProc, start_gateway: Callable[..., Gateway], tmp_path: Path) -> Iterator[Pair]:
    with two_gateways(engine_proc, start_gateway, tmp_path) as gateways:
        yield gateways


def test_calls_go_on_through_the_next_address_and_say_so(pair: Pair) -> None:
    """A gateway that cannot be reached is left for the next address at once (no wait, no retry spent), the
    client stays there, and `on_retry` hears it; with every address down the caller gets `Unreachable`."""
    a, b = pair.fronts
    told: list[Retrying] = []
    api = RestClient([a.url, b.url], on_retry=told.append, retries=1, backoff=0.01)
    assert api.variants()
    kill_hard(a.gateway)
    a.down()
    assert api.variants() and api.url == b.url
    assert [(t.failed, t.address, t.wait) for t in told] == [(a.url, b.url, 0.0)]
    assert isinstance(told[0].error, Unreachable)
    kill_hard(b.gateway)
    b.down()
    with pytest.raises(Unreachable):
        api.variants()


@pytest.mark.parametrize(("before", "redis"), [(False, False), (True, False), (False, True)],
                         ids=["answer-lost", "move-lost", "answer-lost-redis"])
def test_a_seat_plays_on_through_the_second_gateway_when_the_first_is_killed_mid_move(
        engine_proc: EngineProc, start_gateway: Callable[..., Gateway], tmp_path: Path, before: bool,
        redis: bool) -> None:
    """The seat's move is in flight when its gateway is SIGKILLed: the SDK raises `ConnectionLost` (it never
    sends a move twice by itself); its stream, read in another thread, resumes on the second gateway by
    Last-Event-ID, every change once and in order, and the seat plays the rest of the round there. The
    gateways share a SQLite file, or a Redis."""
    with two_gateways(engine_proc, start_gateway, tmp_path, redis) as pair:
        seat_plays_on_after_a_kill(pair, before)


def seat_plays_on_after_a_kill(pair: Pair, before: bool) -> None:
    a, b = pair.fronts
    api = RestClient([a.url, b.url])
    opened = api.create_table("kozel", 4, seats=["open", "greedy", "greedy", "greedy"])
    anna = api.join_table(opened.table_id, invite=opened.invites[0].code, name="Anna")
    seqs: list[int] = []
    over = threading.Event()
    failures: list[BaseException] = []

    def follow() -> None:
        try:
            with anna.events() as stream:
                for event in stream:
                    if event.event == "update" and event.seq is not None:
                        seqs.append(event.seq)
                    view = event.data.get("view") if isinstance(event.data, dict) else None
                    if view and view["round_over"]:
                        over.set()
                        return
        except BaseException as err:  # noqa: BLE001 - reported by the test
            failures.append(err)
            over.set()

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    trap = Trap(pair.fronts, before=before)
    lost = 0
    while not over.is_set():
        latest = anna.view()
        if latest["view"]["round_over"]:
            break
        if latest["view"]["to_move"] != anna.seat:
            continue
        try:
            anna.apply(anna.legal().actions[0])
        except ConnectionLost as err:
            lost += 1
            assert err.maybe_applied and trap.done.wait(KILLED_WITHIN)
            counted = anna.view()["seq"] != latest["seq"]
            assert counted is not before           # answered then killed: it counted; killed first: it did not
    assert over.wait(KILLED_WITHIN), "the stream did not reach the round's end"
    reader.join(KILLED_WITHIN)
    assert not failures, failures
    assert lost == 1 and trap.killed is a and api.url == b.url
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs     # none missed, none twice


def test_the_terminal_survives_its_gateway_killed_mid_move_five_times_out_of_five(
        pair: Pair, tmp_path: Path) -> None:
    """`domino play --join LINK --url SECOND`: five moves, each met by a SIGKILL of the gateway it went to
    (three after the gateway answered, two before it got there), each gateway started again afterwards. Every
    time the terminal goes on through the other gateway: each of its moves is shown once, a lost answer is
    looked up and not played twice, a lost move is sent again, and nothing prints a traceback."""
    a, b = pair.fronts
    api = RestClient(a.url)
    opened = api.create_table("kozel", 4, seats=["open", "greedy", "greedy", "greedy"], name="Failover")
    link = f"{a.url}/play?table={opened.table_id}&invite={opened.invites[0].code}"
    child = spawn_play("--join", link, "--url", b.url, "--name", "Tess", state=tmp_path / "state")
    screen, moves = "", 0
    kills: list[Front] = []
    try:
        for _ in range(80):
            index = child.expect([MOVE, "Press Enter to deal the next round", pexpect.EOF])
            screen += child.before + (child.after if isinstance(child.after, str) else "")
            if index == 2:
                break
            if index == 1:
                child.sendline("")
                continue
            if len(kills) == 5 and moves >= 7:
                break
            trap = Trap(pair.fronts, before=len(kills) % 2 == 1) if len(kills) < 5 else None
            child.sendline("1")
            moves += 1
            if trap is not None:
                assert trap.done.wait(KILLED_WITHIN), screen[-3000:]
                assert trap.killed is not None
                kills.append(trap.killed)
                pair.restart(trap.killed)
        assert index == 0 and len(kills) == 5, screen[-3000:]
        child.sendline("q")
        child.expect("You left seat 0")
        child.expect(pexpect.EOF)
        screen += child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, screen[-3000:]
    assert "Traceback" not in screen, screen[-3000:]
    flat = re.sub(r"\s+", " ", screen)
    assert len(re.findall(r"\bYou (?:played \d-\d|knocked)", flat)) == moves, screen[-3000:]
    assert flat.count("The move's answer was lost") == 3 and flat.count("The move did not get through") == 2
    assert {kills[0].url, kills[1].url} == {a.url, b.url}          # both gateways died under it


def test_the_credential_is_shown_and_kept_and_resume_comes_back_to_the_seat(pair: Pair, tmp_path: Path) -> None:
    """`--join` shows the seat's credential and keeps it (0600, in XDG_STATE_HOME/domino); the terminal is
    closed without leaving; `--resume` comes back to the same seat with no invite, through the second gateway
    when the first is gone, and plays on."""
    a, b = pair.fronts
    api = RestClient(a.url)
    opened = api.create_table("kozel", 4, seats=["open", "greedy", "greedy", "greedy"], name="Resume")
    link = f"{a.url}/play?table={opened.table_id}&invite={opened.invites[0].code}"
    state = tmp_path / "state"
    child = spawn_play("--join", link, "--url", b.url, "--name", "Tess", state=state)
    child.expect(r"Your seat's credential: (\S+) \(kept in")
    shown = child.match.group(1)
    child.expect(MOVE)
    child.close(force=True)                    # the terminal window closed: the seat is not given up
    book = SeatBook(state / "domino" / "seats.json")
    saved = book.find(opened.table_id)
    assert saved is not None and saved.credential == shown and saved.seat == 0
    assert saved.gateways == [a.url, b.url] and shown not in repr(saved)
    assert stat.S_IMODE(book.path.stat().st_mode) == 0o600
    assert opened.refresh().seats[0].taken
    kill_hard(a.gateway)
    a.down()
    child = spawn_play("--resume", state=state)
    child.expect("Back at seat 0 of table \"Resume\"")
    child.expect(MOVE)
    child.sendline("1")
    child.expect(r"You (played \d-\d|knocked)")
    child.expect([MOVE, "Press Enter to deal the next round"])
    child.sendline("q")
    child.expect("You left seat 0")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert book.find(opened.table_id) is None            # given up: forgotten
    child = spawn_play("--resume", opened.table_id, state=state)
    child.expect("no seat kept for table")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    child = spawn_play("--resume", opened.table_id, "--credential", shown, "--url", b.url, state=state)
    child.expect("That seat was given up: its credential no longer works")    # from another device, too
    child.expect(pexpect.EOF)
    screen = child.before
    child.close()
    assert child.exitstatus == 1 and "Traceback" not in screen


def test_with_every_gateway_gone_the_terminal_waits_says_so_and_goes_on(pair: Pair, tmp_path: Path) -> None:
    """Both gateways are killed while the person thinks: the move is held, the terminal says it waits for an
    answer (and for how long), and once one gateway is back the move is played and the game goes on."""
    a, b = pair.fronts
    api = RestClient(a.url)
    opened = api.create_table("kozel", 4, seats=["open", "greedy", "greedy", "greedy"], name="Waiting")
    link = f"{a.url}/play?table={opened.table_id}&invite={opened.invites[0].code}"
    child = spawn_play("--join", link, "--url", b.url, state=tmp_path / "state")
    try:
        child.expect(MOVE)
        for front in (a, b):
            kill_hard(front.gateway)
            front.down()
        child.sendline("1")
        child.expect(r"No answer from http://127\.0\.0\.1:\d+: [a-z ]+\. Trying\s+http://127\.0\.0\.1:\d+\s+in\s+\d+ s")
        pair.restart(b)
        child.expect(r"You (played \d-\d|knocked)")
        child.expect([MOVE, "Press Enter to deal the next round"])
        screen = child.before
        child.sendline("q")
        child.expect("You left seat 0")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0 and "Traceback" not in screen
