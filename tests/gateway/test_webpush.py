"""Web Push for the play page (issue 38 item 4, docs/notifications.md "Web Push"): a seat registers its
browser's subscription with its credential, and a real push service started here, holding the browser's
private key and authentication secret, checks each message's VAPID token (RFC 8292) and decrypts its body
(RFC 8291 aes128gcm, with `http_ece`): nothing is taken on trust.

Time: the retry schedule is a setting (tenths of a second here); presence lasts 1 s; every wait is for a
condition, bounded."""
from __future__ import annotations

import base64
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import http_ece
import jwt
import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from api_gateway.config import ConfigError, from_env
from api_gateway.notify.endpoints import Reach
from api_gateway.notify.webpush import Subscription, SubscriptionError, Vapid, b64url
from bench.local_http import LocalServer, answering

from .conftest import EngineProc, Gateway, gateway_env, launch_gateway, wait_for
from .test_tables import call, ok, problem

Json = dict[str, Any]
VAPID_RAW = b"\x17" * 32
VAPID_KEY = b64url(VAPID_RAW)
VAPID_PUBLIC = b64url(ec.derive_private_key(int.from_bytes(VAPID_RAW, "big"), ec.SECP256R1()).public_key()
                      .public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))
SUBJECT = "mailto:ops@domino.example"


@dataclass
class Pushed:
    payload: Json
    headers: dict[str, str]


@dataclass
class PushService:
    """A push service for one browser: it holds the browser's key pair and secret, checks every message's
    VAPID token against the gateway's public key and decrypts it; answers `status` (201, else e.g. 410 when
    the browser unsubscribed), failing the first `fail_each` attempts of each message with 500."""

    fail_each: int = 0
    status: int = 201
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))
    attempts: list[str] = field(default_factory=list)   # each attempt's decrypted message id
    received: list[Pushed] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: LocalServer | None = None

    @property
    def endpoint(self) -> str:
        assert self.server is not None
        return f"{self.server.url}/wpush/v2/{b64url(self.auth)}"

    def subscription(self) -> Json:
        point = self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                   serialization.PublicFormat.UncompressedPoint)
        return {"endpoint": self.endpoint, "expirationTime": None, "keys": {"p256dh": b64url(point),
                                                                            "auth": b64url(self.auth)}}

    def check(self, headers: dict[str, str], body: bytes) -> Json:
        """The message decrypted, once its VAPID token and headers check (AssertionError naming what does not)."""
        scheme, _, params = headers["authorization"].partition(" ")
        assert scheme == "vapid", headers["authorization"]
        parts = dict(p.strip().split("=", 1) for p in params.split(","))
        assert parts["k"] == VAPID_PUBLIC, "signed with another key than GET /v1/push/key names"
        signer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), base64.urlsafe_b64decode(
            parts["k"] + "=" * (-len(parts["k"]) % 4)))
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(self.endpoint))
        claims = jwt.decode(parts["t"], signer, algorithms=["ES256"], audience=origin)
        assert claims["sub"] == SUBJECT and time.time() < claims["exp"] <= time.time() + 24 * 3600
        assert headers["content-encoding"] == "aes128gcm" and int(headers["ttl"]) > 0
        plain = http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm")
        found: Json = orjson.loads(plain)
        return found

    def receive(self, headers: dict[str, str], body: bytes) -> int:
        headers = {k.lower(): v for k, v in headers.items()}
        try:
            payload = self.check(headers, body)
        except Exception as exc:  # noqa: BLE001 - recorded, asserted empty by the tests
            with self.lock:
                self.bad.append(f"{type(exc).__name__}: {exc}")
            return 400
        with self.lock:
            self.attempts.append(payload["id"])
            failing = self.attempts.count(payload["id"]) <= self.fail_each
            status = 500 if failing else self.status
            if status == 201:
                self.received.append(Pushed(payload, headers))
        return status

    def start(self) -> PushService:
        self.server = LocalServer(answering(self.receive)).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()

    def of(self, match_id: str) -> list[Json]:
        with self.lock:
            return [p.payload for p in self.received if p.payload["data"]["match_id"] == match_id]


# ---------------------------------------------------------------- a gateway that pushes


