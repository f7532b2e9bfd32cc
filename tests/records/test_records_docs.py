"""docs/records.md as pasted: its library example runs, its text and JSON examples are what the engine
writes, and `domino record` works as the doc says."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clients.record_cli import main as record_cli
from engine_service import records
from engine_service.rules import Match

DOC = (Path(__file__).resolve().parents[2] / "docs" / "records.md").read_text(encoding="utf-8")


def _block(marker: str, lang: str) -> str:
    (found,) = re.findall(rf"{re.escape(marker)}\s*```{lang}\n(.*?)\n```", DOC, flags=re.DOTALL)
    return str(found)


def _played() -> Match:
    match, _ = Match.new("block", 2, seed=42)
    for action in ["0-4", "4-5@E", "1-5@E"]:
        match.apply(action)
    return match


def test_the_library_example_runs() -> None:
    exec(compile(_block("<!-- records example: library -->", "python"), "records.md", "exec"), {})


def test_the_text_and_json_examples_are_what_the_engine_writes() -> None:
    text = re.search(r"## The text form\n\n```\n(.*?)```", DOC, flags=re.DOTALL)
    assert text is not None
    record = records.export(_played(), "seat 1", names=["Ann", "Bob"])
    assert text.group(1) == records.to_text(record)
    shown = re.search(r"## The JSON form.*?```json\n(.*?)```", DOC, flags=re.DOTALL)
    assert shown is not None and records.from_json(json.loads(shown.group(1))) == record


def test_domino_record_check_counts_and_fails_on_any_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    state = tmp_path / "played.json"
    state.write_text(json.dumps({"state": _played().to_dict()}))
    assert record_cli(["export", str(state)]) == 0
    good = tmp_path / "game.pgn"
    good.write_text(capsys.readouterr().out)
    assert record_cli(["export", str(state), "--json", "--view", "seat 1"]) == 0
    partial = tmp_path / "seat.json"
    partial.write_text(capsys.readouterr().out)
    bad = tmp_path / "bad.pgn"
    bad.write_text(good.read_text().replace("4. S1 ", "4. S0 "))
    assert record_cli(["check", str(good), str(partial)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 valid, 0 invalid"
    assert record_cli(["check", str(good), str(bad), str(tmp_path / "missing.pgn")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "1 valid, 2 invalid" and "move 4" in out[1]
    assert record_cli(["replay", str(good), "--upto", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["round"]["layout"] == ["0-4"]
    assert record_cli(["import", str(good)]) == 0
    assert json.loads(capsys.readouterr().out) == _played().to_dict()
