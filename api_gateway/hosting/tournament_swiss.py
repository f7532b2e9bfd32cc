"""Swiss (issue 41, docs/tournaments.md): the pure rules of a hosted Swiss tournament, at tables of two (the
2-player variants) or of four (the 4-seat variants, tables grouped by standing): pairing and grouping, a
match's points, standings. No store, no engine: `api_gateway.hosting.tournament_host` seats the tables these
name and records what their matches answer.

The rules, as this service states them (the sources have no Swiss; FIDE's Dutch system is the model,
simplified; Board Game Arena's Swiss for more players the model of the grouped tables):

- A set number of rounds (`rounds`); every round everyone still in plays one whole match of the variant at a
  table of `seats` (2 or 4).
- A match's points, by its places (the archive's: `api_gateway.archive.results.places`): the winning sides
  first, then those neither won nor lost, then the losing ones, ties among them broken by Kozel's rating
  points; a seat that left the match (resign, gone, abort, timeout) places its side last. Each side scores 1
  for every other side placed behind it and 1/2 for every other side tied with it, and each seat its side's
  points: two players, a win 1, a draw 1/2, a loss 0; a pair game, the winning pair's seats 1 each; four alone,
  3, 2, 1, 0 by place. A bye is worth a match won (`bye_points`: the sides less one).
- Ranking (standings, pairing, grouping): more points first, then the higher Buchholz (the sum of one's
  tablemates' points, every table one sat at; a bye adds none), then the tournament's order (joining).
- Byes: when the number still in is not a multiple of `seats`, the lowest ranked who have not had a bye yet
  sit out with one (then the lowest ranked), as many as are left over.
- Tables of two: from the top of the ranking, each player unpaired meets the highest ranked unpaired player
  they have not met (searching back when that leaves the rest unpairable); only when no pairing without a
  repeat exists are the rest paired in ranking order.
- Tables of four: table by table from the top, the best ranked person not seated yet sits with the three
  others who give that table the fewest pairs of people who have sat together before, ties going to the
  better ranked three (compared best first); so the top four play together, then the next four, unless that
  repeats tablemates. Seats follow the ranking (the best ranked at seat 0; a pair game: 1st and 3rd against
  2nd and 4th).
- A player who leaves the tournament loses the match being played (their seat resigns) and is seated no more.
"""
from __future__ import annotations

from itertools import combinations
from typing import Any

import orjson

from api_gateway.archive.results import places

Json = dict[str, Any]
#: The events of a match that end it by an exit of one seat (a Bykovo round's: that seat forfeits it).
EXITS = frozenset({"resigned", "gone", "aborted", "timed_out"})
#: Players at each Swiss table (the 2-player default), the table sizes hosted, and the rounds a tournament may have.
SEATS = 2
TABLE_SIZES = (2, 4)
MOST_ROUNDS = 20


def started(swiss: Json, people: int) -> Json:
    """The Swiss part at the start (the places taken: `people`)."""
    return {**swiss, "points": [0.0] * people, "met": [[] for _ in range(people)], "byes": []}


def seats_of(swiss: Json) -> int:
    """Players at each of the Swiss's tables."""
    return int(swiss.get("seats", SEATS))


def sides_of(swiss: Json) -> int:
    """Sides of each table's match (a pair game of four: 2)."""
    return int(swiss.get("sides", seats_of(swiss)))


def bye_points(swiss: Json) -> float:
    """What a bye is worth: a match won (ahead of every other side)."""
    return float(sides_of(swiss) - 1)


def buchholz(swiss: Json, p: int) -> float:
    return float(sum(swiss["points"][o] for o in swiss["met"][p]))


def ranking(swiss: Json, players: list[int]) -> list[int]:
    """`players` best first: points, Buchholz, the tournament's order."""
    return sorted(players, key=lambda p: (-swiss["points"][p], -buchholz(swiss, p), p))


def seat_round(swiss: Json, players: list[int]) -> tuple[list[list[int]], list[int]]:
    """This round's tables (each its players by seat) and byes, from `players` (those still in)."""
    ranked = ranking(swiss, players)
    byes = []
    for _ in range(len(ranked) % seats_of(swiss)):
        bye = next((p for p in reversed(ranked) if p not in swiss["byes"]), ranked[-1])
        ranked.remove(bye)
        byes.append(bye)
    met = {p: set(swiss["met"][p]) for p in ranked}
    if seats_of(swiss) == 2:
        tables = _pairs(ranked, met)
        if tables is None:  # every pairing repeats a match: in ranking order
            tables = [[ranked[i], ranked[i + 1]] for i in range(0, len(ranked), 2)]
        return tables, byes
    return _groups(ranked, met, seats_of(swiss)), byes


