"""Limits that ordinary players never meet (issue 37): what one client may open or ask for in a while.

One client opened 20,000 tables in 67 s, 2,000 seeks in 37 s and 5,000 stream tickets in 9.4 s,
and an ordinary player's create p99 went from 87 to 415 ms meanwhile. Each `Limit` here bounds
one kind of request, counted by one key, in fixed windows of the live store (`Counters.hit`:
shared by every worker and every gateway on one store):

| limit | requests | keyed by | setting (default) |
|---|---|---|---|
| tables-per-address | POST /v1/tables | the client address | GATEWAY_LIMIT_TABLES_PER_ADDRESS (600/60) |
| seeks-per-address | POST /v1/seek | the client address | GATEWAY_LIMIT_SEEKS_PER_ADDRESS (600/60) |
| seeks-per-player | POST /v1/seek | the player its assertion proves | GATEWAY_LIMIT_SEEKS_PER_PLAYER (60/60) |
| tickets-per-credential | POST /v1/matches/{id}/events/ticket | the Bearer credential | GATEWAY_LIMIT_TICKETS_PER_CREDENTIAL (60/60) |
| sealed-per-address | POST /v1/matches with "mode": "sealed" | the client address | GATEWAY_LIMIT_SEALED_PER_ADDRESS (1200/60) |
| inbox-per-address | GET and POST /v1/inbox (one count) | the client address | GATEWAY_LIMIT_INBOX_PER_ADDRESS (600/60) |

A request over one of its limits is answered ``429 rate-limited`` (`limit` names it, ``Retry-After``
the seconds left of its window) before anything else is done, after `REFUSAL_WAIT`, and counted in
``domino_gateway_limit_refusals_total{limit}``. Every request of a limited kind counts, whatever
it is answered (a refused one too: a flood that keeps knocking stays refused until its window ends).

- **The client address** is the connection's (`request.remote_addr`; the gateway trusts no
  forwarding header), an IPv6 address by its /64 (one subscriber's block: the host part is
  theirs to choose). Behind a proxy every client has the proxy's address: raise or switch off the
  per-address limits there (the per-player and per-credential ones still hold).
- **The player** is the id the body's `player` assertion proves, checked here (a few microseconds
  for HS256) before the request's own check; a request without one, or with one that does not
  check (the call answers 400 itself), meets the address limit only.
- **The credential** is kept as a digest, never as sent.

A store that does not answer while counting never refuses play: the request goes on uncounted
(a warning in the log at most once a minute per worker, with how many went uncounted).
"""
from __future__ import annotations

import hashlib
import ipaddress
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask, current_app, request

from api_gateway import metrics
from api_gateway.archive.players import PlayerIdError
from api_gateway.archive.routes import ARCHIVE
from api_gateway.config import GatewayConfig
from api_gateway.http.problems import Problem
from api_gateway.store import LiveStore, StoreUnavailable

log = logging.getLogger("api_gateway.http.limits")

#: Seconds between two warnings of one worker about requests it could not count.
WARN_EVERY = 60.0
#: Seconds a refusal waits before it is sent (a greenlet asleep: no CPU). A client that asks again at once,
#: without waiting for Retry-After, would otherwise be answered faster refused than served, and flood the
#: more for it (`domino bench flood`: 605 requests/s refused against 147/s served, and an ordinary player's
#: create p99 from 33 to 198 ms); with this wait one connection is refused at most 4 times a second. Under
#: the latency alert's 0.5 s (monitoring/rules), so a flood refused does not page anyone as slow calls.
REFUSAL_WAIT = 0.25
#: The routes limited (their URL rules, as Flask names them).
TABLES = "/v1/tables"
SEEK = "/v1/seek"
TICKET = "/v1/matches/<string:match_id>/events/ticket"
MATCHES = "/v1/matches"
INBOX = "/v1/inbox"

Windows = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Limit:
    """At most `count` requests `method` `rule` per `seconds`, for each of `windows`, counted by the key
    `by` makes of a request (`KEYS`; a request it makes none of is not counted by this limit)."""

    name: str
    method: str
    rule: str
    by: str
    windows: Windows


