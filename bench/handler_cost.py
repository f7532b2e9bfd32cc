"""Run the engine's Apply handler (or the stateless pieces) N times in process: for callgrind.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python -P bench/handler_cost.py apply 2000
    (WHAT: apply, decode, game (a random 4-player Kozel round) or game:VARIANT:PLAYERS)

Instruction counts do not depend on what else the machine is doing: the
difference between N=2000 and N=0, divided by 2000, is the cost of one call
(bench/instructions.sh does exactly that, for any two trees).
"""
from __future__ import annotations

import sys


def main() -> int:
    what, n = sys.argv[1], int(sys.argv[2])
    from domino.v1 import engine_pb2 as pb

    from bench.service import mid_round_kozel
    try:
        from engine_service.edge import codec
    except ImportError:  # before engine_service/edge
        from engine_service import codec  # type: ignore[no-redef]
    from engine_service.rules import Match
    from engine_service.servicer import EngineServicer

    match, action = mid_round_kozel()
    if hasattr(codec, "state_to_proto"):  # before engine_service.wire wrote the state's bytes
        message = codec.state_to_proto(match.to_dict())
    else:
        try:
            from engine_service.edge import wire as state_wire
        except ImportError:  # before engine_service/edge
            from engine_service import wire as state_wire  # type: ignore[no-redef]

        message = pb.MatchState.FromString(state_wire.encode_state(match))
    body = pb.ApplyRequest(state=message, action=action).SerializeToString()
    svc = EngineServicer()
    state = pb.MatchState.FromString(pb.ApplyRequest.FromString(body).state.SerializeToString())
    if what == "apply":
        for _ in range(n):
            svc.Apply(pb.ApplyRequest.FromString(body), None).SerializeToString()  # type: ignore[arg-type]
    elif what == "decode":  # what the servicer does with a request's state (as of the checked-out commit)
        data = state.SerializeToString()
        try:
            try:
                from engine_service.edge import wire
            except ImportError:  # before engine_service/edge
                from engine_service import wire  # type: ignore[no-redef]
        except ImportError:  # before engine_service.wire
            wire = None  # type: ignore[assignment]
        if wire is not None and hasattr(wire, "decode_state"):  # the state's bytes straight to a Match
            for _ in range(n):
                wire.decode_state(data)
        else:  # earlier: from the parsed message
            decode = getattr(wire, "match_from_proto", None) or getattr(codec, "match_from_proto", None)
            for _ in range(n):
                if decode is not None:
                    decode(state)
                else:
                    Match.from_dict(codec.state_from_proto(state))
    elif what.startswith("game"):  # "game" (4-player Kozel) or "game:VARIANT:PLAYERS"
        import random

        _, variant, players = (what + ":kozel:4").split(":")[:3]
        rng = random.Random(1)
        for _ in range(n):
            m, _ = Match.new(variant, int(players), seed=rng.getrandbits(63))
            actions = m.legal_actions()
            while actions:
                m.apply(rng.choice(actions))
                actions = m.legal_actions()
    else:
        raise SystemExit(f"unknown {what!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