def pair(swiss: Json, players: list[int]) -> tuple[list[list[int]], int | None]:
    """A 2-player Swiss's pairs and its bye (None: an even number): `seat_round` at tables of two."""
    tables, byes = seat_round({**swiss, "seats": 2}, players)
    return tables, byes[0] if byes else None


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


def repeats(table: tuple[int, ...] | list[int], met: dict[int, set[int]]) -> int:
    """Pairs of a table's people who sat together before."""
    return sum(1 for a, b in combinations(table, 2) if b in met[a])


def _groups(ranked: list[int], met: dict[int, set[int]], seats: int) -> list[list[int]]:
    """Tables of `seats`, table by table from the top: the best ranked left and the others (`_company`)."""
    left, tables = list(ranked), []
    while left:
        company = _company(left[0], left[1:], met, seats - 1)
        tables.append([left[0], *company])
        left = [p for p in left[1:] if p not in company]
    return tables


def _company(first: int, rest: list[int], met: dict[int, set[int]], need: int) -> list[int]:
    """The `need` of `rest` (in ranking order) who sit with `first` repeating the fewest pairs; of those, the
    first in ranking order (compared best first). A depth-first walk in that order, cut where the pairs repeated
    so far reach the fewest found: the answer of every combination tried in turn, without trying them all."""
    best: list[int] = rest[:need]
    fewest = repeats([first, *best], met)

    def walk(start: int, chosen: list[int], count: int) -> None:
        nonlocal best, fewest
        if count >= fewest:
            return
        if len(chosen) == need:
            best, fewest = list(chosen), count
            return
        for i in range(start, len(rest) - (need - len(chosen)) + 1):
            p = rest[i]
            walk(i + 1, [*chosen, p], count + sum(1 for c in (first, *chosen) if p in met[c]))
            if fewest == 0:
                return

    walk(0, [], 0)
    return best


def match_result(lines: list[bytes], seats: int = SEATS, sides: int | None = None) -> list[float] | None:
    """Each seat's points from a table's match (its public lines), None while it is played."""
    exited: int | None = None
    for line in lines:
        for event in orjson.loads(line).get("events") or ():
            if event.get("type") in EXITS and isinstance(event.get("seat", event.get("player")), int):
                exited = int(event.get("seat", event.get("player")))
            if event.get("type") == "match_ended":
                return table_points(seats, sides or seats, event.get("winners") or [], event.get("losers") or [],
                                    event.get("rating") or [], exited)
    return None


def table_points(seats: int, sides: int, winners: list[int], losers: list[int], rating: list[int],
                 exited: int | None = None) -> list[float]:
    """Each seat's points from how its match ended: its side's places (the archive's), 1 for every other side
    behind, 1/2 for every other side level; `exited`: the seat whose exit ended it (its side last)."""
    _, place = places({"scores": [0] * sides, "winners": winners, "losers": losers, "rating": rating}, seats,
                      exited)
    side_place = {s % sides: place[s] for s in range(seats)}
    return [sum(1.0 if other > side_place[s % sides] else 0.5 if other == side_place[s % sides] else 0.0
                for side, other in side_place.items() if side != s % sides) for s in range(seats)]


def forfeited(swiss: Json, seat: int) -> list[float]:
    """A table's points when its match was lost by the live store (idle beyond its time): as `seat`'s exit."""
    return table_points(seats_of(swiss), sides_of(swiss), [], [], [], seat)


def record(swiss: Json, tables: list[list[int]], results: list[list[float]], byes: list[int]) -> None:
    """A round's results into the points and who sat with whom."""
    for table, result in zip(tables, results, strict=True):
        for p, points in zip(table, result, strict=True):
            swiss["points"][p] += points
            swiss["met"][p].extend(o for o in table if o != p)
    for bye in byes:
        swiss["points"][bye] += bye_points(swiss)
        swiss["byes"].append(bye)


def standings(swiss: Json, names: list[str], over: bool) -> list[Json]:
    """Everyone ranked; the first three `official` once it is over."""
    ranked = ranking(swiss, list(range(len(names))))
    return [{"participant": names[p], "index": p, "place": i + 1, "score": swiss["points"][p],
             "buchholz": buchholz(swiss, p), "official": over and i < 3} for i, p in enumerate(ranked)]
