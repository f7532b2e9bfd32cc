"""Signed webhooks to the host apps' servers (issue 38 item 3, docs/notifications.md): a real HTTP receiver
started here verifies every delivery with the `standardwebhooks` library, against real gateways (gunicorn
workers on a SQLite live store, or two gateways on one Redis), their outbox and their operator routes.

Time: the retry schedule is a setting (tenths of a second here); every wait is for a condition, bounded."""
from __future__ import annotations

import base64
import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
import pytest
from standardwebhooks import Webhook

from api_gateway.config import ConfigError, from_env
from api_gateway.notify.endpoints import Endpoint, EndpointError, Reach, addresses, parse
from api_gateway.notify.outbox import Delivery, open_outbox
from bench.local_http import LocalServer, answering

from .conftest import EngineProc, Gateway, Reply, gateway_env, gateways_on_one_redis, launch_gateway, wait_for
from .test_tables import call, ok, seat_stream

Json = dict[str, Any]
PLAYER_SECRET = b"p" * 32
NEW_SECRET = "whsec_" + base64.b64encode(b"n" * 32).decode()
OLD_SECRET = "whsec_" + base64.b64encode(b"o" * 32).decode()
OPERATOR = "operator-token-for-tests"
_users = itertools.count()


# ---------------------------------------------------------------- the host app's receiver


@dataclass
class Received:
    id: str
    body: Json


@dataclass
class Receiver:
    """A host app's webhook endpoint: verifies each delivery with every secret it knows (each must check),
    answers 500 to the first `fail_each` attempts of each id, 204 after."""

    secrets: tuple[str, ...] = (NEW_SECRET, OLD_SECRET)
    fail_each: int = 0
    attempts: list[str] = field(default_factory=list)   # every attempt's webhook-id, in order
    delivered: list[Received] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)        # deliveries whose signature did not check
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: LocalServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"{self.server.url}/hooks"

    def receive(self, headers: dict[str, str], body: bytes) -> int:
        try:
            parsed = [Webhook(s).verify(body, headers) for s in self.secrets]
        except Exception as exc:  # noqa: BLE001 - recorded, asserted empty by the tests
            with self.lock:
                self.bad.append(f"{exc}: {headers}")
            return 400
        with self.lock:
            wid = headers["webhook-id"]
            self.attempts.append(wid)
            failing = self.attempts.count(wid) <= self.fail_each
            if not failing:
                self.delivered.append(Received(wid, parsed[0]))
        return 500 if failing else 204

    def start(self) -> Receiver:
        self.server = LocalServer(answering(self.receive)).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()

    def reset(self, fail_each: int = 0) -> None:
        with self.lock:
            self.fail_each = fail_each
            self.attempts.clear()
            self.delivered.clear()

    def failed(self) -> int:
        """How many attempts the endpoint refused."""
        with self.lock:
            return len(self.attempts) - len(self.delivered)

    def of(self, table_id: str) -> list[Json]:
        with self.lock:
            return [r.body for r in self.delivered if r.body["data"]["table_id"] == table_id]


def assertion(user: str, kid: str = "k1") -> str:
    now = int(time.time())
    return jwt.encode({"sub": user, "iat": now, "exp": now + 3600}, PLAYER_SECRET, algorithm="HS256",
                      headers={"kid": kid})


def webhook_env(tmp: Path, url: str, store: str | None = None, **extra: str) -> dict[str, str]:
    settings = {"GATEWAY_PLAYER_KEYS": f"k1:{base64.b64encode(PLAYER_SECRET).decode()}",
                "GATEWAY_WEBHOOKS": f"k1={url}|{NEW_SECRET}|{OLD_SECRET}", "GATEWAY_WEBHOOK_INSECURE": "true",
                "GATEWAY_WEBHOOK_RETRIES": "0.3,0.3", "GATEWAY_OPERATOR_TOKEN": OPERATOR,
                "GATEWAY_PRESENCE_SECONDS": "1"}
    return gateway_env(tmp, store, **{**settings, **extra})


