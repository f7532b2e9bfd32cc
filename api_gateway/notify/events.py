"""What a host app is told, and whom: the webhook events of an online table's match.

Every event is one delivery per seat it concerns, to the app that vouched for that seat's player
(``app:<user>``); a guest's seat and a bot's are told nothing. The body is the Standard Webhooks
payload form::

    {"type": "your-turn", "timestamp": "2026-12-06T05:00:00Z",
     "data": {"table_id": "...", "match_id": "...", "seat": 1, "player": "app:anna", ...}}

- ``your-turn``: the seat is to move and its person is away (no open stream, no call lately:
  `hosting.presence`); data ``seq`` (the match's version).
- ``match-over``: data ``result`` (the engine's ``match_ended`` event: scores, losers or places).
- ``reminder``: the seat to move has a share of its time left (the clock's ``remind``) and its person is
  away; queued at the change for when it comes due, dropped then if the match moved on or the person is
  back (`is_reminder`); data ``seq``, ``left`` (seconds) and ``deadline`` (unix seconds).
- ``table-dealt``: the last seat was taken and the match dealt.
- ``invite-taken``: another seat was taken; data ``taken`` (that seat).
- ``resigned``, ``aborted``, ``gone``: a seat resigned, the match was aborted, a seat was claimed gone;
  data ``by`` (that seat).

The events and the seat to move are read from the public's line of the change's version (the live store's
event log), the same line every spectator gets.

Ids: an event of a match's version has an id made from the match, its version, the type and the seat, so
the same change told twice (a retried request answered from its receipt) is one delivery.
"""
from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import orjson

from api_gateway.notify.outbox import Delivery, FeedItem

Json = dict[str, Any]
#: The largest body sent: a bigger event's extra members are left out (``"truncated": true``).
MAX_BODY = 64 * 1024
#: The exits of a match, as the engine's events name them and as the webhooks do.
EXITS = ("resigned", "aborted", "gone")
TYPES = ("your-turn", "reminder", "match-over", "table-dealt", "invite-taken", *EXITS)
#: How every reminder's body begins (orjson keeps the members' order): told apart without parsing it.
_REMINDER = b'{"type":"reminder"'


@dataclass(frozen=True, slots=True)
class Seat:
    """A seat a host app vouched for: its number, player id and app (key id)."""

    seat: int
    player: str
    app: str


def message_id(*parts: object) -> str:
    """A webhook id made from what the event is (the same event: the same id)."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()
    return f"msg_{digest[:32]}"


def fresh_id() -> str:
    return f"msg_{secrets.token_hex(16)}"


def body(kind: str, now: float, data: Json) -> bytes:
    """The payload's bytes, at most `MAX_BODY` (else only the table, match, seat and player are kept)."""
    stamp = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = orjson.dumps({"type": kind, "timestamp": stamp, "data": data})
    if len(text) > MAX_BODY:
        kept = {k: data.get(k) for k in ("table_id", "match_id", "seat", "player")}
        text = orjson.dumps({"type": kind, "timestamp": stamp, "data": {**kept, "truncated": True}})
    return text


def delivery(delivery_id: str, kind: str, now: float, to: Seat, table_id: str, match_id: str | None,
             extra: Json) -> Delivery:
    data = {"table_id": table_id, "match_id": match_id, "seat": to.seat, "player": to.player, **extra}
    return Delivery(delivery_id, to.app, body(kind, now, data), due=now, created=now, chain=f"{to.app}:{table_id}")


def after_change(seq: int, line: Json, actor: int | None, table_id: str, match_id: str, seats: list[Seat],
                 away: set[int], now: float) -> list[Delivery]:
    """The deliveries a change of the match to version `seq` makes (`line`: the public's line of that
    version, ``events`` and ``turn``): the exits and the end to every vouched seat, "your turn" to the
    seat to move when it is away and did not just move itself."""
    found: list[Delivery] = []
    over = False
    for event in line.get("events") or ():
        kind = event.get("type") if isinstance(event, dict) else None
        if kind in EXITS:
            for to in seats:
                found.append(delivery(message_id(match_id, seq, kind, to.seat), str(kind), now, to, table_id,
                                      match_id, {"by": event.get("seat")}))
        elif kind == "match_ended":
            over = True
            result = {k: v for k, v in event.items() if k != "type"}
            for to in seats:
                found.append(delivery(message_id(match_id, "match-over", to.seat), "match-over", now, to,
                                      table_id, match_id, {"result": result}))
    turn = line.get("turn")
    if not over and isinstance(turn, int) and turn != actor and turn in away:
        for to in seats:
            if to.seat == turn:
                found.append(delivery(message_id(match_id, seq, "your-turn", turn), "your-turn", now, to,
                                      table_id, match_id, {"seq": seq}))
    return found


