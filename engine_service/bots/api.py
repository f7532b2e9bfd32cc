"""The bots' public calls: `suggest` an action, or `hints` for a coach, from a seat's view.

A bot's only input is the view a seat is shown (`Match.view(seat)`, or
Kingdomino's `view(player)`), so it cannot peek at hidden tiles or the pile:
there is nothing to peek at. Decisions are reproducible: the same view, level,
budget and seed give the same action (a budget with an `ms` cap excepted).
"""
from __future__ import annotations

import importlib
import random
from types import ModuleType
from typing import Any

from ..rules import Kingdomino, Match, game_class
from .budget import BudgetLike, Deadline, default_budget, resolve

LEVELS: tuple[str, ...] = ("random", "greedy", "expert")


def _rng(view: dict[str, Any], seed: int | None) -> random.Random:
    """A generator from the seed and the position, so successive decisions draw afresh."""
    played = len(view.get("layout") or []) + sum(len(k) for k in view.get("kingdoms") or [])
    where = (view.get("variant"), view.get("seat", view.get("player")), view.get("round_number"), played,
             tuple(view.get("hand") or ()), tuple(view.get("legal") or ()))
    return random.Random(f"{0 if seed is None else seed}:{where}")


def _players(view: dict[str, Any]) -> int:
    players = view.get("players")
    return players if isinstance(players, int) else 2


#: The bots of each game class: their package here (its `decide`, and `coach.hints`), imported on first use.
FAMILIES: dict[type, str] = {Match: "matching", Kingdomino: "kingdomino"}


def _family(view: dict[str, Any], module: str = "") -> ModuleType:
    """The bots' package (or its `module`) for the game a view is of: the class its ``variant`` names in
    the registry of games (`rules.game_class`), as a state's kind is told."""
    name = f"{__package__}.{FAMILIES[game_class(view.get('variant'))]}"
    return importlib.import_module(f"{name}.{module}" if module else name)


def suggest(view: dict[str, Any], level: str = "expert", budget: BudgetLike = None,
            seed: int | None = None, until: Deadline | None = None) -> str:
    """The action `level` (random, greedy or expert) plays from `view`: one of ``view["legal"]``.

    `budget` is a `Budget`, a number of iterations, or None for the default
    (`budget.MATCHING_DEFAULT`, `budget.kingdomino_default`); `seed` (default 0)
    makes the choice reproducible; `until` stops the search at that deadline (its
    answer is then not reproducible: the caller discards it). ValueError when the
    view is not one where its seat is to move, or the level is unknown.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    rng = _rng(view, seed)
    resolved = resolve(budget, default_budget(view.get("variant"), _players(view)), until)
    action: str = _family(view).decide(view, level, resolved, rng)
    return action


def hints(view: dict[str, Any], budget: BudgetLike = None, seed: int | None = None,
          until: Deadline | None = None) -> dict[str, Any]:
    """The coach: what the expert knows from `view` (see `matching.coach.hints`, `kingdomino.coach`);
    `until` as for `suggest`."""
    rng = _rng(view, seed)
    resolved = resolve(budget, default_budget(view.get("variant"), _players(view)), until)
    answer: dict[str, Any] = _family(view, "coach").hints(view, resolved, rng)
    return answer
