"""Sealed state tokens: the match state encrypted and authenticated, plus per-seat keys.

In sealed mode the client never sees the state, only an opaque token:

    token = "v1." kid "." base64url(nonce[12] || AES-GCM(key[kid], nonce, envelope, aad))
    aad   = "domino-state-token:v1:" kid
    envelope = 0x02 || match_id[16] || secret[16] || seq[4, big endian] || GameState bytes (the engine's sealed game)

(Envelope version 1, ``0x01 || match_id[16] || secret[32] || seq[8] || state``, is what gateways
before issue 27 sealed: such tokens still open, and their matches go on in version 1, since their
seat keys are made from the 32-byte secret. Version 2 is 20 bytes (26-27 characters) shorter: a
128-bit secret is as strong as the 128-bit seat key tags made from it, and 2^32 versions are more
than any match makes.)

- AES-GCM (the `cryptography` package) with a random 96-bit nonce per token:
  confidentiality (no hand, no boneyard order, no seed readable) and integrity
  (a changed, truncated or spliced token fails to open). The key id is bound as
  associated data, so a token cannot be relabelled to another key.
- Key rotation: `KeyRing` holds several keys, newest first. Tokens are sealed
  with the newest and opened with whichever key their id names, so tokens
  issued before a rotation keep working until their key is retired; every
  answer carries a token under the newest key.
- `secret` is random per match and travels only inside the token. A seat key is
  ``"<seat>.<base64url(HMAC-SHA256(secret, "seat:<seat>")[:16])>"`` and the host
  key ``"host.<...HMAC(secret, "host")...>"``: whoever holds a seat key proves it
  may act as that seat, and seat keys survive key rotation (they do not depend
  on the server keys).
- `seq` counts the state changes since the match was created: with `match_id`
  it names one version of one match, which is what an operator needs to refuse
  replayed old tokens (docs/security.md).

Opening failures are `TokenError` (HTTP 400) and wrong keys `SeatKeyError` (403);
both are raised before the engine is called.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import os
import re
import secrets
import struct
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = [
    "HOST",
    "KeyRing",
    "KeyRingError",
    "Principal",
    "Sealed",
    "SeatKeyError",
    "TokenError",
    "host_key",
    "new_sealed",
    "principal_for",
    "seat_key",
]

log = logging.getLogger("api_gateway.tokens")

VERSION = "v1"
_NONCE = 12
_TAG = 16
_MATCH_ID = 16
_SECRET = 16
#: The envelope's header by its version (its first byte), and the version by the secret's length: a
#: match keeps the envelope it was created with (version 1: gateways before issue 27).
_HEADERS = {1: struct.Struct(f">B{_MATCH_ID}s32sQ"), 2: struct.Struct(f">B{_MATCH_ID}s{_SECRET}sI")}
_VERSION_BY_SECRET = {32: 1, _SECRET: 2}
_SHORTEST = min(h.size for h in _HEADERS.values())
_KID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_SEAT = re.compile(r"[0-9]{1,3}")
_KEY_TAG = 16           # bytes of HMAC kept in a seat key (128 bits)
MAX_TOKEN_CHARS = 65536  # far above any real state (a long match is a few KiB)
HOST = "host"


class TokenError(ValueError):
    """The token cannot be opened: altered, truncated, foreign, or sealed with a retired key."""


class SeatKeyError(PermissionError):
    """The seat key is not one of this match's keys."""


class KeyRingError(ValueError):
    """The configured keys cannot be used (names what is wrong, never the key)."""


@dataclass(frozen=True, slots=True)
class Sealed:
    """What a token carries: which match, its per-match secret, its version and the state."""

    match_id: bytes
    secret: bytes
    seq: int
    state: bytes  # a serialized domino.v1.GameState (earlier tokens: a bare MatchState or KingdominoState)

    @property
    def match_id_hex(self) -> str:
        return self.match_id.hex()

    def advanced(self, state: bytes) -> Sealed:
        """The next version of the same match, holding `state`."""
        return Sealed(self.match_id, self.secret, self.seq + 1, state)