@dataclass
class Vouched:
    table_id: str
    match_id: str
    host_key: str
    credentials: list[str]
    players: list[str]


def vouched_table(gw: Gateway, guests: tuple[int, ...] = ()) -> Vouched:
    """A private two-person Kozel table, each seat taken by a new user of host app k1 (but `guests`)."""
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2,
                                               "seats": [{"kind": "open"}, {"kind": "open"}]}), 201)
    credentials, players, match_id = [], [], None
    for invite in opened["invites"]:
        body = {"invite": invite["code"]}
        if invite["seat"] not in guests:
            body["player"] = assertion(f"hook{next(_users)}")
        joined = ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join", body))
        credentials.append(joined["credential"])
        players.append(joined["player_id"])
        match_id = joined["match_id"]
    assert match_id is not None
    return Vouched(opened["table_id"], match_id, opened["host_key"], credentials, players)


def operator(gw: Gateway, method: str, path: str, token: str | None = OPERATOR) -> Reply:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return gw.call(method, "/v1/operator/webhooks" + path, headers=headers)


# ---------------------------------------------------------------- one gateway on SQLite


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    found = Receiver().start()
    yield found
    found.stop()


@pytest.fixture(scope="module")
def hooked(engine_proc: EngineProc, receiver: Receiver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """Two workers on one SQLite file, webhooks of host app k1 to the receiver, retries after 0.3 s twice."""
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=webhook_env(tmp_path_factory.mktemp("hooks"), receiver.url))
    yield gw
    gw.stop()


def here(gw: Gateway, table: Vouched) -> list[bool]:
    seats = ok(call(gw, "GET", f"/v1/tables/{table.table_id}", credential=table.host_key))["seats"]
    return [bool(s["here"]) for s in seats]


def move(gw: Gateway, table: Vouched, seat: int) -> Json | None:
    """Seat `seat` makes its first legal move, if it is to move (its answer), else None."""
    legal = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/legal", credential=table.credentials[seat]))
    if not legal["actions"]:
        return None
    return ok(call(gw, "POST", f"/v1/matches/{table.match_id}/apply", {"action": legal["actions"][0]},
                   credential=table.credentials[seat]))


def test_your_turn_goes_to_the_away_seat_only_and_every_seat_hears_the_deal_and_the_end(
        hooked: Gateway, receiver: Receiver) -> None:
    gw = hooked
    receiver.reset()
    table = vouched_table(gw)
    # the deal to both seats; seat 1's join taken to seat 0
    wait_for(lambda: len(receiver.of(table.table_id)) == 3)
    dealt = sorted((b["data"]["seat"], b["data"]["player"]) for b in receiver.of(table.table_id)
                   if b["type"] == "table-dealt")
    assert dealt == [(0, table.players[0]), (1, table.players[1])]
    taken = [b["data"] for b in receiver.of(table.table_id) if b["type"] == "invite-taken"]
    assert [(d["seat"], d["taken"]) for d in taken] == [(0, 1)]
    stream = seat_stream(gw, table.match_id, table.credentials[0])  # seat 0 is here; seat 1's app is closed
    assert stream.next() is not None
    told: list[int] = []
    for _ in range(10):  # seat 0 moves only once seat 1 counts as away: then its turn is told to seat 1
        wait_for(lambda: here(gw, table) == [True, False])
        moved = move(gw, table, 0)
        if moved is None and move(gw, table, 1) is None:  # between two rounds
            ok(call(gw, "POST", f"/v1/matches/{table.match_id}/next-round", {}, credential=table.credentials[0]))
        latest = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))
        if moved is not None and latest["turn"] == 1 and latest["seq"] == moved["seq"]:
            told.append(moved["seq"])
            break
    assert told, "seat 1 was never to move after seat 0"
    wait_for(lambda: any(b["type"] == "your-turn" and b["data"]["seq"] == told[0]
                         for b in receiver.of(table.table_id)))
    ok(call(gw, "POST", f"/v1/matches/{table.match_id}/resign", credential=table.credentials[0]))
    wait_for(lambda: len([b for b in receiver.of(table.table_id) if b["type"] == "match-over"]) == 2)
    got = receiver.of(table.table_id)
    turns = [b["data"] for b in got if b["type"] == "your-turn"]
    assert turns and all(d["seat"] == 1 and d["player"] == table.players[1] for d in turns)  # never to seat 0
    resigned = sorted((b["data"]["seat"], b["data"]["by"]) for b in got if b["type"] == "resigned")
    assert resigned == [(0, 0), (1, 0)]
    over = [b["data"] for b in got if b["type"] == "match-over"]
    assert sorted(d["seat"] for d in over) == [0, 1] and all(d["result"]["losers"] == [0] for d in over)
    assert all(b["data"]["match_id"] == table.match_id and b["timestamp"].endswith("Z") for b in got)
    ids = [r.id for r in receiver.delivered]
    assert len(ids) == len(set(ids)) and not receiver.bad  # once each; both secrets' signatures checked
    stream.close()


