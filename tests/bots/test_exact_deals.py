"""Exact inference (issue 42): the deals model against an exhaustive enumeration of the deals.

For small positions of random games (few unseen tiles), every way the hidden tiles
could lie now, and every way each seat's draws could have gone, is tried by brute
force: a seat's past hands are rebuilt and every pass or draw the rules forced must
have found no tile matching the ends then; the deal must give the lead the rules
gave (the family's own lead rule on the rebuilt deal). That count of deals per world
is compared with `deals.SeatDeals.weight` (equal, world by world), its zeros with the
proven voids, and its distribution with the sampler's worlds (within sampling error).
"""
from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

from engine_service.bots import hints
from engine_service.bots.matching.coach import EXACT_WORLDS
from engine_service.bots.matching.deals import SeatDeals
from engine_service.bots.matching.knowledge import Knowledge, read_view
from engine_service.bots.matching.numbers import ends_numbers, numbers_tiles
from engine_service.bots.matching.sampler import Sampler
from engine_service.bots.observe import SeatLog
from engine_service.rules import Match
from engine_service.rules.family import RoundContext
from engine_service.rules.notation import Move
from engine_service.rules.tiles import NAMES, NUMBER_MASK, bits, parse_tile


@dataclass
class Step:
    """One action of the round as it happened: who, what, the tiles laid, the ends' numbers before it."""

    seat: int
    kind: str  # "play", "draw", "pass"
    tiles: list[int]
    ends: int
    drawn: int | None = None  # the tile drawn (true; the observer sees only its own)


@dataclass
class Position:
    match: Match
    observer: int
    steps: list[Step]
    dealt: list[int]  # the true deal, for the observer's own initial hand
    log: SeatLog


def _positions(variant: str, players: int, max_unseen: int, count: int, seed: int) -> Iterator[Position]:
    """Random-play positions of `variant` where the observer (the seat to move) sees at most
    `max_unseen` tiles hidden; the first round only (its lead is the forced one)."""
    made = 0
    game = 0
    while made < count and game < 400:
        game += 1
        rng = random.Random(f"{variant}:{players}:{seed}:{game}")
        match, events = Match.new(variant, players, seed=seed * 1000 + game)
        log = SeatLog()
        log.record(events)
        rnd = match.round
        assert rnd is not None
        dealt = rnd.hands.copy()
        steps: list[Step] = []
        while not rnd.over and not match.match_over:
            seat = match.to_move
            view = match.view(seat)
            unseen = 28 - len(view["hand"]) - len(view["layout"])
            if steps and unseen <= max_unseen and rng.random() < 0.5:
                made += 1
                yield Position(match, seat, steps, dealt, log)
                break
            action = rng.choice(match.legal_actions())
            kind, placements = Move.parse(action)
            ends = ends_numbers(rnd.layout) if rnd.layout.placements else 0
            before = rnd.hands[seat]
            log.record(match.apply(action))
            if action == "draw":
                drawn = next(iter(bits(rnd.hands[seat] & ~before)))
                steps.append(Step(seat, "draw", [], ends, drawn))
            elif action == "pass":
                steps.append(Step(seat, "pass", [], ends))
            else:
                steps.append(Step(seat, "play", [t for t, _a, _f in placements], ends))


def _knowledge(pos: Position) -> Knowledge:
    """The observer's knowledge, from its view and the history it saw (other seats' draws hidden)."""
    return read_view(pos.log.view(pos.match, pos.observer), to_move=False)


#: The most worlds a brute-force count may enumerate: larger positions are passed over.
MAX_WORLDS = 3000


