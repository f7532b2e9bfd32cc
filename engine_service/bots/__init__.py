"""Computer opponents for every variant (issue 15): `suggest` a move, or `hints` for a coach.

Pure, like the rules: no I/O, randomness only from the caller's seed. A bot
decides from a seat's view alone, never from a state. Levels: ``random``,
``greedy`` and ``expert`` (determinized search), per family as docs/bots.md
describes. `observe.SeatLog` keeps the round's events as one seat saw them, for
callers that build views themselves (tests, benchmarks).
"""
from .api import LEVELS, hints, suggest
from .budget import KINGDOMINO_DEFAULT, MATCHING_DEFAULT, Budget, Deadline, default_budget, kingdomino_default

__all__ = ["KINGDOMINO_DEFAULT", "LEVELS", "MATCHING_DEFAULT", "Budget", "Deadline", "default_budget", "hints",
           "kingdomino_default", "suggest"]