def test_a_quick_play_table_filled_with_bots_is_told_dealt(hooked: Gateway, receiver: Receiver) -> None:
    receiver.reset()
    player = assertion(f"hook{next(_users)}")
    # a seek no one else makes here: its table waits for nobody (bots_after 0); the filler seats bots and deals
    opened = ok(call(hooked, "POST", "/v1/seek", {"variant": "kozel", "players": 2, "player": player,
                                                 "bots_after": 0, "bots_level": "random"}))
    assert opened["opened"] and opened["match_id"] is None
    dealt = wait_for(lambda: [b for b in receiver.of(opened["table_id"]) if b["type"] == "table-dealt"] or None)
    table = ok(call(hooked, "GET", f"/v1/tables/{opened['table_id']}", credential=opened["credential"]))
    assert table["match_id"] is not None and [s["kind"] for s in table["seats"]] == ["open", "bot"]
    assert [(d["data"]["seat"], d["data"]["player"], d["data"]["match_id"]) for d in dealt] == \
        [(0, opened["player_id"], table["match_id"])]
    assert not receiver.bad


def test_a_guest_seat_is_told_nothing(hooked: Gateway, receiver: Receiver) -> None:
    receiver.reset()
    table = vouched_table(hooked, guests=(1,))
    wait_for(lambda: any(b["type"] == "table-dealt" for b in receiver.of(table.table_id)))
    ok(call(hooked, "POST", f"/v1/matches/{table.match_id}/abort", credential=table.credentials[1]))
    wait_for(lambda: any(b["type"] == "aborted" for b in receiver.of(table.table_id)))
    assert {b["data"]["seat"] for b in receiver.of(table.table_id)} == {0}


def test_a_failing_endpoint_gets_each_delivery_again_with_the_same_id(hooked: Gateway, receiver: Receiver) -> None:
    receiver.reset(fail_each=2)  # 500 twice, then 204: the third and last attempt of the schedule succeeds
    table = vouched_table(hooked)
    wait_for(lambda: len(receiver.of(table.table_id)) == 3)  # dealt to both, seat 1's join to seat 0
    with receiver.lock:
        delivered = [r.id for r in receiver.delivered if r.body["data"]["table_id"] == table.table_id]
        assert all(receiver.attempts.count(i) == 3 for i in delivered), receiver.attempts
    assert len(set(delivered)) == 3 and not operator(hooked, "GET", "/dead").json["items"]


