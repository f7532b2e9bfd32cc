"""The presets the engine serves: name, family, players, options with defaults (RULES.md).

A preset is a family plus default option values. Adding a variant is a new
family module and an entry in `_FAMILIES`.

Games that are not matching games (Kingdomino, RULES.md KD) have their own
class instead of `Match`; their presets are listed by `variants()` from
`OTHER_PRESETS`, and `Match` refuses them with a message naming the class.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from . import block, bykovo, counting, kingdomino_setup, kozel, osel
from .errors import MalformedError, did_you_mean, shown
from .family import Family
from .options import OptionSpec, OptionValue, resolve

#: Every family module's presets, in the order variants are listed.
_MODULES: Final[tuple[dict[str, dict[str, Any]], ...]] = (
    kozel.PRESETS,
    osel.PRESETS,
    bykovo.PRESETS,
    counting.PRESETS,
    block.PRESETS,
)


@dataclass(frozen=True, slots=True)
class Preset:
    name: str
    family: type[Family]
    description: str
    min_players: int
    max_players: int
    defaults: dict[str, OptionValue]

    @property
    def specs(self) -> dict[str, OptionSpec]:
        return self.family.specs

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "family": self.family.code,
            "description": self.description,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "timeout_rule": self.family.has_timeout_rule(),
            "options": [spec.describe(self.defaults[name]) for name, spec in self.specs.items()],
        }


def _build() -> dict[str, Preset]:
    presets: dict[str, Preset] = {}
    for entries in _MODULES:
        for name, entry in entries.items():
            family = entry["family"]
            lo, hi = entry["players"]
            defaults = entry["defaults"]
            assert set(defaults) == set(family.specs), name
            presets[name] = Preset(name, family, entry["description"], lo, hi, dict(defaults))
    return presets


PRESETS: Final[dict[str, Preset]] = _build()


#: Presets played by their own class, not `Match`: name -> (describe(), the class to use).
OTHER_PRESETS: Final[dict[str, tuple[dict[str, Any], str]]] = {
    kingdomino_setup.NAME: (kingdomino_setup.describe(), "engine_service.rules.Kingdomino"),
}


def preset(name: object) -> Preset:
    if isinstance(name, str) and name in OTHER_PRESETS:
        raise MalformedError(
            f"variant: {name} is not a matching game: play it with {OTHER_PRESETS[name][1]}, not Match")
    if not isinstance(name, str) or name not in PRESETS:
        known = [*PRESETS, *OTHER_PRESETS]
        raise MalformedError(f"variant: no variant {shown(name)}{did_you_mean(name, known)} "
                             f"(known: {', '.join(known)})")
    return PRESETS[name]


def variants() -> list[dict[str, Any]]:
    """Every preset with its options, allowed values, defaults and player counts
    (the matching games' presets, then `OTHER_PRESETS`)."""
    return [p.describe() for p in PRESETS.values()] + [
        {**entry, "options": [dict(o) for o in entry["options"]]} for entry, _cls in OTHER_PRESETS.values()]


def check_players(p: Preset, players: object) -> int:
    if not isinstance(players, int) or isinstance(players, bool):
        raise MalformedError(f"players must be an integer, not {players!r}")
    if not p.min_players <= players <= p.max_players:
        raise MalformedError(f"players: {p.name} is played by {p.min_players}-{p.max_players} players, not {players}")
    return players


@lru_cache(maxsize=512)
def _family_cached(name: str, players: int, frozen: tuple[tuple[str, OptionValue], ...]) -> Family:
    p = PRESETS[name]
    resolved = dict(p.defaults)
    resolved.update(frozen)
    return p.family(resolved, players)


def make_family(
    name: object, players: object, overrides: object
) -> tuple[Preset, Family, dict[str, OptionValue]]:
    """Validate variant, players and options; returns the preset, its family and the effective overrides.

    Families are immutable once built and cached, so decoding a state costs a dict lookup
    (and a preset with its default options, the common case, one lookup in `_DEFAULTS`).
    """
    if (overrides is None or (type(overrides) is dict and not overrides)) and type(players) is int:
        hit = _DEFAULTS.get((name, players)) if type(name) is str else None
        if hit is not None:
            return hit[0], hit[1], {}
    p = preset(name)
    n = check_players(p, players)
    _resolved, effective = resolve(p.specs, p.defaults, overrides)
    family = _family_cached(p.name, n, tuple(sorted(effective.items())))
    family.validate(n)
    if not effective:
        _DEFAULTS[(p.name, n)] = (p, family)
    return p, family, effective


#: (preset name, players) -> (preset, family) for the presets' default options, once validated.
_DEFAULTS: Final[dict[tuple[str, int], tuple[Preset, Family]]] = {}
