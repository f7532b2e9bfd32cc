"""Online tables (issue 24; the contract: docs/tables.md) against a real gunicorn gateway, a real engine
and real SQLite: a whole Kozel match between two people and two bots through HTTP alone, both seats
streaming (every update reaches the other seat's stream), reconnection with Last-Event-ID (every
missed event, none twice), tickets, and every bad input of the contract (its problem+json, nothing
changed)."""
from __future__ import annotations

import http.client
import json
import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest

from .conftest import Gateway, Reply

pytestmark = pytest.mark.service

Json = dict[str, Any]
TWO_AND_TWO = [{"kind": "open"}, {"kind": "open"}, {"kind": "bot", "level": "greedy"},
               {"kind": "bot", "level": "random"}]


def call(gw: Gateway, method: str, path: str, body: Any = None, credential: str | None = None,
         headers: dict[str, str] | None = None) -> Reply:
    all_headers = dict(headers or {})
    if credential is not None:
        all_headers["Authorization"] = f"Bearer {credential}"
    return gw.call(method, path, body, headers=all_headers)


def ok(reply: Reply, status: int = 200) -> Json:
    assert reply.status == status, (reply.status, reply.body[:800])
    found: Json = reply.json
    return found


@dataclass
class Table:
    table_id: str
    host_key: str
    credentials: list[str]
    match_id: str
    opened: Json

    @property
    def watch(self) -> str:
        """The query of the table's spectator link (a private table opened with spectators)."""
        link = self.opened["spectator_link"]
        assert link is not None, "opened without spectators"
        return "?" + link.partition("&")[2]


def open_table(gw: Gateway, seats: list[Json] | None = None, variant: str = "kozel", players: int = 4,
               **extra: Any) -> Table:
    """A private table (with a spectator link unless `extra` says otherwise), every open seat taken."""
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": variant, "players": players,
                                               "seats": seats or TWO_AND_TWO, "spectators": True, **extra}), 201)
    credentials, match_id = [], None
    for invite in opened["invites"]:
        joined = ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join",
                         {"invite": invite["code"], "name": f"P{invite['seat']}"}))
        assert joined["seat"] == invite["seat"]
        credentials.append(joined["credential"])
        match_id = joined["match_id"]
    assert match_id is not None
    return Table(opened["table_id"], opened["host_key"], credentials, match_id, opened)


@dataclass
class Event:
    kind: str
    id: int | None
    data: Any


@dataclass
class Stream:
    """An SSE stream read on a thread into a queue of `Event`s (comments counted)."""

    gw: Gateway
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    status: int = 0
    events: queue.Queue[Event | None] = field(default_factory=queue.Queue)
    keepalives: int = 0
    #: The `presence` events' data, in order (kept apart: they come between versions, at renewals).
    presence: list[Json] = field(default_factory=list)

    def __post_init__(self) -> None:
        parts = urlsplit(self.gw.url)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
        self.conn.request("GET", self.path, headers={"Accept": "text/event-stream", **self.headers})
        self.response = self.conn.getresponse()
        self.status = self.response.status
        if self.status == 200:
            assert self.response.headers["Content-Type"].startswith("text/event-stream")
            threading.Thread(target=self._read, daemon=True).start()
        else:
            self.body = self.response.read()

    def _read(self) -> None:
        kind, ident, data = "message", None, ""
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\r\n")
                if line.startswith(":"):
                    self.keepalives += 1
                elif line.startswith("id: "):
                    ident = int(line[4:])
                elif line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "" and kind == "presence":
                    self.presence.append(json.loads(data))
                    kind, ident, data = "message", None, ""
                elif line == "":
                    self.events.put(Event(kind, ident, json.loads(data) if data else None))
                    kind, ident, data = "message", None, ""
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # closed by the test (http.client's reader finds its file gone: AttributeError)
        self.events.put(None)

    def next(self, timeout: float = 20.0) -> Event | None:
        return self.events.get(timeout=timeout)

    def until(self, done: Any, timeout: float = 30.0) -> list[Event]:
        """Events until `done(event)` (included) or the stream's end."""
        got: list[Event] = []
        deadline = time.monotonic() + timeout
        while True:
            event = self.events.get(timeout=max(0.1, deadline - time.monotonic()))
            if event is None:
                return got
            got.append(event)
            if done(event):
                return got

    def close(self) -> None:
        try:
            if self.conn.sock is not None:
                self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


