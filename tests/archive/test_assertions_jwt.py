"""Player assertions as standard JWTs (issue 39 part 7; docs/security.md "Player assertions"): signed by PyJWT
as a host app would, with an HMAC secret (HS256) or an Ed25519 key (EdDSA) picked by `kid`, each key pinned to
its algorithm; the old `p1.` format still read; one spelling of each (issue 37 item 8); any malformed input a
PlayerIdError (400 invalid-player through a real gateway), never another exception."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from gateway.conftest import EngineProc, Gateway, gateway_env, launch_gateway, start_engine
from hypothesis import given, settings
from hypothesis import strategies as st

from api_gateway.archive.assertions import AUDIENCE, MAX_LIFETIME, PlayerKey, PlayerKeys
from api_gateway.archive.players import PlayerIdError, check_player_id

SECRET = b"host-app-secret-of-32-bytes-0001"
SHORT_SECRET = b"sixteen-bytes-01"
PRIVATE = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"the host app's ed25519 seed").digest())
PUBLIC_RAW = PRIVATE.public_key().public_bytes_raw()
KEYS_TEXT = ",".join((f"h1:{base64.b64encode(SECRET).decode()}",
                      f"e1:ed25519:{base64.b64encode(PUBLIC_RAW).decode()}",
                      f"old:{base64.b64encode(SHORT_SECRET).decode()}"))
KEYS = PlayerKeys.parse(KEYS_TEXT)
NOW = 1_800_000_000.0


def claims(user: str = "alice", **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"sub": user, "iat": int(NOW), "exp": int(NOW) + 3600}
    base.update(extra)
    return {k: v for k, v in base.items() if v is not None}


def hs256(payload: dict[str, Any], kid: str = "h1", secret: bytes = SECRET, alg: str = "HS256") -> str:
    return jwt.encode(payload, secret, algorithm=alg, headers={"kid": kid})


def eddsa(payload: dict[str, Any], kid: str = "e1", private: Ed25519PrivateKey = PRIVATE) -> str:
    return jwt.encode(payload, private, algorithm="EdDSA", headers={"kid": kid})


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def p1(user: str, expires: str, kid: str = "h1", secret: bytes = SECRET) -> str:
    """The old format, as a host app's own code signs it (docs/tables.md before JWTs)."""
    tag = hmac.new(secret, f"domino-player:v1:{kid}:{user}:{expires}".encode(), hashlib.sha256).digest()
    return f"p1.{kid}.{b64(user.encode())}.{expires}.{b64(tag)}"


def refused(assertion: object, message: str) -> None:
    with pytest.raises(PlayerIdError, match=message):
        KEYS.verify(assertion, NOW)


# ---------------------------------------------------------------- what is accepted

def test_a_jwt_signed_with_either_kind_of_key_names_its_player() -> None:
    assert KEYS.verify(hs256(claims("alice@example.com")), NOW) == "app:alice@example.com"
    assert KEYS.verify(eddsa(claims("bob")), NOW) == "app:bob"
    full = claims("carol", iss="kozel-club", aud=AUDIENCE, nbf=int(NOW) - 5, name="Carol", roles=["x"])
    assert KEYS.verify(hs256(full), NOW) == KEYS.verify(eddsa(full), NOW) == "app:carol"
    assert KEYS.verify(eddsa(claims("dan", aud=["another-service", AUDIENCE])), NOW) == "app:dan"
    # a host clock a little ahead of the service's is fine; a lifetime of exactly a year too
    assert KEYS.verify(hs256(claims("eve", iat=int(NOW) + 20, exp=int(NOW) + 20 + MAX_LIFETIME)), NOW) == "app:eve"


def test_the_old_format_is_still_read_in_its_one_spelling() -> None:
    expires = str(int(NOW) + 3600)
    assert KEYS.verify(p1("alice", expires), NOW) == "app:alice"
    assert KEYS.verify(p1("bob", expires, "old", SHORT_SECRET), NOW) == "app:bob"     # a 16-byte key of before
    assert KEYS.verify(PlayerKeys.parse(KEYS_TEXT).sign("carol", 60, NOW), NOW) == "app:carol"
    good = p1("alice", expires)
    head, kid, user, _, tag = good.split(".")
    # issue 37: one signed assertion was accepted in 7 spellings; each is refused now
    for spelling in (f"{head}.{kid}.{user}.+{expires}.{tag}", f"{head}.{kid}.{user}.0{expires}.{tag}",
                     f"{head}.{kid}.{user}. {expires}.{tag}", f"{head}.{kid}.{user}.{expires}_.{tag}",
                     good + "=", good + "==", good + "\n", " " + good, f"{head}.{kid}.{user}=.{expires}.{tag}",
                     good[:-1] + chr(ord(good[-1]) ^ 1)):   # the same tag bytes, other stray bits
        refused(spelling, "garbled|signature|not a player assertion")
    # a user with a trailing newline, signed as such by a host app: not a user id
    refused(p1("alice\n", expires), "signature")
    refused("p1." + good[3:].replace(expires, "٣" * 10), "garbled")  # other digits than 0-9


