"""Reminders before a turn clock runs out (issue 38 items 1 and 3, docs/notifications.md "Reminders"): the
clock member ``remind``, when a reminder comes due, and that a reminder the match or its person overtook is
dropped when it comes due.

Time: the clock and the notifier/sender take a clock, advanced here by hand (`Now`); the one real-gateway
test scales a correspondence clock down to seconds (a move of 10 s, a reminder at 40% left: 6 s in) and waits
for conditions, bounded."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api_gateway.clocks import CORRESPONDENCE, Clocks, ClockSetting, ClockSettingError
from api_gateway.notify.endpoints import Endpoint, Reach
from api_gateway.notify.events import Seat, message_id, reminder
from api_gateway.notify.notifier import Notifier
from api_gateway.notify.outbox import SqliteOutbox
from api_gateway.notify.sender import LOOK
from api_gateway.store import HostedMatch, MatchExpired

from .conftest import EngineProc, Gateway, launch_gateway, wait_for
from .test_tables import call, ok, problem
from .test_webhooks import NEW_SECRET, Receiver, assertion, webhook_env

Json = dict[str, Any]
DAY = 86400.0


# ---------------------------------------------------------------- the setting and when it comes due


def test_a_correspondence_clock_reminds_by_default_and_a_real_time_one_does_not() -> None:
    assert ClockSetting.from_json({"move": 3 * DAY}).remind == 0.25
    assert ClockSetting.from_json({"bank": 7 * DAY, "increment": DAY}).remind == 0.25
    assert ClockSetting.from_json({"move": 30}).remind is None
    assert ClockSetting.from_json({"move": CORRESPONDENCE - 1}).remind is None
    assert ClockSetting.from_json({"move": 30, "remind": 0.5}).remind == 0.5
    assert ClockSetting.from_json({"move": DAY, "remind": None}).remind is None
    # the stored form reads back the same (a correspondence clock without one says so: null)
    for value in ({"move": DAY}, {"move": DAY, "remind": None}, {"move": 30}, {"bank": 600, "remind": 0.1}):
        setting = ClockSetting.from_json(value)
        assert ClockSetting.from_json(setting.to_json()) == setting
    assert ClockSetting.from_json({"move": 30}).to_json() == {"move": 30.0, "on_timeout": "rule"}
    assert ClockSetting.from_json({"move": DAY, "remind": None}).to_json()["remind"] is None


@pytest.mark.parametrize("value", [0, 1, 1.5, -0.2, "half", True])
def test_a_reminder_share_out_of_range_names_clock_remind(value: object) -> None:
    with pytest.raises(ClockSettingError) as raised:
        ClockSetting.from_json({"move": DAY, "remind": value})
    assert raised.value.field == "clock.remind"


def test_a_reminder_is_due_when_the_share_of_the_seats_time_is_left() -> None:
    move = Clocks.start(ClockSetting.from_json({"move": 4 * DAY}), 2, 0, now=1000.0)
    assert move.reminder() == 1000.0 + 3 * DAY  # a quarter of 4 days left
    assert move.moved(1, now=2000.0).reminder() == 2000.0 + 3 * DAY  # each move's limit afresh
    bank = Clocks.start(ClockSetting.from_json({"bank": 10 * DAY, "remind": 0.2}), 2, 0, now=0.0)
    assert bank.reminder() == 8 * DAY
    later = bank.moved(1, now=7 * DAY).moved(0, now=7 * DAY + 5)  # seat 0 used 7 days: 3 left, 2 kept back
    assert later.reminder() == pytest.approx(7 * DAY + 5 + DAY)
    # that share already gone when the turn begins, no clock running, a seat on autopilot: no reminder
    assert later.moved(1, now=8 * DAY + 10).moved(0, now=8 * DAY + 11).reminder() is None  # 2 days - 5 s left
    assert later.moved(None, now=7 * DAY + 10).reminder() is None
    assert later.on_autopilot(0).reminder() is None
    assert Clocks.start(ClockSetting.from_json({"move": 30}), 2, 0, now=0.0).reminder() is None


# ---------------------------------------------------------------- dropped when it comes due, if overtaken


class Now:
    """A clock the test advances."""

    def __init__(self, at: float) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


class Store:
    """The live store as a reminder's check reads it: a match's latest version and its seats' presence."""

    def __init__(self) -> None:
        self.matches: dict[bytes, HostedMatch] = {}
        self.here: dict[bytes, dict[int, float]] = {}

    def hosted(self, key: bytes) -> HostedMatch:
        if key not in self.matches:
            raise MatchExpired("gone")
        return self.matches[key]

    def presence(self, key: bytes) -> dict[int, float]:
        return self.here.get(key, {})


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver(secrets=(NEW_SECRET,)).start()
    yield found
    found.stop()