def seat_stream(gw: Gateway, match_id: str, credential: str | None = None, last: int | None = None,
                query: str = "") -> Stream:
    headers = {"Authorization": f"Bearer {credential}"} if credential else {}
    if last is not None:
        headers["Last-Event-ID"] = str(last)
    return Stream(gw, f"/v1/matches/{match_id}/events{query}", headers)


def play_step(gw: Gateway, table: Table) -> Json | None:
    """One step of the match: the seat to move applies its first legal action, or a new round is dealt;
    the apply's answer (None for a new round, or when the match is over: see `over`)."""
    for credential in table.credentials:
        legal = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/legal", credential=credential))
        if legal["actions"]:
            return ok(call(gw, "POST", f"/v1/matches/{table.match_id}/apply", {"action": legal["actions"][0]},
                           credential=credential))
    latest = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[0]))
    if not latest["over"]:
        ok(call(gw, "POST", f"/v1/matches/{table.match_id}/next-round", {}, credential=table.credentials[0]))
    return None


def over(gw: Gateway, table: Table) -> bool:
    return bool(ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))["over"])


# ---------------------------------------------------------------- a whole match


def test_a_whole_kozel_match_between_two_people_and_two_bots(tables_gw: Gateway) -> None:
    gw = tables_gw
    table = open_table(gw, name="Anna's table")
    info = ok(call(gw, "GET", f"/v1/tables/{table.table_id}", credential=table.host_key))
    assert info["status"] == "playing" and info["match_id"] == table.match_id and info["matches"] == 1
    assert [s["name"] for s in info["seats"]] == ["P0", "P1", "greedy bot", "random bot"]
    # each person's player id (a guest here), so a page can show its rating; none for a bot
    players = [s["player"] for s in info["seats"]]
    assert players[0].startswith("guest:") and players[1].startswith("guest:") and players[0] != players[1]
    assert players[2:] == [None, None]
    assert "cred" not in json.dumps(info) and "invite" not in json.dumps(info)
    # seat 0 by its Authorization header, seat 1 by a ticket (as an EventSource does)
    s0 = seat_stream(gw, table.match_id, table.credentials[0])
    ticket = ok(call(gw, "POST", f"/v1/matches/{table.match_id}/events/ticket", credential=table.credentials[1]))
    assert ticket["expires_in"] == 30
    s1 = seat_stream(gw, table.match_id, query=f"?ticket={ticket['ticket']}")
    watcher = seat_stream(gw, table.match_id, query=table.watch)
    assert (s0.status, s1.status, watcher.status) == (200, 200, 200)
    firsts = [s.next() for s in (s0, s1, watcher)]
    assert [(e.kind, e.data["seat"]) for e in firsts if e] == [("view", 0), ("view", 1), ("view", None)]
    assert all("turn" in e.data for e in firsts if e)
    start = firsts[0].id  # type: ignore[union-attr]
    applied = []
    for _ in range(2000):
        answer = play_step(gw, table)
        if answer is not None:
            applied.append(answer["seq"])
        elif over(gw, table):
            break
    assert over(gw, table), "the match did not end"
    streams = {"seat 0": s0, "seat 1": s1, "public": watcher}
    last = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[0]))["seq"]
    for name, stream in streams.items():
        got = stream.until(lambda e: e.kind == "end", 60)
        assert got and got[-1].kind == "end", name
        ids = [e.id for e in got if e.kind == "update"]
        assert ids == list(range(start + 1, last + 1)), name  # every change once, in order
        assert set(applied) <= set(ids)
        assert stream.next() is None  # the stream closed with the match
        stream.close()
    info = ok(call(gw, "GET", f"/v1/tables/{table.table_id}", credential=table.host_key))
    assert info["status"] == "over"
    # the archive has it, with the two guests and two bots
    deadline = time.monotonic() + 10
    while (r := gw.get(f"/v1/matches/{table.match_id}/record")).status != 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert r.status == 200, r.body[:300]
    players = [s["player"] for s in r.json["seats"]]
    assert players[0].startswith("guest:") and players[1].startswith("guest:") and players[2:] == [None, None]
    # ... under the names they took their seats with, and the whole record over every round (the state
    # kept the last round's moves only; the store gave the engine the earlier rounds' lines)
    assert r.json["record"]["names"] == ["P0", "P1", None, None], r.json["record"]["names"]
    moves = r.json["record"]["moves"]
    assert moves[0]["step"] == "new" and [m["n"] for m in moves] == list(range(1, len(moves) + 1))
    dealt = [e["number"] for m in moves for e in m["events"] if e["type"] == "round_dealt"]
    assert dealt == list(range(1, len(dealt) + 1)) and r.json["record"]["result"] is not None
    # play again: a new match for the same seats
    again = ok(call(gw, "POST", f"/v1/tables/{table.table_id}/again", credential=table.host_key))["table"]
    assert again["status"] == "playing" and again["matches"] == 2 and again["match_id"] != table.match_id
    seat = ok(call(gw, "GET", f"/v1/matches/{again['match_id']}/seat", credential=table.credentials[1]))
    assert seat["seat"] == 1 and seat["over"] is False and seat["view"] is not None