@pytest.fixture(scope="module")
def pushing(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, Path]]:
    """One worker on SQLite, Web Push on (no webhooks), http and loopback allowed (development), retries after
    0.3 s twice, a person away after 1 s without a call."""
    tmp = tmp_path_factory.mktemp("push")
    env = gateway_env(tmp, GATEWAY_VAPID_KEY=VAPID_KEY, GATEWAY_VAPID_SUBJECT=SUBJECT, GATEWAY_WEBHOOK_INSECURE="true",
                      GATEWAY_WEBHOOK_RETRIES="0.3,0.3", GATEWAY_PRESENCE_SECONDS="1")
    gw = launch_gateway(engine_proc.address, "--workers", "1", env=env)
    yield gw, tmp / "live.notify.sqlite3"
    gw.stop()


@dataclass
class Table:
    table_id: str
    match_id: str
    host_key: str
    credentials: list[str]


def guests_table(gw: Gateway) -> Table:
    """A private two-person Kozel table, both seats taken by guests (the page's players: no host app)."""
    opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2,
                                               "seats": [{"kind": "open"}, {"kind": "open"}]}), 201)
    joined = [ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join", {"invite": i["code"]}))
              for i in opened["invites"]]
    return Table(opened["table_id"], joined[-1]["match_id"], opened["host_key"], [j["credential"] for j in joined])


def subscribe(gw: Gateway, table: Table, seat: int, subscription: Json) -> Json:
    return ok(call(gw, "PUT", f"/v1/matches/{table.match_id}/push", subscription, credential=table.credentials[seat]))


def away(gw: Gateway, table: Table, seat: int) -> bool:
    seats = ok(call(gw, "GET", f"/v1/tables/{table.table_id}", credential=table.host_key))["seats"]
    return not seats[seat]["here"]


def test_the_page_gets_the_gateways_public_key(pushing: tuple[Gateway, Path]) -> None:
    assert ok(call(pushing[0], "GET", "/v1/push/key")) == {"key": VAPID_PUBLIC}


def test_an_away_seat_is_pushed_its_turn_and_the_end_encrypted_for_its_browser(pushing: tuple[Gateway, Path]) -> None:
    gw, _ = pushing
    service = PushService().start()
    try:
        table = guests_table(gw)
        mover = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))["turn"]
        closed = 1 - mover  # the seat that is not to move first registers its browser, then closes its tab
        assert subscribe(gw, table, closed, service.subscription()) == {"match_id": table.match_id, "seat": closed,
                                                                         "subscribed": True}
        wait_for(lambda: away(gw, table, closed))  # no stream, no call for a second
        legal = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/legal", credential=table.credentials[mover]))
        moved = ok(call(gw, "POST", f"/v1/matches/{table.match_id}/apply", {"action": legal["actions"][0]},
                        credential=table.credentials[mover]))
        turn = wait_for(lambda: [p for p in service.of(table.match_id) if p["type"] == "your-turn"] or None)
        assert [p["data"] for p in turn] == [{"table_id": table.table_id, "match_id": table.match_id, "seat": closed,
                                              "seq": moved["seq"]}]
        ok(call(gw, "POST", f"/v1/matches/{table.match_id}/resign", credential=table.credentials[mover]))
        over = wait_for(lambda: [p for p in service.of(table.match_id) if p["type"] == "match-over"] or None)
        assert [p["data"]["seat"] for p in over] == [closed]
        # only that seat's browser is pushed, only its turn and the end; every message once (its id), each checked
        pushed = service.of(table.match_id)
        assert [p["type"] for p in pushed] == ["your-turn", "match-over"] and not service.bad
        assert len({p["id"] for p in pushed}) == 2 and pushed[1]["timestamp"].endswith("Z")
    finally:
        service.stop()