def limits_of(cfg: GatewayConfig) -> tuple[Limit, ...]:
    """The limits `cfg` sets (a limit set to off, with no windows, is left out)."""
    every = (
        Limit("tables-per-address", "POST", TABLES, "address", cfg.limit_tables_per_address),
        Limit("seeks-per-address", "POST", SEEK, "address", cfg.limit_seeks_per_address),
        Limit("seeks-per-player", "POST", SEEK, "player", cfg.limit_seeks_per_player),
        Limit("tickets-per-credential", "POST", TICKET, "credential", cfg.limit_tickets_per_credential),
        Limit("sealed-per-address", "POST", MATCHES, "sealed-address", cfg.limit_sealed_per_address),
        # a list costs up to 150 store reads: a phone asks when it opens, not in a loop (one count for both)
        Limit("inbox-per-address", "GET", INBOX, "address", cfg.limit_inbox_per_address),
        Limit("inbox-per-address", "POST", INBOX, "address", cfg.limit_inbox_per_address),
    )
    return tuple(limit for limit in every if limit.windows)


# ---------------------------------------------------------------- what a request is counted by


def address_key(address: str) -> str:
    """The key of a client address: itself, an IPv6 address its /64 (an IPv4 one mapped: the IPv4)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _address() -> str | None:
    return address_key(request.remote_addr or "")


def _sealed_address() -> str | None:
    body = request.get_json(silent=True)
    return _address() if isinstance(body, dict) and body.get("mode") == "sealed" else None


def _player() -> str | None:
    body = request.get_json(silent=True)
    assertion = body.get("player") if isinstance(body, dict) else None
    if not isinstance(assertion, str):
        return None
    try:
        player: str = current_app.extensions[ARCHIVE].player_for(assertion)
    except PlayerIdError:
        return None  # the call itself answers 400 invalid-player
    return player


def _credential() -> str | None:
    scheme, _, value = request.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None  # the call itself answers 401
    return hashlib.blake2b(value.strip().encode(), digest_size=16).hexdigest()


KEYS: dict[str, Callable[[], str | None]] = {
    "address": _address, "sealed-address": _sealed_address, "player": _player, "credential": _credential}


# ---------------------------------------------------------------- counting


class Guard:
    """Counts each limited request against its limits in `store`, and refuses one over any of them."""

    def __init__(self, store: LiveStore, limits: tuple[Limit, ...]) -> None:
        self.store = store
        self.by_route: dict[tuple[str, str], list[Limit]] = {}
        for limit in limits:
            self.by_route.setdefault((limit.method, limit.rule), []).append(limit)
        self._uncounted = 0
        self._warned = -math.inf
        self._lock = threading.Lock()

    def check(self) -> None:
        """The `before_request` hook: raises the 429 problem of the first limit the request is over."""
        rule = request.url_rule
        found = self.by_route.get((request.method, rule.rule)) if rule is not None else None
        for limit in found or ():
            key = KEYS[limit.by]()
            if key is None:
                continue
            for count, seconds in limit.windows:
                try:
                    seen, left = self.store.hit(f"limit:{limit.name}:{seconds}:{key}", seconds)
                except StoreUnavailable as exc:
                    self._let_through(exc)
                    return
                if seen > count:
                    metrics.LIMIT_REFUSALS.labels(limit.name).inc()
                    time.sleep(min(REFUSAL_WAIT, left))  # gevent's: this greenlet waits, the worker serves others
                    problem = Problem.of("rate-limited", f"{limit.name}: at most {count} of these requests "
                                         f"per {seconds} s; try again after Retry-After seconds", limit=limit.name)
                    problem.headers["Retry-After"] = str(max(1, math.ceil(left)))
                    raise problem

    def _let_through(self, exc: StoreUnavailable) -> None:
        """A request the store could not count goes on (a limit never refuses play); the log says so, at
        most once every `WARN_EVERY` seconds per worker."""
        now = time.monotonic()
        with self._lock:
            self._uncounted += 1
            if now - self._warned < WARN_EVERY:
                return
            uncounted, self._uncounted, self._warned = self._uncounted, 0, now
        log.warning("limits: %d request(s) let through uncounted, the live store did not answer: %s",
                    uncounted, exc)


def register(app: Flask, cfg: GatewayConfig, store: LiveStore | None) -> None:
    """Apply `cfg`'s limits to `app`'s requests (none without a live store: the calls limited need one and
    answer 501 without it). Call after the routes are registered: a limit of a route that does not exist
    is a mistake, refused here."""
    limits = limits_of(cfg)
    if store is None or not limits:
        return
    known = {(method, rule.rule) for rule in app.url_map.iter_rules() for method in rule.methods or ()}
    missing = [limit.name for limit in limits if (limit.method, limit.rule) not in known]
    if missing:
        raise RuntimeError(f"limits of routes that do not exist: {', '.join(missing)}")
    app.before_request(Guard(store, limits).check)
