"""Kingdomino's final scores, rankings and the results of finished games (RULES.md KD "Score").

Kept apart from the game so that decoding a state (kingdomino_state) can
recompute a finished game's results without importing the game: the rules'
imports form a tree.

Ranking (RULES.md KD): the best score; tie: the larger single region, then
more crowns, else shared. A Dynasty (option `dynasty`, issue 14) ranks the
same three keys summed over its games. `decided_by` names the key that
separated the winner from the rest: ``score``, ``largest_region`` or
``crowns``; ``shared`` when several players are equal on all three.

>>> rank([10, 12, 12], [4, 5, 5], [3, 2, 4])
([2], 'crowns')
>>> rank([10, 12, 12], [4, 5, 5], [3, 2, 2])
([1, 2], 'shared')
"""
from __future__ import annotations

from typing import Any, Final

from .kingdomino_board import Kingdom
from .kingdomino_setup import KDConfig

MIDDLE_KINGDOM_BONUS: Final = 10
HARMONY_BONUS: Final = 5
#: The ranking keys in tie-break order (RULES.md KD "Tie").
RANK_KEYS: Final[tuple[str, ...]] = ("score", "largest_region", "crowns")


def kingdom_score(cfg: KDConfig, kingdom: Kingdom, over: bool) -> int:
    """Regions' squares x crowns; once the game is `over`, plus the options' bonuses."""
    score = kingdom.region_score()
    if over and cfg.middle_kingdom and kingdom.centred():
        score += MIDDLE_KINGDOM_BONUS
    if over and cfg.harmony and kingdom.discards == 0:
        score += HARMONY_BONUS
    return score


def rank(scores: list[int], largest: list[int], crowns: list[int]) -> tuple[list[int], str]:
    """(winners, decided_by): the best (score, largest region, crowns); equal on all three is shared."""
    keys = list(zip(scores, largest, crowns))
    best = max(keys)
    winners = [p for p, key in enumerate(keys) if key == best]
    if len(winners) > 1:
        return winners, "shared"
    for level, name in enumerate(RANK_KEYS):
        if sum(1 for key in keys if key[:level + 1] == best[:level + 1]) == 1:
            return winners, name
    return winners, "shared"     # not reached: a single winner is separated by some key


class GameResult:
    """A finished game: each kingdom's actions and what they scored, with the ranking.

    A plain class, not a dataclass (family.py says why: the rules are compiled by mypyc).
    """

    __slots__ = ("crowns", "decided_by", "kingdoms", "largest_region", "scores", "winners")

    def __init__(self, kingdoms: list[list[str]], scores: list[int], largest_region: list[int],
                 crowns: list[int]) -> None:
        self.kingdoms = kingdoms
        self.scores = scores
        self.largest_region = largest_region
        self.crowns = crowns
        self.winners, self.decided_by = rank(scores, largest_region, crowns)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kingdoms": [log.copy() for log in self.kingdoms],
            "scores": self.scores.copy(),
            "largest_region": self.largest_region.copy(),
            "crowns": self.crowns.copy(),
            "winners": self.winners.copy(),
            "decided_by": self.decided_by,
        }


def game_result(cfg: KDConfig, kingdoms: list[Kingdom]) -> GameResult:
    """The result of a finished game with these kingdoms (bonuses included)."""
    return GameResult([k.log.copy() for k in kingdoms], [kingdom_score(cfg, k, True) for k in kingdoms],
                      [k.largest_region() for k in kingdoms], [k.crowns() for k in kingdoms])


__all__ = ["HARMONY_BONUS", "MIDDLE_KINGDOM_BONUS", "RANK_KEYS", "GameResult", "game_result",
           "kingdom_score", "rank"]