def test_reconnect_with_last_event_id_gets_every_missed_event_once(tables_gw: Gateway) -> None:
    gw = tables_gw
    table = open_table(gw)
    # A second stream of the seat stays open throughout: the worker's feed of the seat lives on and drops
    # the lines every stream has written, so a resume from an old id reads them from the store.
    companion = seat_stream(gw, table.match_id, table.credentials[0])
    first = seat_stream(gw, table.match_id, table.credentials[0])
    view = first.next()
    assert view is not None and view.kind == "view"
    seen: list[int] = []
    for _ in range(3):
        while play_step(gw, table) is None:
            pass
    got: list[Event] = []
    deadline = time.monotonic() + 5
    latest = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[0]))["seq"]
    while (not got or got[-1].id != latest) and time.monotonic() < deadline:
        event = first.next(5)
        assert event is not None
        got.append(event)
    seen = [e.id for e in got if e.kind == "update"]  # type: ignore[misc]
    first.close()  # the drop
    cut = seen[len(seen) // 2]
    for _ in range(3):  # moves made while away
        while play_step(gw, table) is None:
            pass
    latest = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[0]))["seq"]
    for resume in (seat_stream(gw, table.match_id, table.credentials[0], last=cut),
                   seat_stream(gw, table.match_id, table.credentials[0], query=f"?last_event_id={cut}")):
        again = resume.until(lambda e: e.id == latest, 10)
        assert [e.kind for e in again] == ["update"] * len(again)  # no view: it resumed
        assert [e.id for e in again] == list(range(cut + 1, latest + 1))
        resume.close()
    # what the resumed updates hold is what the seat's latest answer holds, and what the companion got
    latest_seat = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[0]))
    assert again[-1].data["view"] == latest_seat["view"]
    together = companion.until(lambda e: e.id == latest, 10)
    assert {e.id: e.data for e in together if e.kind == "update" and e.id > cut} == {e.id: e.data for e in again}
    companion.close()