def brute_weights(pos: Position) -> dict[tuple[int, ...], int] | None:
    """Per world (the other seats' hands, in seat order), the number of deals and draw orders leading to
    it; None when there are more than `MAX_WORLDS` worlds."""
    match = pos.match
    rnd = match.round
    assert rnd is not None
    fam = match.family
    players = match.players
    me = pos.observer
    others = [s for s in range(players) if s != me]
    seen = rnd.hands[me] | rnd.layout.on_table
    unseen = [t for t in range(28) if not seen >> t & 1]
    sizes = [bin(rnd.hands[s]).count("1") for s in others]
    played = {s: [t for st in pos.steps if st.seat == s and st.kind == "play" for t in st.tiles] for s in others}
    my_initial = pos.dealt[me]
    lead = next(st for st in pos.steps if st.kind == "play")
    ctx = RoundContext(match.seed, 0, None, False)
    worlds = math.factorial(len(unseen))
    for n in [*sizes, len(unseen) - sum(sizes)]:
        worlds //= math.factorial(n)
    if worlds > MAX_WORLDS:
        return None

    def initials(s: int, hand: int) -> list[tuple[int, int]]:
        """The initial hands (with how many draw orders lead to each) the seat's own steps allow.

        The seat's steps are walked backwards, choosing the tile of each draw: at any moment its hand
        is its tiles (held now or played) less those played before and those drawn later."""
        items = hand
        for t in played[s]:
            items |= 1 << t
        mine = [st for st in pos.steps if st.seat == s]
        played_before = [0] * (len(mine) + 1)
        for i, st in enumerate(mine):
            played_before[i + 1] = played_before[i] | (sum(1 << t for t in st.tiles) if st.kind == "play" else 0)
        found: dict[int, int] = {}

        def back(i: int, later: int) -> None:
            if i < 0:
                initial = items & ~later
                found[initial] = found.get(initial, 0) + 1
                return
            st = mine[i]
            hand_then = items & ~played_before[i] & ~later
            if st.kind == "play":
                if any(later >> t & 1 for t in st.tiles):
                    return  # played before it was drawn
                back(i - 1, later)
            elif st.kind == "pass":
                if not fam.voluntary_pass and hand_then & numbers_tiles(st.ends):
                    return
                back(i - 1, later)
            else:
                for x in bits(items & ~later & ~played_before[i]):  # the tile this draw brought
                    if fam.draw_when_able or not hand_then & ~(1 << x) & numbers_tiles(st.ends):
                        back(i - 1, later | 1 << x)

        back(len(mine) - 1, 0)
        return list(found.items())

    weights: dict[tuple[int, ...], int] = {}
    for world in _split(unseen, sizes):
        per_seat = [initials(s, h) for s, h in zip(others, world)]
        total = 0
        for combo in itertools.product(*per_seat):
            deal = [0] * players
            deal[me] = my_initial
            ways = 1
            for s, (initial, n) in zip(others, combo):
                deal[s] = initial
                ways *= n
            leader, mask = fam.lead(ctx, deal)
            if leader == lead.seat and mask >> lead.tiles[0] & 1:
                total += ways
        weights[tuple(world)] = total
    return weights


def _split(tiles: list[int], sizes: list[int]) -> Iterator[list[int]]:
    if not sizes:
        yield []
        return
    for chosen in itertools.combinations(tiles, sizes[0]):
        mask = sum(1 << t for t in chosen)
        rest = [t for t in tiles if t not in chosen]
        for more in _split(rest, sizes[1:]):
            yield [mask, *more]


def model_weights(know: Knowledge) -> dict[tuple[int, ...], int]:
    """Per world, the product of the seats' `SeatDeals.weight` (0 for a hand holding an impossible tile)."""
    others = [s for s in range(know.players) if s != know.seat]
    sizes = [know.hand_sizes[s] for s in others]
    out: dict[tuple[int, ...], int] = {}
    for world in _split(list(bits(know.unseen)), sizes):
        w = 1
        for s, hand in zip(others, world):
            deals = know.seats[s]
            assert deals is not None
            if hand & ~deals.possible:
                w = 0
                break
            w *= deals.weight(deals.counts_of(hand))
        out[tuple(world)] = w
    return out


#: (variant, players, the most unseen tiles, positions): small enough to enumerate every deal.
CASES = [("kozel", 2, 9, 8), ("all-fives", 2, 9, 8), ("threes-fives", 2, 8, 4), ("osel", 2, 9, 8),
         ("kozel", 3, 8, 4), ("all-fives", 3, 8, 4), ("osel", 4, 9, 3), ("all-fives", 4, 9, 3),
         ("kozel", 4, 9, 3), ("bykovo", 4, 9, 3)]


def test_the_model_counts_exactly_the_deals_that_lead_to_each_world() -> None:
    """World by world, the model's weight is the brute-force number of deals: so its zeros are exactly
    the impossible worlds (every void, draws later played and the lead included) and its chances exact."""
    compared = 0
    weighted = 0
    barred = 0
    for variant, players, max_unseen, count in CASES:
        for pos in _positions(variant, players, max_unseen, count, seed=42):
            know = _knowledge(pos)
            assert know.history_used
            brute = brute_weights(pos)
            if brute is None:
                continue
            barred += bool(know.barred)
            model = model_weights(know)
            assert model == brute, (variant, players, pos.observer)
            compared += len(brute)
            weighted += len({w for w in brute.values() if w}) > 1
            # Voids: a number is proven missing in a seat exactly when no possible world gives it one.
            others = [s for s in range(know.players) if s != know.seat]
            for k, s in enumerate(others):
                held = 0
                for world, w in brute.items():
                    if w:
                        held |= world[k]
                if know.hand_sizes[s]:
                    assert know.possible(s) & held == held
                    if players == 2:  # one other seat: its own history is the whole story
                        assert know.possible(s) == held
                    for n in range(7):
                        if know.voids(s) >> n & 1:
                            assert not held & NUMBER_MASK[n]
    assert compared > 1000 and weighted >= 4 and barred >= 2


