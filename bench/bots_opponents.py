"""Opponents for `domino bench bots` only (issue 42): "suits", "net", "prior" and "selfish".

They are not levels of the service (`bots.LEVELS`): "suits" and "net" exist to
measure the expert against players that play differently from the ones its
playouts assume, "prior" to measure it against itself as it was. They read a
seat's view only, like every bot, and never draw or pass while they can play.

- ``suits``: keeps the most tiles matching the open ends: the move after which the
  most of its own remaining tiles fit an open end; ties to the heavier move, then
  the first legal. In Kozel and Osel that keeps it from having to draw.
- ``net``: one ply of lookahead in the counting games: the move with the most
  points now minus the most the next seat could score in reply with any tile it may
  hold (any tile this seat has not seen); ties to the heavier move. In the games that
  score no points in play it plays as ``suits``. In Kingdomino it places as greedy
  does, and picks the free tile with the most own gain now (its best placement's)
  minus the most another player could gain from the best tile left after it (it
  takes a tile the others want, not only one it wants).
- ``prior``: the matching games' expert as it was before issue 42's partner and
  strength work (33388fa): `PRIOR_BUDGET` playouts per decision, every seat in
  them playing greedy in the counting games and elsewhere the move keeping the
  most of its own tiles fitting the ends (its partner's not counted), or with
  chance `PRIOR_EPSILON` a random move. The same search
  (`search.expert_move`) with that playout policy, so a run against it measures
  exactly what the new playouts and budget changed. Kingdomino's expert did not
  change: there "prior" is the expert.
- ``selfish``: in the team games, the expert as it stands playing for its own seat, not its side:
  it decides from its view read as the same game without `teams` (each seat a side of its own, a
  side's score its seat's), so its playouts value its own going out and its own pips or points
  alone, and its partner is one more opponent to it. A partnership of the expert against two of
  these measures what playing as a team is worth. Outside the team games it is the expert.
"""
from __future__ import annotations

import random
from typing import Any

from engine_service.bots import Budget, suggest
from engine_service.bots.kingdomino import knowledge as kd
from engine_service.bots.kingdomino.policy import best_gain
from engine_service.bots.matching.knowledge import Knowledge, read_view
from engine_service.bots.matching.policy import fitting_after, greedy_move, move_pips, points_after
from engine_service.bots.matching.sampler import build_round
from engine_service.bots.matching.search import expert_move
from engine_service.rules.notation import DRAW, PASS, Move
from engine_service.rules.registry import make_family
from engine_service.rules.round import Round
from engine_service.rules.tiles import NUMBER_MASK

#: The bench-only opponents, by name.
OPPONENTS = ("suits", "net", "prior", "selfish")

#: The prior expert's playouts per decision (then `budget.MATCHING_DEFAULT`) and its playouts' random share.
PRIOR_BUDGET = Budget(iterations=200)
PRIOR_EPSILON = 0.25


def prior_rollout(rnd: Round, moves: list[Move], rng: random.Random) -> Move:
    """The prior expert's playout move: greedy in the counting games, elsewhere the most of the mover's
    own tiles fitting the ends then the heaviest; or with chance `PRIOR_EPSILON` a random one."""
    if len(moves) == 1:
        return moves[0]
    if rng.random() < PRIOR_EPSILON:
        return moves[rng.randrange(len(moves))]
    if rnd.family.counts:
        return greedy_move(rnd, moves)
    hand = rnd.hands[rnd.to_move]
    keys = [(fitting_after(rnd.layout, hand, m), move_pips(m)) if m[0] not in (DRAW, PASS) else (-2, -2)
            for m in moves]
    return moves[max(range(len(moves)), key=lambda i: (keys[i], -i))]


