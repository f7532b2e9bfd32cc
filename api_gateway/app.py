"""The Flask application factory: the /v1 API, its OpenAPI document and docs, health.

`create_app()` reads its settings from the environment (`api_gateway.config`)
and is called once in each gunicorn worker, after the fork; the engine channel
is created on the first call in that worker.

Routes besides /v1:

- ``/openapi.json``: the OpenAPI 3 document, generated from the marshmallow schemas.
- ``/docs``: Swagger UI, its assets served from the swagger-ui-bundle package
  (no CDN: these machines and many clusters have no internet).
- ``/healthz``: the process answers (liveness). ``/readyz``: the engine's health
  service says SERVING (readiness), else 503.
- ``/metrics`` is not here: the gateway serves it on its own port (`api_gateway.metrics.serve`).
- ``/play``: the browser table (static HTML, JS and CSS of `api_gateway/play/`, no CDN and no
  build step): a person against computer players through the /v1 API in sealed mode, or people
  on several devices at an online table (invites, the lobby, each seat's event stream). Like
  /docs it is not part of the API document.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import flask
import swagger_ui_bundle  # type: ignore[import-untyped]
from flask import Flask, Response, g, request
from flask_smorest import Api  # type: ignore[import-untyped]
from werkzeug.wrappers import Response as WerkzeugResponse

from api_gateway import metrics
from api_gateway.archive.routes import ARCHIVE, archive_blp
from api_gateway.archive.service import Archive
from api_gateway.config import GatewayConfig, from_env
from api_gateway.engine import Engine
from api_gateway.hosting.handoff import Handoff
from api_gateway.hosting.keepers import Keeper
from api_gateway.hosting.matchmaking import Matchmaking
from api_gateway.hosting.play import HostedPlay
from api_gateway.hosting.presence import Presence
from api_gateway.hosting.tables import Tables
from api_gateway.hosting.timeouts import OUTCOMES, Timeouts
from api_gateway.hosting.tournament_host import install as install_tournaments
from api_gateway.http import problems
from api_gateway.http.inbox_routes import inbox_blp
from api_gateway.http.json_provider import FastJSONProvider
from api_gateway.http.limits import register as register_limits
from api_gateway.http.openapi import STREAM_COMPONENTS, ShapeRules
from api_gateway.http.routes import matches_blp, problems_blp, records_blp, variants_blp
from api_gateway.http.schemas import EITHER_COMPONENTS, ProblemSchema
from api_gateway.http.tables_routes import BEARER, MATCHMAKING, SEAT_STREAMS, TABLES, tables_blp
from api_gateway.http.tournament_routes import hosted_blp
from api_gateway.matches import Matches
from api_gateway.notify import notifier as webhooks
from api_gateway.notify.push_routes import push_blp
from api_gateway.notify.routes import NOTIFIER, operator_blp
from api_gateway.store import LiveStore, default_url, open_store
from api_gateway.store.watching import Watching
from api_gateway.streams import Limits, Streams
from api_gateway.streams.seats import SeatStreams
from api_gateway.tokens import KeyRing
from api_gateway.tournaments import TOURNAMENTS, Tournaments, tournaments_blp

log = logging.getLogger("api_gateway")

DOCS_ASSETS = "/docs/assets/"
#: The app's turn-clock timeouts (`hosting.timeouts.Timeouts`), in `app.extensions`.
TIMEOUTS = "domino_timeouts"
PLAY_DIR = Path(__file__).resolve().parent / "play"
#: The table loads only what the gateway serves, and runs no inline script.
PLAY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
               "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
API_DESCRIPTION = """\
The domino rules engine over JSON: create a match and play it, record and replay it, run a
Bykovo micro-tournament, and host online tables where people play from their own devices.

- **Matches** (`/v1/matches`) are carried by the client: every call sends its match, either
  **transparent** (`state`: the whole state as JSON, for trusted backends and pass-and-play) or
  **sealed** (`token` + `seat_key`: an encrypted state and the key of the seat acting, which sees
  only its own view). A sealed match's latest version is kept by the service (a stale token is
  refused), and anyone with its `match_id` may watch it (`.../spectate`, `application/x-ndjson`).
- **Online tables** (`/v1/tables`, `/v1/seek`) are hosted by the service: open a table, hand out
  invites, each person takes a seat and plays it with a credential sent as
  `Authorization: Bearer`; each seat follows its match on `GET /v1/matches/{match_id}/events`
  (`text/event-stream`, resumable with `Last-Event-ID`). Turn clocks run on the service.
- **Players and ratings** (`/v1/players`, `/v1/leaderboard`): finished matches are archived with
  their records.

