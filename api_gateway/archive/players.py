"""Player ids: one the host app vouches for, or a guest id the service makes.

A rating means something only when the same person gets the same id match after
match. The service keeps no accounts; two kinds of id, told apart by prefix:

- ``app:<user>``: the host app's own user id, **signed** by the host app with a
  key it shares with the operator (``GATEWAY_PLAYER_KEYS``, ``kid:base64key,...``
  newest first, as the state-token keys). The app hands its user a *player
  assertion* and the user's client passes it on when it takes a seat::

      assertion = "p1." kid "." base64url(user) "." expires "." base64url(HMAC-SHA256(key, message))
      message   = "domino-player:v1:" kid ":" user ":" expires

  ``expires`` is a unix time (seconds): an assertion is good until then (say a
  day), so a leaked one does not name its user for ever. `PlayerKeys.sign` makes
  one (the same 6 lines in any language), `PlayerKeys.verify` checks it and
  answers the player id.
- ``guest:<22 characters>``: 128 random bits the service makes for a seat taken
  without an assertion (`guest_id`). A guest keeps its id as long as its client
  keeps it; it is rated like anyone else.

`user` is 1-64 characters of ``A-Z a-z 0-9 . _ ~ @ + -`` (an email address
fits); anything else is refused, so an id is always safe in a URL path.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass

PREFIX_APP = "app:"
PREFIX_GUEST = "guest:"
PLAYER_ID = re.compile(r"^(?:app:[A-Za-z0-9._~@+-]{1,64}|guest:[A-Za-z0-9_-]{22})$")
_USER = re.compile(r"^[A-Za-z0-9._~@+-]{1,64}$")
_KID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
VERSION = "p1"
#: The longest an assertion may be valid for: a year.
MAX_LIFETIME = 366 * 24 * 3600


class PlayerIdError(ValueError):
    """Not a player id, or an assertion that does not prove one (says which)."""


def check_player_id(player: str) -> str:
    """`player` itself when it is a player id, else PlayerIdError."""
    if not isinstance(player, str) or not PLAYER_ID.match(player):
        raise PlayerIdError(f"not a player id: {str(player)[:80]!r} (app:<user> or guest:<22 characters>)")
    return player


def guest_id() -> str:
    """A new guest id: 128 random bits."""
    return PREFIX_GUEST + base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b"=").decode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _message(kid: str, user: str, expires: int) -> bytes:
    return f"domino-player:v1:{kid}:{user}:{expires}".encode()


@dataclass(frozen=True, slots=True)
class PlayerKeys:
    """The keys host apps sign player assertions with, newest first (the first signs)."""

    keys: tuple[tuple[str, bytes], ...]

    @classmethod
    def parse(cls, text: str) -> PlayerKeys:
        """``kid:base64key,...``: at least 16 bytes a key, ids unique."""
        keys: list[tuple[str, bytes]] = []
        for part in (p.strip() for p in text.split(",") if p.strip()):
            kid, sep, b64 = part.partition(":")
            if not sep or not _KID.match(kid):
                raise PlayerIdError(f"player key {kid!r}: expected kid:base64key, kid of 1-32 of A-Z a-z 0-9 _ -")
            try:
                key = base64.b64decode(b64, validate=True)
            except binascii.Error:
                raise PlayerIdError(f"player key {kid!r}: not base64") from None
            if len(key) < 16:
                raise PlayerIdError(f"player key {kid!r}: at least 16 bytes")
            if any(kid == k for k, _ in keys):
                raise PlayerIdError(f"player key {kid!r} given twice")
            keys.append((kid, key))
        if not keys:
            raise PlayerIdError("no player key given")
        return cls(tuple(keys))

    def sign(self, user: str, lifetime: int = 24 * 3600, now: float | None = None) -> str:
        """An assertion naming `user`, good for `lifetime` seconds (what the host app does)."""
        if not _USER.match(user):
            raise PlayerIdError("user: 1-64 of A-Z a-z 0-9 . _ ~ @ + -")
        kid, key = self.keys[0]
        expires = int(time.time() if now is None else now) + lifetime
        tag = hmac.new(key, _message(kid, user, expires), hashlib.sha256).digest()
        return ".".join((VERSION, kid, _b64(user.encode()), str(expires), _b64(tag)))

    def verify(self, assertion: str, now: float | None = None) -> str:
        """The player id (``app:<user>``) an assertion proves; PlayerIdError when it proves none."""
        parts = assertion.split(".") if isinstance(assertion, str) and len(assertion) < 512 else []
        if len(parts) != 5 or parts[0] != VERSION:
            raise PlayerIdError("player: not a player assertion (p1.kid.user.expires.signature)")
        _, kid, user_b64, expires_text, tag_b64 = parts
        key = dict(self.keys).get(kid)
        if key is None:
            raise PlayerIdError(f"player: signed with key {kid[:32]!r}, which the service does not hold")
        try:
            user = _unb64(user_b64).decode()
            tag = _unb64(tag_b64)
            expires = int(expires_text)
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise PlayerIdError("player: the assertion is garbled") from None
        if not _USER.match(user) or not hmac.compare_digest(tag, hmac.new(
                key, _message(kid, user, expires), hashlib.sha256).digest()):
            raise PlayerIdError("player: the assertion's signature does not check")
        moment = time.time() if now is None else now
        if expires < moment:
            raise PlayerIdError("player: the assertion has expired; ask the host app for a new one")
        if expires > moment + MAX_LIFETIME:
            raise PlayerIdError("player: the assertion is valid for more than a year")
        return PREFIX_APP + user