# ---------------------------------------------------------------- what is refused, and why

@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")   # short keys, on purpose
def test_expired_forged_foreign_and_unpinned_jwts_are_refused() -> None:
    refused(hs256(claims(exp=int(NOW) - 100)), "expired")
    refused(eddsa(claims(exp=int(NOW) - 100)), "expired")
    refused(hs256(claims(), secret=b"another-secret-of-32-bytes-00002"), "signature does not check")
    refused(eddsa(claims(), private=Ed25519PrivateKey.generate()), "signature does not check")
    refused(hs256(claims(), kid="nope"), "does not hold")
    refused(jwt.encode(claims(), SECRET, algorithm="HS256"), "names no key")
    unsigned = jwt.encode(claims(), None, algorithm="none", headers={"kid": "h1"})  # type: ignore[arg-type]
    refused(unsigned, "not a player assertion")          # no signature: not even a JWS
    refused(unsigned + "AA", "takes HS256 only")         # any signature: `none` is no key's algorithm
    refused(hs256(claims(), alg="HS512"), "takes HS256 only")
    refused(hs256(claims(), kid="e1", secret=PUBLIC_RAW), "takes EdDSA only")   # alg confusion
    refused(eddsa(claims(), kid="h1"), "takes HS256 only")
    refused(hs256(claims(), kid="old", secret=SHORT_SECRET), "too short for HS256")
    # a real EdDSA signature, header swapped to another key's kid: the signature no longer checks
    token = eddsa(claims())
    other_header = base64.urlsafe_b64encode(b'{"alg":"EdDSA","kid":"e1","typ":"JWT","x":1}').rstrip(b"=")
    refused(other_header.decode() + token[token.index("."):], "signature does not check")
    # an old-format assertion under an Ed25519 key's id
    refused(p1("alice", str(int(NOW) + 60), kid="e1"), "checks JWTs only")


@pytest.mark.parametrize(("payload", "message"), [
    (claims(exp=None), "lacks `exp` or `iat`"),
    (claims(iat=None), "lacks `exp` or `iat`"),
    (claims(sub=None), "`sub` is not a user id"),
    (claims("alice\n"), "`sub` is not a user id"),
    (claims(""), "`sub` is not a user id"),
    (claims("a" * 65), "`sub` is not a user id"),
    (claims("al ice"), "`sub` is not a user id"),
    (claims(sub=7), "`sub` is not a user id"),
    (claims(exp=int(NOW) + MAX_LIFETIME + 3600, iat=int(NOW)), "more than a year"),
    (claims(exp=int(NOW) + 3600, iat=int(NOW) - MAX_LIFETIME), "more than a year"),
    (claims(iat=int(NOW) + 3600, exp=int(NOW) + 7200), "not valid yet"),
    (claims(nbf=int(NOW) + 3600), "not valid yet"),
    (claims(exp="1800003600"), "`exp` is not a time"),
    (claims(exp=True), "`exp` is not a time"),
    (claims(exp=10**400), "`exp` is not a time"),
    (claims(iat=[1]), "`iat` is not a time"),
    (claims(iss=42), "`iss` is not a string"),
    (claims(aud="another-service"), "meant for another service"),
    (claims(aud=["another-service"]), "meant for another service"),
    (claims(aud={"x": AUDIENCE}), "meant for another service"),
])
def test_claims_that_are_missing_wrong_or_out_of_bounds_are_refused(payload: dict[str, Any], message: str) -> None:
    for algorithm, kid in (("HS256", "h1"), ("EdDSA", "e1")):   # signed as is (PyJWT would not sign some)
        refused(_signed_raw(json.dumps({"alg": algorithm, "kid": kid}).encode(), json.dumps(payload).encode()),
                message)


