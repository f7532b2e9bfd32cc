"""Swiss for the 2-player variants (issue 41, docs/tournaments.md): the pure rules of a hosted Swiss tournament
(pairing, a match's result, standings). No store, no engine: `api_gateway.hosting.tournament_host` seats the
tables these pairings name and records what their matches answer.

The rules, as this service states them (the sources have no Swiss; FIDE's Dutch system is the model, simplified):

- A set number of rounds (`rounds`); every round everyone still in plays one whole match of the variant
  against one opponent at a table of two.
- Ranking (standings and pairing): more points first (a win 1, a draw 1/2, a loss 0, a bye 1), then the higher
  Buchholz (the sum of one's opponents' points; a bye adds none), then the tournament's order (joining).
- Pairing: with an odd number still in, the lowest ranked who has not had a bye yet sits out with a bye (1
  point); then, from the top of the ranking, each player unpaired is paired with the highest ranked unpaired
  player they have not met (searching back when that leaves the rest unpairable); only when no pairing without
  a repeat exists are the rest paired in ranking order.
- A match's result: its winner 1, loser 0 (a goat, a donkey, the side placed last: the match's `losers`; its
  `winners`), a match with neither or both: a draw; an exit of a seat (resign, gone, abort, timeout) is a loss
  for that seat. A player who leaves the tournament loses the match being played and is paired no more.
"""
from __future__ import annotations

from typing import Any

import orjson

Json = dict[str, Any]
#: The events of a match that end it by an exit of one seat (a Bykovo round's: that seat forfeits it).
EXITS = frozenset({"resigned", "gone", "aborted", "timed_out"})
#: Players at each Swiss table, and the rounds a tournament may have.
SEATS = 2
MOST_ROUNDS = 20


def started(swiss: Json, people: int) -> Json:
    """The Swiss part at the start (the places taken: `people`)."""
    return {**swiss, "points": [0.0] * people, "met": [[] for _ in range(people)], "byes": []}


def buchholz(swiss: Json, p: int) -> float:
    return float(sum(swiss["points"][o] for o in swiss["met"][p]))


def ranking(swiss: Json, players: list[int]) -> list[int]:
    """`players` best first: points, Buchholz, the tournament's order."""
    return sorted(players, key=lambda p: (-swiss["points"][p], -buchholz(swiss, p), p))


def pair(swiss: Json, players: list[int]) -> tuple[list[list[int]], int | None]:
    """This round's pairs (each best ranked first) and the bye (None: an even number), from `players` (those
    still in)."""
    ranked = ranking(swiss, players)
    bye = None
    if len(ranked) % 2:
        bye = next((p for p in reversed(ranked) if p not in swiss["byes"]), ranked[-1])
        ranked.remove(bye)
    met = {p: set(swiss["met"][p]) for p in ranked}
    pairs = _pairs(ranked, met)
    if pairs is None:  # every pairing repeats a match: in ranking order
        pairs = [[ranked[i], ranked[i + 1]] for i in range(0, len(ranked), 2)]
    return pairs, bye


def _pairs(unpaired: list[int], met: dict[int, set[int]]) -> list[list[int]] | None:
    """The top unpaired player with the best ranked one they have not met, the rest likewise (depth first)."""
    if not unpaired:
        return []
    first, rest = unpaired[0], unpaired[1:]
    for i, other in enumerate(rest):
        if other in met[first]:
            continue
        found = _pairs(rest[:i] + rest[i + 1:], met)
        if found is not None:
            return [[first, other], *found]
    return None


def match_result(lines: list[bytes]) -> list[float] | None:
    """Seat 0's and seat 1's points from a table's match (its public lines), None while it is played."""
    for line in lines:
        for event in orjson.loads(line).get("events") or ():
            if event.get("type") in EXITS and isinstance(event.get("seat", event.get("player")), int):
                loser = int(event.get("seat", event.get("player")))
                return [0.0 if s == loser else 1.0 for s in range(SEATS)]
            if event.get("type") == "match_ended":
                winners, losers = set(event.get("winners") or ()), set(event.get("losers") or ())
                return [_points(s, winners, losers) for s in range(SEATS)]
    return None


def _points(seat: int, winners: set[int], losers: set[int]) -> float:
    other = 1 - seat
    if (seat in winners and other not in winners) or (other in losers and seat not in losers):
        return 1.0
    if (other in winners and seat not in winners) or (seat in losers and other not in losers):
        return 0.0
    return 0.5


def record(swiss: Json, pairs: list[list[int]], results: list[list[float]], bye: int | None) -> None:
    """A round's results into the points and who met whom."""
    for (a, b), (pa, pb) in zip(pairs, results, strict=True):
        swiss["points"][a] += pa
        swiss["points"][b] += pb
        swiss["met"][a].append(b)
        swiss["met"][b].append(a)
    if bye is not None:
        swiss["points"][bye] += 1.0
        swiss["byes"].append(bye)


def standings(swiss: Json, names: list[str], over: bool) -> list[Json]:
    """Everyone ranked; the first three `official` once it is over."""
    ranked = ranking(swiss, list(range(len(names))))
    return [{"participant": names[p], "index": p, "place": i + 1, "score": swiss["points"][p],
             "buchholz": buchholz(swiss, p), "official": over and i < 3} for i, p in enumerate(ranked)]
