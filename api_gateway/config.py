"""Gateway settings: command-line flags over environment variables over defaults.

The same settings reach every gunicorn worker through the environment:
`api_gateway.server` turns flags into variables before gunicorn starts, and each
worker's app factory calls `from_env()`. The variable names are the container
way (docker/Dockerfile.gateway, k8s/base/gateway.yaml).

| variable | default | meaning |
|---|---|---|
| GATEWAY_HOST | 127.0.0.1 | address to bind |
| GATEWAY_PORT | 8080 | HTTP port (0: a free one, printed on stdout) |
| GATEWAY_PUBLIC_URL | (none) | the address people reach this gateway at (`https://domino.example`, `http://192.168.1.20:8080`): the base of the links answers carry (a table's invites); none: the address the gateway listens on (a wildcard host or port 0: the one the connection came in on), never a request's Host header |
| GATEWAY_METRICS_PORT | 9465 | Prometheus `/metrics` on its own port, served by the gunicorn master for every worker (0: a free one, printed on stdout; `off`: none); the API port has no `/metrics` |
| GATEWAY_ENGINE | 127.0.0.1:50051 | gRPC target of the engine (`dns:///name:port`, `ipv4:a:p,b:q`) |
| GATEWAY_ENGINE_TIMEOUT | 5 | deadline of every engine call, in seconds (retries included) |
| GATEWAY_ENGINE_ATTEMPTS | 4 | attempts per engine call when it answers UNAVAILABLE |
| GATEWAY_BUSY_WAIT | 1 | seconds an expert suggestion or hints may wait for a busy engine's bots (asked again after 0.1, 0.2, 0.4 s ...) before the answer is 429 engine-busy; 0 answers at once |
| GATEWAY_WORKERS | 2 | gunicorn worker processes |
| GATEWAY_CONNECTIONS | 1000 | connections one worker holds at once (each a greenlet: `api_gateway.worker`); more wait in the listen queue |
| GATEWAY_READ_TIMEOUT | 5 | seconds a client has to send a request's line and headers, then again its body (slower: closed, or 408); also the keep-alive idle time |
| GATEWAY_MAX_BODY_BYTES | 262144 | largest request body; more is 413 |
| GATEWAY_RETRY_AFTER | 1 | seconds a 503 asks the client to wait |
| STATE_TOKEN_KEYS | (none) | sealed-mode keys, `kid:base64key,...`, newest first |
| GATEWAY_TOKEN_STORE | sqlite:///$TMPDIR/domino-gateway-versions.sqlite3 | where the latest version of every live sealed match is kept: `sqlite:///path` (one host: every worker opens the file) or `redis://host:6379/0` (a cluster) |
| GATEWAY_MATCH_TTL | 86400 | seconds a sealed match may stay idle before its tokens expire |
| GATEWAY_TABLE_IDLE | 1209600 | seconds an online table's match without a turn clock may stay idle (14 days: a turn-based game's pace); a clocked one is kept while its clock runs and GATEWAY_MATCH_TTL past its deadline |
| GATEWAY_SPECTATE_IDLE | 300 | seconds a spectator stream stays open without a new line (then it ends with a `closed` line) |
| GATEWAY_SPECTATE_MAX | 3600 | seconds a spectator stream stays open at most (watch on with a new request) |
| GATEWAY_SPECTATE_KEEPALIVE | 25 | seconds between two `{"type":"keepalive"}` lines of a spectator stream (a `: keepalive` comment of a seat stream) without news: under a proxy's idle timeout (60 s is common) with room to spare, as Socket.IO's 25 s ping, and each line wakes a phone's radio; one greenlet a worker writes them, a send each (10,000 quiet streams: ~0.9% of a core at 25 s, ~1.4% at 15 s, the HTML standard's "15 seconds or so"; docs/performance.md) |
| GATEWAY_STREAMS | half of GATEWAY_CONNECTIONS | spectator streams one worker holds at once (the rest of its connections stay for ordinary calls); more: 429 too-many-streams |
| GATEWAY_STREAMS_PER_MATCH | 200 | spectator streams of one match one worker holds at once; more: 429 too-many-streams |
| GATEWAY_STREAMS_PER_ADDRESS | 20 | spectator streams of one client address one worker holds at once; more: 429 too-many-streams |
| GATEWAY_STREAMS_PER_SEAT | 4 | streams of one seat of an online table (`GET /v1/matches/{id}/events`) one worker holds at once; more: 429 too-many-streams (the host's and spectators' public stream counts against GATEWAY_STREAMS_PER_MATCH) |
| GATEWAY_CORS_ORIGINS | (none) | origins of browser apps allowed to call the /v1 API from other sites, comma-separated (`https://app.example`; `*`: any); none: no CORS headers, browsers refuse other origins |
| GATEWAY_CONNECTIONS_PER_ADDRESS | three quarters of GATEWAY_CONNECTIONS | connections of one client address one worker holds at once; more are answered 429 and closed (0: no limit: behind a proxy every client has the proxy's address) |
| GATEWAY_DATABASE | sqlite:///$TMPDIR/domino-archive.sqlite3 | the archive of finished matches, players and ratings: `sqlite:///path` (embedded, one host; upgraded at start) or `postgresql://user:password@host:5432/db` (a cluster; upgraded by `python -m api_gateway.archive upgrade`) |
| GATEWAY_DATABASE_TIMEOUT | 5 | seconds to connect to the archive database, and for each statement or lock wait |
| GATEWAY_ARCHIVE_RETRY | 2 | seconds between two tries to write the finished matches waiting in the outbox (the database was down) |
| GATEWAY_PLAYER_KEYS | (none) | keys that check the player assertions (JWTs) host apps sign, by `kid`: `kid:base64secret` (HS256) or `kid:ed25519:base64publickey` (EdDSA), comma-separated, newest first (docs/security.md, Player assertions); none: every player is a guest |
| GATEWAY_LIMIT_TABLES_PER_ADDRESS | 600/60 | tables one client address may open (`POST /v1/tables`) per window, `count/seconds` (several, comma-separated: each applies; `0` or `off`: no limit); more: 429 rate-limited, counted in the live store, shared by every gateway on it (docs/security.md, Limits) |
| GATEWAY_LIMIT_SEEKS_PER_ADDRESS | 600/60 | quick-play seeks (`POST /v1/seek`) of one client address per window, as above |
| GATEWAY_LIMIT_SEEKS_PER_PLAYER | 60/60 | seeks of one player (the id its assertion proves, from any address) per window, as above |
| GATEWAY_LIMIT_TICKETS_PER_CREDENTIAL | 60/60 | stream tickets (`POST /v1/matches/{id}/events/ticket`) of one credential per window, as above |
| GATEWAY_LIMIT_SEALED_PER_ADDRESS | 1200/60 | sealed matches one client address may start (`POST /v1/matches` with `"mode": "sealed"`) per window, as above |
| GATEWAY_LIMIT_INBOX_PER_ADDRESS | 600/60 | inboxes one client address may read (`GET` and `POST /v1/inbox`: up to 150 store reads each) per window, as above |
| GATEWAY_PRESENCE_SECONDS | 25 | seconds a seat of an online table counts as here after its stream closed (or its worker's last beat, every 0.4 of this, when the worker was killed) or its last call; then away (docs/tables.md, Presence) |
| GATEWAY_WEBHOOKS | (none) | the host apps' webhook endpoints, by the `kid` of their player-assertion key: `kid=https://host/path|whsec_base64secret[|whsec_oldsecret]`, comma-separated; every delivery is signed with each secret (docs/notifications.md) |
| GATEWAY_WEBHOOK_RETRIES | 5,30,120,600,3600,21600,86400 | seconds before each retry of a failed webhook delivery (each +-20% jitter), comma-separated; after the last: the dead letters (`0`: none) |
| GATEWAY_WEBHOOK_INSECURE | false | webhooks may go to plain `http://` and loopback addresses (development only) |
| GATEWAY_WEBHOOK_PRIVATE | false | webhooks may go to private, link-local and reserved addresses (checked at every send) |
| GATEWAY_OPERATOR_TOKEN | (none) | the Bearer token of the operator's routes (`/v1/operator/...`: the webhooks' dead letters); none: those routes answer 404 |
| GATEWAY_DEV_TOKEN_KEY | false | without STATE_TOKEN_KEYS, make a random key per process (dev only) |
| LOG_LEVEL | INFO | |
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORT = 8080
DEFAULT_METRICS_PORT = 9465
DEFAULT_ENGINE = "127.0.0.1:50051"
DEFAULT_MAX_BODY_BYTES = 256 * 1024
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class ConfigError(ValueError):
    """A setting has a value the gateway cannot use (names the variable)."""


@dataclass(frozen=True, slots=True)
class GatewayConfig:
    """Validated settings of one gateway process (every worker reads the same)."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    public_url: str = ""             # "" = the address listened on (`tables_routes.link_base`)
    metrics_port: int | None = DEFAULT_METRICS_PORT  # None: no metrics endpoint
    engine_target: str = DEFAULT_ENGINE
    engine_timeout: float = 5.0
    engine_attempts: int = 4
    busy_wait: float = 1.0
    workers: int = 2
    connections: int = 1000
    read_timeout: int = 5
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    retry_after: int = 1
    token_keys: str = ""
    dev_token_key: bool = False
    token_store: str = ""            # "" = the embedded default (`store.default_url()`)
    match_ttl: int = 24 * 3600
    table_idle: int = 14 * 24 * 3600
    spectate_idle: int = 300
    spectate_max: int = 3600
    spectate_keepalive: int = 25
    streams: int = 500               # from_env: half of `connections` unless set
    streams_per_match: int = 200
    streams_per_address: int = 20
    streams_per_seat: int = 4
    cors_origins: tuple[str, ...] = ()
    connections_per_address: int = 750  # from_env: three quarters of `connections` unless set; 0: no limit
    database: str = ""               # "" = the embedded default (`archive.database.default_url()`)
    database_timeout: float = 5.0
    archive_retry: float = 2.0
    player_keys: str = ""
    presence_seconds: float = 25.0
    # Webhooks (`api_gateway.notify`): the raw GATEWAY_WEBHOOKS (checked by from_env), the retry schedule.
    webhooks: str = ""
    webhook_retries: tuple[float, ...] = (5.0, 30.0, 120.0, 600.0, 3600.0, 21600.0, 86400.0)
    webhook_insecure: bool = False
    webhook_private: bool = False
    operator_token: str = ""
    # Web Push (`api_gateway.notify.webpush`): the VAPID private key (checked by from_env) and subject; "": none.
    vapid_key: str = ""
    vapid_subject: str = ""
    # Limits (`api_gateway.http.limits`): (count, seconds) windows, each applies; () = no limit.
    limit_tables_per_address: tuple[tuple[int, int], ...] = ((600, 60),)
    limit_seeks_per_address: tuple[tuple[int, int], ...] = ((600, 60),)
    limit_seeks_per_player: tuple[tuple[int, int], ...] = ((60, 60),)
    limit_tickets_per_credential: tuple[tuple[int, int], ...] = ((60, 60),)
    limit_sealed_per_address: tuple[tuple[int, int], ...] = ((1200, 60),)
    limit_inbox_per_address: tuple[tuple[int, int], ...] = ((600, 60),)
    log_level: str = "INFO"