def test_dead_letters_after_the_last_retry_are_listed_and_replayed(hooked: Gateway, receiver: Receiver) -> None:
    receiver.reset(fail_each=3)  # more than the schedule allows (1 + 2 retries)
    table = vouched_table(hooked)

    def dead() -> list[Json]:
        items = ok(operator(hooked, "GET", "/dead"))["items"]
        return [i for i in items if json.loads(i["body"])["data"]["table_id"] == table.table_id]
    letters = wait_for(lambda: (lambda d: d if len(d) == 3 else None)(dead()))
    assert all(i["attempts"] == 3 and i["app"] == "k1" and "500" in i["error"] for i in letters)
    assert receiver.of(table.table_id) == []
    # the operator's routes: the token, else 401; a replay of what is no dead letter: 404
    assert operator(hooked, "GET", "/dead", token=None).status == 401
    refused = operator(hooked, "GET", "/dead", token="wrong")
    assert refused.status == 401 and refused.json["type"] == "/v1/problems/operator-only"
    assert refused.headers["www-authenticate"] == "Bearer"
    assert operator(hooked, "POST", "/dead/msg_nothing/replay").status == 404
    receiver.reset()  # the endpoint is fixed
    for letter in letters:
        assert ok(operator(hooked, "POST", f"/dead/{letter['id']}/replay")) == {"id": letter["id"], "replayed": True}
    wait_for(lambda: len(receiver.of(table.table_id)) == 3)
    assert sorted(r.id for r in receiver.delivered) == sorted(i["id"] for i in letters)  # the same ids
    assert dead() == [] and operator(hooked, "POST", f"/dead/{letters[0]['id']}/replay").status == 404


def test_without_an_operator_token_the_routes_do_not_exist(gateway: Gateway) -> None:
    assert operator(gateway, "GET", "/dead").status == 404
    assert operator(gateway, "POST", "/dead/x/replay").status == 404


# ---------------------------------------------------------------- restarts, clusters, addresses


def kill(gw: Gateway) -> None:
    """SIGKILL a gateway's gunicorn master and its workers together."""
    workers = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rpartition(")")[2].split()[1]) == gw.proc.pid:
                workers.append(int(entry.name))
        except OSError:
            continue
    for pid in (gw.proc.pid, *workers):
        os.kill(pid, signal.SIGKILL)
    gw.proc.wait()


def test_a_delivery_pending_when_the_gateway_is_killed_is_sent_after_its_restart(
        engine_proc: EngineProc, tmp_path: Path) -> None:
    receiver = Receiver(fail_each=10**6).start()  # the endpoint is down
    env = webhook_env(tmp_path, receiver.url, GATEWAY_WEBHOOK_RETRIES=",".join(["3"] * 30))
    outbox = tmp_path / "live.notify.sqlite3"
    try:
        gw = launch_gateway(engine_proc.address, "--workers", "1", env=env)
        try:
            table = vouched_table(gw)
            wait_for(lambda: receiver.attempts)  # the first (the others wait behind it: in order)

            def idle() -> bool:  # every delivery waits (its next attempt, or held behind the first of its
                # table's: in order), none about to be sent nor leased, and the first has failed
                with sqlite3.connect(outbox) as db:
                    rows = db.execute("SELECT due, attempts FROM deliveries_s1 WHERE dead = 0").fetchall()
                now = time.time()
                return (len(rows) == 3 and all(now + 1 < due < now + 10 for due, _ in rows)
                        and any(a >= 1 for _, a in rows))
            wait_for(idle)
            kill(gw)  # SIGKILL, its master and worker at once: nothing is flushed on the way out
        finally:
            gw.stop()  # (a failure before the kill leaves no gateway behind)
        receiver.reset()  # the endpoint is back
        gw = launch_gateway(engine_proc.address, "--workers", "1", env=env)
        try:
            wait_for(lambda: len(receiver.of(table.table_id)) == 3)
            assert len({r.id for r in receiver.delivered}) == 3 and not receiver.bad
        finally:
            gw.stop()
    finally:
        receiver.stop()