def test_tickets_are_single_use_and_credentials_stay_out_of_urls(tables_gw: Gateway) -> None:
    gw = tables_gw
    table = open_table(gw)
    ticket = ok(call(gw, "POST", f"/v1/matches/{table.match_id}/events/ticket", credential=table.credentials[0]))
    first = seat_stream(gw, table.match_id, query=f"?ticket={ticket['ticket']}")
    assert first.status == 200
    event = first.next()
    assert event is not None and event.data["seat"] == 0
    first.close()
    spent = seat_stream(gw, table.match_id, query=f"?ticket={ticket['ticket']}")
    assert spent.status == 401 and json.loads(spent.body)["type"] == "/v1/problems/invalid-ticket"
    made_up = seat_stream(gw, table.match_id, query="?ticket=nope")
    assert made_up.status == 401
    # a ticket of one match does not open another's stream
    other = open_table(gw)
    ticket = ok(call(gw, "POST", f"/v1/matches/{table.match_id}/events/ticket", credential=table.credentials[1]))
    assert seat_stream(gw, other.match_id, query=f"?ticket={ticket['ticket']}").status == 401


# ---------------------------------------------------------------- bad input


def problem(reply: Reply, status: int, name: str) -> None:
    assert reply.status == status, (reply.status, reply.body[:500])
    assert reply.content_type == "application/problem+json"
    assert reply.json["type"] == f"/v1/problems/{name}", reply.json


def _unseen(table: Json) -> Json:
    """A table without its seats' presence (which every call of a seat changes)."""
    return {**table, "seats": [{k: v for k, v in s.items() if k not in ("here", "away_since")} for s in table["seats"]]}


def test_every_bad_input_answers_its_problem_and_changes_nothing(tables_gw: Gateway) -> None:
    gw = tables_gw
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 4, "seats": TWO_AND_TWO}), 201)
    tid = opened["table_id"]
    path = f"/v1/tables/{tid}"
    before = ok(call(gw, "GET", path, credential=opened["host_key"]))
    problem(call(gw, "POST", "/v1/tables/0123/join", {"invite": "ABCDEFGH"}), 404, "unknown-table")
    problem(call(gw, "POST", f"{path}/join", {"invite": "ABCDEFGH"}), 403, "invalid-invite")
    problem(call(gw, "POST", f"{path}/join", {"seat": 0}), 403, "invite-required")
    problem(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 4, "seats": [{"kind": "bot"}] * 4}),
            400, "malformed")
    problem(call(gw, "POST", "/v1/tables", {"variant": "kozle", "players": 4}), 404, "unknown-variant")
    problem(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 9}), 400, "malformed")
    assert ok(call(gw, "GET", path, credential=opened["host_key"])) == before
    first = ok(call(gw, "POST", f"{path}/join", {"invite": opened["invites"][0]["code"], "name": "A"}))
    problem(call(gw, "POST", f"{path}/join", {"invite": opened["invites"][0]["code"]}), 403, "invalid-invite")
    second = ok(call(gw, "POST", f"{path}/join", {"invite": opened["invites"][1]["code"], "name": "B"}))
    mid = second["match_id"]
    assert mid is not None and first["match_id"] is None
    table = ok(call(gw, "GET", path, credential=opened["host_key"]))
    # credentials: missing, unknown, another table's
    other = open_table(gw)
    problem(call(gw, "GET", f"/v1/matches/{mid}/seat"), 401, "invalid-credential")
    r = call(gw, "GET", f"/v1/matches/{mid}/seat", credential=f"{tid}.0.madeup")
    problem(r, 401, "invalid-credential")
    assert r.headers["www-authenticate"] == "Bearer"
    problem(call(gw, "GET", f"/v1/matches/{mid}/seat", credential=other.credentials[0]), 403, "wrong-table")
    problem(call(gw, "POST", f"/v1/tables/{other.table_id}/leave", credential=first["credential"]), 403,
            "wrong-table")
    # acting out of turn, or for another seat; another seat's stream
    seat = ok(call(gw, "GET", f"/v1/matches/{mid}/seat", credential=first["credential"]))
    legal = ok(call(gw, "GET", f"/v1/matches/{mid}/legal", credential=first["credential"]))
    idle = second["credential"] if legal["seat"] == 0 else first["credential"]
    r = call(gw, "POST", f"/v1/matches/{mid}/apply", {"action": "6-6"}, credential=idle)
    assert r.status == 409 and r.content_type == "application/problem+json", r.body
    problem(call(gw, "POST", f"/v1/matches/{mid}/apply", {"action": "6-6"}, credential=opened["host_key"]), 403,
            "sealed-forbidden")
    stream = seat_stream(gw, mid, first["credential"], query="?seat=1")
    assert stream.status == 403 and json.loads(stream.body)["type"] == "/v1/problems/sealed-forbidden"
    assert seat_stream(gw, mid, query="?seat=0").status == 403
    # a full table, a taken seat (public table), play again while playing, invites with a seat key
    problem(call(gw, "POST", f"/v1/tables/{tid}/again", credential=opened["host_key"]), 409, "match-not-over")
    problem(call(gw, "GET", f"{path}/invites", credential=first["credential"]), 403, "sealed-forbidden")
    public = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2, "public": True}), 201)
    ppath = f"/v1/tables/{public['table_id']}"
    ok(call(gw, "POST", f"{ppath}/join", {"seat": 0, "name": "X"}))
    problem(call(gw, "POST", f"{ppath}/join", {"seat": 0, "name": "Y"}), 409, "seat-taken")
    ok(call(gw, "POST", f"{ppath}/join", {"seat": 1, "name": "Y"}))
    problem(call(gw, "POST", f"{ppath}/join", {"seat": 1, "name": "Z"}), 409, "table-full")
    # nothing of the above changed the first table or its match (the seats' calls made them here)
    assert _unseen(ok(call(gw, "GET", path, credential=opened["host_key"]))) == _unseen(table)
    assert ok(call(gw, "GET", f"/v1/matches/{mid}/seat", credential=first["credential"]))["seq"] == seat["seq"]
    # leaving twice
    ok(call(gw, "POST", f"{path}/leave", credential=first["credential"]))
    r = call(gw, "POST", f"{path}/leave", credential=first["credential"])
    assert r.status in (401, 409) and r.content_type == "application/problem+json"
    left = ok(call(gw, "GET", path, credential=opened["host_key"]))
    assert left["seats"][0]["taken"] is False and left["status"] == "waiting"
    # a fresh invite takes the freed seat and the match goes on from where it was
    invites = ok(call(gw, "GET", f"{path}/invites", credential=opened["host_key"]))["invites"]
    assert [i["seat"] for i in invites] == [0]
    back = ok(call(gw, "POST", f"{path}/join", {"invite": invites[0]["code"], "name": "A again"}))
    assert back["seat"] == 0 and back["match_id"] == mid
    assert ok(call(gw, "GET", f"/v1/matches/{mid}/seat", credential=back["credential"]))["seq"] == seat["seq"]