def decide(view: dict[str, Any], level: str, seed: int = 0) -> str:
    """The action `level` ("suits", "net" or "prior") plays from a seat's view: one of ``view["legal"]``
    (`seed` makes "prior" reproducible, as a level's seed does)."""
    if view.get("variant", "kingdomino") == "kingdomino" or "kingdoms" in view:
        return _kingdomino(view, level, seed)
    if level == "selfish":
        return suggest(_alone(view), "expert", seed=seed)
    know = read_view(view)
    moves = know.legal
    if len(moves) == 1:
        return know.legal_text[0]
    if level == "prior":
        where = (know.seat, len(know.layout.placements), know.hand, tuple(know.legal_text))
        return know.legal_text[expert_move(know, random.Random(f"{seed}:{where}"), PRIOR_BUDGET, prior_rollout,
                                                  infer=False)]
    playing = [i for i, m in enumerate(moves) if m[0] not in (DRAW, PASS)]
    if not playing:
        return know.legal_text[0]
    if level == "net" and know.family.counts:
        key = _net_keys(know, playing)
    else:
        key = {i: (_fitting_after(know, moves[i]), move_pips(moves[i])) for i in playing}
    best = max(playing, key=lambda i: (key[i], -i))
    return know.legal_text[best]


def _alone(view: dict[str, Any]) -> dict[str, Any]:
    """A team game's seat view read as the same game played alone: no `teams` option, and each seat's score its
    side's (the team game's `side_of`)."""
    options = dict(view.get("options") or {})
    if not options.pop("teams", False):
        return view
    _preset, teams, _eff = make_family(view["variant"], view["players"], view["options"])
    ledger = dict(view.get("ledger") or {})
    sides = list(ledger.get("scores") or [0] * teams.sides)
    ledger["scores"] = [sides[teams.side_of(s)] for s in range(teams.players)]
    return {**view, "options": options, "ledger": ledger}


def _world(know: Knowledge, reply_hand: int) -> Round:
    """The position with this seat's hand and `reply_hand` for the next seat (nobody else holds anything)."""
    hands = [0] * know.players
    hands[know.seat] = know.hand
    nxt = (know.seat + 1) % know.players
    hands[nxt] = reply_hand
    return build_round(know, hands, [])


def _fitting_after(know: Knowledge, move: Move) -> int:
    """How many of this seat's tiles left after `move` fit an open end then."""
    rnd = _world(know, 0)
    rnd.apply_move(move, [])
    layout = rnd.layout
    ends = 0
    for a in layout.arms:
        ends |= NUMBER_MASK[layout.end[a]]
    return (rnd.hands[know.seat] & ends).bit_count()


def _net_keys(know: Knowledge, playing: list[int]) -> dict[int, tuple[int, int]]:
    """Per move: (points now minus the best reply any unseen tile allows, pips laid)."""
    keys: dict[int, tuple[int, int]] = {}
    family = know.family
    for i in playing:
        move = know.legal[i]
        now = points_after(know.layout, move, family.in_play_points)
        rnd = _world(know, know.unseen)
        ended = rnd.apply_move(move, [])
        reply = 0
        if not ended and rnd.to_move == (know.seat + 1) % know.players:
            layout = rnd.layout
            for m in rnd.legal_moves():
                if m[0] not in (DRAW, PASS):
                    reply = max(reply, points_after(layout, m, family.in_play_points))
        keys[i] = (now - reply, move_pips(move))
    return keys


def _kingdomino(view: dict[str, Any], level: str, seed: int) -> str:
    """Kingdomino's "net" (see the module docstring); "suits" means nothing there: it plays greedy; "prior"
    and "selfish" are the expert."""
    if level in ("prior", "selfish"):
        return suggest(view, "expert", seed=seed)
    know = kd.read_view(view)
    legal = know.legal
    if level != "net" or len(legal) == 1 or legal[0][0] != "pick":
        return suggest(view, "greedy")
    mine = know.kingdoms[know.player]
    now = mine.region_score()
    others = [k for p, k in enumerate(know.kingdoms) if p != know.player]
    others_now = [k.region_score() for k in others]
    free = [a[1] for a in legal]
    keys = []
    for i, action in enumerate(legal):
        gain = best_gain(mine, action[1], now)
        left = [t for t in free if t != action[1]]
        denied = max((best_gain(k, t, kn) for k, kn in zip(others, others_now) for t in left), default=0)
        keys.append((gain - max(denied, 0), -i))
    return know.legal_text[max(range(len(legal)), key=lambda i: keys[i])]
