"""Presets and options (RULES.md "Options: names and values are part of the API", K table)."""
from __future__ import annotations

import re

import pytest

from engine_service.rules import PRESETS, MalformedError, Match, variants
from engine_service.rules.registry import OTHER_PRESETS, make_family

KOZEL_DEFAULTS = {
    "hand_size": "seven", "lead": "one-one-up", "misdeal": "five-doubles-or-six-of-a-number",
    "double_pair": "false", "zero_double": "lone-ten", "fish_without_double": "true",
    "fish_scoring": "each", "open_threshold": "13", "target": "101",
}
CLASSIC_DEFAULTS = {
    "hand_size": "by-players", "lead": "highest-double", "misdeal": "none",
    "double_pair": "true", "zero_double": "twenty-five", "fish_without_double": "false",
    "fish_scoring": "each", "open_threshold": "13", "target": "101",
}
TYPES = {
    "hand_size": "enum", "lead": "enum", "misdeal": "enum", "double_pair": "bool",
    "zero_double": "enum", "fish_without_double": "bool", "fish_scoring": "enum",
    "open_threshold": "int", "target": "int",
}
ALLOWED = {
    "hand_size": {"seven", "five", "by-players", "five-six-seven"},
    "misdeal": {"none", "five-doubles", "five-doubles-or-six-of-a-number"},
    "zero_double": {"plain", "lone-ten", "twenty-five"},
    "fish_scoring": {"each", "max_takes_all"},
}


def _described(name: str) -> dict:
    found = [v for v in variants() if v["name"] == name]
    assert len(found) == 1, name
    return found[0]


@pytest.mark.parametrize("name,defaults", [("kozel", KOZEL_DEFAULTS), ("kozel-classic", CLASSIC_DEFAULTS)])
def test_variants_lists_the_kozel_presets(name: str, defaults: dict) -> None:
    # K: both presets for 2-4 players, with every option of the K table and its default.
    described = _described(name)
    assert described["family"] == "K"
    assert (described["min_players"], described["max_players"]) == (2, 4)
    options = {o["name"]: o for o in described["options"]}
    assert {k: o["default"] for k, o in options.items()} == defaults
    assert {k: o["type"] for k, o in options.items()} == TYPES
    for key, allowed in ALLOWED.items():
        assert set(options[key]["allowed"]) == allowed, key
    assert {"one-one-up", "highest-double"} <= set(options["lead"]["allowed"])
    for o in options.values():
        assert o["description"]


def test_variants_names_every_preset_once() -> None:
    names = [v["name"] for v in variants()]
    assert len(names) == len(set(names))
    assert {"kozel", "kozel-classic"} <= set(names)
    assert set(names) == set(PRESETS) | set(OTHER_PRESETS)


@pytest.mark.parametrize("variant", ["kozel", "kozel-classic"])
@pytest.mark.parametrize("name,value", [
    ("teams", True), ("spinner", "first-double"), ("boneyard_reserve", "1"),
    ("draw_when_able", True), ("voluntary_pass", True), ("exact_target", False),
    ("scoring", "total"), ("spinner_ends", "open-sides"), ("spinner_counts", True),
    ("mighty_duel", False), ("tournament", True),
])
def test_an_option_the_family_does_not_use_is_refused_naming_it(variant: str, name: str, value: object) -> None:
    # "Options": an option the family does not use is refused with an error naming it.
    with pytest.raises(MalformedError, match=name):
        Match.new(variant, 4, options={name: value}, seed=1)


@pytest.mark.parametrize("name", ["colour", "Target", "fish-scoring", "", "hand size"])
def test_an_unknown_option_is_refused_naming_it(name: str) -> None:
    with pytest.raises(MalformedError) as caught:
        Match.new("kozel", 4, options={name: "x"}, seed=1)
    assert repr(name) in str(caught.value) or name in str(caught.value)


