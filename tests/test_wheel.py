"""The fast builds a library user installs: the wheels of scripts/build-wheel.sh (`make wheel`) and, for
the rules alone, scripts/build-rules-wheel.sh (`make rules-wheel`, DOMINO_RULES_WHEEL; at the end).

`make test-wheel` (part of `make test`) builds it and runs this file with DOMINO_WHEEL naming it
(marked `wheel`: the pure pass deselects it rather than spend minutes in mypyc). The wheel goes into a
fresh virtual environment of its own, with no access to the checkout or its editable install
(its dependencies are read from the project venv's site-packages as a plain path, where the
editable install's import hook is not run), and there the rules, the codec and the wire
module must import from their compiled .so files and play a round through the library API.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

WHEEL = os.environ.get("DOMINO_WHEEL", "")

pytestmark = pytest.mark.wheel

PLAY = """
import json, sys
import engine_service.edge.codec as codec
import engine_service.edge.wire as wire
import engine_service.rules.round as round_module
from engine_service.rules import Match

match, events = Match.new("kozel", 4, seed=7)
moves = 0
while match.legal_actions():
    match.apply(match.legal_actions()[0])
    moves += 1
state = wire.encode_state(match)
assert wire.decode_state(state).to_dict() == match.to_dict()
print(json.dumps({"files": [round_module.__file__, codec.__file__, wire.__file__], "moves": moves,
                  "prefix": sys.prefix}))
"""


def _fresh_venv(where: Path) -> Path:
    """A venv without pip, its site-packages given the project venv's packages as a plain path."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_the_wheel_installs_the_compiled_rules_and_plays_a_round(tmp_path: Path) -> None:
    assert WHEEL, "set DOMINO_WHEEL to the wheel to test (make test-wheel builds one)"
    wheel = Path(WHEEL).resolve()
    assert wheel.name.startswith("domino_engine-") and "linux" in wheel.name, wheel.name  # a platform wheel
    python = _fresh_venv(tmp_path / "venv")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--disable-pip-version-check", str(wheel)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    played = subprocess.run([str(python), "-P", "-c", PLAY], cwd=tmp_path, env=env, check=True,
                            capture_output=True, text=True)
    found = json.loads(played.stdout)
    assert found["moves"] > 0
    for file in found["files"]:
        assert file.endswith(".so"), file  # compiled, not the .py next to it
        assert Path(file).is_relative_to(Path(found["prefix"]).resolve()) or Path(file).is_relative_to(
            tmp_path), file  # from the wheel installed here, not the checkout


RULES_WHEEL = os.environ.get("DOMINO_RULES_WHEEL", "")

PLAY_RULES_ALONE = """
import json, sys
import engine_service.rules.round as round_module
from engine_service.bots import suggest
from engine_service.records import export, replay
from engine_service.rules import Match

match, _ = Match.new("all-fives", 2, seed=3)
moves = 0
while not match.round.over:
    match.apply(suggest(match.view(match.to_move), "greedy", seed=1))
    moves += 1
assert replay(export(match)).to_dict() == match.to_dict()
loaded = sorted(m for m in sys.modules if m != "__main__" and m.partition(".")[0] not in sys.stdlib_module_names)
print(json.dumps({"file": round_module.__file__, "moves": moves, "loaded": loaded}))
"""


def test_the_rules_alone_wheel_installs_the_compiled_rules_with_no_dependency(tmp_path: Path) -> None:
    """domino-rules compiled (scripts/build-rules-wheel.sh, `make rules-wheel`): in a venv holding it and
    nothing else, the rules import from .so files and bots play a round that its record replays; nothing
    beyond the standard library, the wheel's packages and its mypyc library is loaded."""
    assert RULES_WHEEL, "set DOMINO_RULES_WHEEL to the wheel to test (make test-wheel builds one)"
    wheel = Path(RULES_WHEEL).resolve()
    assert wheel.name.startswith("domino_rules-") and "linux" in wheel.name, wheel.name  # a platform wheel
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    python = tmp_path / "venv" / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-index", "--disable-pip-version-check", str(wheel)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    played = subprocess.run([str(python), "-P", "-c", PLAY_RULES_ALONE], cwd=tmp_path, env=env, check=True,
                            capture_output=True, text=True)
    found = json.loads(played.stdout)
    assert found["moves"] > 0
    assert found["file"].endswith(".so") and Path(found["file"]).is_relative_to(tmp_path / "venv"), found["file"]
    outside = [m for m in found["loaded"] if m != "domino_rules__mypyc"
               and m.split(".")[:2] not in [["engine_service", p] for p in ("rules", "records", "bots")]
               and m != "engine_service"]
    assert "domino_rules__mypyc" in found["loaded"] and not outside, found["loaded"]