def after_join(table_id: str, match_id: str | None, joined: int, dealt: bool, seats: list[Seat],
               now: float) -> list[Delivery]:
    """The deliveries a seat taken makes: "invite taken" to the other vouched seats, and "table dealt" to
    every vouched seat when this seat was the last one and the match was dealt."""
    found = [delivery(fresh_id(), "invite-taken", now, to, table_id, match_id, {"taken": joined})
             for to in seats if to.seat != joined]
    if dealt and match_id is not None:
        found += [delivery(message_id(match_id, "table-dealt", to.seat), "table-dealt", now, to, table_id,
                           match_id, {}) for to in seats]
    return found


def after_deal(table_id: str, match_id: str, seats: list[Seat], now: float) -> list[Delivery]:
    """The deliveries of a match dealt with no seat taken by a person at that moment (quick play's filler
    seating bots once its wait is over): "table dealt" to every vouched seat, under the ids a join's deal
    would have (a deal told both ways is one delivery)."""
    return [delivery(message_id(match_id, "table-dealt", to.seat), "table-dealt", now, to, table_id, match_id, {})
            for to in seats]


def reminder(seq: int, at: float, deadline: float, table_id: str, match_id: str, to: Seat, now: float) -> Delivery:
    """The reminder to seat `to`, due at `at`, if it is still to move at version `seq` then (its id from the
    match, the version and the seat: a change told twice queues one)."""
    found = delivery(message_id(match_id, seq, "reminder", to.seat), "reminder", at, to, table_id, match_id,
                     {"seq": seq, "left": round(deadline - at, 1), "deadline": round(deadline, 3)})
    return replace(found, created=now)  # stamped and due when it is to be told


def is_reminder(body: bytes) -> bool:
    return body.startswith(_REMINDER)


#: What a seat's browser is pushed (Web Push, `webpush`): its turn, a reminder, the match's end.
PUSHED = ("your-turn", "reminder", "match-over")
#: The prefix of a push delivery's "app": ``push:<match id>:<seat>`` (the subscription is read when it is sent).
PUSH = "push:"


def push_of(told: Delivery, message: Json) -> Delivery:
    """The Web Push twin of a delivery (`message`: its body, parsed) to its seat's browser: a small body (the
    ids, the version and the deadline: a push message carries at most 4 KB) with an id of its own, the same on
    every retry (the service worker tags its notification with it: a message pushed twice shows once), due
    when the delivery is."""
    data = message["data"]
    kept = {k: data[k] for k in ("table_id", "match_id", "seat", "seq", "deadline") if k in data}
    pushed_id = message_id("push", told.id)
    text = orjson.dumps({"type": message["type"], "id": pushed_id, "timestamp": message["timestamp"], "data": kept})
    target = f"{PUSH}{data['match_id']}:{data['seat']}"
    return Delivery(pushed_id, target, text, due=told.due, created=told.created, chain=target)


def push_target(app: str) -> tuple[str, int] | None:
    """The match and seat a push delivery's "app" names (None: a webhook's app)."""
    if not app.startswith(PUSH):
        return None
    match_id, _, seat = app[len(PUSH):].partition(":")
    return match_id, int(seat)


def feed_item(told: Delivery, message: Json) -> FeedItem:
    """A delivery as its vouched player's notification feed keeps it (`message`: its body, parsed)."""
    data = message["data"]
    extra = {k: v for k, v in data.items() if k not in ("table_id", "match_id", "seat", "player")}
    return FeedItem(str(data["player"]), told.id, told.created,
                    {"type": message["type"], "table_id": data.get("table_id"), "match_id": data.get("match_id"),
                     "seat": data.get("seat"), "data": extra})