def test_the_issue_example_draws_spent_on_tiles_played_leave_no_six() -> None:
    """Issue 42: drew at ends {4, 6} and played the drawn 5-6, drew at {1, 4} and played the drawn 1-2:
    both draws left the hand, so it holds no 6 (the old rule proved only 1 and 4)."""
    four_six = (1 << 4) | (1 << 6)
    one_four = (1 << 1) | (1 << 4)
    timeline = [("play", parse_tile("3-3")), ("proof", four_six), ("draw", 0), ("play", parse_tile("5-6")),
                ("proof", one_four), ("draw", 0), ("play", parse_tile("1-2"))]
    unseen = sum(1 << t for t in range(28)) & ~sum(1 << parse_tile(n) for n in ("3-3", "5-6", "1-2"))
    deals = SeatDeals(timeline, 6, unseen, 0)
    assert not deals.possible & NUMBER_MASK[6] & unseen
    assert not deals.possible & (NUMBER_MASK[1] | NUMBER_MASK[4]) & unseen
    assert deals.possible & NUMBER_MASK[5]


def _exact_marginals(weights: dict[tuple[int, ...], int], tiles: list[int]) -> dict[int, list[float]]:
    total = sum(weights.values())
    places = len(next(iter(weights)))
    out = {t: [0.0] * (places + 1) for t in tiles}
    for world, w in weights.items():
        if not w:
            continue
        taken = 0
        for k, hand in enumerate(world):
            taken |= hand
            for t in bits(hand):
                out[t][k] += w / total
        for t in tiles:
            if not taken >> t & 1:
                out[t][places] += w / total
    return out


def test_sampled_worlds_follow_the_exact_distribution() -> None:
    """4-player positions with voids in two or more seats (and 2-player ones whose draws weigh the
    worlds): every tile's frequency in each place within 4.5 standard errors of its exact chance (the
    deals model's, which the test above checks against brute force), and exactly 0 or 1 where that is."""
    worlds = 1500
    checked = {2: 0, 4: 0}
    for variant, players, max_unseen in [("all-fives", 4, 12), ("osel", 4, 12), ("kozel", 4, 12),
                                          ("bykovo", 4, 12), ("kozel", 2, 9), ("all-fives", 2, 9)]:
        found = 0
        for pos in _positions(variant, players, max_unseen, 60, seed=7):
            know = _knowledge(pos)
            others = [s for s in range(know.players) if s != know.seat]
            if players == 4 and sum(1 for s in others if know.voids(s)) < 2:
                continue
            if players == 2 and not any(len(d.weights) > 1 for s in others if (d := know.seats[s])):
                continue
            exact = _exact_marginals(model_weights(know), list(bits(know.unseen)))
            sampler = Sampler(know, random.Random(f"{variant}{players}{found}"))
            counts = {t: [0] * (len(others) + 1) for t in exact}
            for _ in range(worlds):
                hands, boneyard = sampler.hands()
                for k, s in enumerate(others):
                    for t in bits(hands[s]):
                        counts[t][k] += 1
                for t in boneyard:
                    counts[t][len(others)] += 1
            assert sampler.relaxed == 0
            for t, chances in exact.items():
                for k, p in enumerate(chances):
                    f = counts[t][k] / worlds
                    if p < 1e-12 or p > 1 - 1e-12:
                        assert f == round(p), (variant, t, k)
                    else:
                        se = math.sqrt(p * (1 - p) / worlds)
                        assert abs(f - p) <= 4.5 * se, (variant, players, t, k, f, p)
            found += 1
            if found == 2:
                break
        checked[players] += found
    assert checked[4] >= 6 and checked[2] >= 3, checked


def test_the_coach_gives_the_exact_whereabouts_when_few_worlds_are_left() -> None:
    """The coach weighs every world when few are left: its whereabouts are the brute-force chances (to
    its 4 decimals), its proven-missing numbers those no possible world gives the seat, its values chances."""
    checked = 0
    for variant, players, max_unseen, count in CASES[:6]:
        for pos in _positions(variant, players, max_unseen, count, seed=42):
            brute = brute_weights(pos)
            if brute is None:
                continue
            view = pos.log.view(pos.match, pos.observer)
            answer = hints(view, budget=8, seed=1)
            if answer["worlds"] > EXACT_WORLDS:
                continue
            others = [s for s in range(players) if s != pos.observer]
            tiles = sorted({t for world in brute for hand in world for t in bits(hand)}
                           | {parse_tile(n) for n in answer["whereabouts"]})
            exact = _exact_marginals(brute, tiles)
            for t in tiles:
                where = answer["whereabouts"][NAMES[t]]
                for k, s in enumerate(others):
                    assert abs(where["hands"][s] - exact[t][k]) < 1e-4, (variant, NAMES[t], s)
                assert abs(where["boneyard"] - exact[t][len(others)]) < 1e-4
            for k, s in enumerate(others):
                held = 0
                for world, w in brute.items():
                    if w:
                        held |= world[k]
                for n in answer["proven_missing"][s]:
                    assert not held & NUMBER_MASK[n]
            assert all(0 <= v <= 1 for v in answer["values"].values())
            checked += 1
    assert checked >= 10