def test_a_jwt_has_one_spelling() -> None:
    token = hs256(claims())
    head, body, signature = token.split(".")
    for spelling in (token + "=", token + "\n", " " + token, f"Bearer {token}", f"{head}.{body}.{signature}==",
                     f"{head}=.{body}.{signature}", f"{head}.{body}.{signature[:-1]}{chr(ord(signature[-1]) ^ 1)}",
                     token.replace("-", "+").replace("_", "/") if "-" in token or "_" in token else token + "+",
                     f"{head}.{body}.{signature}.extra", f"{head}.{body}"):
        refused(spelling, "not a player assertion")
    refused("x" * 1001, "at most 1000")
    for garbage in ("", "garbage", "a.b.c", "eyJ9.e30.AA", "e30.e30.AA", None, 7, ["p1"], b"p1.h1"):
        with pytest.raises(PlayerIdError):
            KEYS.verify(garbage, NOW)
    refused(_signed_raw(b'{"alg":"HS256","kid":"h1"}', b"[1,2]"), "not a JSON object")
    refused(_signed_raw(b'{"alg":"HS256","kid":"h1"}', b"{not json"), "not a JSON object")
    refused(_signed_raw(b'{"alg":"HS256","kid":7}', b"{}"), "garbled")
    refused(_signed_raw(b'{"alg":"HS256","kid":"h1","crit":["exp"]}', b"{}"), "garbled")


def _signed_raw(header: bytes, payload: bytes) -> str:
    """A compact JWS over exactly these bytes, signed with the Ed25519 key when the header says EdDSA, else with
    the HMAC secret (what no library would make)."""
    signing_input = f"{b64(header)}.{b64(payload)}".encode()
    signature = PRIVATE.sign(signing_input) if b'"EdDSA"' in header else hmac.new(SECRET, signing_input,
                                                                                  hashlib.sha256).digest()
    return f"{signing_input.decode()}.{b64(signature)}"


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                 st.tuples(st.sampled_from([hs256(claims()), eddsa(claims()), p1("alice", str(int(NOW) + 60))]),
                           st.integers(0, 400), st.text(max_size=3))
                 .map(lambda t: t[0][:t[1]] + t[2] + t[0][t[1] + len(t[2]):])))
def test_any_text_is_a_player_or_a_player_id_error(text: str) -> None:
    """Nothing anyone sends makes anything but a PlayerIdError (a 400): no 500 from a malformed assertion.
    A changed assertion proves nothing (the same text still proves its player)."""
    originals = {hs256(claims()), eddsa(claims()), p1("alice", str(int(NOW) + 60))}
    try:
        player = KEYS.verify(text, NOW)
    except PlayerIdError:
        return
    assert text in originals and player == "app:alice"


def test_the_keys_setting_names_each_kind_and_refuses_what_is_not_one() -> None:
    assert [(k.kid, k.algorithm) for k in KEYS.keys] == [("h1", "HS256"), ("e1", "EdDSA"), ("old", "HS256")]
    for text, message in [("nokid", "expected kid"), ("k:", "expected kid"), ("k:hmac:QUFB", "expected kid"),
                          ("k:rsa:QUFB", "expected kid"), ("k:ed25519:", "expected kid"), ("k:a:b:c", "expected kid"),
                          ("k:ed25519:" + base64.b64encode(b"x" * 31).decode(), "32 bytes"),
                          ("k:ed25519:not base64!", "not base64"), ("k1:c2hvcnQ=", "at least 16 bytes"),
                          ("a b:" + base64.b64encode(SECRET).decode(), "expected kid"),
                          (f"h1:{base64.b64encode(SECRET).decode()},h1:ed25519:{base64.b64encode(PUBLIC_RAW).decode()}",
                           "given twice"), ("", "no player key")]:
        with pytest.raises(PlayerIdError, match=message):
            PlayerKeys.parse(text)
    with pytest.raises(PlayerIdError, match="public key"):
        PlayerKeys((PlayerKey.parse(f"e1:ed25519:{base64.b64encode(PUBLIC_RAW).decode()}"),)).sign("alice")


def test_player_ids_are_matched_whole() -> None:
    for bad in ("app:alice\n", "guest:" + "A" * 22 + "\n"):
        with pytest.raises(PlayerIdError):
            check_player_id(bad)


# ---------------------------------------------------------------- the docs' examples, as pasted

