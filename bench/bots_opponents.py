"""Opponents the expert does not model, for `domino bench bots` only (issue 42): "suits" and "net".

They are not levels of the service (`bots.LEVELS`): they exist to measure the expert
against players that play differently from the greedy one its playouts assume. Both
read a seat's view only, like every bot, and never draw or pass while they can play.

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
"""
from __future__ import annotations

from typing import Any

from engine_service.bots import suggest
from engine_service.bots.kingdomino import knowledge as kd
from engine_service.bots.kingdomino.policy import best_gain
from engine_service.bots.matching.knowledge import Knowledge, read_view
from engine_service.bots.matching.policy import move_pips, points_after
from engine_service.bots.matching.sampler import build_round
from engine_service.rules.notation import DRAW, PASS, Move
from engine_service.rules.round import Round
from engine_service.rules.tiles import NUMBER_MASK

#: The bench-only opponents, by name.
OPPONENTS = ("suits", "net")


def decide(view: dict[str, Any], level: str) -> str:
    """The action `level` ("suits" or "net") plays from a seat's view: one of ``view["legal"]``."""
    if view.get("variant", "kingdomino") == "kingdomino" or "kingdoms" in view:
        return _kingdomino(view, level)
    know = read_view(view)
    moves = know.legal
    if len(moves) == 1:
        return know.legal_text[0]
    playing = [i for i, m in enumerate(moves) if m[0] not in (DRAW, PASS)]
    if not playing:
        return know.legal_text[0]
    if level == "net" and know.family.counts:
        key = _net_keys(know, playing)
    else:
        key = {i: (_fitting_after(know, moves[i]), move_pips(moves[i])) for i in playing}
    best = max(playing, key=lambda i: (key[i], -i))
    return know.legal_text[best]


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


def _kingdomino(view: dict[str, Any], level: str) -> str:
    """Kingdomino's "net" (see the module docstring); "suits" means nothing there: it plays greedy."""
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
