"""RULES.md "Options": names, values and defaults are part of the API (non-Kozel presets)."""
from __future__ import annotations

from typing import Any

import pytest

from engine_service.rules import PRESETS, MalformedError, Match, variants

# The defaults of RULES.md's options table, preset by preset (only the options each uses).
EXPECTED_DEFAULTS: dict[str, dict[str, Any]] = {
    "osel": {"hand_size": "seven", "lead": "osel", "boneyard_reserve": 0, "teams": False,
             "fish_without_double": False, "fish_scoring": "own_to_loser", "open_threshold": 13,
             "target": 101},
    "bykovo": {"hand_size": "seven", "lead": "zero-double", "misdeal": "five-doubles", "voluntary_pass": True},
    "threes-fives": {"hand_size": "by-players", "lead": "lot", "spinner": "first-double",
                     "spinner_ends": "open-sides", "spinner_counts": True, "boneyard_reserve": 0,
                     "draw_when_able": False, "teams": False, "scoring": "total", "target": 251,
                     "exact_target": False},
    "fives-and-threes": {"hand_size": "by-players", "lead": "lot", "spinner": "none", "scoring": "multiples",
                         "target": 61, "exact_target": True, "teams": False},
    "all-threes": {"hand_size": "five", "lead": "lot", "spinner": "first-double", "spinner_ends": "open-sides",
                   "spinner_counts": True, "scoring": "total", "target": 150, "exact_target": False},
    "all-fives": {"hand_size": "by-players", "lead": "lot", "spinner": "first-double",
                  "spinner_ends": "open-sides", "spinner_counts": True, "teams": False, "scoring": "total",
                  "target": 100, "exact_target": False},
    "block": {"hand_size": "seven", "lead": "seat0"},
}

PLAYERS = {"osel": (2, 4), "bykovo": (4, 4), "threes-fives": (2, 4), "fives-and-threes": (2, 4),
           "all-threes": (2, 4), "all-fives": (2, 4), "block": (2, 4)}


@pytest.mark.parametrize("name", sorted(EXPECTED_DEFAULTS))
def test_preset_defaults_are_the_rules_table(name: str) -> None:
    defaults = PRESETS[name].defaults
    for option, value in EXPECTED_DEFAULTS[name].items():
        assert defaults[option] == value, (name, option)


@pytest.mark.parametrize("name", sorted(PLAYERS))
def test_player_counts(name: str) -> None:
    lo, hi = PLAYERS[name]
    described = {v["name"]: v for v in variants()}[name]
    assert (described["min_players"], described["max_players"]) == (lo, hi)
    for n in (lo - 1, hi + 1):
        with pytest.raises(MalformedError):
            Match.new(name, n, seed=1)
    for n in range(lo, hi + 1):
        Match.new(name, n, seed=1)


@pytest.mark.parametrize("name", sorted(EXPECTED_DEFAULTS))
def test_unknown_option_is_refused_by_name(name: str) -> None:
    players = PLAYERS[name][0]
    with pytest.raises(MalformedError, match="no_such_option"):
        Match.new(name, players, options={"no_such_option": True}, seed=1)


@pytest.mark.parametrize(("name", "option", "value"), [
    ("osel", "fish_scoring", "each"),              # a Kozel value, not an Osel one
    ("osel", "boneyard_reserve", "3"),
    ("osel", "hand_size", "six"),
    ("threes-fives", "spinner", "every-double"),
    ("threes-fives", "spinner_ends", "never"),
    ("threes-fives", "scoring", "both"),
    ("all-fives", "target", 0),
    ("bykovo", "misdeal", "six-doubles"),
    ("threes-fives", "lead", "osel"),
])
def test_value_outside_the_list_is_refused(name: str, option: str, value: Any) -> None:
    with pytest.raises(MalformedError, match=option):
        Match.new(name, PLAYERS[name][0], options={option: value}, seed=1)


@pytest.mark.parametrize(("name", "option", "value"), [
    ("osel", "spinner", "none"),           # Osel's layout is the cross
    ("osel", "voluntary_pass", True),
    ("bykovo", "teams", True),
    ("block", "boneyard_reserve", "1"),     # block draws nothing
    ("block", "target", 100),
    ("all-threes", "teams", True),          # A3 names no partnership game
])
def test_option_the_family_does_not_use_is_refused(name: str, option: str, value: Any) -> None:
    with pytest.raises(MalformedError, match=option):
        Match.new(name, PLAYERS[name][0], options={option: value}, seed=1)


def test_teams_need_four_players() -> None:
    for name in ("osel", "threes-fives", "all-fives"):
        with pytest.raises(MalformedError, match="teams"):
            Match.new(name, 3, options={"teams": True}, seed=1)
        match, _ = Match.new(name, 4, options={"teams": True}, seed=1)
        assert len(match.ledger.scores) == 2 and len(match.ledger.written) == 2