Actions use the notation of docs/FORMAT.md (`3-6`, `3-6@E`, `4-4@E!`, `2-2@E+5-5@W`, `draw`,
`pass`). Errors are RFC 9457 `application/problem+json`; their `type` is documented at
`/v1/problems/{name}`. Each operation has a stable `operationId` for generated clients; the
streams' items are described by `x-events` and `x-itemSchema`.
"""


class GatewayApi(Api):  # type: ignore[misc]  # flask-smorest is untyped (Any base)
    """flask-smorest's Api with RFC 9457 errors instead of its own JSON error body, through its public
    surface only: every operation documents its own problem answers (`api_gateway.http.openapi.operation`),
    so flask-smorest's default error response (application/json) is named nowhere."""

    ERROR_SCHEMA = ProblemSchema
    DEFAULT_ERROR_RESPONSE_NAME = None

    def init_app(self, app: Flask, *, spec_kwargs: dict[str, Any] | None = None) -> None:
        super().init_app(app, spec_kwargs=spec_kwargs)
        problems.register(app)  # every exception, not only the HTTP errors flask-smorest handles
        for name, schema in STREAM_COMPONENTS.items():  # named only from the streams' x- members
            self.spec.components.schema(name, schema=schema)

    def handle_http_exception(self, error: Exception) -> Response:
        return problems.handle(error)


def _key_ring(cfg: GatewayConfig) -> KeyRing | None:
    if cfg.token_keys:
        return KeyRing.parse(cfg.token_keys)
    if cfg.dev_token_key:
        return KeyRing.development()
    log.info("sealed mode disabled: STATE_TOKEN_KEYS is not set")
    return None


def _route_label() -> str:
    rule = request.url_rule
    return rule.rule if rule is not None else metrics.UNMATCHED


def _bodyless(app: Flask) -> bool:
    """A POST that takes no body (an online table's leave, again, ticket: `BODYLESS` views) sent without one."""
    view = app.view_functions.get(request.endpoint or "")
    return bool(getattr(getattr(view, "view_class", None), "BODYLESS", False)) and not request.get_data(cache=True)


def _instrument(app: Flask) -> None:
    @app.before_request
    def start() -> None:
        g.started = time.perf_counter()
        metrics.IN_FLIGHT.inc()
        g.in_flight = True
        if (request.method == "POST" and request.routing_exception is None
                and not request.is_json and not _bodyless(app)):
            raise problems.Problem(415, "Unsupported Media Type",
                                   "send the body as JSON with Content-Type: application/json")

    @app.after_request
    def observe(response: Response) -> Response:
        started = g.get("started")
        if started is not None:
            metrics.observe_request(_route_label(), request.method, response.status_code,
                                    time.perf_counter() - started)
        return response

    @app.teardown_request
    def done(exc: BaseException | None) -> None:
        if g.pop("in_flight", False):
            metrics.IN_FLIGHT.dec()


def _operations(app: Flask, engine: Engine) -> None:
    def healthz() -> Response:
        return flask.jsonify(status="ok")

    def readyz() -> Response:
        ready, status = engine.ready()
        if not ready:
            problem = problems.Problem.of("engine-unavailable", f"engine health: {status}")
            problem.headers["Retry-After"] = str(app.config["RETRY_AFTER"])
            return problem.response()
        return flask.jsonify(status="ready", engine=status)

    def docs_asset(filename: str) -> Response:
        response = flask.send_from_directory(str(swagger_ui_bundle.swagger_ui_path), filename, max_age=3600)
        return response

    def to_docs() -> WerkzeugResponse:
        """`/` and `/docs/` lead to Swagger UI (a person typing the address lands on the docs)."""
        return flask.redirect("/docs", code=302)

    def play_page() -> Response:
        return play_asset("index.html")

    def play_asset(filename: str) -> Response:
        response = flask.send_from_directory(str(PLAY_DIR), filename, max_age=60)
        response.headers["Content-Security-Policy"] = PLAY_POLICY
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    app.add_url_rule("/play", "play", play_page, methods=["GET"])
    app.add_url_rule("/play/<path:filename>", "play_asset", play_asset, methods=["GET"])
    app.add_url_rule("/", "root", to_docs, methods=["GET"])
    app.add_url_rule("/docs/", "docs_slash", to_docs, methods=["GET"], strict_slashes=True)
    app.add_url_rule("/healthz", "healthz", healthz, methods=["GET"])
    app.add_url_rule("/readyz", "readyz", readyz, methods=["GET"])
    app.add_url_rule(DOCS_ASSETS + "<path:filename>", "docs_asset", docs_asset, methods=["GET"])