def _docs_blocks(language: str) -> list[str]:
    """The code blocks of docs/security.md's "Player assertions", as pasted."""
    text = (Path(__file__).parents[2] / "docs" / "security.md").read_text()
    section = text[text.index("## Player assertions"):text.index("## Other protections")]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def test_the_docs_examples_sign_assertions_the_gateway_accepts() -> None:
    (make_key,), (hmac_block, ed25519_block) = _docs_blocks("sh"), _docs_blocks("python")
    setting = subprocess.run(["sh", "-c", make_key + 'echo "$GATEWAY_PLAYER_KEYS"'], capture_output=True, text=True,
                             check=True, timeout=60).stdout.strip()
    assert re.fullmatch(r"app1:[A-Za-z0-9+/]{43}=", setting)
    token = subprocess.run([sys.executable, "-c", hmac_block], env={**os.environ, "DOMINO_PLAYER_KEY": setting},
                           capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    assert PlayerKeys.parse(setting).verify(token) == "app:alice@example.com"
    printed = subprocess.run([sys.executable, "-c", ed25519_block], capture_output=True, text=True, check=True,
                             timeout=60).stdout.split()
    assert printed[0].startswith("GATEWAY_PLAYER_KEYS=app2:ed25519:")
    assert PlayerKeys.parse(printed[0].split("=", 1)[1]).verify(printed[1]) == "app:bob"


# ---------------------------------------------------------------- through a real gateway

@pytest.fixture(scope="module")
def engine() -> Iterator[EngineProc]:
    found = start_engine()
    yield found
    found.stop()


@pytest.fixture(scope="module")
def gateway(engine: EngineProc, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = launch_gateway(engine.address, "--workers", "1",
                        env=gateway_env(tmp_path_factory.mktemp("assertions"), GATEWAY_PLAYER_KEYS=KEYS_TEXT))
    yield gw
    gw.stop()


def _ok(reply: Any, status: int = 200) -> Any:
    assert reply.status == status, (reply.status, reply.body[:500])
    return reply.json


def _open_table(gw: Gateway) -> Any:
    return _ok(gw.post("/v1/tables", {"variant": "kozel", "players": 4, "seats": [
        {"kind": "open"}, {"kind": "open"}, {"kind": "bot", "level": "random"}, {"kind": "bot", "level": "random"}]}),
        201)


@pytest.mark.service
def test_jwts_of_each_key_and_an_old_assertion_seat_players_at_a_table(gateway: Gateway) -> None:
    now = int(time.time())
    live = {"iat": now, "exp": now + 600}
    table = _open_table(gateway)
    seats = [_ok(gateway.post(f"/v1/tables/{table['table_id']}/join", {
        "invite": invite["code"], "name": user, "player": assertion}))
        for invite, user, assertion in zip(table["invites"], ("alice", "bob"), (
            hs256({"sub": "alice", **live}), eddsa({"sub": "bob", "aud": AUDIENCE, **live})), strict=True)]
    assert [s["player_id"] for s in seats] == ["app:alice", "app:bob"]
    assert seats[-1]["match_id"] is not None          # both seats taken: the match is dealt
    shown = _ok(gateway.get(f"/v1/tables/{table['table_id']}", headers={"Authorization": f"Bearer {table['host_key']}"}))
    assert shown["status"] == "playing"
    older = _open_table(gateway)
    joined = _ok(gateway.post(f"/v1/tables/{older['table_id']}/join", {
        "invite": older["invites"][0]["code"], "name": "carol", "player": p1("carol", str(now + 600))}))
    assert joined["player_id"] == "app:carol"


@pytest.mark.service
def test_a_bad_assertion_is_a_400_and_takes_no_seat(gateway: Gateway) -> None:
    now = int(time.time())
    live = {"sub": "mallory", "iat": now, "exp": now + 600}
    table = _open_table(gateway)
    host = {"Authorization": f"Bearer {table['host_key']}"}
    before = _ok(gateway.get(f"/v1/tables/{table['table_id']}", headers=host))
    invite = table["invites"][0]["code"]
    for assertion, message in [
            (hs256({**live, "iat": now - 700, "exp": now - 100}), "expired"),
            (hs256(live, secret=b"another-secret-of-32-bytes-00002"), "signature"),
            (eddsa(live, private=Ed25519PrivateKey.generate()), "signature"),
            (hs256(live, kid="nope"), "does not hold"),
            (jwt.encode(live, None, algorithm="none", headers={"kid": "h1"}) + "AA",  # type: ignore[arg-type]
             "HS256 only"),
            (hs256(live, kid="e1", secret=PUBLIC_RAW), "EdDSA only"),
            (hs256(live) + "=", "not a player assertion"),
            (p1("mallory", "0" + str(now + 600)), "garbled"),
            ("p1." + "٣" * 40, "garbled")]:
        for path, body in ((f"/v1/tables/{table['table_id']}/join", {"invite": invite, "player": assertion}),
                           ("/v1/seek", {"variant": "kozel", "players": 2, "player": assertion})):
            reply = gateway.post(path, body)
            assert reply.status == 400 and reply.content_type == "application/problem+json", (path, reply.body)
            assert reply.json["type"] == "/v1/problems/invalid-player" and message in reply.json["detail"], reply.json
    assert _ok(gateway.get(f"/v1/tables/{table['table_id']}", headers=host)) == before     # no seat taken