@pytest.mark.parametrize("name,value", [
    ("hand_size", "six"), ("hand_size", 7), ("lead", "osel"), ("lead", "lot"),
    ("lead", "zero-double"), ("misdeal", "six"), ("double_pair", "yes"), ("double_pair", 1),
    ("double_pair", None), ("zero_double", "ten"), ("fish_without_double", "maybe"),
    ("fish_scoring", "own"), ("fish_scoring", "own_to_loser"), ("fish_scoring", "all_to_loser"),
    ("fish_scoring", "EACH"), ("open_threshold", "thirteen"), ("open_threshold", True),
    ("open_threshold", 12.5), ("target", 0), ("target", "x"), ("target", None), ("target", [101]),
])
def test_a_value_outside_the_list_is_refused_naming_the_option(name: str, value: object) -> None:
    with pytest.raises(MalformedError, match=name):
        Match.new("kozel", 4, options={name: value}, seed=1)


def test_defaults_are_not_carried() -> None:
    match, _ = Match.new("kozel", 4, options={
        "double_pair": True, "open_threshold": 20, "target": 101, "fish_scoring": "each",
    }, seed=3)
    assert match.to_dict()["options"] == {"double_pair": True, "open_threshold": 20}
    _, family, effective = make_family("kozel", 4, {"fish_without_double": False})
    assert effective == {"fish_without_double": False}
    assert family.fish_without_double is False


@pytest.mark.parametrize("options,said", [
    ({"double_pair": "true"}, 'options.double_pair: expected true or false, got "true"'),
    ({"double_pair": 1}, "options.double_pair: expected true or false, got 1"),
    ({"target": "101"}, 'options.target: expected an integer 1..100000, got "101"'),
    ({"target": 101.0}, "options.target: expected an integer 1..100000, got 101.0"),
    ({"target": True}, "options.target: expected an integer 1..100000, got true"),
    ({"target": 0}, "options.target: expected an integer 1..100000, got 0"),
    ({"fish_scoring": 0}, 'options.fish_scoring: 0 is not one of "each", "max_takes_all"'),
    ({"fish_scoring": ["each"]}, 'options.fish_scoring: an array is not one of "each", "max_takes_all"'),
    ({"lead": "lot"}, 'options.lead: "lot" is not one of "one-one-up", "highest-double"'),
])
def test_option_values_are_never_coerced(options: dict[str, object], said: str) -> None:
    """docs/security.md: no type coercion. The gRPC face's option text is typed by codec first."""
    with pytest.raises(MalformedError, match=re.escape(said)):
        Match.new("kozel", 4, options=options, seed=3)


def test_options_must_be_an_object() -> None:
    with pytest.raises(MalformedError):
        Match.new("kozel", 4, options=["double_pair"], seed=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant,players", [
    ("goat", 4), ("Kozel", 4), ("", 4), (None, 4),
    ("kozel", 1), ("kozel", 5), ("kozel", 0), ("kozel-classic", 5), ("kozel", "4"), ("kozel", True),
    ("kozel", 3.0),
])
def test_unknown_variant_or_player_count_is_malformed(variant: object, players: object) -> None:
    with pytest.raises(MalformedError):
        Match.new(variant, players, seed=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant,options,players,size", [
    ("kozel", {}, 2, 7), ("kozel", {}, 3, 7), ("kozel", {}, 4, 7),
    ("kozel-classic", {}, 2, 7), ("kozel-classic", {}, 3, 5), ("kozel-classic", {}, 4, 5),
    ("kozel", {"hand_size": "five"}, 4, 5), ("kozel", {"hand_size": "by-players"}, 3, 5),
    ("kozel", {"hand_size": "five-six-seven"}, 3, 6), ("kozel-classic", {"hand_size": "seven"}, 4, 7),
])
def test_hand_size(variant: str, options: dict, players: int, size: int) -> None:
    # K table: 7 for everyone (kozel); 7 for 2 players, 5 for 3-4 (kozel-classic).
    for seed in (1, 2):
        match, _ = Match.new(variant, players, options=options, seed=seed)
        state = match.to_dict()["round"]
        assert [len(h) for h in state["hands"]] == [size] * players
        assert len(state["boneyard"]) == 28 - size * players