def _cors(app: Flask, origins: tuple[str, ...]) -> None:
    """Browser apps served from other origins (GATEWAY_CORS_ORIGINS; none by default): the /v1 API only,
    credentials in the Authorization header (no cookies), Last-Event-ID allowed for a stream's resume."""
    if not origins:
        return
    from flask_cors import CORS

    CORS(app, resources={r"/v1/*": {"origins": list(origins)}}, supports_credentials=False,
         allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
         expose_headers=["Retry-After", "WWW-Authenticate"], max_age=600)


def create_app(config: GatewayConfig | None = None) -> Flask:
    """A gateway app: settings from `config`, else from the environment."""
    cfg = config if config is not None else from_env()
    app = Flask("api_gateway")
    app.json = FastJSONProvider(app)  # keys in the state's field order, encoded by orjson
    app.config.update(
        API_TITLE="Domino rules engine",
        API_VERSION="v1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="/docs",
        OPENAPI_SWAGGER_UI_URL=DOCS_ASSETS,
        API_SPEC_OPTIONS={"info": {"description": API_DESCRIPTION}},
        MAX_CONTENT_LENGTH=cfg.max_body_bytes,
        RETRY_AFTER=cfg.retry_after,
        GATEWAY_CONFIG=cfg,
    )
    engine = Engine(cfg.engine_target, cfg.engine_timeout, cfg.engine_attempts, cfg.busy_wait)
    keys = _key_ring(cfg)
    store: LiveStore | None = open_store(cfg.token_store or default_url(), cfg.match_ttl, cfg.table_idle) if keys else None
    matches = app.extensions["domino_matches"] = Matches(engine, keys, store)
    limits = Limits(idle=cfg.spectate_idle, longest=cfg.spectate_max, keepalive=cfg.spectate_keepalive,
                    streams=cfg.streams, per_match=cfg.streams_per_match, per_address=cfg.streams_per_address)
    watching = Watching(lambda: matches.store.wakeups())
    def spectated(match_id: str, start: int) -> tuple[list[bytes], bool]:
        """A spectator stream's lines: a private table's match is not watched by its id (403 spectators-off),
        checked when a worker's feed of the match starts (once for a burst of opens), not per stream."""
        if start == 0:
            app.extensions[TABLES].check_spectate(match_id)
        return matches.public_lines(match_id, start)

    spectators = app.extensions["domino_streams"] = Streams(spectated, limits, watching)
    presence = Presence(lambda: matches.store, renew_every=0.4 * cfg.presence_seconds, here_for=cfg.presence_seconds)
    app.extensions[SEAT_STREAMS] = SeatStreams(lambda: matches.store, limits, cfg.streams_per_seat, watching,
                                               spectators.counts, presence)
    app.extensions[TOURNAMENTS] = Tournaments(engine)
    app.extensions[ARCHIVE] = archive = Archive.from_config(cfg, lambda v: matches.variant(v)["family"])
    archive.start()
    handoff = Handoff(matches, archive)
    play = HostedPlay(matches, handoff)
    app.extensions[TABLES] = tables = Tables(play, archive, presence=presence)
    app.extensions[MATCHMAKING] = matchmaking = Matchmaking(tables)
    install_tournaments(app, tables, archive, store, watching)
    if store is not None:  # online tables host sealed matches: their clocks run out and their ends are handed over here
        for outcome in OUTCOMES:  # every series exists (at 0) from the worker's start: the dashboard's clock panel
            metrics.CLOCK_TIMEOUTS.labels(outcome)
        timeouts = app.extensions[TIMEOUTS] = Timeouts(play)
        for keeper in (Keeper("turn-clocks", timeouts.expire_due, store.next_due, watching, 0.2),
                       Keeper("quick-play-filler", matchmaking.fill_due, store.next_fill, watching, 1.0),
                       Keeper("archive-handoff", handoff.archive_due, store.next_unarchived, watching, 1.0)):
            keeper.start()
        # webhooks, Web Push and the players' notification feed: a thread of this worker, off the requests' path
        app.extensions[NOTIFIER] = webhooks.start(cfg, lambda: matches.store)
    else:
        webhooks.install(None)  # nothing hosted here to tell of (an earlier app of this process told its own)
    api = GatewayApi(app, spec_kwargs={"extra_plugins": [ShapeRules()]})
    for name, schema in EITHER_COMPONENTS.items():  # the schemas `Either` fields name in their oneOf
        api.spec.components.schema(name, schema=schema)
    api.spec.components.security_scheme("bearer", BEARER)
    for blueprint in (variants_blp, matches_blp, records_blp, tournaments_blp, archive_blp, tables_blp,
                      hosted_blp, inbox_blp, push_blp, problems_blp, operator_blp):
        api.register_blueprint(blueprint)
    _instrument(app)
    register_limits(app, cfg, store)  # after _instrument: a refusal is timed and counted like any answer
    _cors(app, cfg.cors_origins)
    _operations(app, engine)
    return app
