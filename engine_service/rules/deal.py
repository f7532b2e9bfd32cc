"""Seeded shuffles and deals (RULES.md C "Deal", "Boneyard").

The shuffle is our own SplitMix64 generator driving Fisher-Yates, so a seed
gives the same deal on every machine and every Python version, forever (the
standard library makes no such promise for `random.shuffle`).

>>> shuffled(7, 42) == shuffled(7, 42)
True
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .errors import MalformedError
from .tiles import ALL_TILES, NAMES, TILE_COUNT, bits, mask_of, parse_hands, parse_tile

_MASK64: Final = (1 << 64) - 1
MAX_SEED: Final = _MASK64


class SplitMix64:
    """A tiny, well-known 64-bit generator (Steele, Lea, Flood 2014)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform in [0, n) by rejection (no modulo bias)."""
        limit = _MASK64 - (_MASK64 + 1) % n
        while True:
            x = self.next()
            if x <= limit:
                return x % n


_GOLDEN: Final = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    """SplitMix64's output function of a state."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def derive_seed(seed: int, *parts: int) -> int:
    """A sub-seed for round `parts` of a match, independent of the others.

    The same as stepping a `SplitMix64(seed)` once after mixing in each part and
    returning its next output (a step whose output is unused only moves the state).
    """
    state = seed & _MASK64
    for p in parts:
        state ^= (p * 0xD1B54A32D192ED03) & _MASK64
        state = (state + _GOLDEN) & _MASK64
    return _mix((state + _GOLDEN) & _MASK64)


def _radix_chunks(count: int) -> list[tuple[int, tuple[int, ...]]]:
    """Fisher-Yates positions count-1 .. 1 in runs whose radices (i + 1) multiply below 2^62."""
    chunks: list[tuple[int, tuple[int, ...]]] = []
    i = count - 1
    while i > 0:
        prod, run = 1, []
        while i > 0 and prod * (i + 1) < 1 << 62:
            prod *= i + 1
            run.append(i)
            i -= 1
        chunks.append((prod, tuple(run)))
    return chunks


_CHUNKS: Final[dict[int, list[tuple[int, tuple[int, ...]]]]] = {TILE_COUNT: _radix_chunks(TILE_COUNT)}


def shuffled(count: int, seed: int) -> list[int]:
    """The numbers 0..count-1 in the order fixed by `seed` (Fisher-Yates).

    The swap indices are the digits of one 128-bit draw in the factorial number
    system, so a whole deal costs two generator steps (28! < 2^98: the bias is
    below one in a billion).
    """
    order = list(range(count))
    rng = SplitMix64(seed)
    x = rng.next() << 64 | rng.next()
    chunks = _CHUNKS.get(count)
    if chunks is None:
        chunks = _radix_chunks(count)
    # The digits come out of one machine-size remainder per run instead of the 128-bit draw.
    for prod, run in chunks:
        x, y = divmod(x, prod)
        for i in run:
            y, j = divmod(y, i + 1)
            order[i], order[j] = order[j], order[i]
    return order


def random_deal(players: int, hand_size: int, seed: int) -> tuple[list[int], list[int]]:
    """Hands (bit sets) and the boneyard in draw order, from a seed."""
    tiles = shuffled(TILE_COUNT, seed)
    hands = [mask_of(tiles[i * hand_size:(i + 1) * hand_size]) for i in range(players)]
    return hands, tiles[players * hand_size:]


def deal_with_redeals(
    players: int, hand_size: int, seed: int, misdeal: Callable[[list[int]], bool], tries: int = 1000
) -> tuple[list[int], list[int], int]:
    """A random deal that is not a misdeal: redealt deterministically from the same seed.

    Returns hands, boneyard and how many redeals it took.
    """
    for attempt in range(tries):
        hands, boneyard = random_deal(players, hand_size, derive_seed(seed, attempt))
        if not misdeal(hands):
            return hands, boneyard, attempt
    raise RuntimeError("no valid deal found")  # pragma: no cover - probability ~0


def explicit_deal(
    players: int, hand_size: int, hands_in: object, boneyard_in: object | None, exact: bool
) -> tuple[list[int], list[int]]:
    """Validate an explicit deal: hands seat 0 first, boneyard in draw order.

    `exact`: every hand must hold `hand_size` tiles (a deal at the start of a round).
    An omitted boneyard is the remaining tiles in ascending order.
    """
    if not isinstance(hands_in, (list, tuple)) or len(hands_in) != players:
        raise MalformedError(f"deal.hands must list {players} hands, seat 0 first")
    hands, seen = parse_hands(hands_in, "deal.hands", "deal: {} is dealt twice", hand_size if exact else None)
    if boneyard_in is None:
        boneyard = list(bits(ALL_TILES & ~seen))
    else:
        if not isinstance(boneyard_in, (list, tuple)):
            raise MalformedError("deal.boneyard must be a list of tiles")
        boneyard = []
        for item in boneyard_in:
            t = parse_tile(item)
            if seen >> t & 1:
                raise MalformedError(f"deal: {NAMES[t]} is dealt twice (boneyard)")
            seen |= 1 << t
            boneyard.append(t)
        if seen != ALL_TILES:
            missing = ", ".join(NAMES[t] for t in bits(ALL_TILES & ~seen))
            raise MalformedError(f"deal: tiles missing from hands and boneyard: {missing}")
    return hands, boneyard
