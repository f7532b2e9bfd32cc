"""Sending the outbox's deliveries: one thread per gateway worker (a greenlet under gevent), never a
request's.

The thread wakes when this worker queued something (`Sender.wake`), else sleeps until the earliest delivery
is due (read from the outbox, shared by every worker and gateway), looking again at least every `LOOK`
seconds for what a worker that is gone queued and never sent (each worker sends what it queues). Each pass
claims the due deliveries (a lease: no other sender sends them meanwhile) and posts each one, signed with
every secret of its endpoint, with short timeouts: an endpoint that is slow or down delays only its own
deliveries. A 2xx answer ends a delivery; anything else (another status, a refused address, a timeout) is
tried again after the next step of the schedule (``GATEWAY_WEBHOOK_RETRIES``, each step with +-20% jitter),
and after the last step the delivery goes to the dead letters.
"""
from __future__ import annotations

import http.client
import logging
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from prometheus_client import Counter
from standardwebhooks.webhooks import Webhook

from api_gateway.notify import webpush
from api_gateway.notify.endpoints import Endpoint, EndpointError, Reach, addresses
from api_gateway.notify.events import push_target
from api_gateway.notify.outbox import HELD_AFTER, Delivery, Outbox
from api_gateway.store import StoreUnavailable

log = logging.getLogger("api_gateway.notify")

#: Seconds to connect, then to send and read the answer, each.
TIMEOUT = 5.0
#: Seconds a claimed delivery is leased to its sender (more than an attempt can take).
LEASE = 60.0
#: Seconds before a pass is tried again after the outbox did not answer.
POLL = 2.0
#: Seconds between two looks at the outbox with nothing due that this worker knows of. Every 2 s, these looks
#: (a write transaction each) were a fifth of an idle worker's CPU (docs/performance.md).
LOOK = 60.0
#: Deliveries claimed per pass.
BATCH = 20
#: The default schedule: seconds before each retry.
RETRIES = (5.0, 30.0, 120.0, 600.0, 3600.0, 6 * 3600.0, 24 * 3600.0)

DELIVERIES = Counter(
    "domino_gateway_webhook_deliveries_total",
    "Webhook delivery attempts, by outcome: delivered (2xx), retry (failed, tried again later), dead (failed "
    "for the last time: in the dead letters), dropped (its app has no endpoint any more, or its seat no push subscription), gone (a push service said "
    "the subscription is gone: forgotten), stale (a reminder whose seat moved meanwhile, "
    "or is here: not sent).",
    ["outcome"],
)


class _Pinned(http.client.HTTPConnection):
    """An HTTP connection to the address checked (`endpoints.addresses`), named by the URL's host."""

    def __init__(self, host: str, address: str, port: int, timeout: float, tls: ssl.SSLContext | None) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address
        self._tls = tls

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host) if self._tls is not None else sock


def signature(endpoint: Endpoint, delivery_id: str, stamp: datetime, body: bytes) -> str:
    """The ``webhook-signature`` header: one ``v1,<base64>`` per secret, space-separated."""
    return " ".join(Webhook(secret).sign(delivery_id, stamp, body) for secret in endpoint.secrets)


def exchange(endpoint: Endpoint, reach: Reach, body: bytes, headers: dict[str, str],
             timeout: float = TIMEOUT) -> int | str:
    """POST `body` to the endpoint's address checked now (`endpoints.addresses`): the status it answered, or
    why there was none (a refused address, a timeout, a connection error)."""
    try:
        address = addresses(endpoint, reach)[0]
    except EndpointError as exc:
        return f"refused: {exc}"
    tls = ssl.create_default_context() if endpoint.url.startswith("https:") else None
    conn = _Pinned(endpoint.host, address, endpoint.port, timeout, tls)
    try:
        conn.request("POST", endpoint.target, body, headers)
        answer = conn.getresponse()
        answer.read(4096)
        return answer.status
    except (OSError, http.client.HTTPException) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


def post(endpoint: Endpoint, reach: Reach, delivery: Delivery, timeout: float = TIMEOUT) -> str | None:
    """Send one webhook delivery: None when the endpoint answered 2xx, else why not."""
    stamp = datetime.now(UTC)
    headers = {"content-type": "application/json", "user-agent": "domino-gateway-webhooks/1",
               "webhook-id": delivery.id, "webhook-timestamp": str(int(stamp.timestamp())),
               "webhook-signature": signature(endpoint, delivery.id, stamp, delivery.body)}
    status = exchange(endpoint, reach, delivery.body, headers, timeout)
    if isinstance(status, str):
        return status
    return None if 200 <= status < 300 else f"answered {status}"


