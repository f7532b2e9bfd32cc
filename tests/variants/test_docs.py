"""docs/variants.md stays true: its example requests work on the library, and every option
of every preset appears in its section's table with the default the engine has."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine_service.rules import Match, variants

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
