"""What `make run` installs, built as pip builds it: not a word from setuptools, and every file shipped.

A fresh `make run` is `pip install -e .` of this project (Makefile). Its build once printed a
41-line setuptools warning (`api_gateway.play`, the browser table's HTML, JS and CSS, was no
declared package) and a note on editable installs, which read like a broken install (issue
28). Here the build backend runs in a copy of the sources (the build writes the generated
protobuf modules beside the .proto files, which the other tests import), with warnings shown.
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "engine_service", "api_gateway", "clients", "proto")
PLAY = sorted(p.name for p in (ROOT / "api_gateway" / "play").iterdir() if p.suffix in (".html", ".js", ".css"))


#: What the images copy before their first `pip install .` (docker/Dockerfile.*: the dependency layer).
DEPENDENCY_LAYER = ("pyproject.toml", "setup.py", "README.md", "proto")


def _copy(names: tuple[str, ...], into: Path) -> Path:
    generated = shutil.ignore_patterns("__pycache__", "*.so", "*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py")
    into.mkdir(parents=True, exist_ok=True)
    for name in names:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, into / name, ignore=generated)
        else:
            shutil.copy2(ROOT / name, into / name)
    return into


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy(SOURCES, tmp_path_factory.mktemp("source"))


def _build(source: Path, hook: str, out: Path) -> tuple[Path, str]:
    """Run the PEP 517/660 `hook` of the build backend as pip does (no isolation), warnings on;
    the wheel it made and everything it printed on stderr."""
    out.mkdir()
    code = ("import sys; from setuptools import build_meta; "
            f"print(build_meta.{hook}(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-W", "default", "-c", code, str(out)], cwd=source,
                          capture_output=True, text=True, timeout=300, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(out)})
    assert done.returncode == 0, done.stderr[-3000:]
    return out / done.stdout.strip().splitlines()[-1], done.stderr


@pytest.mark.parametrize("hook", ["build_editable", "build_wheel"])
def test_the_build_says_nothing(source_copy: Path, tmp_path: Path, hook: str) -> None:
    wheel, stderr = _build(source_copy, hook, tmp_path / "wheel")
    assert wheel.suffix == ".whl"
    # setuptools' warnings are "...Warning: ..." blocks framed by "!!"; a clean build prints neither
    noise = [line for line in stderr.splitlines() if "Warning" in line or "warning:" in line or "!!" in line]
    assert not noise, stderr[-3000:]


def test_the_images_dependency_layer_builds_from_the_packaging_and_the_contract_alone(tmp_path: Path) -> None:
    """The Dockerfiles install the dependencies from these files before copying the code: the build
    must not need a package directory that is not there yet (api_gateway/play once broke it)."""
    for image in ("engine", "gateway"):
        text = (ROOT / "docker" / f"Dockerfile.{image}").read_text()
        layer = text[:text.index("RUN /opt/venv/bin/pip install --no-compile .\n")]
        copied = {source.rstrip("/") for line in layer.splitlines() if line.startswith("COPY ")
                  for source in line.split()[1:-1]}
        assert copied == set(DEPENDENCY_LAYER), (image, copied)
    wheel, stderr = _build(_copy(DEPENDENCY_LAYER, tmp_path / "layer"), "build_wheel", tmp_path / "wheel")
    assert "domino/v1/engine_pb2.py" in zipfile.ZipFile(wheel).namelist()


def test_the_wheel_ships_the_browser_table_and_the_generated_contract(source_copy: Path, tmp_path: Path) -> None:
    wheel, _ = _build(source_copy, "build_wheel", tmp_path / "wheel")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "index.html" in PLAY and {f"api_gateway/play/{name}" for name in PLAY} <= names
    assert {"domino/v1/engine_pb2.py", "domino/v1/engine_pb2_grpc.py",
            "engine_service/rules/data/kingdomino-tiles.csv"} <= names


def test_make_run_echoes_only_commands() -> None:
    """What a fresh `make run` prints before the services speak: the commands it runs, no comment
    lines (make echoes a comment inside a recipe, and six of them read like output of the install,
    issue 28). `-n -B`: every step as a fresh clone runs it, none executed."""
    # Run as a person runs it, not as a sub-make of `make test` (which would add "Entering directory").
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    done = subprocess.run(["make", "-n", "-B", "run"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].endswith("domino serve all") and any("pip install" in line for line in lines), lines
    assert not [line for line in lines if line.lstrip().startswith("#")], done.stdout


# ---------------------------------------------------------------- the rules alone (issue 39)

RULES_ONLY = ROOT / "domino-rules"
#: What the rules-only distribution, domino-rules, ships: the pure packages and nothing of the service.
PURE = ("rules", "records", "bots")


def _pure_packages() -> set[str]:
    """engine_service and its pure subpackages, as directories with an __init__.py in the checkout."""
    found = {"engine_service"}
    for name in PURE:
        found |= {".".join(init.parent.relative_to(ROOT).parts)
                  for init in (ROOT / "engine_service" / name).rglob("__init__.py")}
    return found


@pytest.fixture(scope="module")
def rules_wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """domino-rules built as pip builds it, from a copy of its directory (its links to the packages
    followed: what an sdist or a `pip install ./domino-rules` reads); the wheel and the build's stderr."""
    source = tmp_path_factory.mktemp("rules") / "domino-rules"
    shutil.copytree(RULES_ONLY, source, ignore=shutil.ignore_patterns("__pycache__", "*.so", "build", "*.egg-info"))
    return _build(source, "build_wheel", tmp_path_factory.mktemp("rules-wheel") / "out")


