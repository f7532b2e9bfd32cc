"""The archive's settings, player ids and cursors: what the gateway checks at start and what a host app
and a client hand it."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from api_gateway.archive import cursor
from api_gateway.archive.players import PLAYER_ID, PlayerIdError, PlayerKeys, check_player_id, guest_id
from api_gateway.archive.service import Archive
from api_gateway.config import ConfigError, GatewayConfig, from_env
from api_gateway.server import prepare

KEYS = "k2:" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=" + ",k1:" + "QkJCQkJCQkJCQkJCQkJCQg=="


def test_the_gateways_master_does_not_import_prometheus_client() -> None:
    """gunicorn's master sets the metrics directory after `api_gateway.server` ran; prometheus-client
    imported before that would make every worker's /metrics empty."""
    probe = "import json, sys\nimport api_gateway.server\nprint(json.dumps('prometheus_client' in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) is False


def test_settings_of_the_archive(tmp_path: Path) -> None:
    cfg = from_env({"GATEWAY_DATABASE": "postgresql://u:p@db:5432/archive", "GATEWAY_DATABASE_TIMEOUT": "2.5",
                    "GATEWAY_ARCHIVE_RETRY": "0.5", "GATEWAY_PLAYER_KEYS": KEYS})
    assert (cfg.database, cfg.database_timeout, cfg.archive_retry, cfg.player_keys) == (
        "postgresql://u:p@db:5432/archive", 2.5, 0.5, KEYS)
    assert from_env({}).database == "" and from_env({}).archive_retry == 2.0
    with pytest.raises(ConfigError, match="GATEWAY_DATABASE_TIMEOUT"):
        from_env({"GATEWAY_DATABASE_TIMEOUT": "0"})


@pytest.mark.parametrize(("env", "message"), [
    ({"GATEWAY_DATABASE": "mysql://x/y"}, "GATEWAY_DATABASE: mysql"),
    ({"GATEWAY_DATABASE": "sqlite:///relative.db"}, "absolute"),
    ({"GATEWAY_DATABASE": "not a url"}, "GATEWAY_DATABASE"),
    ({"GATEWAY_PLAYER_KEYS": "k1:c2hvcnQ="}, "GATEWAY_PLAYER_KEYS: player key 'k1': at least 16 bytes"),
    ({"GATEWAY_PLAYER_KEYS": "nokid"}, "GATEWAY_PLAYER_KEYS"),
])
def test_the_gateway_refuses_unusable_archive_settings_at_start(env: dict[str, str], message: str,
                                                                tmp_path: Path) -> None:
    environ = {"GATEWAY_TOKEN_STORE": f"sqlite:///{tmp_path / 'live.sqlite3'}",
               "GATEWAY_DATABASE": f"sqlite:///{tmp_path / 'archive.sqlite3'}", **env}
    with pytest.raises(ConfigError, match=message):
        prepare(["--port", "0"], environ)


def test_a_host_app_vouches_for_its_user_with_a_signed_assertion() -> None:
    keys = PlayerKeys.parse(KEYS)
    now = time.time()
    assertion = keys.sign("alice@example.com", 3600, now)
    assert keys.verify(assertion, now) == "app:alice@example.com"
    assert PLAYER_ID.match("app:alice@example.com")
    older = PlayerKeys.parse(KEYS.split(",")[1]).sign("bob", 60, now)   # a key still held, not the newest
    assert keys.verify(older, now) == "app:bob"
    head, kid, user, expires, tag = assertion.split(".")
    forged_user = ".".join((head, kid, "Ym9i", expires, tag))           # "bob" with alice's signature
    later = ".".join((head, kid, user, str(int(expires) + 3600), tag))  # a longer life, same signature
    for bad, message in [(forged_user, "signature"), (later, "signature"), (assertion[:-2], "signature|garbled"),
                         ("p1.zz." + assertion.split(".", 2)[2], "does not hold"), ("garbage", "not a player"),
                         (keys.sign("carol", 10, now - 100), "expired"),
                         (keys.sign("dan", 400 * 24 * 3600, now), "more than a year")]:
        with pytest.raises(PlayerIdError, match=message):
            keys.verify(bad, now)
    with pytest.raises(PlayerIdError):
        keys.sign("no spaces please")


def test_a_seat_is_taken_by_a_vouched_player_or_a_new_guest(tmp_path: Path) -> None:
    """`Archive.player_for`: what the tables call when a seat is taken."""
    def archive(keys: str) -> Archive:
        return Archive.from_config(GatewayConfig(database=f"sqlite:///{tmp_path / 'a.sqlite3'}",
                                                 token_store=f"sqlite:///{tmp_path / 'live.sqlite3'}",
                                                 player_keys=keys), lambda variant: "K")

    vouching, guests_only = archive(KEYS), archive("")
    try:
        assertion = PlayerKeys.parse(KEYS).sign("alice")
        assert vouching.player_for(assertion) == "app:alice"
        assert vouching.player_for(None).startswith("guest:") and guests_only.player_for(None) != guests_only.player_for(None)
        with pytest.raises(PlayerIdError, match="holds no host app key"):
            guests_only.player_for(assertion)
        with pytest.raises(PlayerIdError, match="signature"):
            vouching.player_for(PlayerKeys.parse("other:" + "Q0NDQ0NDQ0NDQ0NDQ0NDQw==").sign("alice")
                                .replace("p1.other.", "p1.k2."))
    finally:
        vouching.close()
        guests_only.close()


def test_guest_ids_are_random_and_valid() -> None:
    ids = {guest_id() for _ in range(100)}
    assert len(ids) == 100 and all(check_player_id(i) == i for i in ids)
    for bad in ("alice", "app:", "app:a b", "guest:short", "app:" + "x" * 65):
        with pytest.raises(PlayerIdError):
            check_player_id(bad)


def test_cursors_round_trip_and_refuse_what_is_not_theirs() -> None:
    token = cursor.encode(["leaderboard", "K", "skill"], [3, 12.5, "app:z"])
    assert cursor.decode(token, ["leaderboard", "K", "skill"], [int, float, str]) == [3, 12.5, "app:z"]
    for text, scope, types in [(token, ["leaderboard", "O", "skill"], [int, float, str]),
                               (token, ["leaderboard", "K", "skill"], [int, str]),
                               (token, ["leaderboard", "K", "skill"], [int, int, str]),
                               ("!!!", ["x"], [int]), ("e30", ["x"], [int]), ("x" * 600, ["x"], [int])]:
        with pytest.raises(cursor.BadCursor):
            cursor.decode(text, scope, types)
