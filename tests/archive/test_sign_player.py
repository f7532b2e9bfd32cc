"""`python -m api_gateway.archive sign-player USER` prints a player assertion as a host app's server signs one:
a JWT, HS256 with an HMAC secret or EdDSA with an Ed25519 private key (`assertions.sign_assertion`), which the
operator's keys (`PlayerKeys`, GATEWAY_PLAYER_KEYS) accept; no longer the old `p1.` format."""
from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from api_gateway.archive.assertions import AUDIENCE, PlayerIdError, PlayerKeys, sign_assertion

SECRET = base64.b64encode(b"host-app-secret-of-32-bytes-0001").decode()
PRIVATE = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"sign-player's ed25519 seed").digest())
PRIVATE_TEXT = "e1:ed25519:" + base64.b64encode(PRIVATE.private_bytes_raw()).decode()
PUBLIC_TEXT = "e1:ed25519:" + base64.b64encode(PRIVATE.public_key().public_bytes_raw()).decode()
OPERATOR = PlayerKeys.parse(f"{PUBLIC_TEXT},h1:{SECRET}")


def sign_player(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("DOMINO_PLAYER_KEY", "GATEWAY_PLAYER_KEYS")}
    return subprocess.run([sys.executable, "-m", "api_gateway.archive", "sign-player", *args],
                          env={**clean, **env}, capture_output=True, text=True, timeout=120)


def test_an_hmac_secret_signs_an_hs256_jwt_the_operator_accepts() -> None:
    done = sign_player("alice@example.com", GATEWAY_PLAYER_KEYS=f"h1:{SECRET},{PUBLIC_TEXT}")
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert not token.startswith("p1.")
    assert jwt.get_unverified_header(token) == {"alg": "HS256", "kid": "h1", "typ": "JWT"}
    assert OPERATOR.verify(token) == "app:alice@example.com"


def test_an_ed25519_private_key_signs_an_eddsa_jwt_its_public_half_checks() -> None:
    done = sign_player("bob", "--lifetime", "600", DOMINO_PLAYER_KEY=PRIVATE_TEXT,
                       GATEWAY_PLAYER_KEYS=PUBLIC_TEXT)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert jwt.get_unverified_header(token)["alg"] == "EdDSA"
    assert OPERATOR.verify(token) == "app:bob"
    claims = jwt.decode(token, PRIVATE.public_key(), algorithms=["EdDSA"], audience=AUDIENCE)
    assert claims["exp"] - claims["iat"] == 600 and claims["sub"] == "bob"


def test_what_cannot_sign_is_said_and_exits_2() -> None:
    for env, message in [({}, "no signing key"),
                         ({"GATEWAY_PLAYER_KEYS": PUBLIC_TEXT}, "public key, which cannot sign"),
                         ({"DOMINO_PLAYER_KEY": "h2:" + base64.b64encode(b"sixteen-bytes-01").decode()},
                          "too short for HS256")]:
        done = sign_player("alice", **env)
        assert (done.returncode, done.stdout) == (2, ""), done
        assert message in done.stderr, done.stderr
    done = sign_player("not a user", DOMINO_PLAYER_KEY=f"h1:{SECRET}")
    assert done.returncode == 2 and "user: 1-64" in done.stderr


def test_an_assertion_lives_its_lifetime_and_no_longer() -> None:
    now = time.time()
    token = sign_assertion(f"h1:{SECRET}", "carol", 60, now)
    assert OPERATOR.verify(token, now + 59) == "app:carol"
    with pytest.raises(PlayerIdError, match="expired"):
        OPERATOR.verify(token, now + 60 + 31)       # past exp and the 30 s leeway
    with pytest.raises(PlayerIdError, match="lifetime"):
        sign_assertion(f"h1:{SECRET}", "carol", 0, now)