def test_two_gateways_on_one_redis_deliver_each_event_once(engine_proc: EngineProc, tmp_path: Path) -> None:
    receiver = Receiver(fail_each=1).start()  # every delivery retried once: either gateway may take the retry
    try:
        env = webhook_env(tmp_path, receiver.url)
        settings = {k: v for k, v in env.items() if k not in ("STATE_TOKEN_KEYS", "GATEWAY_TOKEN_STORE",
                                                               "GATEWAY_DATABASE")}
        with gateways_on_one_redis(engine_proc, tmp_path, 1, **settings) as (a, b):
            tables = [vouched_table(gw) for gw in (a, b, a, b)]
            for table in tables:
                ok(call(b, "POST", f"/v1/matches/{table.match_id}/abort", credential=table.credentials[0]))
            wait_for(lambda: all(len(receiver.of(t.table_id)) >= 7 for t in tables))
            for table in tables:
                kinds = Counter(b["type"] for b in receiver.of(table.table_id))
                assert kinds == {"table-dealt": 2, "invite-taken": 1, "aborted": 2, "match-over": 2}, kinds
            ids = [r.id for r in receiver.delivered]
            assert len(ids) == len(set(ids)) == 28 and not receiver.bad
            assert all(receiver.attempts.count(i) == 2 for i in ids)
    finally:
        receiver.stop()


def test_an_address_that_is_not_public_is_refused_at_send_and_at_start(
        engine_proc: EngineProc, receiver: Receiver, tmp_path: Path) -> None:
    # a name that resolves to an address the settings do not allow (loopback, without the development
    # setting): refused when sent, never connected to, a dead letter at once (no retries here)
    port = receiver.url.split(":")[2].split("/")[0]
    env = webhook_env(tmp_path, f"https://localhost:{port}/hooks", GATEWAY_WEBHOOK_INSECURE="false")
    gw = launch_gateway(engine_proc.address, "--workers", "1", env={**env, "GATEWAY_WEBHOOK_RETRIES": "0"})
    try:
        receiver.reset()
        table = vouched_table(gw)
        letters = wait_for(lambda: (lambda d: d if len(d) == 3 else None)(ok(operator(gw, "GET", "/dead"))["items"]))
        assert all("loopback" in i["error"] and i["attempts"] == 1 for i in letters), letters
        assert receiver.attempts == [] and table.table_id in letters[0]["body"]
    finally:
        gw.stop()
    # an address written as an IP literal, or plain http: refused at start
    with pytest.raises(ConfigError, match="private"):
        from_env({"GATEWAY_WEBHOOKS": f"k1=https://10.1.2.3/hooks|{NEW_SECRET}"})
    with pytest.raises(ConfigError, match="plain http"):
        from_env({"GATEWAY_WEBHOOKS": f"k1=http://hooks.example/h|{NEW_SECRET}"})
    assert from_env({"GATEWAY_WEBHOOKS": f"k1=https://10.1.2.3/hooks|{NEW_SECRET}",
                     "GATEWAY_WEBHOOK_PRIVATE": "true"}).webhooks


def test_resolved_addresses_are_checked_at_each_send() -> None:
    secret = (NEW_SECRET,)
    with pytest.raises(EndpointError, match="loopback"):
        addresses(Endpoint("k1", "https://localhost/hooks", secret), Reach())
    assert addresses(Endpoint("k1", "http://localhost:9/hooks", secret), Reach(insecure=True))
    with pytest.raises(EndpointError, match="private"):
        addresses(Endpoint("k1", "https://10.0.0.8/hooks", secret), Reach(insecure=True))
    assert addresses(Endpoint("k1", "https://10.0.0.8/hooks", secret), Reach(private=True)) == ["10.0.0.8"]
    with pytest.raises(EndpointError, match="base64"):
        parse("k1=https://hooks.example/h|whsec_not*base64", Reach())
    rotated = parse(f"k1=https://hooks.example/h|{NEW_SECRET}|{OLD_SECRET}, k2=https://b.example/|{OLD_SECRET}",
                    Reach())
    assert rotated["k1"].secrets == (NEW_SECRET, OLD_SECRET) and rotated["k2"].url == "https://b.example/"
    # the schedule is a setting: steps in seconds, or none
    assert from_env({"GATEWAY_WEBHOOK_RETRIES": "0.5, 2"}).webhook_retries == (0.5, 2.0)
    assert from_env({"GATEWAY_WEBHOOK_RETRIES": "0"}).webhook_retries == ()
    with pytest.raises(ConfigError, match="GATEWAY_WEBHOOK_RETRIES"):
        from_env({"GATEWAY_WEBHOOK_RETRIES": "5,soon"})
    with pytest.raises(ConfigError, match="no secret"):
        from_env({"GATEWAY_WEBHOOKS": "k1=https://hooks.example/h"})


