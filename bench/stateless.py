"""The cost of statelessness: encoding and decoding the whole state at every decision.

The engine keeps nothing between calls, so every decision made through a
service pays for parsing the state it is sent and serializing the new one. This
module measures, per variant, on states taken at every decision of seeded
random rounds:

- ``proto``: what the typed servicer does: `MatchState` bytes -> `Match` and
  `Match` -> bytes (`engine_service.edge.wire`: `decode_state`/`encode_state`);
- ``json``: what the JSON face does with a transparent REST state: compact JSON
  text <-> `Match` (orjson and the rules' `from_dict`/`to_dict`);
- ``decision``: `legal_actions()` + `apply()` in process, to compare with;
- sizes of a mid-round state: protobuf bytes and JSON bytes (the sealed token's
  length is measured through a real gateway by `domino bench service`).

Timings are the best of a few repeats of a loop over all sampled states, in
microseconds per state (a minimum: noise only ever adds).
"""
from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

Json = dict[str, Any]


def _best_per_item(fn: Callable[[], int], repeat: int) -> float:
    """Best time over `repeat` runs of `fn` (which returns how many items it did), us per item."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = fn()
        dt = time.perf_counter() - t0
        best = min(best, dt / max(n, 1))
    return best * 1e6


def sample(variant: str, players: int, games: int, seed: int) -> tuple[list[Any], list[Any], list[list[str]], list[int]]:
    """States before every decision of `games` random rounds, the mid-round ones, the moves, the seeds.

    Snapshots go through to_dict/from_dict rather than `Match.copy()`, which
    the mypyc-compiled rules could not run (``Match.__new__(Match)`` calls
    ``__init__`` on a native class).
    """
    from bench.workloads import new_game_function, state_class

    new, cls = new_game_function(variant), state_class(variant)
    rng = random.Random(seed)
    states: list[Any] = []
    mids: list[Any] = []
    moves: list[list[str]] = []
    seeds: list[int] = []
    for _ in range(games):
        s = rng.getrandbits(63)
        match, _ = new(variant, players, seed=s)
        game_states = []
        played: list[str] = []
        actions = match.legal_actions()
        while actions:
            game_states.append(cls.from_dict(match.to_dict()))  # not copy(): see below
            action = rng.choice(actions)
            played.append(action)
            match.apply(action)
            actions = match.legal_actions()
        states.extend(game_states)
        if game_states:
            mids.append(game_states[len(game_states) // 2])
        moves.append(played)
        seeds.append(s)
    return states, mids, moves, seeds


def measure(variant: str, players: int, games: int = 20, seed: int = 7, repeat: int = 5) -> Json:
    """Per-decision serialize/parse costs and typical sizes for one variant."""
    import orjson

    from engine_service.edge import wire
    from engine_service.rules import Match

    states, mids, moves, seeds = sample(variant, players, games, seed)
    if variant == "kingdomino":
        return _measure_kingdomino(variant, players, states, mids, moves, seeds, repeat)
    blobs = [wire.encode_state(m) for m in states]
    texts = [orjson.dumps(m.to_dict()) for m in states]
    from_dict = Match.from_dict
    dumps, loads = orjson.dumps, orjson.loads
    # What the servicer does: MatchState bytes <-> Match.
    encode_state, decode_state = wire.encode_state, wire.decode_state

    def proto_encode() -> int:
        for m in states:
            encode_state(m)
        return len(states)

    def proto_decode() -> int:
        for b in blobs:
            decode_state(b)
        return len(blobs)

    def json_encode() -> int:
        for m in states:
            dumps(m.to_dict())
        return len(states)

    def json_decode() -> int:
        for t in texts:
            from_dict(loads(t))
        return len(texts)

    def replay() -> int:
        n = 0
        for s, played in zip(seeds, moves):
            match, _ = Match.new(variant, players, seed=s)
            for action in played:
                match.legal_actions()
                match.apply(action)
            n += len(played)
        return n

    def deal_only() -> int:
        for s in seeds:
            Match.new(variant, players, seed=s)
        return len(seeds)

    decisions = sum(len(p) for p in moves)
    game_us = _best_per_item(replay, repeat) * decisions / len(seeds)
    new_us = _best_per_item(deal_only, repeat)
    decision_us = (game_us - new_us) / (decisions / len(seeds))
    result: Json = {
        "variant": variant,
        "players": players,
        "states": len(states),
        "proto_path": "wire",
        "proto_encode_us": _best_per_item(proto_encode, repeat),
        "proto_decode_us": _best_per_item(proto_decode, repeat),
        "json_encode_us": _best_per_item(json_encode, repeat),
        "json_decode_us": _best_per_item(json_decode, repeat),
        "decision_us": decision_us,
        "new_match_us": new_us,
    }
    result["proto_roundtrip_us"] = result["proto_encode_us"] + result["proto_decode_us"]
    result["json_roundtrip_us"] = result["json_encode_us"] + result["json_decode_us"]
    result["proto_roundtrip_per_decision"] = result["proto_roundtrip_us"] / decision_us
    result["json_roundtrip_per_decision"] = result["json_roundtrip_us"] / decision_us
    result.update(sizes(mids))
    return result


def sizes(mids: list[Any]) -> Json:
    """Median sizes of mid-round states: protobuf bytes and compact JSON bytes."""
    from engine_service.edge import wire

    proto = [len(wire.encode_state(m)) for m in mids]
    text = [len(json.dumps(m.to_dict(), separators=(",", ":"))) for m in mids]
    return {
        "mid_round_proto_bytes": int(statistics.median(proto)) if proto else 0,
        "mid_round_proto_bytes_max": max(proto, default=0),
        "mid_round_json_bytes": int(statistics.median(text)) if text else 0,
    }


def _measure_kingdomino(variant: str, players: int, states: list[Any], mids: list[Any], moves: list[list[str]],
                        seeds: list[int], repeat: int) -> Json:
    """Kingdomino: its state's protobuf form goes through `kingdomino_codec` (protobuf's own parser)."""
    from bench.workloads import new_game_function, state_class
    from engine_service.edge import kingdomino_codec

    new, cls = new_game_function(variant), state_class(variant)
    texts = [json.dumps(m.to_dict(), separators=(",", ":")) for m in states]
    blobs = [kingdomino_codec.encode_state(m) for m in states]

    def proto_encode() -> int:
        for m in states:
            kingdomino_codec.encode_state(m)
        return len(states)

    def proto_decode() -> int:
        for b in blobs:
            kingdomino_codec.decode_state(b)
        return len(blobs)

    def json_encode() -> int:
        for m in states:
            json.dumps(m.to_dict(), separators=(",", ":"))
        return len(states)

    def json_decode() -> int:
        for t in texts:
            cls.from_dict(json.loads(t))
        return len(texts)

    def replay() -> int:
        for s, played in zip(seeds, moves):
            game, _ = new(variant, players, s)
            for action in played:
                game.legal_actions()
                game.apply(action)
        return sum(len(p) for p in moves)

    def deal_only() -> int:
        for s in seeds:
            new(variant, players, s)
        return len(seeds)

    decisions = sum(len(p) for p in moves)
    game_us = _best_per_item(replay, repeat) * decisions / len(seeds)
    new_us = _best_per_item(deal_only, repeat)
    decision_us = (game_us - new_us) / (decisions / len(seeds))
    proto_sizes = [len(kingdomino_codec.encode_state(m)) for m in mids]
    out: Json = {
        "variant": variant, "players": players, "states": len(states), "proto_path": "kingdomino_codec",
        "proto_encode_us": _best_per_item(proto_encode, repeat),
        "proto_decode_us": _best_per_item(proto_decode, repeat),
        "json_encode_us": _best_per_item(json_encode, repeat),
        "json_decode_us": _best_per_item(json_decode, repeat),
        "decision_us": decision_us, "new_match_us": new_us,
        "mid_round_proto_bytes": int(statistics.median(proto_sizes)) if proto_sizes else 0,
        "mid_round_proto_bytes_max": max(proto_sizes, default=0),
    }
    out["proto_roundtrip_us"] = out["proto_encode_us"] + out["proto_decode_us"]
    out["proto_roundtrip_per_decision"] = out["proto_roundtrip_us"] / decision_us
    out["json_roundtrip_us"] = out["json_encode_us"] + out["json_decode_us"]
    out["json_roundtrip_per_decision"] = out["json_roundtrip_us"] / decision_us
    text = [len(json.dumps(m.to_dict(), separators=(",", ":"))) for m in mids]
    out["mid_round_json_bytes"] = int(statistics.median(text)) if text else 0
    return out