class Sender:
    """A worker's sender of webhook deliveries (`start` once; `wake` when something was queued)."""

    def __init__(self, outbox: Outbox, endpoints: dict[str, Endpoint], reach: Reach,
                 schedule: tuple[float, ...] = RETRIES, before: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.time, stale: Callable[[Delivery], bool] | None = None,
                 vapid: webpush.Vapid | None = None) -> None:
        self.outbox = outbox
        self.vapid = vapid
        self._stale = stale
        self.endpoints = endpoints
        self.reach = reach
        self.schedule = schedule
        self._before = before
        self._clock = clock
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="webhooks", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            pause = POLL
            try:
                if self._before is not None:
                    self._before()  # the events queued in this worker, into the outbox
                pause = self.send_due()
            except StoreUnavailable as exc:
                log.warning("webhooks: the outbox does not answer: %s", exc)
            except Exception:  # a bug must not end every later delivery
                log.exception("webhooks: the pass failed")
            if self._wake.wait(pause):
                self._wake.clear()

    def send_due(self) -> float:
        """Send what is due: the seconds to wait before the next pass."""
        claimed = self.outbox.claim(self._clock(), LEASE, BATCH)
        failed: dict[str, float] = {}  # chain -> when its failed delivery is tried again
        for delivery in claimed:
            if delivery.chain in failed:  # in order: after that one, not before
                self.outbox.hold(delivery, failed[delivery.chain] + HELD_AFTER)
                continue
            again = self._send(delivery)
            if again is not None and delivery.chain:
                failed[delivery.chain] = again
        if len(claimed) == BATCH:
            return 0.0
        due = self.outbox.next_due()
        return LOOK if due is None else max(0.0, min(LOOK, due - self._clock()))

    def _send(self, delivery: Delivery) -> float | None:
        """Send one delivery and settle it: when it is to be tried again (it failed), else None."""
        if self._stale is not None and self._stale(delivery):  # a reminder the match or its person overtook
            self.outbox.delivered(delivery)
            DELIVERIES.labels("stale").inc()
            return None
        target = push_target(delivery.app)
        error = self._webhook(delivery) if target is None else self._push(delivery, *target)
        if error == "":  # not to be sent (nowhere to send it): already settled
            return None
        if error is None:
            self.outbox.delivered(delivery)
            DELIVERIES.labels("delivered").inc()
        elif delivery.attempts < len(self.schedule):
            wait = self.schedule[delivery.attempts] * random.uniform(0.8, 1.2)  # noqa: S311 - jitter, not a secret
            log.info("webhook %s to %s: %s; again in %.1f s", delivery.id, delivery.app, error, wait)
            again = self._clock() + wait
            self.outbox.failed(delivery, again, error)
            DELIVERIES.labels("retry").inc()
            return again
        else:
            log.warning("webhook %s to %s: %s; attempt %d was the last: dead letter", delivery.id, delivery.app,
                        error, delivery.attempts + 1)
            self.outbox.bury(delivery, error)
            DELIVERIES.labels("dead").inc()
        return None

    def _webhook(self, delivery: Delivery) -> str | None:
        """Post a webhook: None when answered 2xx, why not else ("": settled here, not to be tried again)."""
        endpoint = self.endpoints.get(delivery.app)
        if endpoint is None:
            log.warning("webhook %s: app %r has no endpoint any more (GATEWAY_WEBHOOKS): dead letter",
                        delivery.id, delivery.app)
            self.outbox.bury(delivery, f"no endpoint for app {delivery.app!r}")
            DELIVERIES.labels("dropped").inc()
            return ""
        return post(endpoint, self.reach, delivery)

    def _push(self, delivery: Delivery, match_id: str, seat: int) -> str | None:
        """Push to the seat's browser (encrypted, VAPID-signed): None when its push service took it, why not
        else ("": settled here: no subscription any more, or the push service says it is gone)."""
        stored = self.outbox.subscriptions(match_id, self._clock()).get(seat)
        if stored is None or self.vapid is None:  # unsubscribed meanwhile (or Web Push turned off): nobody to tell
            self.outbox.delivered(delivery)
            DELIVERIES.labels("dropped").inc()
            return ""
        subscription = webpush.Subscription.load(stored)
        status = exchange(subscription.target(), self.reach, webpush.encrypt(subscription, delivery.body),
                          webpush.headers(self.vapid, subscription))
        if status in (404, 410):  # the browser unsubscribed, or the subscription expired: forget it (RFC 8030 7.3)
            log.info("push %s: the push service says the subscription is gone (%d): forgotten", delivery.id, status)
            self.outbox.forget(match_id, seat, stored)
            self.outbox.delivered(delivery)
            DELIVERIES.labels("gone").inc()
            return ""
        if isinstance(status, str):
            return status
        return None if 200 <= status < 300 else f"answered {status}"