def test_an_away_seats_browser_is_reminded_before_its_clock_runs_out(pushing: tuple[Gateway, Path]) -> None:
    gw, _ = pushing
    service = PushService().start()
    try:
        # a correspondence clock scaled down: a move of 8 s, reminded with half of it left (4 s into the turn)
        opened = ok(call(gw, "POST", "/v1/tables", {"variant": "kozel", "players": 2, "clock": {"move": 8, "remind": 0.5},
                                                    "seats": [{"kind": "open"}, {"kind": "open"}]}), 201)
        joined = [ok(call(gw, "POST", f"/v1/tables/{opened['table_id']}/join", {"invite": i["code"]}))
                  for i in opened["invites"]]
        table = Table(opened["table_id"], joined[-1]["match_id"], opened["host_key"], [j["credential"] for j in joined])
        mover = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/seat", credential=table.host_key))["turn"]
        subscribe(gw, table, 1 - mover, service.subscription())
        legal = ok(call(gw, "GET", f"/v1/matches/{table.match_id}/legal", credential=table.credentials[mover]))
        moved = ok(call(gw, "POST", f"/v1/matches/{table.match_id}/apply", {"action": legal["actions"][0]},
                        credential=table.credentials[mover]))
        reminded = wait_for(lambda: [p for p in service.of(table.match_id) if p["type"] == "reminder"] or None)
        assert [(p["data"]["seat"], p["data"]["seq"]) for p in reminded] == [(1 - mover, moved["seq"])]
        assert isinstance(reminded[0]["data"]["deadline"], float) and not service.bad
    finally:
        service.stop()


def test_a_failing_push_service_gets_the_same_message_again(pushing: tuple[Gateway, Path]) -> None:
    gw, _ = pushing
    service = PushService(fail_each=2).start()  # 500 twice, then 201: the last attempt of the schedule
    try:
        table = guests_table(gw)
        subscribe(gw, table, 0, service.subscription())
        ok(call(gw, "POST", f"/v1/matches/{table.match_id}/abort", credential=table.credentials[1]))
        over = wait_for(lambda: service.of(table.match_id) or None)
        assert [p["type"] for p in over] == ["match-over"]
        with service.lock:  # three attempts, each decrypted to the same message id (fresh encryption each time)
            assert service.attempts == [over[0]["id"]] * 3 and not service.bad
    finally:
        service.stop()


def test_a_subscription_its_push_service_calls_gone_is_forgotten(pushing: tuple[Gateway, Path]) -> None:
    gw, outbox = pushing
    service = PushService(status=410).start()
    try:
        table = guests_table(gw)
        subscribe(gw, table, 0, service.subscription())

        def stored() -> list[Any]:
            with sqlite3.connect(outbox) as db:
                return db.execute("SELECT seat FROM push_s1 WHERE match_id = ?", (table.match_id,)).fetchall()
        assert stored() == [(0,)]
        ok(call(gw, "POST", f"/v1/matches/{table.match_id}/abort", credential=table.credentials[1]))
        wait_for(lambda: stored() == [])  # 410: the browser unsubscribed; not tried again
        with service.lock:
            assert len(service.attempts) == 1 and not service.bad
        # a seat that unsubscribes itself: DELETE
        subscribe(gw, table, 1, service.subscription())
        assert ok(call(gw, "DELETE", f"/v1/matches/{table.match_id}/push", credential=table.credentials[1])) == \
            {"match_id": table.match_id, "seat": 1, "subscribed": False}
        assert stored() == []
    finally:
        service.stop()


# ---------------------------------------------------------------- bad input


def _sub(**change: Any) -> Json:
    service = PushService()
    point = service.key.public_key().public_bytes(serialization.Encoding.X962,
                                                  serialization.PublicFormat.UncompressedPoint)
    keys = {"p256dh": b64url(point), "auth": b64url(service.auth), **change.pop("keys", {})}
    return {"endpoint": "https://push.example.net/wpush/abc", "keys": keys, **change}


