"""Player assertions: how a host app proves that a seat is taken by one of its users.

The host app signs, on its own server, a **JWT** (RFC 7519) naming its user, and
the user's client passes it on when it takes a seat (docs/security.md, "Player
assertions"). Any language's JWT library makes one:

- header: ``alg`` the algorithm of the key, ``kid`` the key's id (which host app
  key signed it);
- claims: ``sub`` the user's id in the app (1-64 of ``A-Z a-z 0-9 . _ ~ @ + -``),
  ``exp`` (required; at most a year ahead) and ``iat`` (required), optional
  ``nbf``, ``iss`` (the host app's name) and ``aud`` (when present it must name
  `AUDIENCE`). Other claims are ignored.

The operator holds the keys (``GATEWAY_PLAYER_KEYS``, `PlayerKeys.parse`), each
pinned to one algorithm: an HMAC secret signs and checks **HS256** only, an
Ed25519 public key checks **EdDSA** only (the host app keeps the private key), so
neither ``none`` nor one key read as another (alg confusion) is ever accepted.

`sign_assertion` signs one as a host app would (``python -m api_gateway.archive sign-player``).
The service's own older format, ``p1.<kid>.<user>.<expires>.<tag>`` (HMAC keys
only), is still read while host apps move over (`PlayerKeys.sign` makes one).

Every assertion has exactly one spelling: base64url without padding, digits
without sign or leading zeros, a user matched whole. Anything else, however
malformed, is a `PlayerIdError` (400 invalid-player), never another exception.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PREFIX_APP = "app:"
#: A host app's user id: 1-64 of these, matched whole (safe in a URL path, an email address fits).
USER = re.compile(r"[A-Za-z0-9._~@+-]{1,64}")
_KID = re.compile(r"[A-Za-z0-9_-]{1,32}")
#: The longest an assertion may be valid for: a year.
MAX_LIFETIME = 366 * 24 * 3600
#: The longest assertion read (the join and seek bodies allow as much).
MAX_LENGTH = 1000
#: Seconds a host app's clock may be off from the service's.
LEEWAY = 30
#: What an assertion's optional ``aud`` must name.
AUDIENCE = "domino-engine"
HS256, EDDSA = "HS256", "EdDSA"
#: RFC 7518: an HS256 key is at least as long as the hash. A shorter key (16+ bytes) checks only the old format.
HS256_MIN_KEY = 32
_JWS = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
_P1 = re.compile(r"p1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{2,86})\.([1-9][0-9]{0,11})\.([A-Za-z0-9_-]{43})")
#: NumericDates beyond this are refused rather than compared (no float overflow, no year 285 million).
_MAX_DATE = 2**53
_VERIFIER = jwt.PyJWS()


class PlayerIdError(ValueError):
    """Not a player id, or an assertion that does not prove one (says which)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes | None:
    """The bytes of `text` when it is their one base64url spelling (no padding, no stray bits), else None."""
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return data if _b64(data) == text else None


def _message(kid: str, user: str, expires: int) -> bytes:
    return f"domino-player:v1:{kid}:{user}:{expires}".encode()


def _key_text(text: str, ed25519_half: str) -> tuple[str, str, bytes]:
    """The id, algorithm and bytes of a key's text, ``kid:base64secret`` (HS256) or
    ``kid:ed25519:base64key`` (EdDSA: the raw 32 bytes of the key's `ed25519_half`, public or private)."""
    kid, _, rest = text.partition(":")
    kind, _, b64 = rest.rpartition(":")  # "ed25519:<key>", or "<key>": an HMAC secret
    if not _KID.fullmatch(kid) or not b64 or kind not in ("", "ed25519"):
        raise PlayerIdError(f"player key {kid[:32]!r}: expected kid:base64key or kid:ed25519:base64key, "
                            "kid of 1-32 of A-Z a-z 0-9 _ -")
    try:
        key = base64.b64decode(b64, validate=True)
    except binascii.Error:
        raise PlayerIdError(f"player key {kid!r}: not base64") from None
    if kind == "ed25519" and len(key) != 32:
        raise PlayerIdError(f"player key {kid!r}: an Ed25519 {ed25519_half} key is 32 bytes (raw), not {len(key)}")
    return kid, EDDSA if kind == "ed25519" else HS256, key