@pytest.mark.parametrize(("name", "option", "value"), [
    ("threes-fives", "scoring", "multiples"),
    ("threes-fives", "exact_target", True),
    ("all-fives", "scoring", "multiples"),
    ("all-fives", "exact_target", True),
    ("all-threes", "scoring", "multiples"),
    ("all-threes", "exact_target", True),   # RULES.md TF: exposed "to the other presets too"
])
def test_scoring_and_exact_target_reach_the_other_counting_presets(name: str, option: str, value: Any) -> None:
    match, _ = Match.new(name, 2, options={option: value}, seed=1)
    assert match.to_dict()["options"][option] == value


def test_overrides_equal_to_the_default_are_dropped() -> None:
    match, _ = Match.new("osel", 2, options={"fish_scoring": "own_to_loser", "teams": False,
                                             "boneyard_reserve": 2}, seed=1)
    assert match.to_dict()["options"] == {"boneyard_reserve": 2}


# ---------------------------------------------------------------- a count is a number (issue 28)


@pytest.mark.parametrize(("name", "players", "reserve", "kept"), [
    ("osel", 3, 0, 0), ("osel", 3, 1, 1), ("osel", 3, 2, 2),                  # RULES.md O: 0, 1, 2
    ("threes-fives", 3, 2, 2), ("threes-fives", 3, "auto", 1), ("threes-fives", 2, "auto", 2),  # TF: and auto
])
def test_boneyard_reserve_is_the_integer_count_of_tiles_kept_back(name: str, players: int, reserve: object,
                                                                   kept: int) -> None:
    match, _ = Match.new(name, players, options={"boneyard_reserve": reserve}, seed=1)
    assert match.family.reserve == kept
    assert match.to_dict()["options"] == ({} if reserve == 0 else {"boneyard_reserve": reserve})


@pytest.mark.parametrize(("name", "reserve", "said"), [
    ("osel", "auto", 'options.boneyard_reserve: "auto" is not one of 0, 1, 2'),   # auto is TF's only (RULES.md)
    ("osel", 3, "options.boneyard_reserve: 3 is not one of 0, 1, 2"),
    ("osel", -1, "options.boneyard_reserve: -1 is not one of 0, 1, 2"),
    ("osel", "3", 'options.boneyard_reserve: "3" is not one of 0, 1, 2'),
    ("osel", True, "options.boneyard_reserve: true is not one of 0, 1, 2"),
    ("osel", 1.0, "options.boneyard_reserve: 1.0 is not one of 0, 1, 2"),
    ("threes-fives", "Auto", 'options.boneyard_reserve: "Auto" is not one of 0, 1, 2, "auto"'),
    ("threes-fives", " 1", 'options.boneyard_reserve: " 1" is not one of 0, 1, 2, "auto"'),
])
def test_a_reserve_it_does_not_take_is_refused_quoting_what_it_takes_as_json(name: str, reserve: object,
                                                                             said: str) -> None:
    with pytest.raises(MalformedError) as refused:
        Match.new(name, 3, options={"boneyard_reserve": reserve}, seed=1)
    assert str(refused.value) == said


@pytest.mark.parametrize("name", ["osel", "threes-fives"])
def test_the_digits_of_earlier_releases_are_still_read_as_the_integer(name: str) -> None:
    """The decision on "0", "1", "2" (the enum of earlier releases, in docs, states, records and
    sealed tokens): read as the integers they name, so that those keep working; written as integers."""
    for text, number in (("0", 0), ("1", 1), ("2", 2)):
        match, _ = Match.new(name, 3, options={"boneyard_reserve": text}, seed=4)
        assert match.family.reserve == number
        assert match.to_dict()["options"] == ({"boneyard_reserve": number} if number else {})
        old = {**match.to_dict(), "options": {"boneyard_reserve": text}}   # a state saved by an earlier release
        assert Match.from_dict(old).to_dict() == match.to_dict()


def test_a_bot_level_it_does_not_know_is_refused_quoting_the_levels_as_json() -> None:
    """The engine's call to suggest a move (both gRPC faces) quotes as the options do (issue 28)."""
    from engine_service import calls

    match, _ = Match.new("kozel", 4, seed=1)
    with pytest.raises(MalformedError) as refused:
        calls.suggest(match, "hard")
    assert str(refused.value) == 'level: "hard" is not one of "random", "greedy", "expert"'


def test_only_kozel_and_kingdomino_list_a_timeout_rule_and_only_they_apply_one() -> None:
    """`timeout_rule`: RULES.md K's timeout formula and the service's Kingdomino forfeit (docs/variants.md);
    no other variant ends a match on a timeout, and its Match refuses the call."""
    listed = {v["name"]: v["timeout_rule"] for v in variants()}
    assert {name for name, rule in listed.items() if rule} == {"kozel", "kozel-classic", "kingdomino"}
    for name in PRESETS:
        match, _ = Match.new(name, PRESETS[name].min_players, seed=1)
        if listed[name]:
            assert match.timeout(0) and match.match_over
        else:
            with pytest.raises(MalformedError, match="no timeout rule"):
                match.timeout(0)