# ---------------------------------------------------------------- the outbox alone, on either store


#: One worker's start, in a process of its own: open the outbox file argv[1] once the pipe argv[2] ends (its
#: write end closed: every process waiting on it wakes at that instant), and name its columns.
OPEN_OUTBOX = """
import os, sqlite3, sys
from api_gateway.notify.outbox import SqliteOutbox
path, go = sys.argv[1], int(sys.argv[2])
os.read(go, 1)
SqliteOutbox(path).close()
with sqlite3.connect(path) as db:
    print(",".join(row[1] for row in db.execute("PRAGMA table_info(deliveries_s1)")))
"""


def test_workers_opening_one_sqlite_outbox_at_once_all_start(tmp_path: Path) -> None:
    """Every worker of a host opens the outbox file as it boots. Two that both found it without a column once both
    added it, and the second failed to boot (a CI run lost a gateway so). A fresh file and an older one (without
    `chain` and `held`), each opened by 8 processes at the same moment: all start, with one set of columns."""
    older = tmp_path / "older.notify.sqlite3"
    with sqlite3.connect(older) as db:
        db.execute("PRAGMA journal_mode=WAL")  # as every outbox file is
        db.execute("CREATE TABLE deliveries_s1 (id TEXT PRIMARY KEY, app TEXT NOT NULL, body BLOB NOT NULL, "
                   "attempts INTEGER NOT NULL, due REAL NOT NULL, created REAL NOT NULL, error TEXT NOT NULL, "
                   "claim TEXT NOT NULL, dead INTEGER NOT NULL) WITHOUT ROWID")
        db.execute("INSERT INTO deliveries_s1 VALUES ('msg_1', 'k1', x'7b7d', 0, 1, 1, '', '', 0)")
    for path in (tmp_path / "fresh.notify.sqlite3", older):
        go, ready = os.pipe()
        workers = [subprocess.Popen([sys.executable, "-c", OPEN_OUTBOX, str(path), str(go)], text=True, pass_fds=(go,),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(8)]
        os.close(go)
        time.sleep(1.0)  # every process has started, imported and waits on the pipe by then
        os.close(ready)
        seen = [worker.communicate(timeout=60) for worker in workers]
        assert all(worker.returncode == 0 for worker in workers), [err[-500:] for _, err in seen]
        columns = {out.strip() for out, _ in seen}
        assert len(columns) == 1 and columns.pop().endswith("dead,chain,held"), seen
    claimed = open_outbox(f"sqlite://{tmp_path / 'older.sqlite3'}").claim(2.0, 60, 10)
    assert [(d.id, d.chain) for d in claimed] == [("msg_1", "")]  # the older file's delivery kept


def test_the_outbox_leases_each_delivery_to_one_sender_and_keeps_the_dead(store_url: str) -> None:
    outbox = open_outbox(store_url)
    now = time.time()
    outbox.put([Delivery(f"msg_{i}", "k1", b"{}", due=now, created=now) for i in range(3)])
    outbox.put([Delivery("msg_0", "k1", b"again", due=now, created=now)])  # the same id: kept as it was
    first = outbox.claim(now, 60, 2)
    second = outbox.claim(now, 60, 10)
    assert len(first) == 2 and len(second) == 1 and not {d.id for d in first} & {d.id for d in second}
    assert outbox.claim(now + 1, 60, 10) == []  # leased
    assert outbox.next_due() == pytest.approx(now + 60, abs=0.01)
    later = outbox.claim(now + 61, 60, 10)  # the leases ran out (a sender died): due again, new claims
    assert len(later) == 3
    stale = next(d for d in first if d.id == later[0].id)
    outbox.failed(stale, now, "stale claim")  # not the latest claim: nothing happens
    outbox.failed(later[0], now + 100, "answered 500")
    outbox.bury(later[1], "answered 500")
    outbox.delivered(later[2])
    outbox.put([Delivery(later[2].id, "k1", b"{}", due=now, created=now)])  # delivered: not queued again
    assert outbox.next_due() == pytest.approx(now + 100, abs=0.01)
    dead = outbox.dead(10)
    assert [(d.id, d.attempts, d.error) for d in dead] == [(later[1].id, 1, "answered 500")]
    assert outbox.replay(later[1].id, now) and not outbox.replay(later[1].id, now)
    assert [d.id for d in outbox.claim(now, 60, 10)] == [later[1].id] and outbox.dead(10) == []
    outbox.remember("t1", 1, "app:anna", "k1", now)
    assert outbox.vouched("t1", now) == {1: ("app:anna", "k1")} and outbox.vouched("t2", now) == {}
    outbox.close()


def test_the_outbox_keeps_each_chains_order_behind_a_failed_delivery(store_url: str) -> None:
    """One app's deliveries of one table (a chain) go in the order they were queued: a later one waits while an
    earlier one failed and is to be tried again, and goes right after it; other chains go meanwhile, and an
    earlier delivery never tried (a reminder due later) holds nothing back."""
    outbox = open_outbox(store_url)
    t = time.time()
    chain, other = f"k1:t-{t}", f"k1:u-{t}"
    outbox.put([Delivery("a", "k1", b"a", due=t, created=t + 1, chain=chain),
                Delivery("b", "k1", b"b", due=t, created=t + 2, chain=chain),
                Delivery("x", "k1", b"x", due=t, created=t + 1.5, chain=other),
                Delivery("r", "k1", b"r", due=t + 500, created=t + 0.5, chain=chain)])  # a reminder, due later
    first = outbox.claim(t + 10, 60, 10)
    assert [d.id for d in first] == ["a", "x", "b"] and first[0].chain == chain  # oldest first, in one claim
    a, x, b = first
    outbox.failed(a, t + 20, "answered 500")  # the sender: a failed, so b (after it) is held, x delivered
    outbox.hold(b, t + 20.001)
    outbox.delivered(x)
    assert outbox.claim(t + 15, 60, 10) == []
    a = outbox.claim(t + 20.0005, 60, 10)[0]  # a's next attempt; b is not due yet
    assert a.id == "a"
    outbox.failed(a, t + 30, "answered 500")
    assert outbox.claim(t + 20.002, 60, 10) == []  # b is due but behind a: held until just after a's next try
    assert outbox.next_due() == pytest.approx(t + 30, abs=0.01)
    a = outbox.claim(t + 30, 60, 10)[0]
    outbox.delivered(a)
    b = outbox.claim(t + 30.01, 60, 10)
    assert [d.id for d in b] == ["b"]
    # another sender meanwhile: c waits while b is in flight (leased), and is due at once when b is settled
    outbox.put([Delivery("c", "k1", b"c", due=t, created=t + 3, chain=chain)])
    assert outbox.claim(t + 31, 60, 10) == []
    outbox.delivered(b[0])
    c = outbox.claim(time.time() + 1, 60, 10)
    assert [d.id for d in c] == ["c"]
    # and when the one in flight fails instead, the one held behind it waits for its retry, not its lease's end
    outbox.put([Delivery("e", "k1", b"e", due=t, created=t + 4, chain=chain)])
    now = time.time() + 2
    assert outbox.claim(now, 60, 10) == []              # behind c, in flight until now + 59
    outbox.failed(c[0], now + 5, "answered 500")
    assert outbox.next_due() == pytest.approx(now + 5, abs=0.01)
    c, e = outbox.claim(now + 5.01, 60, 10)
    assert [c.id, e.id] == ["c", "e"]                  # in order, in one claim
    outbox.failed(c, now + 9, "answered 500")          # c failed again while e, taken with it, is in flight:
    assert [d.id for d in outbox.claim(now + 30, 60, 10)] == ["c"]  # c is due again; e is not taken twice
    outbox.close()
