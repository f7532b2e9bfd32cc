"""The bare floor of `domino bench service`: a minimal Flask app, served exactly as the gateway is.

    gunicorn -c python:api_gateway.gunicorn_conf bench.bare_app:app

Same gunicorn settings (`api_gateway.gunicorn_conf`: workers, connections, SO_REUSEPORT, the gevent
`GatewayWorker` with gRPC's gevent set-up, keep-alive) and the same load tool (wrk), one route that
answers what the gateway's `/healthz` answers and nothing else: no middleware, no metrics, no
engine. Its requests per second are what this host and server give any Flask app, so the gateway's
figures read as shares of it (issue 40: `/healthz` ~0.9 of it, a sealed apply >= 0.18).
"""
from __future__ import annotations

import flask

app = flask.Flask(__name__)


@app.get("/healthz")
def healthz() -> flask.Response:
    """The gateway's liveness answer, `{"status": "ok"}`."""
    return flask.jsonify(status="ok")