def test_a_reminder_is_sent_when_due_unless_its_seat_moved_or_is_back(tmp_path: Path, receiver: Receiver) -> None:
    now, store = Now(1000.0), Store()
    outbox = SqliteOutbox(str(tmp_path / "notify.sqlite3"))
    endpoint = Endpoint("k1", receiver.url, (NEW_SECRET,))
    notifier = Notifier(lambda: store, outbox, {"k1": endpoint}, Reach(insecure=True), (), now)
    matches = {name: bytes([i]) * 16 for i, name in enumerate(("waits", "moved", "back", "over", "gone"), 1)}
    for name, key in matches.items():
        store.matches[key] = HostedMatch("t-" + name, "token", 3 if name == "moved" else 2, name == "over", 3)
    store.here[matches["back"]] = {1: 1500.0}  # its person came back (a stream open) at 1400, here till 1500
    del store.matches[matches["gone"]]
    seat = Seat(1, "app:anna", "k1")
    assert notifier.sender.send_due() == LOOK   # nothing queued: the next look is a minute away, not 2 s
    outbox.put([reminder(2, 1400.0, 1600.0, "t-" + name, key.hex(), seat, now()) for name, key in matches.items()])
    assert notifier.sender.send_due() == LOOK and receiver.delivered == []  # not due yet (in 400 s)
    now.at = 1400.0
    notifier.sender.send_due()
    told = [(r.id, r.body) for r in receiver.delivered]
    assert len(told) == 1 and told[0][0] == message_id(matches["waits"].hex(), 2, "reminder", 1)
    assert told[0][1] == {"type": "reminder", "timestamp": "1970-01-01T00:23:20Z",
                          "data": {"table_id": "t-waits", "match_id": matches["waits"].hex(), "seat": 1,
                                   "player": "app:anna", "seq": 2, "left": 200.0, "deadline": 1600.0}}
    # the overtaken ones are done, not dead and not due again: the same reminder queued again is dropped
    assert outbox.next_due() is None and outbox.dead(10) == []
    outbox.put([reminder(2, 1400.0, 1600.0, "t-moved", matches["moved"].hex(), seat, now())])
    assert outbox.next_due() is None
    outbox.close()


# ---------------------------------------------------------------- a real gateway, seconds scaled


@pytest.fixture(scope="module")
def reminded(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, Receiver, Path]]:
    receiver = Receiver().start()
    tmp = tmp_path_factory.mktemp("reminders")
    gw = launch_gateway(engine_proc.address, "--workers", "1", env=webhook_env(tmp, receiver.url))
    yield gw, receiver, tmp / "live.notify.sqlite3"
    gw.stop()
    receiver.stop()


@pytest.mark.parametrize("remind", [0, 1, "soon", -1])
def test_a_table_with_a_reminder_out_of_range_is_refused(reminded: tuple[Gateway, Receiver, Path],
                                                       remind: object) -> None:
    reply = call(reminded[0], "POST", "/v1/tables", {"variant": "kozel", "players": 2,
                                                     "clock": {"move": 30, "remind": remind}})
    problem(reply, 400, "malformed")
    assert reply.json["field"] == "clock.remind"


def test_an_away_seat_is_reminded_and_a_seat_that_moved_is_not(reminded: tuple[Gateway, Receiver, Path]) -> None:
    gw, receiver, outbox = reminded
    # a correspondence clock scaled down: a move of 10 s, reminded with 40% of it left (6 s into the turn)
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2, "clock": {"move": 10, "remind": 0.4},
                                                "seats": [{"kind": "open"}, {"kind": "open"}]}), 201)
    assert opened["table"]["clock"]["remind"] == 0.4
    credentials: list[str] = []
    for invite in opened["invites"]:
        joined = ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join",
                         {"invite": invite["code"], "player": assertion(f"remind{len(credentials)}-{opened['table_id']}")}))
        credentials.append(joined["credential"])
    match_id = joined["match_id"]
    first = ok(call(gw, "GET", f"/v1/matches/{match_id}/seat", credential=opened["host_key"]))
    mover = first["turn"]
    assert first["seq"] == 0 and isinstance(mover, int)
    # the first seat to move moves at once, long before its reminder (queued at the deal) comes due
    legal = ok(call(gw, "GET", f"/v1/matches/{match_id}/legal", credential=credentials[mover]))
    moved = ok(call(gw, "POST", f"/v1/matches/{match_id}/apply", {"action": legal["actions"][0]},
                    credential=credentials[mover]))
    after = ok(call(gw, "GET", f"/v1/matches/{match_id}/seat", credential=opened["host_key"]))
    assert after["seq"] == moved["seq"] == 1 and after["turn"] == 1 - mover
    reminders = wait_for(lambda: [b for b in receiver.of(opened["table_id"]) if b["type"] == "reminder"] or None)
    assert [(b["data"]["seat"], b["data"]["seq"], b["data"]["left"]) for b in reminders] == [(1 - mover, 1, 4.0)]
    # the first mover's reminder was queued at the deal and dropped when it came due (it had moved)
    dropped = message_id(match_id, 0, "reminder", mover)
    with sqlite3.connect(outbox) as db:
        assert db.execute("SELECT dead FROM deliveries_s1 WHERE id = ?", (dropped,)).fetchall() == [(2,)]
    assert dropped not in receiver.attempts and not receiver.bad
    assert reminders[0]["data"]["match_id"] == match_id
