"""The bare floors of `domino bench service`: a minimal Flask app, served exactly as the gateway is.

    GATEWAY_ENGINE=127.0.0.1:50051 gunicorn -c python:api_gateway.gunicorn_conf bench.bare_app:app

Same gunicorn settings (`api_gateway.gunicorn_conf`: workers, connections, SO_REUSEPORT, the gevent
`GatewayWorker` with gRPC's gevent set-up, keep-alive) and the same load tool (wrk). Two routes, with
no middleware and no metrics:

- ``GET /healthz`` answers what the gateway's `/healthz` answers and nothing else. Its requests per
  second are what this host and server give any Flask app, so the gateway's figures read as shares
  of it (issue 40: `/healthz` ~0.9 of it, a sealed apply >= 0.18).
- ``GET /apply`` makes the one engine call a REST sealed apply makes and nothing around it: a
  `JsonEngine/Apply` of a 4-player Kozel match in sealed mode, the state's bytes and the move's
  arguments as the gateway sends them (`sealed_calls`), on the gateway's channel settings
  (`EngineChannel`, engine at GATEWAY_ENGINE), answering the engine's JSON answer. No body to
  parse, no token to open or seal, no store, no schema. Its share of `/healthz` is the most a
  sealed apply could reach on this host whatever the gateway did around the call: the hop's floor.
"""
from __future__ import annotations

import itertools
import os
import random
from collections.abc import Iterator

import flask
from domino.v1 import engine_pb2 as pb
from domino.v1.channel import EngineChannel

app = flask.Flask(__name__)
#: Matches replayed by `/apply` (4-player Kozel rounds of 25-30 moves each).
GAMES = 8


@app.get("/healthz")
def healthz() -> flask.Response:
    """The gateway's liveness answer, `{"status": "ok"}`."""
    return flask.jsonify(status="ok")


def sealed_calls(games: int = GAMES) -> list[pb.JsonCall]:
    """Every move of `games` random 4-player Kozel rounds as the gateway asks the engine for it in sealed mode:
    the state before the move as sealed bytes, and the arguments `{"action", "seat", "view_as"}`."""
    import orjson

    from engine_service.edge import game_state
    from engine_service.rules import Match

    calls = []
    for seed in range(games):
        match, _ = Match.new("kozel", 4, seed=seed)
        rng = random.Random(seed)
        while actions := match.legal_actions():
            action = rng.choice(actions)
            seat = match.to_move
            args = orjson.dumps({"action": action, "seat": seat, "view_as": seat})
            calls.append(pb.JsonCall(args=args, state=game_state.encode(match)))
            match.apply(action)
    return calls


_calls: Iterator[pb.JsonCall] | None = None
_channel: EngineChannel | None = None


@app.get("/apply")
def apply() -> flask.Response:
    """One sealed `Apply` on the engine, the next of `sealed_calls` (made on the first request), its answer."""
    global _calls, _channel
    if _calls is None or _channel is None:
        _calls, _channel = itertools.cycle(sealed_calls()), EngineChannel(os.environ["GATEWAY_ENGINE"])
    answer: pb.JsonAnswer = _channel.json.Apply(next(_calls), timeout=5.0)
    return flask.Response(answer.answer, mimetype="application/json")