@pytest.mark.parametrize(("body", "member"), [
    (_sub(endpoint="ftp://push.example.net/x"), "endpoint"),
    (_sub(endpoint="https://10.1.2.3/wpush/x"), "endpoint"),            # a private address
    (_sub(endpoint="https://push.example.net/" + "x" * 3000), "endpoint"),
    (_sub(keys={"p256dh": "not*base64"}), "keys.p256dh"),
    (_sub(keys={"p256dh": b64url(b"\x04" + b"\x01" * 64)}), "keys.p256dh"),  # 65 bytes, not a point of the curve
    (_sub(keys={"p256dh": b64url(b"\x02" * 33)}), "keys.p256dh"),            # compressed
    (_sub(keys={"auth": b64url(b"a" * 15)}), "keys.auth"),
    (_sub(keys={"auth": "%%%"}), "keys.auth"),
])
def test_a_subscription_that_is_not_valid_is_refused_naming_its_member(pushing: tuple[Gateway, Path], body: Json,
                                                                       member: str) -> None:
    gw, outbox = pushing
    table = guests_table(gw)
    reply = call(gw, "PUT", f"/v1/matches/{table.match_id}/push", body, credential=table.credentials[0])
    problem(reply, 400, "malformed")
    assert reply.json["field"] == member, reply.json
    with sqlite3.connect(outbox) as db:
        assert db.execute("SELECT * FROM push_s1 WHERE match_id = ?", (table.match_id,)).fetchall() == []


def test_a_subscription_needs_a_seats_credential_and_its_members(pushing: tuple[Gateway, Path]) -> None:
    gw, _ = pushing
    table = guests_table(gw)
    path = f"/v1/matches/{table.match_id}/push"
    problem(call(gw, "PUT", path, _sub()), 401, "invalid-credential")
    problem(call(gw, "PUT", path, _sub(), credential=table.host_key), 403, "sealed-forbidden")
    problem(call(gw, "PUT", path, _sub(), credential=table.credentials[0] + "x"), 401, "invalid-credential")
    problem(call(gw, "PUT", path, {"endpoint": "https://push.example.net/x"}, credential=table.credentials[0]),
            422, "validation-error")
    problem(call(gw, "DELETE", path), 401, "invalid-credential")


def test_without_a_vapid_key_there_is_no_web_push(gateway: Gateway) -> None:
    assert ok(call(gateway, "GET", "/v1/push/key")) == {"key": None}  # no error: the page asks, offers nothing


def test_subscriptions_and_vapid_settings_are_checked() -> None:
    allowed = Reach(insecure=True)
    assert Subscription.parse(_sub(), Reach()).endpoint == "https://push.example.net/wpush/abc"
    assert Subscription.parse(_sub(endpoint="http://127.0.0.1:9/x"), allowed).endpoint.startswith("http:")
    with pytest.raises(SubscriptionError, match="plain http") as raised:
        Subscription.parse(_sub(endpoint="http://push.example.net/x"), Reach())
    assert raised.value.field == "endpoint"
    with pytest.raises(SubscriptionError) as raised:
        Subscription.parse(_sub(endpoint="https://127.0.0.1/x"), Reach())
    assert "loopback" in str(raised.value)
    assert Vapid.parse(VAPID_KEY, SUBJECT).public_key == VAPID_PUBLIC
    assert from_env({"GATEWAY_VAPID_KEY": VAPID_KEY, "GATEWAY_VAPID_SUBJECT": SUBJECT}).vapid_key == VAPID_KEY
    with pytest.raises(ConfigError, match="GATEWAY_VAPID_KEY"):
        from_env({"GATEWAY_VAPID_KEY": "short", "GATEWAY_VAPID_SUBJECT": SUBJECT})
    with pytest.raises(ConfigError, match="GATEWAY_VAPID_SUBJECT"):
        from_env({"GATEWAY_VAPID_KEY": VAPID_KEY, "GATEWAY_VAPID_SUBJECT": "ops@domino.example"})


def test_the_outbox_keeps_one_subscription_a_seat_and_forgets_only_the_one_gone(store_url: str) -> None:
    from api_gateway.notify.outbox import open_outbox

    outbox = open_outbox(store_url)
    now, match = time.time(), os.urandom(16).hex()
    outbox.subscribe(match, 0, b'{"a":1}', now)
    outbox.subscribe(match, 0, b'{"a":2}', now)  # a new browser replaces the seat's last
    outbox.subscribe(match, 1, b'{"b":1}', now)
    assert outbox.subscriptions(match, now) == {0: b'{"a":2}', 1: b'{"b":1}'}
    assert not outbox.forget(match, 0, b'{"a":1}')  # gone: the old one, replaced meanwhile: the new one stays
    assert outbox.forget(match, 0, b'{"a":2}') and outbox.forget(match, 1) and not outbox.forget(match, 1)
    assert outbox.subscriptions(match, now) == {}
    outbox.close()