def new_sealed(state: bytes) -> Sealed:
    """A new match's first version: fresh random match id and secret."""
    return Sealed(secrets.token_bytes(_MATCH_ID), secrets.token_bytes(_SECRET), 0, state)


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


#: base64url to the standard alphabet for `binascii.a2b_base64`; the standard alphabet's own "+" and "/",
#: and "=", become "*", which the strict decoder refuses like any other character outside the alphabet.
_FROM_URLSAFE = bytes.maketrans(b"-_+/=", b"+/***")
#: The last character of a canonical unpadded encoding, by its length mod 4: its bits past the data's end
#: (4 of them after 2 characters, 2 after 3) are zero, as `_b64encode` writes them.
_CANONICAL_LAST = {2: frozenset(b"AQgw"), 3: frozenset(b"AEIMQUYcgkosw048")}


def _b64decode(text: str) -> bytes:
    """Canonical unpadded base64url only (binascii.Error on anything else).

    Canonical: the decoder would ignore stray low bits in the last character, so
    two spellings would decode alike; only the one `_b64encode` writes is accepted.
    Checked without encoding the result again: the strict decoder refuses any
    character outside the alphabet (after mapping base64url's onto the standard one)
    and a length of 1 mod 4, and the last character's unused bits must be zero.
    """
    data = text.encode("ascii")  # UnicodeEncodeError (a ValueError) for anything else
    rest = len(data) % 4
    if rest in _CANONICAL_LAST and data[-1] not in _CANONICAL_LAST[rest]:
        raise binascii.Error("not canonical base64url")
    return binascii.a2b_base64(data.translate(_FROM_URLSAFE) + b"=" * (-rest % 4), strict_mode=True)


def _aad(kid: str) -> bytes:
    return f"domino-state-token:{VERSION}:{kid}".encode()


