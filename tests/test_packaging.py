"""What `make run` installs, built as pip builds it: not a word from setuptools, and every file shipped.

A fresh `make run` is `pip install -e .` of this project (Makefile). Its build once printed a
41-line setuptools warning (`api_gateway.play`, the browser table's HTML, JS and CSS, was no
declared package) and a note on editable installs, which read like a broken install (issue
28). Here the build backend runs in a copy of the sources (the build writes the generated
protobuf modules beside the .proto files, which the other tests import), with warnings shown.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