def _bool(name: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}={text!r}: expected true or false")


def _int(name: str, text: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"{name}={text!r}: expected an integer") from None
    if not low <= value <= high:
        raise ConfigError(f"{name}={value}: outside {low}..{high}")
    return value


def _seconds(name: str, text: str, zero: bool = False) -> float:
    """Seconds in (0, 600], or [0, 600] with `zero`."""
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{name}={text!r}: expected seconds") from None
    if value > 600 or value < 0 or (value == 0 and not zero):
        raise ConfigError(f"{name}={value}: outside {'[' if zero else '('}0, 600] seconds")
    return value


def windows(name: str, text: str) -> tuple[tuple[int, int], ...]:
    """A limit's windows: ``count/seconds`` terms, comma-separated (``600/60``, ``600/60,5000/86400``;
    a bare count is per 60 s); ``0`` or ``off``: no limit (no windows)."""
    if text.strip().lower() in ("0", "off"):
        return ()
    found = []
    for term in text.split(","):
        count, slash, seconds = term.strip().partition("/")
        found.append((_int(name, count.strip(), 1, 10_000_000),
                      _int(name, seconds.strip() if slash else "60", 1, 7 * 24 * 3600)))
    return tuple(found)


def retries(name: str, text: str) -> tuple[float, ...]:
    """A retry schedule: seconds before each retry, comma-separated, each in (0, 7 days]; ``0``: none."""
    if text.strip().lower() in ("0", "off"):
        return ()
    found = []
    for term in text.split(","):
        try:
            value = float(term)
        except ValueError:
            raise ConfigError(f"{name}={text!r}: expected seconds, comma-separated") from None
        if not 0 < value <= 7 * 24 * 3600:
            raise ConfigError(f"{name}={text!r}: each step in (0, 604800] seconds")
        found.append(value)
    return tuple(found)