def sign_assertion(signing_key: str, user: str, lifetime: int = 24 * 3600, now: float | None = None) -> str:
    """A player assertion as a host app's server signs one: a JWT naming `user` (``sub``), good for
    `lifetime` seconds from `now` (``iat``, ``exp``), for this service (``aud``), its header's ``kid`` the key's.

    `signing_key` is the host app's half of a key: ``kid:base64secret``, the HMAC secret the operator
    holds too (HS256, at least `HS256_MIN_KEY` bytes), or ``kid:ed25519:base64privatekey``, the raw 32
    bytes of the Ed25519 private key whose public half the operator holds (EdDSA). What
    ``python -m api_gateway.archive sign-player`` prints; a host app uses its own JWT library
    (docs/security.md, "Player assertions"). PlayerIdError for a user id or a key that cannot be used."""
    if not USER.fullmatch(user):
        raise PlayerIdError("user: 1-64 of A-Z a-z 0-9 . _ ~ @ + -")
    if not 0 < lifetime <= MAX_LIFETIME:
        raise PlayerIdError(f"lifetime: 1 to {MAX_LIFETIME} seconds (a year)")
    kid, algorithm, key = _key_text(signing_key, "private")
    secret: bytes | Ed25519PrivateKey = key
    if algorithm == EDDSA:
        secret = Ed25519PrivateKey.from_private_bytes(key)
    elif len(key) < HS256_MIN_KEY:
        raise PlayerIdError(f"player key {kid!r}: shorter than {HS256_MIN_KEY} bytes, too short for HS256")
    issued = int(time.time() if now is None else now)
    claims = {"sub": user, "iat": issued, "exp": issued + lifetime, "aud": AUDIENCE}
    return jwt.encode(claims, secret, algorithm=algorithm, headers={"kid": kid})


@dataclass(frozen=True, slots=True)
class PlayerKey:
    """One host app key: its id, the one algorithm it takes, and the key (an HMAC secret, or the raw
    32 bytes of an Ed25519 public key)."""

    kid: str
    algorithm: str
    key: bytes
    jwk: jwt.PyJWK = field(compare=False, repr=False)

    @classmethod
    def parse(cls, text: str) -> PlayerKey:
        """``kid:base64secret`` (HMAC, 16 bytes or more; 32 for JWTs) or ``kid:ed25519:base64publickey``."""
        kid, algorithm, key = _key_text(text, "public")
        if algorithm == EDDSA:
            jwk = {"kty": "OKP", "crv": "Ed25519", "x": _b64(key), "alg": EDDSA}
        elif len(key) < 16:
            raise PlayerIdError(f"player key {kid!r}: at least 16 bytes")
        else:
            jwk = {"kty": "oct", "k": _b64(key), "alg": HS256}
        try:
            return cls(kid, jwk["alg"], key, jwt.PyJWK(jwk))
        except jwt.PyJWTError as exc:
            raise PlayerIdError(f"player key {kid!r}: not a usable key ({exc})") from None


