"""The host apps' webhook endpoints (``GATEWAY_WEBHOOKS``) and which addresses a delivery may reach.

An endpoint is named by the **key id** (`kid`) of the host app's player-assertion key
(``GATEWAY_PLAYER_KEYS``): the app whose assertion vouched for a seat's player (``app:<user>``) is the
one told about that seat. The text is comma-separated entries::

    kid=https://host.example/hooks|whsec_base64secret[|whsec_oldsecret ...]

the first secret the newest. Every delivery is signed with each secret (Standard Webhooks lists several
signatures, space-separated), so a receiver moves to a new secret without losing a delivery.

Addresses: ``https`` only, to public addresses only. `Reach.insecure` (``GATEWAY_WEBHOOK_INSECURE``, for
development) allows plain ``http`` and loopback; `Reach.private` (``GATEWAY_WEBHOOK_PRIVATE``) allows
private, link-local and other non-public networks. The name is resolved at every send and each address
checked (`addresses`): a name that later resolves to a private address is refused then, and the
connection goes to the address checked (no second lookup to rebind).
"""
from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

_KID = re.compile(r"[A-Za-z0-9_-]{1,32}")
SECRET_PREFIX = "whsec_"


class EndpointError(ValueError):
    """A webhook setting that cannot be used, or an address a delivery may not reach (says which)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One host app's receiver: its key id, URL and signing secrets (newest first, ``whsec_...``)."""

    app: str
    url: str
    secrets: tuple[str, ...]

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def port(self) -> int:
        url = urlsplit(self.url)
        return url.port or (443 if url.scheme == "https" else 80)

    @property
    def target(self) -> str:
        """The request target: the URL's path and query."""
        url = urlsplit(self.url)
        return (url.path or "/") + (f"?{url.query}" if url.query else "")


@dataclass(frozen=True, slots=True)
class Reach:
    """Where deliveries may go: plain http and loopback (`insecure`), private networks (`private`)."""

    insecure: bool = False
    private: bool = False


def _secret(app: str, text: str) -> str:
    raw = text.strip()
    body = raw[len(SECRET_PREFIX):] if raw.startswith(SECRET_PREFIX) else raw
    try:
        key = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise EndpointError(f"webhook {app!r}: a secret is not base64 (whsec_<base64>)") from None
    if len(key) < 24:
        raise EndpointError(f"webhook {app!r}: a secret has {len(key)} bytes, at least 24 are needed")
    return SECRET_PREFIX + body


def parse(text: str, reach: Reach) -> dict[str, Endpoint]:
    """``GATEWAY_WEBHOOKS``: the endpoints by key id (EndpointError naming the entry that is wrong)."""
    found: dict[str, Endpoint] = {}
    for entry in (e.strip() for e in text.split(",") if e.strip()):
        app, eq, rest = entry.partition("=")
        url, *secrets = rest.split("|")
        app = app.strip()
        if not eq or not _KID.fullmatch(app):
            raise EndpointError(f"webhook {entry[:40]!r}: expected kid=https://host/path|whsec_secret")
        if app in found:
            raise EndpointError(f"webhook {app!r} given twice")
        if not secrets:
            raise EndpointError(f"webhook {app!r}: no secret (kid=url|whsec_secret)")
        check_url(app, url.strip(), reach)
        found[app] = Endpoint(app, url.strip(), tuple(_secret(app, s) for s in secrets))
    return found


def check_url(app: str, url: str, reach: Reach) -> None:
    """The URL's form: https (http only with `reach.insecure`), a host, no fragment or credentials; an
    address written as an IP literal is checked now too."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.fragment or parts.username:
        raise EndpointError(f"webhook {app!r}: {url[:80]!r} is not an https:// address")
    if parts.scheme == "http" and not reach.insecure:
        raise EndpointError(f"webhook {app!r}: plain http is allowed only with GATEWAY_WEBHOOK_INSECURE "
                            "(development)")
    try:
        parts.port  # noqa: B018  # a port that is not a number raises here
    except ValueError:
        raise EndpointError(f"webhook {app!r}: the port is not a number") from None
    try:
        literal = ipaddress.ip_address(parts.hostname)
    except ValueError:
        return
    allowed(app, literal, reach)


def allowed(app: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address, reach: Reach) -> None:
    """Refuse an address the settings do not let a delivery reach."""
    if address.is_loopback:
        if not reach.insecure:
            raise EndpointError(f"webhook {app!r}: {address} is a loopback address (allowed only with "
                                "GATEWAY_WEBHOOK_INSECURE)")
        return
    if not address.is_global and not reach.private:
        raise EndpointError(f"webhook {app!r}: {address} is a private or reserved address (allowed only "
                            "with GATEWAY_WEBHOOK_PRIVATE)")


def addresses(endpoint: Endpoint, reach: Reach) -> list[str]:
    """The endpoint's addresses now, each one allowed (EndpointError for the first that is not, or none)."""
    try:
        infos = socket.getaddrinfo(endpoint.host, endpoint.port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise EndpointError(f"webhook {endpoint.app!r}: {endpoint.host} does not resolve ({exc})") from None
    found: list[str] = []
    for info in infos:
        text = str(info[4][0]).partition("%")[0]
        allowed(endpoint.app, ipaddress.ip_address(text), reach)
        if text not in found:
            found.append(text)
    if not found:
        raise EndpointError(f"webhook {endpoint.app!r}: {endpoint.host} has no address")
    return found