def public_url(name: str, text: str) -> str:
    """An absolute http(s) URL with a host and no query or fragment, without its trailing slash."""
    url = urlsplit(text.strip())
    if url.scheme not in ("http", "https") or not url.hostname or url.query or url.fragment:
        raise ConfigError(f"{name}={text!r}: expected an http:// or https:// address, e.g. https://domino.example")
    try:
        url.port  # noqa: B018  # a port that is not a number raises here
    except ValueError:
        raise ConfigError(f"{name}={text!r}: the port is not a number") from None
    return text.strip().rstrip("/")


def from_env(env: Mapping[str, str] | None = None) -> GatewayConfig:
    """Settings from the environment (unset or empty variables take the defaults)."""
    environ = os.environ if env is None else env
    d = GatewayConfig()

    def get(name: str) -> str | None:
        text = environ.get(name, "")
        return text if text.strip() else None

    def pick_int(name: str, default: int, low: int, high: int) -> int:
        text = get(name)
        return default if text is None else _int(name, text, low, high)

    def pick_windows(name: str, default: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        text = get(name)
        return default if text is None else windows(name, text)

    level = (get("LOG_LEVEL") or d.log_level).strip().upper()
    if level not in _LEVELS:
        raise ConfigError(f"LOG_LEVEL={level!r}: expected one of {', '.join(_LEVELS)}")
    metrics_text = (get("GATEWAY_METRICS_PORT") or "").strip().lower()
    timeout_text = get("GATEWAY_ENGINE_TIMEOUT")
    db_timeout_text = get("GATEWAY_DATABASE_TIMEOUT")
    retry_text = get("GATEWAY_ARCHIVE_RETRY")
    busy_text = get("GATEWAY_BUSY_WAIT")
    dev_text = get("GATEWAY_DEV_TOKEN_KEY")
    public_text = get("GATEWAY_PUBLIC_URL")
    connections = pick_int("GATEWAY_CONNECTIONS", d.connections, 10, 100_000)
    webhooks = (get("GATEWAY_WEBHOOKS") or "").strip()
    insecure, private = (_bool(n, get(n) or "false") for n in ("GATEWAY_WEBHOOK_INSECURE", "GATEWAY_WEBHOOK_PRIVATE"))
    if webhooks:
        from api_gateway.notify.endpoints import EndpointError, Reach, parse

        try:
            parse(webhooks, Reach(insecure, private))
        except EndpointError as exc:
            raise ConfigError(f"GATEWAY_WEBHOOKS: {exc}") from None
    retries_text = get("GATEWAY_WEBHOOK_RETRIES")
    vapid_key, vapid_subject = ((get(n) or "").strip() for n in ("GATEWAY_VAPID_KEY", "GATEWAY_VAPID_SUBJECT"))
    if vapid_key or vapid_subject:
        from api_gateway.notify.webpush import Vapid, VapidError

        try:
            Vapid.parse(vapid_key, vapid_subject)
        except VapidError as exc:
            raise ConfigError(str(exc)) from None
    return GatewayConfig(
        host=get("GATEWAY_HOST") or d.host,
        port=pick_int("GATEWAY_PORT", d.port, 0, 65535),
        public_url="" if public_text is None else public_url("GATEWAY_PUBLIC_URL", public_text),
        metrics_port=None if metrics_text == "off"
        else pick_int("GATEWAY_METRICS_PORT", DEFAULT_METRICS_PORT, 0, 65535),
        engine_target=get("GATEWAY_ENGINE") or d.engine_target,
        engine_timeout=d.engine_timeout if timeout_text is None
        else _seconds("GATEWAY_ENGINE_TIMEOUT", timeout_text),
        engine_attempts=pick_int("GATEWAY_ENGINE_ATTEMPTS", d.engine_attempts, 1, 5),
        busy_wait=d.busy_wait if busy_text is None else _seconds("GATEWAY_BUSY_WAIT", busy_text, zero=True),
        workers=pick_int("GATEWAY_WORKERS", d.workers, 1, 64),
        connections=connections,
        read_timeout=pick_int("GATEWAY_READ_TIMEOUT", d.read_timeout, 1, 300),
        max_body_bytes=pick_int("GATEWAY_MAX_BODY_BYTES", d.max_body_bytes, 1024, 16 * 1024 * 1024),
        retry_after=pick_int("GATEWAY_RETRY_AFTER", d.retry_after, 0, 3600),
        token_keys=environ.get("STATE_TOKEN_KEYS", "").strip(),
        token_store=(get("GATEWAY_TOKEN_STORE") or "").strip(),
        match_ttl=pick_int("GATEWAY_MATCH_TTL", d.match_ttl, 60, 90 * 24 * 3600),
        table_idle=pick_int("GATEWAY_TABLE_IDLE", d.table_idle, 60, 90 * 24 * 3600),
        spectate_idle=pick_int("GATEWAY_SPECTATE_IDLE", d.spectate_idle, 1, 24 * 3600),
        spectate_max=pick_int("GATEWAY_SPECTATE_MAX", d.spectate_max, 1, 7 * 24 * 3600),
        spectate_keepalive=pick_int("GATEWAY_SPECTATE_KEEPALIVE", d.spectate_keepalive, 1, 300),
        # Streams never take every connection of a worker: ordinary calls keep the rest.
        streams=pick_int("GATEWAY_STREAMS", connections // 2, 1, connections - 1),
        streams_per_match=pick_int("GATEWAY_STREAMS_PER_MATCH", d.streams_per_match, 1, 100_000),
        streams_per_address=pick_int("GATEWAY_STREAMS_PER_ADDRESS", d.streams_per_address, 1, 100_000),
        streams_per_seat=pick_int("GATEWAY_STREAMS_PER_SEAT", d.streams_per_seat, 1, 1000),
        cors_origins=tuple(o.strip() for o in (get("GATEWAY_CORS_ORIGINS") or "").split(",") if o.strip()),
        connections_per_address=pick_int("GATEWAY_CONNECTIONS_PER_ADDRESS", connections * 3 // 4, 0, connections),
        database=(get("GATEWAY_DATABASE") or "").strip(),
        database_timeout=d.database_timeout if db_timeout_text is None
        else _seconds("GATEWAY_DATABASE_TIMEOUT", db_timeout_text),
        archive_retry=d.archive_retry if retry_text is None else _seconds("GATEWAY_ARCHIVE_RETRY", retry_text),
        player_keys=environ.get("GATEWAY_PLAYER_KEYS", "").strip(),
        presence_seconds=_seconds("GATEWAY_PRESENCE_SECONDS", get("GATEWAY_PRESENCE_SECONDS") or "25"),
        webhooks=webhooks,
        webhook_retries=d.webhook_retries if retries_text is None else retries("GATEWAY_WEBHOOK_RETRIES", retries_text),
        webhook_insecure=insecure,
        webhook_private=private,
        operator_token=(get("GATEWAY_OPERATOR_TOKEN") or "").strip(),
        vapid_key=vapid_key,
        vapid_subject=vapid_subject,
        dev_token_key=False if dev_text is None else _bool("GATEWAY_DEV_TOKEN_KEY", dev_text),
        limit_tables_per_address=pick_windows("GATEWAY_LIMIT_TABLES_PER_ADDRESS", d.limit_tables_per_address),
        limit_seeks_per_address=pick_windows("GATEWAY_LIMIT_SEEKS_PER_ADDRESS", d.limit_seeks_per_address),
        limit_seeks_per_player=pick_windows("GATEWAY_LIMIT_SEEKS_PER_PLAYER", d.limit_seeks_per_player),
        limit_tickets_per_credential=pick_windows("GATEWAY_LIMIT_TICKETS_PER_CREDENTIAL",
                                                  d.limit_tickets_per_credential),
        limit_sealed_per_address=pick_windows("GATEWAY_LIMIT_SEALED_PER_ADDRESS", d.limit_sealed_per_address),
        limit_inbox_per_address=pick_windows("GATEWAY_LIMIT_INBOX_PER_ADDRESS", d.limit_inbox_per_address),
        log_level=level,
    )