@dataclass(frozen=True, slots=True)
class PlayerKeys:
    """The keys host apps sign player assertions with, newest first."""

    keys: tuple[PlayerKey, ...]

    @classmethod
    def parse(cls, text: str) -> PlayerKeys:
        """``GATEWAY_PLAYER_KEYS``: comma-separated `PlayerKey` texts, ids unique."""
        keys: list[PlayerKey] = []
        for part in (p.strip() for p in text.split(",") if p.strip()):
            key = PlayerKey.parse(part)
            if any(key.kid == k.kid for k in keys):
                raise PlayerIdError(f"player key {key.kid!r} given twice")
            keys.append(key)
        if not keys:
            raise PlayerIdError("no player key given")
        return cls(tuple(keys))

    def _key(self, kid: str) -> PlayerKey:
        for key in self.keys:
            if key.kid == kid:
                return key
        raise PlayerIdError(f"player: signed with key {kid[:32]!r}, which the service does not hold")

    def verify(self, assertion: object, now: float | None = None) -> str:
        """The player id (``app:<user>``) an assertion proves; PlayerIdError when it proves none."""
        if not isinstance(assertion, str) or len(assertion) > MAX_LENGTH:
            raise PlayerIdError(f"player: not a player assertion (a JWT of at most {MAX_LENGTH} characters)")
        moment = time.time() if now is None else now
        if assertion.startswith("p1."):
            return PREFIX_APP + self._verify_p1(assertion, moment)
        return PREFIX_APP + self._verify_jwt(assertion, moment)

    # ------------------------------------------------------------ JWT

    def _verify_jwt(self, token: str, now: float) -> str:
        if not _JWS.fullmatch(token) or any(_unb64(part) is None for part in token.split(".")):
            raise PlayerIdError("player: not a player assertion: a JWT is three base64url parts without padding")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise PlayerIdError(f"player: the JWT's header is garbled ({exc})") from None
        kid, alg = header.get("kid"), header.get("alg")
        if not isinstance(kid, str):
            raise PlayerIdError("player: the JWT names no key (header `kid`)")
        key = self._key(kid)
        if alg != key.algorithm:
            raise PlayerIdError(f"player: key {kid!r} takes {key.algorithm} only, the JWT says {str(alg)[:16]!r}")
        if key.algorithm == HS256 and len(key.key) < HS256_MIN_KEY:
            raise PlayerIdError(f"player: key {kid!r} is shorter than {HS256_MIN_KEY} bytes, too short for HS256 "
                                "(it checks only old p1 assertions)")
        try:
            payload = _VERIFIER.decode_complete(token, key.jwk, algorithms=[key.algorithm])["payload"]
        except jwt.PyJWTError:
            raise PlayerIdError("player: the JWT's signature does not check") from None
        try:
            claims = json.loads(payload)
        except (ValueError, RecursionError):
            claims = None
        if not isinstance(claims, dict):
            raise PlayerIdError("player: the JWT's claims are not a JSON object")
        return _checked_claims(claims, now)

    # ------------------------------------------------------------ the old format

    def sign(self, user: str, lifetime: int = 24 * 3600, now: float | None = None) -> str:
        """An old-format assertion naming `user`, good for `lifetime` seconds, signed with the newest key
        (an HMAC one): what a host app not yet on JWTs does."""
        if not USER.fullmatch(user):
            raise PlayerIdError("user: 1-64 of A-Z a-z 0-9 . _ ~ @ + -")
        key = self.keys[0]
        if key.algorithm != HS256:
            raise PlayerIdError(f"player key {key.kid!r} is a public key: only the host app signs with it")
        expires = int(time.time() if now is None else now) + lifetime
        tag = hmac.new(key.key, _message(key.kid, user, expires), hashlib.sha256).digest()
        return ".".join(("p1", key.kid, _b64(user.encode()), str(expires), _b64(tag)))

    def _verify_p1(self, assertion: str, now: float) -> str:
        shape = _P1.fullmatch(assertion)
        if shape is None:
            raise PlayerIdError("player: the assertion is garbled (p1.kid.user.expires.signature, in its one "
                                "spelling: base64url without padding, expires in plain digits)")
        kid, user_b64, expires_text, tag_b64 = shape.groups()
        key = self._key(kid)
        if key.algorithm != HS256:
            raise PlayerIdError(f"player: key {kid!r} checks JWTs only ({key.algorithm})")
        user_bytes, tag = _unb64(user_b64), _unb64(tag_b64)
        try:
            user = user_bytes.decode("ascii") if user_bytes is not None else ""
        except UnicodeDecodeError:
            user = ""
        expires = int(expires_text)
        if tag is None or not USER.fullmatch(user) or not hmac.compare_digest(
                tag, hmac.new(key.key, _message(kid, user, expires), hashlib.sha256).digest()):
            raise PlayerIdError("player: the assertion's signature does not check")
        _check_lifetime(expires, None, now)
        return user


def _numeric_date(claims: dict[str, Any], name: str) -> float | None:
    """A NumericDate claim (seconds since 1970, a JSON number), or None when absent."""
    if name not in claims:
        return None
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not abs(value) <= _MAX_DATE:  # NaN too
        raise PlayerIdError(f"player: the JWT's `{name}` is not a time in seconds")
    return float(value)


def _check_lifetime(expires: float, issued: float | None, now: float) -> None:
    if expires <= now - LEEWAY:
        raise PlayerIdError("player: the assertion has expired; ask the host app for a new one")
    if expires > now + LEEWAY + MAX_LIFETIME or (issued is not None and expires - issued > MAX_LIFETIME):
        raise PlayerIdError("player: the assertion is valid for more than a year")


def _checked_claims(claims: dict[str, Any], now: float) -> str:
    """The user a JWT's verified claims name, when they are complete, well typed and current."""
    sub = claims.get("sub")
    if not isinstance(sub, str) or not USER.fullmatch(sub):
        raise PlayerIdError("player: the JWT's `sub` is not a user id (1-64 of A-Z a-z 0-9 . _ ~ @ + -)")
    expires, issued, not_before = (_numeric_date(claims, name) for name in ("exp", "iat", "nbf"))
    if expires is None or issued is None:
        raise PlayerIdError("player: the JWT lacks `exp` or `iat`, which are required")
    if issued > now + LEEWAY or (not_before is not None and not_before > now + LEEWAY):
        raise PlayerIdError("player: the JWT is not valid yet (`iat` or `nbf` ahead of the service's clock)")
    _check_lifetime(expires, issued, now)
    if "iss" in claims and not isinstance(claims["iss"], str):
        raise PlayerIdError("player: the JWT's `iss` is not a string")
    audience = claims.get("aud", AUDIENCE)
    if audience != AUDIENCE and not (isinstance(audience, list) and AUDIENCE in audience):
        raise PlayerIdError(f"player: the JWT is meant for another service (`aud` must name {AUDIENCE!r})")
    return sub