def test_racing_for_the_last_seat_exactly_one_wins(tables_gw: Gateway) -> None:
    gw = tables_gw
    for _ in range(3):
        opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2, "public": True,
                                                   "seats": [{"kind": "open"}, {"kind": "open"}]}), 201)
        tid = opened["table_id"]
        ok(call(gw, "POST", f"/v1/tables/{tid}/join", {"invite": opened["invites"][0]["code"]}))
        barrier = threading.Barrier(6)
        replies: list[Reply] = []

        def race(i: int, barrier: threading.Barrier = barrier, code: str = opened["invites"][1]["code"],
                 replies: list[Reply] = replies, tid: str = tid) -> None:
            barrier.wait()
            body = {"invite": code} if i % 2 else {"seat": 1}
            replies.append(call(gw, "POST", f"/v1/tables/{tid}/join", {**body, "name": f"R{i}"}))

        threads = [threading.Thread(target=race, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        won = [r for r in replies if r.status == 200]
        assert len(won) == 1, [(r.status, r.body[:200]) for r in replies]
        assert all(r.json["type"] in ("/v1/problems/seat-taken", "/v1/problems/table-full",
                                      "/v1/problems/invalid-invite") for r in replies if r.status != 200)
        table = ok(call(gw, "GET", f"/v1/tables/{tid}"))
        assert table["match_id"] == won[0].json["match_id"] and table["matches"] == 1


def test_the_lobby_lists_public_tables_with_a_free_seat(tables_gw: Gateway) -> None:
    gw = tables_gw
    made = [ok(call(gw, "POST", "/v1/tables", {"variant": "osel", "players": 3, "public": True}), 201)["table_id"]
            for _ in range(3)]
    ok(call(gw, "POST", "/v1/tables", {"variant": "osel", "players": 3}), 201)  # private: never listed
    page = ok(call(gw, "GET", "/v1/tables?variant=osel&limit=2"))
    assert [t["table_id"] for t in page["tables"]] == made[::-1][:2] and page["next_cursor"]
    rest = ok(call(gw, "GET", f"/v1/tables?variant=osel&limit=2&cursor={page['next_cursor']}"))
    assert [t["table_id"] for t in rest["tables"]][:1] == made[:1]
    problem(call(gw, "GET", "/v1/tables?limit=0"), 422, "validation-error")


def test_leave_with_on_leave_bot_hands_the_seat_to_a_bot_and_back(tables_gw: Gateway) -> None:
    gw = tables_gw
    table = open_table(gw, on_leave="bot")
    before = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))["seq"]
    left = ok(call(gw, "POST", f"/v1/tables/{table.table_id}/leave", credential=table.credentials[0]))["table"]
    assert left["seats"][0]["level"] == "greedy" and left["seats"][0]["taken"] is False
    assert ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))["seq"] > before
    # the one person left plays on: seat 0's turns are the bot's now. Two of seat 1's moves in one round
    # mean every other seat, seat 0 among them, acted between them; stopping there (not after a fixed
    # number of steps, which could play the whole match out and leave nothing to rejoin) keeps the
    # match running
    alone = Table(table.table_id, table.host_key, table.credentials[1:], table.match_id, {})
    moved = 0
    for _ in range(40):
        moved = 0 if play_step(gw, alone) is None else moved + 1
        if moved == 2:
            break
    assert moved == 2 and not over(gw, table)
    invites = ok(call(gw, "GET", f"/v1/tables/{table.table_id}/invites", credential=table.host_key))["invites"]
    back = ok(call(gw, "POST", f"/v1/tables/{table.table_id}/join", {"invite": invites[0]["code"]}))
    assert back["seat"] == 0
    seated = ok(call(gw, "GET", f"/v1/tables/{table.table_id}", credential=table.host_key))["seats"][0]
    assert seated["taken"] is True and seated["level"] is None


