"""The webhooks of one gateway worker: what the hosting tells it (`changed`, `joined`), turned into
deliveries in the outbox off the request's path, and the sender.

A call of the hosting only appends to an in-memory list and wakes the sender's thread (microseconds, never
raising; a seat taken by a vouched player also writes which app vouched, one write, so that any worker
telling the table's next event finds it): the thread reads the table, the seats' presence and the vouching apps,
writes the deliveries to the outbox, then sends. An event is durable from its write to the outbox on (a
pass later: milliseconds); one still in memory when its worker is killed is lost. While a store does not
answer, the events wait in memory and are tried again each pass; at most `PENDING` wait: past that the
newest are dropped and counted.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import orjson
from prometheus_client import Counter

from api_gateway.archive.assertions import PREFIX_APP
from api_gateway.clocks import Clocks
from api_gateway.hosting import records
from api_gateway.notify import events
from api_gateway.notify.endpoints import Endpoint, Reach
from api_gateway.notify.events import Seat
from api_gateway.notify.outbox import Delivery, FeedItem, Outbox
from api_gateway.notify.sender import RETRIES, Sender
from api_gateway.notify.webpush import Vapid
from api_gateway.store import HostedMatch, MatchExpired, StoreUnavailable

log = logging.getLogger("api_gateway.notify")

Json = dict[str, Any]
#: Events a worker holds in memory at most before they reach the outbox.
PENDING = 10_000
#: What an event makes: its deliveries in the webhooks' form to every seat it concerns, and the match's seats
#: with a push subscription (`Notifier._route` sends each where it goes).
Told = tuple[list[Delivery], dict[int, bytes]]
NOTHING: Told = ([], {})
#: Seconds after a table's deal within which a seat taken counts as the one that dealt it.
DEAL_WINDOW = 10.0

EVENTS_LOST = Counter(
    "domino_gateway_webhook_events_lost_total",
    "Webhook events not queued, by why: overflow (more than 10,000 waiting in a worker: the outbox does not "
    "answer), failed (reading the table or writing the outbox failed: logged).",
    ["reason"],
)


def app_of(assertion: object) -> str | None:
    """The key id that signed a player assertion (already checked by the archive), or None."""
    if not isinstance(assertion, str):
        return None
    if assertion.startswith("p1."):
        return assertion.split(".")[1]
    try:
        import jwt

        kid = jwt.get_unverified_header(assertion).get("kid")
    except Exception:  # a garbled assertion was refused before: nothing to tell
        return None
    return kid if isinstance(kid, str) else None


class Notifier:
    """One worker's webhooks (`start` once)."""

    def __init__(self, store: Callable[[], Any], outbox: Outbox, endpoints: dict[str, Endpoint], reach: Reach,
                 schedule: tuple[float, ...] = RETRIES, clock: Callable[[], float] = time.time,
                 vapid: Vapid | None = None) -> None:
        self.store = store
        self.outbox = outbox
        self.endpoints = endpoints
        self.reach = reach
        self.vapid = vapid
        self._clock = clock
        self._pending: deque[Callable[[], Told]] = deque()
        self._lock = threading.Lock()
        self.sender = Sender(outbox, endpoints, reach, schedule, self.flush, clock, self.stale, vapid)

    def start(self) -> None:
        self.sender.start()

    def now(self) -> float:
        return self._clock()

    def stop(self) -> None:
        self.sender.stop()

    # ------------------------------------------------------------ from the hosting (the request's path)

    def changed(self, match_id: str, seat: int | None, answer: bytes, table: Json | None = None) -> None:
        """A hosted match changed (`HostedPlay.act`): `seat` acted (None: the host or a clock). `table`: the
        table's record as the change's caller read it; a table nobody there can be told of (`tells`) costs
        nothing more (no store read on the sender's thread, no wake-up)."""
        if table is not None and not self.tells(table):
            return
        self._queue(lambda: self._after_change(match_id, seat, answer))

    def tells(self, table: Json) -> bool:
        """Whether a change of this table's match may be told to anyone: a seat held by a player a host app
        vouched for (its webhooks, its feed), or any seat when Web Push is on (a seat's browser may have
        subscribed). A table of guests and bots on a gateway without Web Push: never."""
        return self.vapid is not None or bool(records.vouched(table))

    def joined(self, table_id: str, seat: int, assertion: object, player: str | None, rec: Json) -> None:
        """A seat of a table was taken (`Tables.join`) by `player`, vouched by `assertion`."""
        # this join dealt the match when the deal's time is now (a seat taken again later is not a deal;
        # one taken again within seconds of the deal tells it again under the same ids: one delivery)
        dealt = rec.get("match_id") is not None and float(rec.get("dealt") or 0) >= self._clock() - DEAL_WINDOW
        app = app_of(assertion)
        vouched = player is not None and player.startswith(PREFIX_APP) and app is not None
        if vouched:
            # at once (one write, a seat taken only): the next seat's join or the first move may be told by
            # another worker at once, and must find this seat's app
            try:
                self.outbox.remember(table_id, seat, str(player), str(app), self._clock())
                vouched = False
            except StoreUnavailable as exc:  # then on the sender's thread, before this join is told
                log.warning("webhooks: seat %d of table %s remembered later: %s", seat, table_id, exc)
        self._queue(lambda: self._after_join(table_id, seat, player if vouched else None, app, rec, dealt))

    def dealt(self, table_id: str, rec: Json) -> None:
        """A table's match was dealt with no seat taken at that moment (quick play's filler made the free seats
        bots, `Matchmaking.fill_due`): `rec` is the table's record after the deal."""
        match_id = rec.get("match_id")
        if match_id is not None:
            self._queue(lambda: self._after_deal(table_id, str(match_id), rec))

    def _queue(self, work: Callable[[], Told]) -> None:
        with self._lock:
            if len(self._pending) >= PENDING:
                EVENTS_LOST.labels("overflow").inc()
                return
            self._pending.append(work)
        self.sender.wake()

    # ------------------------------------------------------------ on the sender's thread

    def flush(self) -> None:
        """Turn the events queued in this worker into deliveries in the outbox."""
        while True:
            with self._lock:
                if not self._pending:
                    return
                work = self._pending.popleft()
            try:
                deliveries, feed = self._route(*work())
                self.outbox.put(deliveries)
                self.outbox.feed_add(feed, self._clock())
            except StoreUnavailable:  # the store is back soon: the event waits for the next pass
                with self._lock:
                    self._pending.appendleft(work)
                raise
            except Exception:  # a bug in one event loses that event, not the ones after it
                log.exception("webhooks: an event was not queued")
                EVENTS_LOST.labels("failed").inc()

    def _seats(self, table_id: str, rec: Json) -> list[Seat]:
        """The table's seats vouched by a host app, still held by the player it vouched for (no outbox read
        for a table of guests and bots alone: only an ``app:`` player is ever vouched for)."""
        if not records.vouched(rec):
            return []
        found = []
        for seat, (player, app) in sorted(self.outbox.vouched(table_id, self._clock()).items()):
            held = rec["seats"][seat] if seat < len(rec["seats"]) else {}
            if held.get("taken") and held.get("player") == player:
                found.append(Seat(seat, player, app))
        return found

    def _pushed(self, match_id: str) -> dict[int, bytes]:
        """The match's seats with a browser push subscription (none without Web Push)."""
        return self.outbox.subscriptions(match_id, self._clock()) if self.vapid is not None else {}

    @staticmethod
    def _targets(vouched: list[Seat], pushed: dict[int, bytes], rec: Json) -> list[Seat]:
        """Every seat an event may be told to: the vouched ones, and the others with a push subscription."""
        known = {s.seat for s in vouched}
        return vouched + [Seat(seat, str(rec["seats"][seat].get("player") or ""), "")
                          for seat in sorted(pushed) if seat not in known and seat < len(rec["seats"])]

    def _route(self, found: list[Delivery], pushed: dict[int, bytes]) -> tuple[list[Delivery], list[FeedItem]]:
        """Where each event for a seat goes: a webhook to its host app's endpoint (if it has one); its turn,
        reminders and the end to its browser (if it has a push subscription); and, for a vouched player,
        into their notification feed (but reminders: they are about a moment, queued before it)."""
        out: list[Delivery] = []
        feed: list[FeedItem] = []
        for told in found:
            if told.app in self.endpoints:
                out.append(told)
            message = orjson.loads(told.body)
            data = message["data"]
            if pushed and message["type"] in events.PUSHED and data["seat"] in pushed:
                out.append(events.push_of(told, message))
            if str(data.get("player") or "").startswith(PREFIX_APP) and message["type"] != "reminder":
                feed.append(events.feed_item(told, message))
        return out, feed

    def _after_change(self, match_id: str, seat: int | None, answer: bytes) -> Told:
        seq = orjson.loads(answer).get("seq")
        key = bytes.fromhex(match_id)
        try:
            hosted, row = self.store().seated(key)
            rec = orjson.loads(row.record)
            if not isinstance(seq, int):
                return NOTHING
            pushed = self._pushed(match_id)
            seats = self._targets(self._seats(rec["table_id"], rec), pushed, rec)
            if not seats:
                return NOTHING
            lines, _ = self.store().lines(key, hosted.viewers - 1, seq)  # the public's line of this version
        except MatchExpired:
            return NOTHING
        if not lines:
            return NOTHING
        now = self._clock()
        until = self.store().presence(key)
        away = {s.seat for s in seats if until.get(s.seat, 0.0) <= now}
        found = events.after_change(seq, orjson.loads(lines[0]), seat, rec["table_id"], match_id, seats, away, now)
        return found + self._reminders(rec["table_id"], match_id, hosted, seq, seats), pushed

    def _reminders(self, table_id: str, match_id: str, hosted: HostedMatch, seq: int, seats: list[Seat]) -> list[Delivery]:
        """The reminder of version `seq`'s seat to move, due when its clock's share ``remind`` is left (none when
        a later version is already in: that one queues its own)."""
        if hosted.seq != seq or hosted.over or not hosted.clocks:
            return []
        clocks = Clocks.load(orjson.loads(hosted.clocks))
        at, deadline = clocks.reminder(), clocks.deadline
        if at is None or deadline is None:
            return []
        return [events.reminder(seq, at, deadline, table_id, match_id, to, self._clock())
                for to in seats if to.seat == clocks.running]

    def _dealt_reminders(self, table_id: str, match_id: str, seats: list[Seat]) -> list[Delivery]:
        """A deal's reminder (version 0: no change of the match tells it)."""
        try:
            hosted = self.store().hosted(bytes.fromhex(match_id))
        except MatchExpired:
            return []
        return self._reminders(table_id, match_id, hosted, 0, seats)

    def stale(self, delivery: Delivery) -> bool:
        """A delivery no longer worth sending when it comes due: a reminder whose seat is no longer to move at
        its version (the match moved on, or is over or gone), or whose person is back."""
        if not events.is_reminder(delivery.body):
            return False
        data = orjson.loads(delivery.body)["data"]
        key = bytes.fromhex(data["match_id"])
        try:
            hosted = self.store().hosted(key)
        except MatchExpired:
            return True
        if hosted.over or hosted.seq != data["seq"]:
            return True
        return float(self.store().presence(key).get(data["seat"], 0.0)) > self._clock()

    def _after_join(self, table_id: str, seat: int, unremembered: str | None, app: str | None, rec: Json,
                    dealt: bool) -> Told:
        now = self._clock()
        if unremembered is not None and app is not None:  # the join's write failed: now
            self.outbox.remember(table_id, seat, unremembered, app, now)
        match_id = rec.get("match_id")
        pushed = self._pushed(str(match_id)) if dealt and match_id is not None else {}
        seats = self._targets(self._seats(table_id, rec), pushed, rec)
        if not seats:
            return NOTHING
        found = events.after_join(table_id, match_id, seat, dealt, [s for s in seats if s.app], now)
        if dealt and match_id is not None:
            found += self._dealt_reminders(table_id, str(match_id), seats)
        return found, pushed

    def _after_deal(self, table_id: str, match_id: str, rec: Json) -> Told:
        pushed = self._pushed(match_id)
        seats = self._targets(self._seats(table_id, rec), pushed, rec)
        if not seats:
            return NOTHING
        found = events.after_deal(table_id, match_id, [s for s in seats if s.app], self._clock())
        return found + self._dealt_reminders(table_id, match_id, seats), pushed