def test_the_rules_alone_are_a_wheel_of_the_pure_packages(rules_wheel: tuple[Path, str]) -> None:
    wheel, stderr = rules_wheel
    assert not [line for line in stderr.splitlines() if "Warning" in line or "!!" in line], stderr[-3000:]
    names = zipfile.ZipFile(wheel).namelist()
    code = [name for name in names if ".dist-info/" not in name]
    assert {name.split("/")[0] for name in code} == {"engine_service"}  # no `clients`, `domino`, `api_gateway`
    shipped = {name.rpartition("/")[0].replace("/", ".") for name in code if name.endswith("/__init__.py")}
    assert shipped == _pure_packages()
    assert [name for name in code if name.count("/") == 1] == ["engine_service/__init__.py"]  # no server, codec ...
    assert "engine_service/rules/data/kingdomino-tiles.csv" in code
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert f"Name: domino-rules\nVersion: {version}\n" in metadata
    assert "Requires-Dist" not in metadata, metadata  # not one dependency


def _outside_imports(path: Path) -> set[str]:
    """What a module of the pure packages imports beyond the standard library and those packages
    (relative imports resolved), anywhere in it: functions and TYPE_CHECKING blocks too."""
    package = list(path.relative_to(ROOT).parent.parts)
    allowed = tuple(f"engine_service.{name}" for name in PURE)
    outside = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            modules = [".".join([*base, *([node.module] if node.module else [])])]
        else:
            continue
        outside |= {m for m in modules if m.partition(".")[0] not in sys.stdlib_module_names
                    and not m.startswith(allowed) and m != "engine_service"}
    return outside


def test_the_rules_records_and_bots_import_only_the_standard_library() -> None:
    offenders = {str(path.relative_to(ROOT)): found for name in PURE
                 for path in sorted((ROOT / "engine_service" / name).rglob("*.py"))
                 if (found := _outside_imports(path))}
    assert not offenders, offenders
    assert _outside_imports(ROOT / "engine_service" / "server.py")  # the reader sees the service's imports


PLAY_ALONE = """
import json, sys
{example}
modules = sorted(name for name in sys.modules
                 if name != "__main__" and name.partition(".")[0] not in sys.stdlib_module_names)
print(json.dumps({{"modules": modules, "prefix": sys.prefix}}))
"""


def test_the_rules_alone_install_into_a_fresh_venv_and_play(rules_wheel: tuple[Path, str], tmp_path: Path) -> None:
    """domino-rules/README.md's example, in a venv holding that wheel and nothing else, out of the
    checkout's reach: a round of bots, recorded; nothing but the standard library and the wheel loaded."""
    wheel, _ = rules_wheel
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "--quiet", "--no-index", "--no-deps", str(wheel)], check=True, timeout=120)
    installed = subprocess.run([*pip, "list", "--format", "json"], check=True, capture_output=True, text=True)
    assert [p["name"] for p in json.loads(installed.stdout)] == ["domino-rules"]
    readme = (RULES_ONLY / "README.md").read_text()
    example = readme.split("```python\n", 1)[1].split("```", 1)[0]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    played = subprocess.run([python, "-P", "-c", PLAY_ALONE.format(example=example)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120, check=True)
    record, _, found = played.stdout.rpartition("\n{")
    assert record.startswith('[Record "domino-record 1"]\n[Variant "kozel"]') and "\n1. " in record, record
    loaded = json.loads("{" + found)
    outside = [m for m in loaded["modules"] if m != "engine_service" and m.split(".")[:2] not in
               [["engine_service", name] for name in PURE]]
    assert "engine_service.bots" in loaded["modules"] and not outside, outside
    import_path = subprocess.run([python, "-P", "-c", "import engine_service.rules; print(engine_service.rules.__file__)"],
                                 cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert Path(import_path.strip()).is_relative_to(tmp_path / "venv"), import_path  # the wheel's, not the checkout's