def test_the_token_carrying_calls_keep_a_tables_streams_and_latest_token(tables_gw: Gateway) -> None:
    """`.../seat` answers a token and a seat key that work with the ordinary sealed calls; a change made
    that way reaches the streams and the store's latest token as one made by match id does."""
    gw = tables_gw
    table = open_table(gw)
    watcher = seat_stream(gw, table.match_id, query=table.watch)
    view = watcher.next()
    assert view is not None and view.kind == "view"
    for _ in range(20):
        mover = next((i for i, c in enumerate(table.credentials)
                      if ok(call(gw, "GET", f"/v1/matches/{table.match_id}/legal", credential=c))["actions"]), None)
        if mover is not None:
            break
        ok(call(gw, "POST", f"/v1/matches/{table.match_id}/next-round", {}, credential=table.host_key))
    assert mover is not None
    latest = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.credentials[mover]))
    legal = ok(gw.post("/v1/matches/legal", {"token": latest["token"], "seat_key": latest["seat_key"]}))
    answer = ok(gw.post("/v1/matches/apply", {"token": latest["token"], "seat_key": latest["seat_key"],
                                              "action": legal["actions"][0]}))
    got = watcher.until(lambda e: e.id == answer["seq"], 10)
    assert [e.id for e in got] == list(range(view.id + 1, answer["seq"] + 1))  # type: ignore[operator]
    assert ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))["seq"] \
        == answer["seq"]
    # the old token is stale now, by either path
    r = gw.post("/v1/matches/legal", {"token": latest["token"], "seat_key": latest["seat_key"]})
    assert r.status == 409 and r.json["type"] == "/v1/problems/stale-token"
    watcher.close()
