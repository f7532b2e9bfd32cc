"""Web Push for the play page (RFC 8030): a seat's browser subscription, checked; the gateway's VAPID key
(RFC 8292, ``GATEWAY_VAPID_KEY``); a message encrypted for the subscription (RFC 8291, ``aes128gcm``) and
posted to its push service.

A subscription is what the browser's ``PushManager.subscribe`` answers (``subscription.toJSON()``)::

    {"endpoint": "https://push.example/...", "keys": {"p256dh": "<base64url P-256 point>", "auth": "<base64url 16 bytes>"}}

Its endpoint is reached as a webhook's is (`endpoints.Reach`: https only, public addresses only, unless the
development settings allow), the name resolved and checked at every send.
"""
from __future__ import annotations

import base64
import binascii
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from api_gateway.notify.endpoints import Endpoint, EndpointError, Reach, check_url

Json = dict[str, Any]
#: The longest endpoint URL taken (push services' are a few hundred characters).
MAX_ENDPOINT = 2048
#: Seconds a push service keeps a message for a browser that is offline (RFC 8030 TTL).
TTL = 24 * 3600
#: Seconds a VAPID token is good for (RFC 8292: at most a day).
TOKEN_LIFE = 12 * 3600


class SubscriptionError(ValueError):
    """A subscription that is not a valid push subscription: `field` names the member (``keys.p256dh``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class VapidError(ValueError):
    """A VAPID setting that cannot be used."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    """base64url with or without its padding (binascii.Error, ValueError when it is not)."""
    if not text.isascii() or any(c in text for c in "+/"):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True, slots=True)
class Subscription:
    """A browser's push subscription: its push service's endpoint and the keys its messages are encrypted to."""

    endpoint: str
    p256dh: str
    auth: str

    @classmethod
    def parse(cls, value: object, reach: Reach) -> Subscription:
        """A subscription from its JSON form, checked (`SubscriptionError` naming the member at fault)."""
        if not isinstance(value, dict):
            raise SubscriptionError("subscription", 'an object: {"endpoint": "https://...", "keys": '
                                                    '{"p256dh": "...", "auth": "..."}}')
        endpoint = value.get("endpoint")
        if not isinstance(endpoint, str) or not endpoint or len(endpoint) > MAX_ENDPOINT:
            raise SubscriptionError("endpoint", f"the push service's https:// URL (at most {MAX_ENDPOINT} characters)")
        try:
            check_url("push", endpoint, reach)
        except EndpointError as exc:
            raise SubscriptionError("endpoint", str(exc).replace("webhook 'push': ", "")) from None
        keys = value.get("keys")
        if not isinstance(keys, dict):
            raise SubscriptionError("keys", 'an object: {"p256dh": "...", "auth": "..."}')
        p256dh, auth = keys.get("p256dh"), keys.get("auth")
        try:
            point = unb64url(p256dh) if isinstance(p256dh, str) else b""
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
            if len(point) != 65:
                raise ValueError("not an uncompressed point")
        except (binascii.Error, ValueError):
            raise SubscriptionError("keys.p256dh", "the browser's P-256 public key: an uncompressed point (65 bytes), "
                                                   "base64url") from None
        try:
            secret = unb64url(auth) if isinstance(auth, str) else b""
        except (binascii.Error, ValueError):
            secret = b""
        if len(secret) != 16:
            raise SubscriptionError("keys.auth", "the browser's authentication secret: 16 bytes, base64url")
        return cls(endpoint, str(p256dh), str(auth))

    def to_json(self) -> Json:
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}

    def dump(self) -> bytes:
        return orjson.dumps(self.to_json())

    @classmethod
    def load(cls, data: bytes) -> Subscription:
        found = orjson.loads(data)
        return cls(found["endpoint"], found["keys"]["p256dh"], found["keys"]["auth"])

    def target(self) -> Endpoint:
        """The endpoint as a delivery reaches it (`sender.exchange`)."""
        return Endpoint("push", self.endpoint, ())


@dataclass(frozen=True)
class Vapid:
    """The gateway's VAPID key pair and subject (``mailto:`` or ``https:``), which push services check."""

    key: ec.EllipticCurvePrivateKey
    subject: str

    @classmethod
    def parse(cls, key_text: str, subject: str) -> Vapid:
        """``GATEWAY_VAPID_KEY``: the private key as base64url of its 32 raw bytes (what `web-push
        generate-vapid-keys` prints as the private key) or PEM; ``GATEWAY_VAPID_SUBJECT``: a mailto: or https: URL."""
        text = key_text.strip()
        try:
            if text.startswith("-----BEGIN"):
                loaded = serialization.load_pem_private_key(text.encode(), None)
                if not isinstance(loaded, ec.EllipticCurvePrivateKey) or loaded.curve.name != "secp256r1":
                    raise ValueError("not a P-256 key")
                key = loaded
            else:
                raw = unb64url(text)
                if len(raw) != 32:
                    raise ValueError(f"{len(raw)} bytes, not 32")
                key = ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())
        except (binascii.Error, ValueError, TypeError) as exc:
            raise VapidError(f"GATEWAY_VAPID_KEY: a P-256 private key, base64url of its 32 bytes or PEM ({exc})") from None
        if not (subject.startswith("mailto:") and "@" in subject) and not subject.startswith("https://"):
            raise VapidError(f"GATEWAY_VAPID_SUBJECT: a mailto: address or an https:// URL, not {subject!r}")
        return cls(key, subject)

    @property
    def public_key(self) -> str:
        """The public key as the page's ``applicationServerKey`` takes it: base64url of the uncompressed point."""
        return b64url(self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                         serialization.PublicFormat.UncompressedPoint))

    def authorization(self, endpoint: str, now: float | None = None) -> str:
        """The ``Authorization: vapid t=<JWT>, k=<public key>`` header for a push to `endpoint`."""
        import jwt

        parts = urlsplit(endpoint)
        audience = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        issued = int(time.time() if now is None else now)
        token = jwt.encode({"aud": audience, "exp": issued + TOKEN_LIFE, "sub": self.subject}, self.key,
                           algorithm="ES256")
        return f"vapid t={token}, k={self.public_key}"


def encrypt(subscription: Subscription, payload: bytes) -> bytes:
    """The payload encrypted for the subscription's browser (RFC 8291, ``aes128gcm``: a fresh ECDH key and salt)."""
    from pywebpush import WebPusher

    encoded = WebPusher(subscription.to_json()).encode(payload, "aes128gcm")
    body: bytes = encoded["body"]
    return body


def headers(vapid: Vapid, subscription: Subscription, urgency: str = "high") -> dict[str, str]:
    """The headers of a push message (its body `encrypt`ed)."""
    return {"authorization": vapid.authorization(subscription.endpoint), "content-encoding": "aes128gcm",
            "content-type": "application/octet-stream", "ttl": str(TTL), "urgency": urgency}