# ------------------------------------------------------------ the hooks the hosting calls

_current: Notifier | None = None


def install(notifier: Notifier | None) -> None:
    """This worker's notifier (None: no webhooks), what `changed` and `joined` tell."""
    global _current
    _current = notifier


def changed(match_id: str, seat: int | None, answer: bytes, table: Json | None = None) -> None:
    """`Notifier.changed` of this worker's notifier, if any; never raises into play."""
    notifier = _current
    if notifier is not None:
        try:
            notifier.changed(match_id, seat, answer, table)
        except Exception:
            log.exception("webhooks: a change was not told")
            EVENTS_LOST.labels("failed").inc()


def joined(table_id: str, seat: int, assertion: object, player: str | None, rec: Json) -> None:
    """`Notifier.joined` of this worker's notifier, if any; never raises into play."""
    notifier = _current
    if notifier is not None:
        try:
            notifier.joined(table_id, seat, assertion, player, rec)
        except Exception:
            log.exception("webhooks: a seat taken was not told")
            EVENTS_LOST.labels("failed").inc()


def dealt(table_id: str, rec: Json) -> None:
    """`Notifier.dealt` of this worker's notifier, if any; never raises into play."""
    notifier = _current
    if notifier is not None:
        try:
            notifier.dealt(table_id, rec)
        except Exception:
            log.exception("webhooks: a deal was not told")
            EVENTS_LOST.labels("failed").inc()


def start(cfg: Any, store: Callable[[], Any]) -> Notifier:
    """This worker's notifier from the gateway's settings (`GatewayConfig`), started and installed: webhooks to
    the endpoints of ``GATEWAY_WEBHOOKS`` (none: none), Web Push with ``GATEWAY_VAPID_KEY``, the players'
    notification feed always. The outbox is beside the live store (`outbox.open_outbox`)."""
    from api_gateway.notify.endpoints import parse
    from api_gateway.notify.outbox import open_outbox
    from api_gateway.store import default_url

    reach = Reach(cfg.webhook_insecure, cfg.webhook_private)
    vapid = Vapid.parse(cfg.vapid_key, cfg.vapid_subject) if cfg.vapid_key else None
    notifier = Notifier(store, open_outbox(cfg.token_store or default_url()),
                        parse(cfg.webhooks, reach) if cfg.webhooks else {}, reach, cfg.webhook_retries, vapid=vapid)
    install(notifier)
    notifier.start()
    return notifier
