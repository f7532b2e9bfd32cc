"""docs/variants.md stays true: its example requests work on the library, and every option
of every preset appears in its section's table with the default the engine has."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine_service.rules import MalformedError, Match, variants

DOC = Path(__file__).resolve().parents[2] / "docs" / "variants.md"
TEXT = DOC.read_text(encoding="utf-8")
SECTIONS = {  # section heading prefix -> presets it documents
    "## K.": ["kozel", "kozel-classic"],
    "## O.": ["osel"],
    "## B.": ["bykovo"],
    "## TF.": ["threes-fives"],
    "## Fives and threes": ["fives-and-threes"],
    "## A3.": ["all-threes"],
    "## A5.": ["all-fives"],
    "## BL.": ["block"],
}


def section(prefix: str) -> str:
    start = TEXT.index("\n" + prefix)
    end = TEXT.find("\n## ", start + 1)
    return TEXT[start:end if end > 0 else None]


def examples(text: str, kind: str) -> list[dict]:
    pattern = rf"<!-- example: {kind} -->\s*`POST [^`]+`\s*```json\n(.*?)\n```"
    return [json.loads(m) for m in re.findall(pattern, text, flags=re.DOTALL)]


@pytest.mark.parametrize("prefix", list(SECTIONS))
def test_each_section_has_a_working_create_and_apply_example(prefix: str) -> None:
    text = section(prefix)
    (create,) = examples(text, "create")
    (apply,) = examples(text, "apply")
    assert set(create) <= {"variant", "players", "options", "seed"}
    assert create["variant"] in SECTIONS[prefix]
    match, _ = Match.new(create["variant"], create["players"], options=create.get("options"),
                         seed=create["seed"])
    fresh = match.to_dict()
    state = apply["state"]
    assert set(apply) == {"state", "action"}
    assert (state["variant"], state["seed"], state["options"]) == (fresh["variant"], fresh["seed"], fresh["options"])
    played = Match.from_dict(state)
    assert played.to_dict() == state
    assert apply["action"] in played.legal_actions()
    played.apply(apply["action"])


@pytest.mark.parametrize("prefix", list(SECTIONS))
def test_every_option_is_documented_with_its_default(prefix: str) -> None:
    text = section(prefix)
    described = {v["name"]: v for v in variants()}
    for name in SECTIONS[prefix]:
        for option in described[name]["options"]:
            if prefix == "## Fives and threes":
                continue  # documented as "those of TF" with the defaults that differ
            row = next((line for line in text.splitlines() if line.startswith(f"| `{option['name']}` |")), None)
            assert row is not None, f"{name}: option {option['name']} is not in the table"
            assert f"`{option['default']}`" in row or option["default"] in row, (name, option["name"], row)


# ---------------------------------------------------------------- the values column (issue 28)

#: Every section with an options table, and the presets whose options it documents.
TABLES = {**{k: v for k, v in SECTIONS.items() if k != "## Fives and threes"}, "## KD.": ["kingdomino"]}
_AS = re.compile(r"^as (K|TF)$")


def _row(prefix: str, option: str) -> str:
    """The values column of `option`'s row in a section's table ("as K" followed to K's row)."""
    row = next(line for line in section(prefix).splitlines() if line.startswith(f"| `{option}` |"))
    values = row.split("|")[2].strip()
    found = _AS.match(values)
    return _row(f"## {found[1]}.", option) if found else values


def documented(prefix: str, option: str) -> tuple[str, list[int], list[str]]:
    """What a values column says: the type ("bool", "int" or "enum"), the integers and the words
    it lists. The values are the backquoted tokens outside parentheses and quotes (those explain)."""
    text = _row(prefix, option)
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\([^()]*\)", "", text)
    text = re.sub(r'"[^"]*"', "", text)
    tokens = re.findall(r"`([^`]+)`", text)
    kind = "bool" if text.startswith("bool") else "int" if text.startswith("int") else "enum"
    return kind, [int(t) for t in tokens if t.isdigit()], [t for t in tokens if not t.isdigit()]


CASES = [(prefix, name, o) for prefix, names in TABLES.items() for name in names
         for o in {v["name"]: v for v in variants()}[name]["options"]]


@pytest.mark.parametrize(("prefix", "name", "option"), CASES,
                         ids=[f"{name}-{o['name']}" for _, name, o in CASES])
def test_the_documented_values_are_the_listed_ones_and_the_engine_takes_them(
        prefix: str, name: str, option: dict) -> None:
    """docs/variants.md, `variants()` (what GET /v1/variants serves) and the engine agree on what
    each option takes: its type, an enum's names, an int's integers and words (RULES.md "Options")."""
    kind, numbers, words = documented(prefix, option["name"])
    assert kind == option["type"], (name, option["name"], kind)
    if kind == "enum":
        assert sorted(words) == sorted(option["allowed"]) and not numbers, (name, option["name"], words)
        values: list[object] = list(words)
    elif kind == "int":
        assert words == option["allowed"], (name, option["name"], words)
        if numbers:  # a count lists its integers; a score says "int" and takes minimum..maximum
            assert numbers == list(range(option["minimum"], option["maximum"] + 1)), (name, option["name"])
        values = [option["minimum"], option["maximum"], *words]
    else:
        values = [True, False]
    described = {v["name"]: v for v in variants()}[name]
    for value in values:
        assert _taken(name, described, {option["name"]: value}), (name, option["name"], value)
    refused = {"bool": ["true", 1], "enum": ["no-such-value", 0],
               "int": [option.get("maximum", 0) + 1, (option.get("minimum") or 0) - 1, "no-such-word", 1.0]}[kind]
    for value in refused:
        with pytest.raises(MalformedError, match=re.escape(f"options.{option['name']}: ")):
            _taken(name, described, {option["name"]: value})


def _taken(name: str, described: dict, options: dict) -> bool:
    """Whether the engine starts a match of `name` with `options` at some player count it allows
    (teams need 4, the mighty duel 2); the refusal of the last count is raised."""
    from engine_service.rules import Kingdomino

    counts = range(described["max_players"], described["min_players"] - 1, -1)
    for i, players in enumerate(counts):
        try:
            if name == "kingdomino":
                Kingdomino.new(players, options=options, seed=1)
            else:
                Match.new(name, players, options=options, seed=1)
            return True
        except MalformedError:
            if i == len(counts) - 1:
                raise
    return False