class KeyRing:
    """AES-GCM keys by id, newest first: seal with the newest, open with any."""

    def __init__(self, keys: list[tuple[str, bytes]]) -> None:
        if not keys:
            raise KeyRingError("no keys")
        self._keys: dict[str, AESGCM] = {}
        for kid, key in keys:
            if not _KID.match(kid):
                raise KeyRingError(f"key id {kid!r}: use 1-32 of A-Z a-z 0-9 _ -")
            if kid in self._keys:
                raise KeyRingError(f"key id {kid!r} is given twice")
            if len(key) not in (16, 24, 32):
                raise KeyRingError(f"key {kid!r} has {len(key)} bytes; AES needs 16, 24 or 32 (use 32)")
            self._keys[kid] = AESGCM(key)
        self.current = keys[0][0]

    @property
    def ids(self) -> list[str]:
        return list(self._keys)

    @classmethod
    def parse(cls, text: str) -> KeyRing:
        """``"kid1:base64key,kid2:base64key"``, newest first (standard or url-safe base64)."""
        keys: list[tuple[str, bytes]] = []
        for i, item in enumerate(part.strip() for part in text.split(",")):
            if not item:
                continue
            kid, sep, encoded = item.partition(":")
            if not sep:
                raise KeyRingError(f"key {i + 1}: expected kid:base64key")
            text = encoded.strip().replace("-", "+").replace("_", "/")
            try:
                key = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
            except binascii.Error:
                raise KeyRingError(f"key {kid.strip()!r}: not base64") from None
            keys.append((kid.strip(), key))
        return cls(keys)

    @classmethod
    def development(cls) -> KeyRing:
        """One random key for this process only: tokens die with it, and workers do not share it."""
        log.warning("sealed mode uses a random per-process key (GATEWAY_DEV_TOKEN_KEY): tokens "
                    "do not survive a restart and are not shared between workers; set STATE_TOKEN_KEYS")
        return cls([(f"dev-{secrets.token_hex(4)}", AESGCM.generate_key(bit_length=256))])

    @staticmethod
    def generate(kid: str) -> str:
        """A new ``kid:base64key`` entry (for operators: prepend it to STATE_TOKEN_KEYS)."""
        return f"{kid}:{base64.b64encode(os.urandom(32)).decode('ascii')}"

    def seal(self, sealed: Sealed) -> str:
        """The token for `sealed`, under the newest key."""
        kid = self.current
        version = _VERSION_BY_SECRET[len(sealed.secret)]
        envelope = _HEADERS[version].pack(version, sealed.match_id, sealed.secret, sealed.seq) + sealed.state
        nonce = os.urandom(_NONCE)
        box = self._keys[kid].encrypt(nonce, envelope, _aad(kid))
        return f"{VERSION}.{kid}.{_b64encode(nonce + box)}"

    def open(self, token: object) -> Sealed:
        """The content of `token`; TokenError when it is not an intact token of ours."""
        if not isinstance(token, str) or not token or not token.isascii():
            raise TokenError("token: expected the token string of a previous answer")
        if len(token) > MAX_TOKEN_CHARS:
            raise TokenError("token: too long")
        version, _, rest = token.partition(".")
        kid, _, body = rest.partition(".")
        if version != VERSION or not kid or not body:
            raise TokenError("token: not a state token (expected v1.<key id>.<data>)")
        aead = self._keys.get(kid)
        if aead is None:
            raise TokenError("token: sealed with a key this service does not hold (retired or foreign)")
        try:
            raw = _b64decode(body)
        except (binascii.Error, ValueError):
            raise TokenError("token: data is not base64url") from None
        if len(raw) < _NONCE + _TAG + _SHORTEST:
            raise TokenError("token: truncated")
        try:
            envelope = aead.decrypt(raw[:_NONCE], raw[_NONCE:], _aad(kid))
        except InvalidTag:
            raise TokenError("token: altered or not issued by this service") from None
        header = _HEADERS.get(envelope[0])
        if header is None or len(envelope) < header.size:  # authentic, so ours: from a newer gateway
            raise TokenError(f"token: envelope version {envelope[0]} is not supported here")
        _, match_id, secret, seq = header.unpack_from(envelope)
        return Sealed(match_id, secret, seq, envelope[header.size:])


def _tag(secret: bytes, label: str) -> str:
    return _b64encode(hmac.new(secret, label.encode(), hashlib.sha256).digest()[:_KEY_TAG])


def seat_key(sealed: Sealed, seat: int) -> str:
    """The key that lets its holder act as `seat` in this match (and only see that seat's view)."""
    return f"{seat}.{_tag(sealed.secret, f'seat:{seat}')}"


def host_key(sealed: Sealed) -> str:
    """The key of the match's host: sees only public information, may time out a seat, deal next."""
    return f"{HOST}.{_tag(sealed.secret, HOST)}"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a sealed request acts as: a seat (0-based), or the host (seat None)."""

    seat: int | None

    @property
    def is_host(self) -> bool:
        return self.seat is None

    @property
    def label(self) -> str:
        return HOST if self.seat is None else f"seat {self.seat}"


def principal_for(sealed: Sealed, key: object) -> Principal:
    """Check `key` against the match's secret; SeatKeyError unless it is one of its keys.

    A key names its seat and is an HMAC of that seat under the match's secret, so only
    the keys handed out when the match was created (one per seat, and the host's) pass.
    """
    if not isinstance(key, str) or not key.isascii() or "." not in key:
        raise SeatKeyError("seat_key: not a key of this match")
    who, _, _ = key.partition(".")
    if who == HOST:
        expected = host_key(sealed)
        principal = Principal(None)
    elif _SEAT.fullmatch(who):
        seat = int(who)
        expected = seat_key(sealed, seat)
        principal = Principal(seat)
    else:
        raise SeatKeyError("seat_key: not a key of this match")
    if not hmac.compare_digest(key.encode(), expected.encode()):
        raise SeatKeyError("seat_key: not a key of this match")
    return principal
