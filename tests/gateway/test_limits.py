"""Limits that ordinary players never meet (issue 37, `api_gateway.http.limits`): real gateways with small
limits set through their settings, called from several loopback addresses (127.0.0.2, 127.0.0.3 ...: the
gateway sees each as another client)."""
from __future__ import annotations

import base64
import http.client
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from api_gateway.archive.assertions import PlayerKeys
from api_gateway.config import ConfigError, GatewayConfig, from_env
from api_gateway.http.limits import address_key, limits_of
from bench.redis_server import RedisServer

from .conftest import EngineProc, Gateway, Reply, gateway_env, launch_gateway

Json = dict[str, Any]
PLAYER_KEYS = "k1:" + base64.b64encode(b"limits-test-key-of-32-bytes-0000").decode()
SMALL = {"GATEWAY_LIMIT_TABLES_PER_ADDRESS": "3/60", "GATEWAY_LIMIT_SEALED_PER_ADDRESS": "2/60",
         "GATEWAY_LIMIT_TICKETS_PER_CREDENTIAL": "2/60", "GATEWAY_LIMIT_INBOX_PER_ADDRESS": "3/60"}
KOZEL = {"variant": "kozel", "players": 4}


def call_from(gw: Gateway, address: str, method: str, path: str, body: Any = None,
              credential: str | None = None) -> Reply:
    """One request from the loopback address `address` (the client address the gateway sees)."""
    url = urlsplit(gw.url)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=20,
                                      source_address=(address, 0))
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if credential is not None:
        headers["Authorization"] = f"Bearer {credential}"
    try:
        conn.request(method, path, None if body is None else json.dumps(body), headers)
        r = conn.getresponse()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


def refused(reply: Reply, limit: str) -> None:
    """`reply` is the 429 of `limit`: a problem naming it, with a Retry-After within its minute."""
    assert reply.status == 429, (reply.status, reply.body[:300])
    assert reply.content_type == "application/problem+json"
    assert reply.json["type"] == "/v1/problems/rate-limited" and reply.json["limit"] == limit
    assert 1 <= int(reply.headers["retry-after"]) <= 60


def refusals(gw: Gateway, limit: str) -> float:
    found = re.search(rf'^domino_gateway_limit_refusals_total{{limit="{limit}"}} (\S+)$', gw.metrics(),
                      flags=re.MULTILINE)
    return float(found.group(1)) if found else 0.0


@pytest.fixture(scope="module")
def small_gw(engine_proc: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """Two workers on one SQLite store, with small limits."""
    gw = launch_gateway(engine_proc.address, "--workers", "2",
                        env=gateway_env(tmp_path_factory.mktemp("limits"), **SMALL))
    yield gw
    gw.stop()


def test_tables_over_the_limit_are_refused_with_retry_after_and_others_play_on(small_gw: Gateway) -> None:
    """An address opens 3 tables a minute (both workers count together), the 4th and 5th are 429
    rate-limited; another address opens its tables meanwhile."""
    for _ in range(3):
        assert call_from(small_gw, "127.0.0.2", "POST", "/v1/tables", KOZEL).status == 201
    refused(call_from(small_gw, "127.0.0.2", "POST", "/v1/tables", KOZEL), "tables-per-address")
    refused(call_from(small_gw, "127.0.0.2", "POST", "/v1/tables", KOZEL), "tables-per-address")
    assert call_from(small_gw, "127.0.0.3", "POST", "/v1/tables", KOZEL).status == 201
    assert call_from(small_gw, "127.0.0.2", "GET", "/v1/tables?limit=5").status == 200  # the lobby is not limited
    assert refusals(small_gw, "tables-per-address") == 2


def test_stream_tickets_are_limited_per_credential(small_gw: Gateway) -> None:
    opened = call_from(small_gw, "127.0.0.4", "POST", "/v1/tables", {**KOZEL, "seats": [
        {"kind": "open"}, {"kind": "open"}, {"kind": "bot"}, {"kind": "bot"}]}).json
    seats = [call_from(small_gw, "127.0.0.4", "POST", f"/v1/tables/{opened['table_id']}/join",
                       {"invite": invite["code"]}).json for invite in opened["invites"]]
    match_id, first, second = seats[1]["match_id"], seats[0]["credential"], seats[1]["credential"]
    path = f"/v1/matches/{match_id}/events/ticket"
    for _ in range(2):
        assert call_from(small_gw, "127.0.0.4", "POST", path, credential=first).status == 200
    refused(call_from(small_gw, "127.0.0.5", "POST", path, credential=first), "tickets-per-credential")
    assert call_from(small_gw, "127.0.0.4", "POST", path, credential=second).status == 200


def test_sealed_creates_are_limited_per_address_and_transparent_ones_are_not(small_gw: Gateway) -> None:
    sealed = {**KOZEL, "mode": "sealed", "seed": 7}
    for _ in range(2):
        assert call_from(small_gw, "127.0.0.6", "POST", "/v1/matches", sealed).status == 201
    refused(call_from(small_gw, "127.0.0.6", "POST", "/v1/matches", sealed), "sealed-per-address")
    for _ in range(3):  # a transparent match keeps nothing on the service
        assert call_from(small_gw, "127.0.0.6", "POST", "/v1/matches", {**KOZEL, "seed": 7}).status == 201


def test_seeks_are_counted_across_gateways_on_one_redis(engine_proc: EngineProc, tmp_path: Path) -> None:
    """Two gateways on one Redis count together: an address's 4 seeks a minute and a player's 3, whichever
    gateway and (for the player) whichever address they come through."""
    server = RedisServer(tmp_path)
    gws: list[Gateway] = []
    try:
        for name in ("a", "b"):
            gws.append(launch_gateway(engine_proc.address, "--workers", "1", env=gateway_env(
                tmp_path / name, server.url, GATEWAY_PLAYER_KEYS=PLAYER_KEYS,
                GATEWAY_LIMIT_SEEKS_PER_ADDRESS="4/60", GATEWAY_LIMIT_SEEKS_PER_PLAYER="3/60")))
        a, b = gws
        seek = {"variant": "kozel", "players": 4}
        for gw in (a, b, a, b):
            assert call_from(gw, "127.0.0.2", "POST", "/v1/seek", seek).status == 200
        refused(call_from(b, "127.0.0.2", "POST", "/v1/seek", seek), "seeks-per-address")
        refused(call_from(a, "127.0.0.2", "POST", "/v1/seek", seek), "seeks-per-address")
        anna = {**seek, "player": PlayerKeys.parse(PLAYER_KEYS).sign("anna", 3600)}
        for gw, address in ((a, "127.0.0.3"), (b, "127.0.0.4"), (a, "127.0.0.5")):
            assert call_from(gw, address, "POST", "/v1/seek", anna).status == 200
        refused(call_from(b, "127.0.0.6", "POST", "/v1/seek", anna), "seeks-per-player")
        assert call_from(b, "127.0.0.6", "POST", "/v1/seek", seek).status == 200  # that address, as a guest
        assert refusals(a, "seeks-per-address") + refusals(b, "seeks-per-address") == 2
    finally:
        for gw in gws:
            gw.stop()
        server.stop()


def test_a_store_that_cannot_count_lets_play_through(engine_proc: EngineProc, tmp_path: Path) -> None:
    """Counting fails (every write of a counter refused by the store) while tables are kept as ever: tables
    are opened past the limit, and the log says requests went uncounted, once."""
    store = tmp_path / "live.sqlite3"
    gw = launch_gateway(engine_proc.address, "--workers", "1", env=gateway_env(
        tmp_path, f"sqlite:///{store}", GATEWAY_LIMIT_TABLES_PER_ADDRESS="1/60"))
    try:
        assert call_from(gw, "127.0.0.2", "POST", "/v1/tables", KOZEL).status == 201  # the schema is made
        with sqlite3.connect(store) as conn:
            for change in ("INSERT", "UPDATE"):
                conn.execute(f"CREATE TRIGGER no_counting_{change} BEFORE {change} ON counters_s1 "
                             "BEGIN SELECT RAISE(ABORT, 'the disk is failing'); END")
        for _ in range(3):
            assert call_from(gw, "127.0.0.2", "POST", "/v1/tables", KOZEL).status == 201
        deadline = time.monotonic() + 5
        while "let through uncounted" not in gw.logs():
            assert time.monotonic() < deadline, gw.logs()[-2000:]
            time.sleep(0.05)
        assert gw.logs().count("let through uncounted") == 1  # a warning a minute, not one a request
    finally:
        gw.stop()


# ---------------------------------------------------------------- settings


def test_limit_settings_take_windows_or_off() -> None:
    cfg = from_env({"GATEWAY_LIMIT_TABLES_PER_ADDRESS": "5/10, 100/3600", "GATEWAY_LIMIT_SEEKS_PER_PLAYER": "off",
                    "GATEWAY_LIMIT_SEEKS_PER_ADDRESS": "7", "GATEWAY_LIMIT_TICKETS_PER_CREDENTIAL": "0"})
    assert cfg.limit_tables_per_address == ((5, 10), (100, 3600))
    assert cfg.limit_seeks_per_address == ((7, 60),)
    assert {limit.name for limit in limits_of(cfg)} == {"tables-per-address", "seeks-per-address",
                                                        "sealed-per-address", "inbox-per-address"}
    for bad in ("x", "5/0", "-1", "5/", "/60", "5/10,"):
        with pytest.raises(ConfigError, match="GATEWAY_LIMIT_TABLES_PER_ADDRESS"):
            from_env({"GATEWAY_LIMIT_TABLES_PER_ADDRESS": bad})


def test_inbox_reads_are_limited_per_address_get_and_post_together(small_gw: Gateway) -> None:
    """An inbox costs up to 150 store reads: an address reads 3 a minute here, by assertion or credentials alike
    (the 4th is 429 before anything is read); another address reads on."""
    opened = call_from(small_gw, "127.0.0.8", "POST", "/v1/tables", {**KOZEL, "seats": [
        {"kind": "open"}, {"kind": "bot"}, {"kind": "bot"}, {"kind": "bot"}]}).json
    seat = call_from(small_gw, "127.0.0.8", "POST", f"/v1/tables/{opened['table_id']}/join",
                     {"invite": opened["invites"][0]["code"]}).json
    guest = {"credentials": [seat["credential"]]}
    for _ in range(2):
        assert call_from(small_gw, "127.0.0.7", "POST", "/v1/inbox", guest).status == 200
    assert call_from(small_gw, "127.0.0.7", "GET", "/v1/inbox").status == 401  # counted too: no assertion
    refused(call_from(small_gw, "127.0.0.7", "POST", "/v1/inbox", guest), "inbox-per-address")
    refused(call_from(small_gw, "127.0.0.7", "GET", "/v1/inbox"), "inbox-per-address")
    assert call_from(small_gw, "127.0.0.9", "POST", "/v1/inbox", guest).status == 200


def test_the_defaults_limit_every_kind_and_leave_room_for_ordinary_play() -> None:
    """Every limit is on by default, and none lower than a person ever needs (a seek or a stream ticket a
    second; tables and sealed matches for a whole office behind one address)."""
    limits = {limit.name: limit for limit in limits_of(GatewayConfig())}
    assert set(limits) == {"tables-per-address", "seeks-per-address", "seeks-per-player",
                           "tickets-per-credential", "sealed-per-address", "inbox-per-address"}
    assert all(count / seconds >= 1 for limit in limits.values() for count, seconds in limit.windows)


@pytest.mark.parametrize(("address", "key"), [
    ("127.0.0.1", "127.0.0.1"),
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
    ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
    ("::ffff:10.0.0.7", "10.0.0.7"),
    ("not an address", "not an address"),
])
def test_an_ipv6_client_is_counted_by_its_64(address: str, key: str) -> None:
    assert address_key(address) == key
